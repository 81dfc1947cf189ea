"""Store takeover between implementations: a broker started on a store another one wrote and stopped
serves its messages, offsets and consumer offsets unchanged (``tests.store_takeover``).

Each ordered pair of the reference broker, Apache RocketMQ 5.5.0 and rocketmq-rust 1.0.0 runs once;
a pair whose implementation cannot be provisioned here (no Java or Maven, rocketmq-rust not installed)
is skipped with that reason. Slow: two real brokers start per pair.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

import pytest

from apache_rocketmq.cluster import ApacheRocketMQ
from apache_rocketmq.maven import NotServed, ToolMissing
from reference_broker.embedded import SyncEmbeddedRocketMQ
from rocketmq_rust.cluster import RocketMQRust
from rocketmq_rust.pytest_plugin import missing
from rocketmq_rust.releases import release as rust_release
from tests.store_takeover import problems, write
from tests.store_takeover_5x import problems as problems_5x
from tests.store_takeover_5x import write as write_5x

pytestmark = pytest.mark.slow


class Broker(Protocol):
    broker_addr: str


Launch = Callable[[Path, Path], AbstractContextManager[Any]]

IMPLEMENTATIONS: dict[str, Launch] = {
    "reference": lambda store, home: SyncEmbeddedRocketMQ(store),
    "apache-5.5.0": lambda store, home: ApacheRocketMQ("5.5.0", home=home, store=store),
    "rocketmq-rust-1.0.0": lambda store, home: RocketMQRust("1.0.0", home=home, store=store),
}

PAIRS = [(writer, reader) for writer in IMPLEMENTATIONS for reader in IMPLEMENTATIONS if writer != reader]


def _started(name: str, store: Path, home: Path) -> AbstractContextManager[Any]:
    if name.startswith("rocketmq-rust-") and (reason := missing(rust_release(name))):
        pytest.skip(reason)
    return IMPLEMENTATIONS[name](store, home)


@pytest.mark.parametrize(("writer", "reader"), PAIRS, ids=[f"{w}-to-{r}" for w, r in PAIRS])
def test_a_store_is_served_unchanged_by_the_broker_taking_it_over(writer: str, reader: str,
                                                                   tmp_path: Path) -> None:
    store = tmp_path / "store"
    try:
        with _started(writer, store, tmp_path / "writer") as first:
            scene = write(first.broker_addr)
        with _started(reader, store, tmp_path / "reader") as second:
            found = problems(second.broker_addr, scene)
    except (ToolMissing, NotServed) as exc:
        pytest.skip(str(exc))
    assert not found, found


PAIRS_5X = [(writer, reader) for writer, reader in PAIRS if "rocketmq-rust-1.0.0" not in (writer, reader)]


@pytest.mark.parametrize(("writer", "reader"), PAIRS_5X, ids=[f"{w}-to-{r}" for w, r in PAIRS_5X])
def test_pending_timers_and_pop_state_carry_over(writer: str, reader: str, tmp_path: Path) -> None:
    store = tmp_path / "store"
    try:
        with _started(writer, store, tmp_path / "writer") as first:
            scene = write_5x(first.broker_addr)
        with _started(reader, store, tmp_path / "reader") as second:
            found = problems_5x(second.broker_addr, scene)
    except (ToolMissing, NotServed) as exc:
        pytest.skip(str(exc))
    assert not found, found
