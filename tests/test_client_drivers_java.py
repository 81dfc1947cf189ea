"""The drivers of Apache's Java remoting client (4.9.7, 5.5.0), of the four 5.x gRPC SDKs and of
rocketmq-rust's client (rocketmq-client-rust from crates.io), run as the
client conformance suite runs them (``DRIVER SCENARIO`` with the contract's RMQ_* environment), against the
reference broker: ``produce`` reports each acknowledged send with the id the broker stored, and
``consume-push`` then receives exactly those messages with the drivers' bodies, both ending with ``done``.

Each driver is installed from its own registry on first use (minutes for a cold Maven resolution or Go
build, most of an hour for the cargo build of the Rust driver), so the default run covers one remoting and
one gRPC driver and ``-m slow`` the others; a driver whose tools or artifacts this machine lacks is skipped
with the reason.
"""

from __future__ import annotations

import base64
import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rocketmq_spec.conformance.clients import drivers_java, rust_client
from rocketmq_spec.conformance.clients.driver_row import DriverRow
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.config import BrokerConfig
from rocketmq_spec.reference_broker.embedded import SyncEmbeddedRocketMQ
from tests import process_tree
from tests import sdk5_clients as sdk5

pytestmark = pytest.mark.interop

DEFAULT_RUN = {"java-4.9.7", "sdk5-python"}
COUNT = 4
BODY_SIZE = 24
BUDGET_S = 60
RUN_TIMEOUT_S = 240.0
"""The budget is the driver's; the hard timeout also covers a first run's install and compile."""


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SyncEmbeddedRocketMQ]:
    store: Path = tmp_path_factory.mktemp("drivers") / "store"
    config = BrokerConfig(listen_port=0, store_path_root_dir=str(store))
    with SyncEmbeddedRocketMQ(broker_config=config) as running:
        yield running


KNOWN_FAILURES = {rust_client.NAME: "rocketmq-client-rust 1.0.0 cannot read the name server's fastjson route "
                                   "(bare numeric brokerAddrs keys) and does not ask for standard JSON, so "
                                   "it sends nothing (docs/clients.md)"}
"""Drivers whose client cannot do what the test asks, with why: strict, so a fixed client shows."""


def _rows() -> Iterator[object]:
    for row in (*drivers_java.DRIVERS, rust_client.ROW):
        marks: list[pytest.MarkDecorator] = [] if row.name in DEFAULT_RUN else [pytest.mark.slow]
        if row.name in KNOWN_FAILURES:
            marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_FAILURES[row.name]))
        yield pytest.param(row, marks=marks, id=row.name)


def _skip_unless_installable(row: DriverRow) -> None:
    reason = row.install()
    if reason is not None:
        pytest.skip(f"{row.name} cannot run here: {reason}")


def _topic(broker: SyncEmbeddedRocketMQ) -> str:
    """A topic and its consumer group ``c-TOPIC``, created first as an operator would: a broker answering
    as 5.5.0 refuses a gRPC consumer's settings for a group it does not have (RMQ-GRPC-SETTINGS-GROUP)."""
    topic = f"drv-{uuid.uuid4().hex[:8]}"

    async def create() -> None:
        client = await RemotingClient.connect(broker.broker_addr)
        try:
            await sdk5.create_topic(client, topic, "NORMAL")
            await sdk5.create_group(client, f"c-{topic}")
        finally:
            await client.close()

    broker.call(create())
    return topic


def _run(row: DriverRow, scenario: str, broker: SyncEmbeddedRocketMQ, workdir: Path,
         **settings: str) -> list[dict[str, Any]]:
    """The events of one scenario run, which must end with ``done`` and exit 0. The only error allowed is a
    send the client gave up on: a cold JVM's first send (route lookup, connections) may outlast the client's
    default 3 s send timeout on a loaded machine, which the contract reports as an event."""
    env = {**os.environ, "RMQ_PROTOCOL": row.protocol, "RMQ_NAMESRV": broker.namesrv_addr,
           "RMQ_ENDPOINT": str(broker.grpc_addr), "RMQ_TLS": "0", "RMQ_COUNT": str(COUNT),
           "RMQ_BODY_SIZE": str(BODY_SIZE), "RMQ_TIMEOUT_S": str(BUDGET_S), "RMQ_WORKDIR": str(workdir),
           **row.environment(), **{f"RMQ_{key.upper()}": value for key, value in settings.items()}}
    done = process_tree.run([*row.argv(), scenario], env=env, capture_output=True, text=True,
                            timeout=RUN_TIMEOUT_S, check=False)
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    context = f"{row.name} {scenario}: exit {done.returncode}, events {events}, stderr {done.stderr[-2000:]}"
    assert done.returncode == 0, context
    assert [e["event"] for e in events if e["event"] in ("ready", "done")] == ["ready", "done"], context
    assert events[-1]["event"] == "done", context
    assert {e["stage"] for e in events if e["event"] == "error"} <= {"send"}, context
    return events


def _body(index: int) -> str:
    """The drivers' body of message ``index``: the index and a dash, padded with x to RMQ_BODY_SIZE."""
    return base64.b64encode(f"{index}-".encode().ljust(BODY_SIZE, b"x")).decode()


@pytest.mark.parametrize("row", list(_rows()))
def test_driver_produces_and_push_consumes(row: DriverRow, broker: SyncEmbeddedRocketMQ,
                                           tmp_path: Path) -> None:
    _skip_unless_installable(row)
    topic = _topic(broker)
    produced = _run(row, "produce", broker, tmp_path, topic=topic, group=f"p-{topic}")
    sent = [e for e in produced if e["event"] == "sent"]
    failed = [e for e in produced if e["event"] == "error"]
    assert len(sent) + len(failed) == COUNT and sent, produced
    assert [e["index"] for e in sent] == sorted(e["index"] for e in sent) and all(e["msgId"] for e in sent)
    received = [e for e in _run(row, "consume-push", broker, tmp_path, topic=topic, group=f"c-{topic}")
                if e["event"] == "received"]
    assert {e["msgId"] for e in received} >= {e["msgId"] for e in sent}  # a send given up may still be stored
    assert {e["body_b64"] for e in received} <= {_body(i) for i in range(COUNT)}
    assert {e["body_b64"] for e in received} >= {_body(e["index"]) for e in sent}
    assert {e["topic"] for e in received} == {topic}
    assert {e["reconsumeTimes"] for e in received} == {0}
