"""A controller-mode master as a SYNC_MASTER: what a put waits for and what consumers may read, sans I/O
(``rocketmq_spec.spec.ha_autoswitch_acks``: RMQ-HA2-ALL-ACK, RMQ-HA2-CONFIRM-READ)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from rocketmq_spec.codec.store.record import HostPort, MessageRecord
from rocketmq_spec.reference_broker.ha.sync_state_set import SyncStateSet
from rocketmq_spec.reference_broker.store.config import StoreConfig
from rocketmq_spec.reference_broker.store.confirm_gate import ConfirmGate
from rocketmq_spec.reference_broker.store.message import InnerMessage
from rocketmq_spec.reference_broker.store.message_store import MessageStore
from rocketmq_spec.reference_broker.store.status import PutMessageStatus
from rocketmq_spec.spec.codes import ResponseCode
from rocketmq_spec.spec.ha import BrokerRole
from rocketmq_spec.spec.ha_autoswitch_acks import (
    ALL_ACK_IN_SYNC_STATE_SET,
    CONFIRM_OFFSET_RULES,
    CONTROLLER_MASTER_ANSWERS,
    need_ack_nums,
    waits_for_replicas,
)
from tests.test_ha_sessions import _fill, _store

MASTER, SLAVE, OTHER = 1, 2, 3


def _members(*, all_ack: bool = True, in_sync_replicas: int = 1, end: int = 1000) -> SyncStateSet:
    members = SyncStateSet(MASTER, end=lambda: end, need=lambda: need_ack_nums(all_ack, in_sync_replicas))
    members.accepted(frozenset({MASTER, SLAVE, OTHER}), 1)
    return members


def test_the_ack_count_follows_all_ack_in_sync_state_set() -> None:
    assert need_ack_nums(True, 1) == need_ack_nums(True, 3) == ALL_ACK_IN_SYNC_STATE_SET
    assert need_ack_nums(False, 2) == 2
    assert [waits_for_replicas(n) for n in (ALL_ACK_IN_SYNC_STATE_SET, 0, 1, 2)] == [True, False, False, True]


def test_the_answers_table_names_response_codes() -> None:
    codes = {"PUT_OK": ResponseCode.SUCCESS, "FLUSH_SLAVE_TIMEOUT": ResponseCode.FLUSH_SLAVE_TIMEOUT,
             "IN_SYNC_REPLICAS_NOT_ENOUGH": ResponseCode.SYSTEM_ERROR}
    for answer in CONTROLLER_MASTER_ANSWERS:
        assert codes[answer.put_status] == answer.response_code
        assert PutMessageStatus[answer.put_status].stored is answer.stored
    assert "SLAVE_NOT_AVAILABLE" not in {answer.put_status for answer in CONTROLLER_MASTER_ANSWERS}
    assert {rule.broker for rule in CONFIRM_OFFSET_RULES} == {"master", "slave"}


def test_all_ack_waits_for_every_member() -> None:
    members = _members()
    members.acked(SLAVE, 400, 1000, 0, 0.0)
    members.acked(OTHER, 300, 1000, 0, 0.0)
    assert members.slave_ok(500)
    assert members.request(300).result(0) is True
    wait = members.request(500)
    members.acked(SLAVE, 500, 1000, 0, 1.0)
    assert not wait.done()  # OTHER has not got it
    members.acked(OTHER, 600, 1000, 0, 1.0)
    assert wait.result(0) is True


def test_a_member_whose_connection_closes_is_not_waited_for() -> None:
    members = _members()
    members.acked(SLAVE, 500, 1000, 0, 0.0)
    members.acked(OTHER, 100, 1000, 0, 0.0)
    wait = members.request(500)
    assert not wait.done()
    members.gone(OTHER)
    assert wait.result(0) is True
    assert members.members == {MASTER, SLAVE} and members.pending == {MASTER, SLAVE}


def test_a_member_never_connected_times_the_put_out() -> None:
    members = _members()
    members.acked(SLAVE, 900, 1000, 0, 0.0)
    wait = members.request(500)
    assert not wait.done()
    members.forget(wait)
    members.acked(SLAVE, 1000, 1000, 0, 1.0)
    assert not wait.done()


def test_a_pending_expansion_is_waited_for_too() -> None:
    members = SyncStateSet(MASTER, lambda proposed: None, end=lambda: 1000,
                           need=lambda: ALL_ACK_IN_SYNC_STATE_SET)
    members.accepted(frozenset({MASTER}), 1)
    assert members.request(1000).result(0) is True  # alone: answered at once
    members.acked(SLAVE, 1000, 1000, 0, 0.0)
    assert members.pending == {MASTER, SLAVE}
    wait = members.request(1200)
    assert not wait.done()
    members.acked(SLAVE, 1200, 1200, 0, 1.0)
    assert wait.result(0) is True


def test_without_all_ack_in_sync_replicas_counts_any_connection() -> None:
    assert _members(all_ack=False).request(10 ** 9).result(0) is True  # the master's own ack
    members = _members(all_ack=False, in_sync_replicas=2)
    wait = members.request(500)
    members.acked(OTHER, 500, 1000, 0, 0.0)
    assert wait.result(0) is True


def test_all_ack_in_sync_state_set_changes_on_a_running_master() -> None:
    """Java reads allAckInSyncStateSet at each put and each confirm offset: UPDATE_BROKER_CONFIG turns it
    on without a role change; a put already waiting keeps the count it was put with."""
    settings = {"allAckInSyncStateSet": False}
    members = SyncStateSet(MASTER, end=lambda: 1000,
                           need=lambda: need_ack_nums(settings["allAckInSyncStateSet"], 1))
    members.accepted(frozenset({MASTER, SLAVE}), 1)
    members.acked(SLAVE, 600, 1000, 0, 0.0)
    assert members.request(1000).result(0) is True
    assert members.confirm_offset(1000) == 1000
    settings["allAckInSyncStateSet"] = True
    assert members.confirm_offset(1000) == 600
    wait = members.request(1000)
    settings["allAckInSyncStateSet"] = False
    members.acked(SLAVE, 900, 1000, 0, 0.0)
    assert not wait.done()
    members.acked(SLAVE, 1000, 1000, 0, 0.0)
    assert wait.result(0) is True


def test_confirm_offset_rules() -> None:
    assert _members(all_ack=False).confirm_offset(1000) == 1000
    alone = SyncStateSet(MASTER, end=lambda: 1000, need=lambda: ALL_ACK_IN_SYNC_STATE_SET)
    assert alone.confirm_offset(1000) == 1000
    members = _members()
    members.acked(SLAVE, 700, 1000, 0, 0.0)
    members.acked(OTHER, 400, 1000, 0, 0.0)
    assert members.confirm_offset(1000) == 400
    members.acked(OTHER, 800, 1000, 0, 0.0)
    assert members.confirm_offset(1000) == 700
    members.gone(SLAVE)  # the set shrinks at once, the confirm offset moves at the next member's ack
    assert members.confirm_offset(1000) == 700
    members.acked(OTHER, 800, 1000, 0, 1.0)
    assert members.confirm_offset(1000) == 800
    stale = _members()
    stale.confirmed = 300
    stale.acked(SLAVE, 900, 1000, 0, 0.0)  # OTHER has no connection: the value is kept
    assert stale.confirm_offset(1000) == 300


def test_the_gate_dispatches_in_order_up_to_the_limit(tmp_path: Path) -> None:
    store = _store(tmp_path)
    try:
        _fill(store, 3)
        records = list(store.commitlog.records(0))
    finally:
        store.close()
    gate, seen = ConfirmGate(), list[MessageRecord]()
    limit = [records[0].physical_offset + records[0].total_size]
    gate.limit = lambda end: limit[0]
    gate.written(records, records[-1].physical_offset + records[-1].total_size, seen.append)
    assert seen == records[:1] and gate.held == 2
    gate.truncate(records[2].physical_offset)
    limit[0] = 10 ** 9
    gate.release(0, seen.append)
    assert seen == records[:2] and gate.held == 0


def _sync_master(root: Path, timeout_ms: int) -> tuple[MessageStore, SyncStateSet]:
    """A SYNC_MASTER store whose SyncStateSet is itself and a slave that has acknowledged nothing yet."""
    store = MessageStore(StoreConfig(root, broker_role=BrokerRole.SYNC_MASTER, slave_timeout_ms=timeout_ms,
                                     max_hash_slot_num=100, max_index_num=400)).open()
    members = SyncStateSet(MASTER, end=lambda: store.max_phy_offset, need=lambda: ALL_ACK_IN_SYNC_STATE_SET)
    members.accepted(frozenset({MASTER, SLAVE}), 1)
    members.acked(SLAVE, 0, 0, 0, 0.0)
    store.use_replica_waits(members)
    store.confirm_gate.limit = members.confirm_offset
    store.in_sync_replicas_enough = lambda: True
    return store, members


def _message(body: bytes, wait: str = "true") -> InnerMessage:
    return InnerMessage("T", 0, body, {"WAIT": wait}, 1_700_000_000_000, HostPort("127.0.0.1", 1))


def test_a_put_times_out_and_stays_unreadable_until_acknowledged(tmp_path: Path) -> None:
    store, members = _sync_master(tmp_path, timeout_ms=50)
    try:
        late = store.put_message(_message(b"late"))
        assert late.status is PutMessageStatus.FLUSH_SLAVE_TIMEOUT
        assert store.max_phy_offset > 0 and store.max_offset("T", 0) == 0  # stored, not readable
        unwaited = store.put_message(_message(b"no wait", wait="false"))
        assert unwaited.status is PutMessageStatus.PUT_OK and store.max_offset("T", 0) == 0
        members.acked(SLAVE, store.max_phy_offset, store.max_phy_offset, 0, 1.0)
        store.confirm_advanced()
        assert store.max_offset("T", 0) == 2
    finally:
        store.close()


@pytest.mark.parametrize("acknowledge", [True, False])
def test_a_put_is_answered_once_the_member_acknowledges(tmp_path: Path, acknowledge: bool) -> None:
    store, members = _sync_master(tmp_path, timeout_ms=60_000 if acknowledge else 50)
    try:
        answered: list[PutMessageStatus] = []
        putter = threading.Thread(target=lambda: answered.append(store.put_message(_message(b"m")).status))
        putter.start()
        while store.max_phy_offset == 0:
            threading.Event().wait(0.01)
        if acknowledge:
            members.acked(SLAVE, store.max_phy_offset, store.max_phy_offset, 0, 1.0)
        putter.join()
        expected = PutMessageStatus.PUT_OK if acknowledge else PutMessageStatus.FLUSH_SLAVE_TIMEOUT
        assert answered == [expected]
    finally:
        store.close()
