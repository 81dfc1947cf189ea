"""Launching the embedded reference broker when ``rmq-conformance`` is given no target.

This is the only module of the suite that imports ``reference_broker``: the cases reach the target over
TCP alone, so the same cases judge any implementation.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from conformance.target import Target
from conformance.wire import Endpoint
from reference_broker.embedded import SyncEmbeddedRocketMQ


@contextlib.contextmanager
def launch(workdir: Path) -> Iterator[Target]:
    """A name server and broker on free loopback ports with their store under ``workdir``."""
    with SyncEmbeddedRocketMQ(workdir / "store") as running:
        yield Target(Endpoint.parse(running.namesrv_addr), Endpoint.parse(running.broker_addr),
                     running.store_path)
