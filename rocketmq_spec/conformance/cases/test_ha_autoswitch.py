"""The auto-switch HA stream of a master in controller mode, judged with the suite as its slave.

The master is a broker in controller mode that its controller elected (``controller_broker``); the suite
connects to its HA port (listenPort + 1), says who it is, reads the master's epochs and the blocks that
follow, each tagged with its epoch. For the SyncStateSet cases the suite's slave also registers at the
controller (an id of the master's set, heartbeats) so the master may add it, and leaves so it is dropped.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from rocketmq_spec.codec.bodies import decode_body, decode_properties_text, encode_properties_text
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.ha_autoswitch import TransferReceived, encode_slave_report
from rocketmq_spec.codec.store.record import decode_record
from rocketmq_spec.conformance.case import case
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.ha_peer import AutoSwitchSlavePeer
from rocketmq_spec.conformance.target import Server
from rocketmq_spec.conformance.wire import RESPONSE_TIMEOUT, Endpoint, Wire
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.commitlog import COMMITLOG_FILE_SIZE
from rocketmq_spec.spec.controller import SYNC_STATE_SET
from rocketmq_spec.spec.ha import HA_PORT_OFFSET, HA_SETTINGS, BrokerRole
from rocketmq_spec.spec.ha_autoswitch import IN_SYNC_REPLICAS_NOT_ENOUGH_REMARK

from .controller_support import BrokerSet
from .messaging import Client, Message
from .support import eventually, expect_code, expect_success, unique

HEARTBEAT_S = next(s.default for s in HA_SETTINGS if s.key == "haSendHeartbeatInterval") / 1000
ANSWER_WAIT_S = 10.0
"""How long the master has to answer a handshake or send a block: it writes on a 1 s select loop."""
BLOCK_WAIT_S = HEARTBEAT_S + ANSWER_WAIT_S
"""A block that may be a heartbeat comes within haSendHeartbeatInterval."""
SET_CHANGE_WAIT_S = 40.0
"""The master checks its SyncStateSet every checkSyncStateSetPeriod (5 s) and drops a slave gone for
haMaxTimeSlaveNotCatchup (15 s); room for a loaded machine."""
SILENCE_S = 3.0
"""How long the suite listens for a master that must say nothing yet."""
SUITE_SLAVE_ID = 1_000_000
"""A broker id no controller hands out to a real broker of the set in a run."""
MIN_ISR = "minInSyncReplicas"


@contextlib.contextmanager
def _slave(broker: Server) -> Iterator[AutoSwitchSlavePeer]:
    peer = AutoSwitchSlavePeer(Endpoint(broker.endpoint.host, broker.endpoint.port + HA_PORT_OFFSET))
    try:
        yield peer
    finally:
        peer.close()


def _handshaken(peer: AutoSwitchSlavePeer, check: Check, broker_id: int = SUITE_SLAVE_ID) -> tuple[int, int]:
    """Handshake; the master's max offset and last epoch."""
    peer.handshake(broker_id)
    answer = peer.answer(ANSWER_WAIT_S)
    check.that("the master answers the handshake", answer is not None, expected="a HANDSHAKE unit",
               actual=peer.log)
    assert answer is not None
    return answer.max_offset, answer.last_epoch


def _stored(client: Client) -> bytes:
    topic = client.create_topic(1)
    body = unique("ha2").encode()
    client.send(topic, Message(body=body))
    return body


def _set_of(broker: Server, wire: Wire, controller: Server, check: Check) -> BrokerSet:
    """The master's own broker-set at the controller (named by the broker's configuration)."""
    answer = expect_success(check, "broker config", wire.connect(broker.endpoint).call(
        RequestCode.GET_BROKER_CONFIG))
    config = decode_properties_text(answer.body or b"")
    return BrokerSet(lambda: wire.connect(controller.endpoint), check, config["brokerName"],
                     cluster=config["brokerClusterName"])


def _members(brokers: BrokerSet) -> list[int]:
    """The set's SyncStateSet at the controller."""
    answer = brokers.expect("replica info", brokers.replica_info(), 0)
    return sorted(decode_body(SYNC_STATE_SET, answer.command.body or b"{}")["syncStateSet"])


@case("RMQ-HA2-SLAVE-HANDSHAKE", "The master sends nothing on a new connection before the slave's 16-byte "
      "handshake.")
def test_master_waits_for_the_handshake(controller_broker: Server, check: Check) -> None:
    with _slave(controller_broker) as peer:
        check.equal("units before the handshake", None, peer.answer(SILENCE_S))


@case("RMQ-HA2-MASTER-HANDSHAKE", "The master answers the handshake with its epochs, oldest first, growing, "
      "the last one its last epoch, which is the master epoch its controller gave it.")
def test_master_handshake(controller_broker: Server, controller: Server, wire: Wire, check: Check) -> None:
    brokers = _set_of(controller_broker, wire, controller, check)
    with _slave(controller_broker) as peer:
        peer.handshake(SUITE_SLAVE_ID)
        answer = peer.answer(ANSWER_WAIT_S)
    check.that("an answer", answer is not None, expected="a HANDSHAKE unit", actual=peer.log)
    assert answer is not None
    epochs = [epoch for epoch, _ in answer.entries]
    starts = [start for _, start in answer.entries]
    check.that("epochs", bool(epochs) and epochs == sorted(set(epochs)) and starts == sorted(set(starts)),
               expected="at least one, growing in epoch and start", actual=answer.entries)
    check.equal("last epoch", epochs[-1], answer.last_epoch)
    check.that("max offset", answer.max_offset >= starts[-1], expected=f">= {starts[-1]}",
               actual=answer.max_offset)
    info = brokers.expect("replica info", brokers.replica_info(), 0)
    check.equal("last epoch is the controller's master epoch", info.header.get("masterEpoch"),
                answer.last_epoch)


@case("RMQ-HA2-START", "After the handshake, a report of 0 starts the transfer at the CommitLog's start: "
      "blocks of the master's epoch follow one another from there and carry a message just stored.")
def test_transfer_from_the_start(controller_broker: Server, wire: Wire, check: Check) -> None:
    client = Client(wire.connect(controller_broker.endpoint), check)
    body = _stored(client)
    with _slave(controller_broker) as peer:
        max_offset, last_epoch = _handshaken(peer, check)
        peer.report(0)
        received = bytearray()
        first: TransferReceived | None = None
        while len(received) < max_offset:
            block = peer.block(BLOCK_WAIT_S)
            check.that("a block", block is not None, expected=f"blocks up to {max_offset}",
                       actual=peer.log[-5:])
            assert block is not None
            first = first or block
            received += block.data
    assert first is not None
    check.that("the first block starts a CommitLog file", first.offset % COMMITLOG_FILE_SIZE == 0,
               expected="offset 0 of a file", actual=first.offset)
    check.equal("epoch of the bytes", last_epoch, first.epoch)
    check.that("the message is in the transferred log", body in received, expected=body, actual=len(received))


@case("RMQ-HA2-TRANSFER", "A block's 36-byte header names the epoch of its bytes, where that epoch starts "
                          "and "
      "the confirm offset; its bytes are whole CommitLog records when they start where the slave's end is.")
def test_transfer_block(controller_broker: Server, wire: Wire, check: Check) -> None:
    client = Client(wire.connect(controller_broker.endpoint), check)
    _stored(client)
    with _slave(controller_broker) as peer:
        max_offset, last_epoch = _handshaken(peer, check)
        peer.report(max_offset)
        body = _stored(client)
        block = eventually(lambda: peer.block(BLOCK_WAIT_S), lambda b: b is None or bool(b.data),
                           BLOCK_WAIT_S)
    check.that("a block with data", block is not None and bool(block.data), expected="the new message",
               actual=peer.log[-5:])
    assert block is not None
    check.equal("starts at the slave's end", max_offset, block.offset)
    check.equal("epoch", last_epoch, block.epoch)
    check.that("epoch start", block.epoch_start_offset <= block.offset, expected=f"<= {block.offset}",
               actual=block.epoch_start_offset)
    check.that("confirm offset", 0 <= block.confirm_offset <= block.offset + len(block.data),
               expected=f"0..{block.offset + len(block.data)}", actual=block.confirm_offset)
    record = decode_record(block.data, base_offset=block.offset)
    check.equal("the record sent", body, record.body)


@case("RMQ-HA2-UNIT", "A unit opening with a state that is neither HANDSHAKE nor TRANSFER makes the master "
      "close the connection.")
def test_unknown_state_closes(controller_broker: Server, check: Check) -> None:
    with _slave(controller_broker) as peer:
        _handshaken(peer, check)
        report = bytearray(encode_slave_report(0))
        report[3] = 9
        peer.send_raw(bytes(report))
        check.equal("connection closed", True, peer.wait_closed(ANSWER_WAIT_S))


def _broker_setting(client: Client, key: str) -> str:
    answer = expect_success(client.check, "broker config",
                            client.connection.call(RequestCode.GET_BROKER_CONFIG))
    return decode_properties_text(answer.body or b"")[key]


def _set_broker(client: Client, key: str, value: str) -> None:
    expect_success(client.check, f"set {key}", client.connection.call(
        RequestCode.UPDATE_BROKER_CONFIG, None, encode_properties_text({key: value})))


def _join_and_catch_up(peer: AutoSwitchSlavePeer, brokers: BrokerSet, slave_id: int, check: Check) -> int:
    """Handshake as ``slave_id``, report the master's end and wait until the controller lists the slave;
    the end reported."""
    max_offset, _ = _handshaken(peer, check, slave_id)
    peer.report(max_offset)
    joined = eventually(lambda: _members(brokers), lambda ids: slave_id in ids, SET_CHANGE_WAIT_S)
    check.that("joined", slave_id in joined, expected=f"{slave_id} in the SyncStateSet", actual=joined)
    return max_offset


@pytest.mark.alone
@case("RMQ-HA2-MIN-ISR", "With minInSyncReplicas=2 and the master alone in its SyncStateSet a send is 1 "
      "SYSTEM_ERROR \"in-sync replicas not enough\"; once a slave has joined the set a send is stored.")
def test_min_in_sync_replicas(controller_broker: Server, controller: Server, wire: Wire,
                              check: Check) -> None:
    client = Client(wire.connect(controller_broker.endpoint), check)
    topic = client.create_topic(1)
    brokers = _set_of(controller_broker, wire, controller, check)
    slave_id = brokers.expect("next id", brokers.next_id(), 0).header["nextBrokerId"]
    brokers.join(slave_id)
    # a slave that joins and leaves again leaves the master alone with no change of its set pending (a
    # change the controller refused, say for a slave it does not know, stays pending and counts)
    with _slave(controller_broker) as peer:
        _join_and_catch_up(peer, brokers, slave_id, check)
    alone = eventually(lambda: _members(brokers), lambda ids: slave_id not in ids, SET_CHANGE_WAIT_S)
    check.that("the master alone", slave_id not in alone, expected="only the master", actual=alone)
    before = _broker_setting(client, MIN_ISR)
    _set_broker(client, MIN_ISR, "2")
    try:
        refused = client.send_request(topic, Message(body=b"too few replicas"))
        expect_code(check, "send with the master alone", refused, ResponseCode.SYSTEM_ERROR)
        check.equal("remark", IN_SYNC_REPLICAS_NOT_ENOUGH_REMARK, refused.remark)
        with _slave(controller_broker) as peer:
            _join_and_catch_up(peer, brokers, slave_id, check)
            client.send(topic, Message(body=b"enough replicas"))
    finally:
        _set_broker(client, MIN_ISR, before)


@case("RMQ-HA2-EXPAND", "A registered, alive slave whose report reaches the master's end joins the "
      "SyncStateSet at the controller; gone, it is dropped again (RMQ-HA2-SHRINK).")
def test_sync_state_set_follows_the_slave(controller_broker: Server, controller: Server, wire: Wire,
                                          check: Check) -> None:
    brokers = _set_of(controller_broker, wire, controller, check)
    slave_id = brokers.expect("next id", brokers.next_id(), 0).header["nextBrokerId"]
    brokers.join(slave_id)
    with _slave(controller_broker) as peer:
        _join_and_catch_up(peer, brokers, slave_id, check)
    left = eventually(lambda: _members(brokers), lambda ids: slave_id not in ids, SET_CHANGE_WAIT_S)
    check.that("dropped once gone", slave_id not in left, expected=f"{slave_id} not in it", actual=left)



# -- a member that acknowledges only when told: what a send waits for, what a consumer reads ---------------

ALL_ACK = "allAckInSyncStateSet"
ANSWER_TRIES = 3
"""Sends tried until one's block reaches the suite before slaveTimeout (3 s) runs out: on a loaded machine
a master may answer FLUSH_SLAVE_TIMEOUT first, which says nothing about waiting."""
LOOK_S = 0.5
"""How long the suite reads for an answer that must not have come yet (one already sent is in the socket's
buffer: this is not a bound on the master)."""


@dataclass
class _Member:
    """The suite's slave, a member of the master's SyncStateSet, holding back its acknowledgements."""

    peer: AutoSwitchSlavePeer
    check: Check
    end: int
    """The end of what it received, which it acknowledges when told."""
    unread: bytearray = field(default_factory=bytearray)

    def receive(self, body: bytes) -> None:
        """Read blocks until the bytes received since the last acknowledgement hold ``body``."""
        while body not in self.unread:
            block = self.peer.block(BLOCK_WAIT_S)
            self.check.that("a block", block is not None, expected=f"the record of {body!r}",
                            actual=self.peer.log[-5:])
            assert block is not None
            if block.data and block.offset == self.end:
                self.unread += block.data
                self.end += len(block.data)

    def acknowledge(self) -> None:
        self.peer.report(self.end)
        self.unread.clear()


@contextlib.contextmanager
def _held_member(broker: Server, controller: Server, wire: Wire,
                 check: Check) -> Iterator[tuple[Client, str, _Member]]:
    """With allAckInSyncStateSet=true, a one-queue topic and the suite's slave in the master's SyncStateSet,
    caught up; the setting is put back and the slave leaves after."""
    client = Client(wire.connect(broker.endpoint), check)
    topic = client.create_topic(1)
    brokers = _set_of(broker, wire, controller, check)
    slave_id = brokers.expect("next id", brokers.next_id(), 0).header["nextBrokerId"]
    brokers.join(slave_id)
    before = _broker_setting(client, ALL_ACK)
    _set_broker(client, ALL_ACK, "true")
    try:
        with _slave(broker) as peer:
            end = _join_and_catch_up(peer, brokers, slave_id, check)
            yield client, topic, _Member(peer, check, end)
    finally:
        _set_broker(client, ALL_ACK, before)


def _put(client: Client, topic: str, body: bytes, *, wait: bool = True) -> int:
    """A send put on the wire, its answer not read yet: the opaque it comes back with."""
    command = client.send_command(topic, Message(body=body, wait=wait))
    client.connection.send(command)
    return command.opaque


def _answer(client: Client, opaque: int, timeout: float = RESPONSE_TIMEOUT) -> RemotingCommand:
    answer = client.connection.response_to(opaque, timeout)
    client.check.that("a send answered", answer is not None, expected=f"an answer within {timeout:.0f} s",
                      actual=None)
    assert answer is not None
    return answer


def _queue_end(client: Client, topic: str) -> int:
    header = client.answer("max offset", RequestCode.GET_MAX_OFFSET, {"topic": topic, "queueId": 0})
    return int(header["offset"])


def _held_send(client: Client, topic: str, member: _Member) -> bytes:
    """A send with WAIT=true the member receives and does not acknowledge: 12 FLUSH_SLAVE_TIMEOUT."""
    body = unique("held").encode()
    opaque = _put(client, topic, body)
    member.receive(body)
    expect_code(client.check, "a send the member did not acknowledge", _answer(client, opaque),
                ResponseCode.FLUSH_SLAVE_TIMEOUT)
    return body


@pytest.mark.alone
@case("RMQ-HA2-SYNC-MASTER", "The elected master says brokerRole SYNC_MASTER; while a member of its "
      "SyncStateSet holds back its acknowledgement a send with WAIT=false is answered SUCCESS at once and "
      "one with WAIT=true is not answered SUCCESS.")
def test_elected_master_is_sync_master(controller_broker: Server, controller: Server, wire: Wire,
                                       check: Check) -> None:
    with _held_member(controller_broker, controller, wire, check) as (client, topic, member):
        check.equal("brokerRole", BrokerRole.SYNC_MASTER.value, _broker_setting(client, "brokerRole"))
        body = unique("nowait").encode()
        unwaited = _answer(client, _put(client, topic, body, wait=False))
        expect_success(check, "a send with WAIT=false", unwaited)
        member.receive(body)
        _held_send(client, topic, member)
        member.acknowledge()


@pytest.mark.alone
@case("RMQ-HA2-ALL-ACK", "With allAckInSyncStateSet=true a send with WAIT=true is answered 12 "
      "FLUSH_SLAVE_TIMEOUT (not 11 SLAVE_NOT_AVAILABLE) when a member of the SyncStateSet does not "
      "acknowledge it, and SUCCESS only after every member has acknowledged its end.")
def test_all_ack_in_sync_state_set(controller_broker: Server, controller: Server, wire: Wire,
                                   check: Check) -> None:
    with _held_member(controller_broker, controller, wire, check) as (client, topic, member):
        _held_send(client, topic, member)
        member.acknowledge()
        timed_out = []
        for _ in range(ANSWER_TRIES):
            body = unique("acked").encode()
            opaque = _put(client, topic, body)
            member.receive(body)
            early = client.connection.response_to(opaque, LOOK_S)
            member.acknowledge()
            answer = early or _answer(client, opaque)
            if answer.code == ResponseCode.FLUSH_SLAVE_TIMEOUT:
                timed_out.append(answer.code)  # slaveTimeout ran out before the member's ack came
                continue
            check.equal("answered before the member acknowledged", None,
                        None if early is None else f"{early.code} {early.remark or ''}".strip())
            expect_success(check, "the send once the member acknowledged", answer)
            return
        check.that("a send answered once acknowledged", False, expected="SUCCESS after the ack",
                   actual=f"{timed_out}: each timed out before the member had received it")


@pytest.mark.alone
@case("RMQ-HA2-CONFIRM-READ", "A message past the confirm offset (its member has not acknowledged it) is "
      "neither counted in its queue's max offset nor pulled; once the member acknowledges it, it is both.")
def test_confirm_offset_bounds_reads(controller_broker: Server, controller: Server, wire: Wire,
                                     check: Check) -> None:
    with _held_member(controller_broker, controller, wire, check) as (client, topic, member):
        body = _held_send(client, topic, member)
        check.equal("max offset while unacknowledged", 0, _queue_end(client, topic))
        held = client.pull(topic, 0, 0)
        check.that("pull while unacknowledged", held.code != ResponseCode.SUCCESS,
                   expected="no message found", actual=held.code)
        member.acknowledge()
        seen = eventually(lambda: _queue_end(client, topic), lambda end: end >= 1, ANSWER_WAIT_S)
        check.equal("max offset once acknowledged", 1, seen)
        check.equal("the message pulled", [body], [r.body for r in client.pulled(topic).records])
