"""Controller mode's sans-IO parts: the role a controller's answer gives (RMQ-BROKER-ROLE), the epoch
file a store keeps (RMQ-HA2-EPOCH-ORDER, RMQ-EPOCH-FILE-BACKUP), the broker identity file
(RMQ-BROKER-IDENTITY), a slave's auto-switch session, truncation included (RMQ-HA2-TRUNCATE), and a
master's, with its SyncStateSet (RMQ-HA2-TRANSFER, RMQ-HA2-EXPAND, RMQ-HA2-CONFIRM)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketmq_spec.codec.ha_autoswitch import (
    MasterHandshakeReceived,
    MasterStreamDecoder,
    SlaveHandshakeReceived,
    SlaveReported,
    SlaveStreamDecoder,
    TransferReceived,
    encode_master_handshake,
    encode_slave_handshake,
    encode_slave_report,
    encode_transfer,
)
from rocketmq_spec.codec.store.epoch_file import encode_epoch_file, read_epochs
from rocketmq_spec.reference_broker.controller.identity import Identity, IdentityFiles
from rocketmq_spec.reference_broker.controller.roles import (
    BecomeMaster,
    BecomeSlave,
    MasterAnswer,
    RoleKeeper,
)
from rocketmq_spec.reference_broker.ha.autoswitch_master import AutoSwitchSlaveSession
from rocketmq_spec.reference_broker.ha.autoswitch_slave import AutoSwitchReplicaSession
from rocketmq_spec.reference_broker.ha.sync_state_set import SyncStateSet
from rocketmq_spec.reference_broker.store.epochs import EpochCache
from rocketmq_spec.spec.epoch_file import BACKUP_SUFFIX, EPOCH_FILE_NAME
from rocketmq_spec.spec.errors import HAStreamError, StoreError
from rocketmq_spec.spec.ha_autoswitch import RMQ_HA2_TRUNCATE
from rocketmq_spec.spec.ha_autoswitch_acks import ALL_ACK_IN_SYNC_STATE_SET
from tests.test_ha_sessions import SETTINGS, _fill, _store


def test_only_a_newer_master_epoch_changes_the_role() -> None:
    keeper = RoleKeeper(broker_id=2)
    assert keeper.take(MasterAnswer(None, None, 0)) is None
    assert keeper.wants_election(MasterAnswer(None, None, 1))
    assert keeper.take(MasterAnswer(1, "127.0.0.1:10911", 1)) == BecomeSlave("127.0.0.1:10911", 1, 1)
    assert keeper.take(MasterAnswer(1, "127.0.0.1:10911", 1)) is None
    assert not keeper.wants_election(MasterAnswer(None, None, 1))
    promoted = keeper.take(MasterAnswer(2, "127.0.0.1:10921", 2, 3, frozenset({2})))
    assert promoted == BecomeMaster(2, 3, frozenset({2})) and keeper.is_master
    assert keeper.take(MasterAnswer(2, "127.0.0.1:10921", 2, 4, frozenset({1, 2}))) is None
    assert keeper.sync_state_set == {1, 2} and keeper.sync_state_set_epoch == 4
    assert keeper.take(MasterAnswer(1, "127.0.0.1:10911", 1)) is None  # an older epoch is ignored


def test_epoch_cache_grows_strictly_and_keeps_a_backup(tmp_path: Path) -> None:
    cache = EpochCache(tmp_path)
    assert cache.last_epoch == -1 and read_epochs(tmp_path) is None
    assert cache.append(1, 0) and cache.append(2, 500)
    assert not cache.append(2, 900) and not cache.append(3, 500) and not cache.append(1, 900)
    path = tmp_path / EPOCH_FILE_NAME
    assert path.read_bytes() == encode_epoch_file([(1, 0), (2, 500)])
    assert path.with_name(path.name + BACKUP_SUFFIX).read_bytes() == encode_epoch_file([(1, 0)])
    cache.truncate_from_offset(500)
    assert EpochCache(tmp_path).entries == [(1, 0)]
    cache.append(3, 700)
    cache.truncate_from_epoch(3)
    assert EpochCache(tmp_path).entries == [(1, 0)]


def test_identity_files(tmp_path: Path) -> None:
    files = IdentityFiles(tmp_path)
    assert files.granted("c", "b") is None
    files.apply(Identity("c", "b", 3, "127.0.0.1:10911;1700000000000"))
    assert files.applying("c", "b") == Identity("c", "b", 3, "127.0.0.1:10911;1700000000000")
    files.grant(Identity("c", "b", 3, "x"))
    assert files.path.read_text() == "c#b#3" and files.applying("c", "b") is None
    assert files.granted("c", "b") == Identity("c", "b", 3)
    with pytest.raises(StoreError):
        files.granted("c", "other")


def test_slave_session_handshakes_transfers_and_records_epochs(tmp_path: Path) -> None:
    master, slave = _store(tmp_path / "m"), _store(tmp_path / "s")
    try:
        _fill(master, 4)
        end = master.max_phy_offset
        data = master.commitlog.data_from(0, end) or b""
        epochs = EpochCache(slave.root)
        session = AutoSwitchReplicaSession(slave, epochs, broker_id=2, now=0.0)
        (hello,) = SlaveStreamDecoder().receive_data(session.first_report(0.0))
        assert hello == SlaveHandshakeReceived(2, False, False)
        assert session.heartbeat(100.0, 5.0) is None  # no report before the handshake's answer
        report = session.received(encode_master_handshake([(1, 0)], end), 1.0)
        assert SlaveStreamDecoder().receive_data(report or b"") == [SlaveReported(0)]
        report = session.received(encode_transfer(0, 1, 0, end, data), 2.0)
        assert SlaveStreamDecoder().receive_data(report or b"") == [SlaveReported(end)]
        assert slave.commitlog.data_from(0, end) == data and epochs.entries == [(1, 0)]
        assert session.heartbeat(6.0, 5.0) is None and session.heartbeat(7.1, 5.0) is not None
    finally:
        master.close()
        slave.close()


def test_slave_session_truncates_to_the_consistent_point(tmp_path: Path) -> None:
    """The slave was master of epoch 2 and wrote a tail the new master (epoch 3) never had."""
    old, slave = _store(tmp_path / "m"), _store(tmp_path / "s")
    try:
        _fill(old, 6)
        records = list(old.commitlog.records(0))
        point = records[3].physical_offset
        epochs = EpochCache(slave.root)
        slave.append_replica(0, old.commitlog.data_from(0, old.max_phy_offset) or b"")
        epochs.append(1, 0)
        epochs.append(2, records[2].physical_offset)
        session = AutoSwitchReplicaSession(slave, epochs, broker_id=1, now=0.0)
        session.first_report(0.0)
        # the new master holds epoch 2 up to ``point`` and started epoch 3 there
        report = session.received(encode_master_handshake([(1, 0), (2, records[2].physical_offset),
                                                           (3, point)], point + 1000), 1.0)
        assert SlaveStreamDecoder().receive_data(report or b"") == [SlaveReported(point)]
        assert slave.max_phy_offset == point and epochs.entries == [(1, 0), (2, records[2].physical_offset)]
        assert slave.max_offset("T", 1) == 1  # queue entries past the cut went too

        stranger = AutoSwitchReplicaSession(slave, epochs, broker_id=1, now=0.0)
        stranger.first_report(0.0)
        with pytest.raises(HAStreamError) as refused:
            stranger.received(encode_master_handshake([(7, 0)], 100), 1.0)
        assert refused.value.clause == RMQ_HA2_TRUNCATE.id
    finally:
        old.close()
        slave.close()


def test_master_session_answers_the_handshake_and_keeps_blocks_within_an_epoch(tmp_path: Path) -> None:
    master = _store(tmp_path / "m")
    try:
        _fill(master, 6)
        records = list(master.commitlog.records(0))
        second = records[2].physical_offset
        epochs = EpochCache(master.root)
        epochs.append(1, 0)
        epochs.append(2, second)
        proposed: list[frozenset[int]] = []
        members = SyncStateSet(1, proposed.append, need=lambda: ALL_ACK_IN_SYNC_STATE_SET)
        session = AutoSwitchSlaveSession(master, epochs, members, SETTINGS, now=0.0)
        assert session.next_write(0.0) is None  # nothing before the slave's handshake
        assert session.received(encode_slave_handshake(7), 0.0) is None
        decoder = MasterStreamDecoder()
        (answer,) = decoder.receive_data(session.next_write(0.0) or b"")
        assert answer == MasterHandshakeReceived(master.max_phy_offset, 2, ((1, 0), (2, second)))
        assert session.next_write(0.1) is None  # the transfer waits for the first report
        assert session.received(encode_slave_report(0), 1.0) is None
        blocks = []
        while (unit := session.next_write(1.0)) is not None:
            blocks += decoder.receive_data(unit)
        assert all(isinstance(b, TransferReceived) for b in blocks)
        tagged = [(b.offset, b.epoch, b.epoch_start_offset) for b in blocks
                  if isinstance(b, TransferReceived)]
        assert tagged[0] == (0, 1, 0) and tagged[1] == (second, 2, second)  # epoch 1 ends the first block
        assert {epoch for _, epoch, _ in tagged[1:]} == {2}
        assert b"".join(b.data for b in blocks if isinstance(b, TransferReceived)) == \
            master.commitlog.data_from(0, master.max_phy_offset)
        assert proposed == [] and members.confirm_offset(master.max_phy_offset) == master.max_phy_offset
        session.received(encode_slave_report(master.max_phy_offset), 2.0)
        assert proposed == [frozenset({1, 7})]  # caught up: the master proposes it to the controller
        assert members.members == {1} and members.counted == {1, 7}  # pending, yet counted
        members.accepted(frozenset({1, 7}), 2)
        assert members.pending is None
        session.received(encode_slave_report(second), 3.0)
        assert members.confirm_offset(master.max_phy_offset) == second
        session.closed()
        assert proposed[-1] == frozenset({1})
    finally:
        master.close()
