"""pytest fixtures ``rocketmq_broker`` (a name server and broker on free ports for one test) and
``rocketmq_master_slave`` (a name server, a master and its replicating slave).

Registered through the ``pytest11`` entry point, so any project that installs this package can use it.
The store lives in the test's ``tmp_path`` and is kept for inspection after the test.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rocketmq_spec.reference_broker.embedded import SyncEmbeddedMasterSlave, SyncEmbeddedRocketMQ

FAST_REPLICATION = {"mapped_file_size_commit_log": 1024 * 1024, "mapped_file_size_consume_queue": 20 * 1000,
                    "max_hash_slot_num": 1000, "max_index_num": 4000, "ha_send_heartbeat_interval": 200,
                    "ha_housekeeping_interval": 3000, "ha_reconnect_interval": 200,
                    "slave_sync_interval": 500}
"""Small store files and short HA intervals, so a test's slave is connected and in sync within a second."""


@pytest.fixture
def rocketmq_broker(tmp_path: Path) -> Iterator[SyncEmbeddedRocketMQ]:
    """Yields an object with ``namesrv_addr``, ``broker_addr``, ``broker_fast_addr`` and ``store_path``."""
    with SyncEmbeddedRocketMQ(tmp_path / "store") as running:
        yield running


@pytest.fixture
def rocketmq_master_slave(tmp_path: Path) -> Iterator[SyncEmbeddedMasterSlave]:
    """Yields a running ASYNC_MASTER + SLAVE pair: ``namesrv_addr``, ``master_addr``, ``slave_addr``,
    ``master_store_path``, ``slave_store_path``, ``wait_replicated()``, ``stop_master()``."""
    with SyncEmbeddedMasterSlave(tmp_path / "pair", master_config=FAST_REPLICATION) as running:
        yield running
