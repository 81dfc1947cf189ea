"""The checkpoint's 5.x offsets (RMQ-CKPT-CONFIRM): Apache's layout read and written, the confirm offset a
controller-mode broker keeps across a restart."""

from __future__ import annotations

import asyncio
import struct
from pathlib import Path
from types import SimpleNamespace
from typing import cast

from rocketmq_spec.codec.store.checkpoint import CheckpointData, encode_checkpoint, read_checkpoint
from rocketmq_spec.reference_broker.broker.server import Broker
from rocketmq_spec.reference_broker.config import BrokerConfig
from rocketmq_spec.reference_broker.controller.mode import ControllerMode
from rocketmq_spec.reference_broker.controller.roles import BecomeMaster
from rocketmq_spec.reference_broker.ha.sync_state_set import SyncStateSet
from rocketmq_spec.reference_broker.store.message_store import MessageStore
from rocketmq_spec.spec.checkpoint import CHECKPOINT_FIELDS, CHECKPOINT_FILE_SIZE, confirm_after_recovery
from rocketmq_spec.spec.store_layout import CHECKPOINT_FILE
from tests.test_ha_sessions import _fill, _store

APACHE_FLUSH = ">6q"
"""``StoreCheckpoint.flush`` of 5.5.0: six longs, big-endian (MappedByteBuffer), at 0, 8, ..., 40."""


def test_apache_layout_is_read_and_kept(tmp_path: Path) -> None:
    """A file as Apache 5.5.0 writes it: the reference reads its offsets at 24 and 32 and writes them
    back where Apache reads them; 40 (logicsPhysicalOffset) it leaves 0, which Apache reads as "not kept"."""
    written = struct.pack(APACHE_FLUSH, 1_700_000_001_000, 1_700_000_000_900, 1_700_000_000_800, 4096,
                          8192, 12288)
    path = tmp_path / CHECKPOINT_FILE
    path.write_bytes(written + bytes(CHECKPOINT_FILE_SIZE - len(written)))
    read = read_checkpoint(path)
    assert (read.master_flushed_offset, read.confirm_phy_offset) == (4096, 8192)
    again = struct.unpack_from(APACHE_FLUSH, encode_checkpoint(read))
    assert again == (*struct.unpack(APACHE_FLUSH, written)[:5], 0)
    assert [field.offset for field in CHECKPOINT_FIELDS] == list(range(0, 48, 8))


def test_a_4x_file_reads_zero_offsets() -> None:
    page = struct.pack(">3q", 3, 2, 1) + bytes(CHECKPOINT_FILE_SIZE - 24)
    assert encode_checkpoint(CheckpointData(3, 2, 1)) == page


def test_confirm_after_recovery_stays_within_the_log() -> None:
    assert confirm_after_recovery(0, 1024, 4096) == 1024
    assert confirm_after_recovery(9999, 1024, 4096) == 4096
    assert confirm_after_recovery(2000, 1024, 4096) == 2000


def _controller_mode(store: MessageStore) -> ControllerMode:
    """The broker's controller mode over ``store``, nothing started: what it reads of the broker."""
    broker = SimpleNamespace(config=BrokerConfig(enable_controller_mode=True),
                             ha_server=SimpleNamespace(sessions=None))
    return ControllerMode(cast(Broker, broker), store)


def test_the_confirm_offset_survives_a_restart(tmp_path: Path) -> None:
    """RMQ-CKPT-CONFIRM: what the slave was told goes to the checkpoint; after a restart it is the confirm
    offset again (heartbeats and the consume queues' bound), lowered to the recovered end if beyond it."""
    root = tmp_path / "store"
    store = _store(root)
    _fill(store, 6)
    end = store.max_phy_offset
    mode = _controller_mode(store)
    assert mode.status().confirm_offset == 0
    mode._slave_confirmed(end // 2)
    store.close()
    assert read_checkpoint(root / CHECKPOINT_FILE).confirm_phy_offset == end // 2

    store = _store(root)
    try:
        mode = _controller_mode(store)
        assert mode.status().confirm_offset == end // 2
        assert store.recorded_confirm is not None and store.recorded_confirm() == end // 2
    finally:
        store.close()
    _beyond_end(root, end)


def test_a_demoted_master_keeps_its_confirm_offset(tmp_path: Path) -> None:
    """Java keeps one confirm offset field: the master's last computed value is the slave's until the
    first transfer block, and what the checkpoint records meanwhile."""
    store = _store(tmp_path / "store")
    try:
        _fill(store, 4)
        mode = _controller_mode(store)
        mode.role = BecomeMaster(2, 2, frozenset({1, 2}))
        mode.members = SyncStateSet(1)
        mode.members.confirmed = store.max_phy_offset - 100
        assert store.recorded_confirm is not None and store.recorded_confirm() == store.max_phy_offset - 100
        asyncio.run(mode._stop_master())
        mode.role = None
        assert store.recorded_confirm() == mode.status().confirm_offset == store.max_phy_offset - 100
    finally:
        store.close()


def _beyond_end(root: Path, end: int) -> None:
    path = root / CHECKPOINT_FILE
    saved = read_checkpoint(path)
    path.write_bytes(encode_checkpoint(CheckpointData(saved.physic_msg_timestamp, saved.logics_msg_timestamp,
                                                      saved.index_msg_timestamp, 0, end + 10_000)))
    store = _store(root)
    try:
        assert _controller_mode(store).status().confirm_offset == end
    finally:
        store.close()
