"""pytest fixture ``rocketmq_broker``: a name server and broker on free ports for one test.

Registered through the ``pytest11`` entry point, so any project that installs this package can use it.
The store lives in the test's ``tmp_path`` and is kept for inspection after the test.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from reference_broker.embedded import SyncEmbeddedRocketMQ


@pytest.fixture
def rocketmq_broker(tmp_path: Path) -> Iterator[SyncEmbeddedRocketMQ]:
    """Yields an object with ``namesrv_addr``, ``broker_addr``, ``broker_fast_addr`` and ``store_path``."""
    with SyncEmbeddedRocketMQ(tmp_path / "store") as running:
        yield running
