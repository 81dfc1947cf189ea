"""Transactions a producer never ended: the broker checks them back with the producer.

Each case registers a connection as the only producer of a fresh group, sends a half message and does
not end it. The broker must then ask (CHECK_TRANSACTION_STATE, oneway, to that connection) once the half
message is older than transactionTimeOut; how soon depends on the target's transactionCheckInterval, so a
case waits up to 4.9.8's defaults (6 s + 60 s) — a target started with a short interval answers in seconds.

A target checks every half message due in one pass per interval, so the check-back cases do not each
send and wait in turn (an interval each, one after another): the first of them in a process sends the
half messages of all of them (:class:`SentAhead`), and they run before the other cases, which fill the
wait. What each case judges is unchanged: its own half message, connection and check-back.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from rocketmq_spec.codec.bodies import encode_body
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.custom_header import decode_header
from rocketmq_spec.codec.store import MessageRecord, decode_record, decode_records
from rocketmq_spec.conformance.case import Row, case, table, waits_on_target
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.recorder import Exchange
from rocketmq_spec.conformance.target import Server
from rocketmq_spec.conformance.verdict import Outcome
from rocketmq_spec.conformance.wire import Wire, WireError
from rocketmq_spec.spec.behaviour import (
    TRANSACTION_CHECK_INTERVAL_MS,
    TRANSACTION_CHECK_MAX,
    TRANSACTION_TIMEOUT_MS,
)
from rocketmq_spec.spec.bodies import HEARTBEAT_DATA
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.headers import CHECK_TRANSACTION_STATE_REQUEST
from rocketmq_spec.spec.message_id import decode_offset_msg_id
from rocketmq_spec.spec.properties import PropertyKey
from rocketmq_spec.spec.sysflag import TransactionType
from rocketmq_spec.spec.system_topics import TRANS_CHECK_MAX_TIME_TOPIC, TRANS_HALF_TOPIC

from .messaging import Client, Message, SendResult, pull_header
from .support import expect_code, expect_success, unique

CHECK_WAIT_S = (TRANSACTION_TIMEOUT_MS + TRANSACTION_CHECK_INTERVAL_MS) / 1000 + 10
"""Longest wait for a check-back: a 4.9.8 broker with default settings sends it within timeout +
interval; 10 s of headroom for a loaded machine."""
HALF_BODY = b"check me"
REAL_QUEUE = 1


def _register_producer(client: Client) -> None:
    body = encode_body(HEARTBEAT_DATA, {"clientID": unique("tx-producer"), "consumerDataSet": [],
                                        "producerDataSet": [{"groupName": client.producer_group}]})
    expect_success(client.check, "HEART_BEAT of the producer", client.connection.call(RequestCode.HEART_BEAT,
                                                                                       body=body))


@dataclass
class Unended:
    """A fresh topic, a connection registered as its group's only producer, and a half message sent to the
    topic that is never ended (unless no case takes it)."""

    client: Client
    topic: str
    message: Message
    sent: SendResult


def _unended(client: Client, body: bytes) -> Unended:
    topic = client.create_topic()
    _register_producer(client)
    message = Message(body, tags="tx", sys_flag=int(TransactionType.PREPARED),
                      user={PropertyKey.TRANSACTION_PREPARED: "true", PropertyKey.PRODUCER_GROUP:
                            client.producer_group})
    return Unended(client, topic, message, client.send(topic, message, queue_id=REAL_QUEUE))


@dataclass
class _Ahead:
    wire: Wire
    check: Check
    unended: Unended | None = None
    error: BaseException | None = None


class SentAhead:
    """The half messages of this run's check-back cases, sent together before any of them waits.

    A parallel run's processes cannot know which cases each will run, so each one sends a half message
    for every check-back case; the ones no case took are rolled back (END_TRANSACTION, as their producer)
    when the run ends.
    """

    def __init__(self, broker: Server, cases: list[str]) -> None:
        self.broker = broker
        self.waiting = {case: self._send(broker) for case in cases}

    @staticmethod
    def _send(broker: Server) -> _Ahead:
        ahead = _Ahead(Wire(Exchange()), Check())
        try:
            ahead.unended = _unended(Client(ahead.wire.connect(broker.endpoint), ahead.check), HALF_BODY)
        except (Outcome, WireError, OSError) as exc:  # the case that takes it is judged on it
            ahead.error = exc
        return ahead

    def take(self, case_id: str, check: Check, wire: Wire) -> Unended:
        """The case's half message, its connection and log moved into the case's, its observations so far
        in the case's check; what went wrong sending it is raised in the case."""
        ahead = self.waiting.pop(case_id, None) or self._send(self.broker)
        wire.adopt(ahead.wire)
        check.observations[:0] = ahead.check.observations
        if ahead.error is not None:
            raise ahead.error
        assert ahead.unended is not None
        ahead.unended.client.check = check
        return ahead.unended

    def close(self) -> None:
        for ahead in self.waiting.values():
            if ahead.unended is not None:
                with contextlib.suppress(Outcome, WireError, OSError):
                    _end_unchecked(ahead.unended, TransactionType.ROLLBACK)
            ahead.wire.close()
        self.waiting.clear()


def _end_unchecked(unended: Unended, decision: TransactionType) -> RemotingCommand:
    """END_TRANSACTION as the producer itself sends it, without a check-back."""
    return unended.client.call(RequestCode.END_TRANSACTION, {
        "producerGroup": unended.client.producer_group, "tranStateTableOffset": unended.sent.queue_offset,
        "commitLogOffset": decode_offset_msg_id(unended.sent.msg_ids[0]).offset,
        "commitOrRollback": int(decision), "fromTransactionCheck": False, "msgId": unended.message.uniq,
        "transactionId": unended.message.uniq})


@pytest.fixture(scope="session")
def sent_ahead(request: pytest.FixtureRequest, broker: Server) -> Iterator[SentAhead]:
    cases = [item.nodeid for item in request.session.items if "unended" in getattr(item, "fixturenames", ())]
    ahead = SentAhead(broker, cases)
    yield ahead
    ahead.close()


@pytest.fixture
def unended(request: pytest.FixtureRequest, sent_ahead: SentAhead, check: Check, wire: Wire) -> Unended:
    return sent_ahead.take(request.node.nodeid, check, wire)


def _next_check(client: Client, wait: float = CHECK_WAIT_S) -> RemotingCommand | None:
    """The next CHECK_TRANSACTION_STATE pushed to this connection within ``wait`` seconds."""
    deadline = time.monotonic() + wait
    while (left := deadline - time.monotonic()) > 0:
        pushed = client.connection.next_command(left)
        if pushed is not None and pushed.code == RequestCode.CHECK_TRANSACTION_STATE \
                and not pushed.is_response:
            return pushed
    return None


def _checked(client: Client, message: Message) -> RemotingCommand:
    check = _next_check(client)
    client.check.that("CHECK_TRANSACTION_STATE received", check is not None, expected="a check-back",
                      actual=f"nothing within {CHECK_WAIT_S:.0f} s")
    assert check is not None
    header = decode_header(CHECK_TRANSACTION_STATE_REQUEST, check.ext_fields)
    client.check.equal("msgId", message.uniq, header["msgId"])
    return check


def _end(client: Client, check: RemotingCommand, decision: TransactionType) -> RemotingCommand:
    header = decode_header(CHECK_TRANSACTION_STATE_REQUEST, check.ext_fields)
    return client.call(RequestCode.END_TRANSACTION, {
        "producerGroup": client.producer_group, "tranStateTableOffset": header["tranStateTableOffset"],
        "commitLogOffset": header["commitLogOffset"], "commitOrRollback": int(decision),
        "fromTransactionCheck": True, "msgId": header["msgId"], "transactionId": header["transactionId"]})


@waits_on_target
@case("RMQ-BRK-TXN-CHECK", "A half message left unended is checked back with its producer: header and "
      "body name a new copy in the half queue and the message under its real topic, checked once.")
def test_check_back(unended: Unended, check: Check) -> None:
    client, topic, message = unended.client, unended.topic, unended.message
    pushed = _checked(client, message)
    header = decode_header(CHECK_TRANSACTION_STATE_REQUEST, pushed.ext_fields)
    check.equal("transactionId", message.uniq, header["transactionId"])
    check.that("oneway", pushed.is_oneway, expected="the ONEWAY flag", actual=pushed.flag)
    offset_id = header.get("offsetMsgId")
    check.equal("offsetMsgId names commitLogOffset", header["commitLogOffset"],
                decode_offset_msg_id(offset_id).offset if offset_id else None)
    copy = _view(client, header["commitLogOffset"])
    check.equal("(topic, queue offset) of the copy", (TRANS_HALF_TOPIC, header["tranStateTableOffset"]),
                (copy.topic, copy.queue_offset) if copy else None)
    shown = decode_record(pushed.body or b"")
    check.equal("(topic, queueId, body, UNIQ_KEY) in the body",
                (topic, REAL_QUEUE, HALF_BODY, message.uniq),
                (shown.topic, shown.queue_id, shown.body, shown.uniq_key))
    check.equal("TRANSACTION_CHECK_TIMES", "1", shown.properties.get(PropertyKey.TRANSACTION_CHECK_TIMES))


def _view(client: Client, offset: int) -> MessageRecord | None:
    response = client.call(RequestCode.VIEW_MESSAGE_BY_ID, {"offset": offset})
    return decode_record(response.body) if response.code == ResponseCode.SUCCESS and response.body else None


@table("decision", [
    Row("commit", "RMQ-BRK-TXN-CHECK-ANSWER", "Answering a check-back with COMMIT delivers the message to "
        "its real topic and queue.", TransactionType.COMMIT),
    Row("rollback", "RMQ-BRK-TXN-CHECK-ANSWER", "Answering a check-back with ROLLBACK delivers nothing.",
        TransactionType.ROLLBACK),
])
@waits_on_target
def test_check_back_answer(decision: TransactionType, unended: Unended, check: Check) -> None:
    client, topic, message = unended.client, unended.topic, unended.message
    answer = _end(client, _checked(client, message), decision)
    expect_success(check, "END_TRANSACTION answering the check", answer)
    if decision is TransactionType.COMMIT:
        client.expect_stored(topic, REAL_QUEUE, 1)
        records = client.pulled(topic, REAL_QUEUE).records
        check.equal("delivered (body, UNIQ_KEY, type)",
                    [(HALF_BODY, message.uniq, TransactionType.COMMIT)],
                    [(r.body, r.uniq_key, r.transaction_type) for r in records])
    else:
        expect_code(check, "pull after ROLLBACK", client.pull(topic, REAL_QUEUE, 0),
                    ResponseCode.PULL_NOT_FOUND)


@pytest.mark.slow
@case("RMQ-BRK-TXN-CHECK-MAX", "A half message never answered is checked until the limit, then moved to "
      "TRANS_CHECK_MAX_TIME_TOPIC and not checked again.")
def test_check_limit(client: Client, check: Check) -> None:
    abandoned = _unended(client, b"abandoned")
    topic, message = abandoned.topic, abandoned.message
    counts: list[str | None] = []
    while len(counts) <= TRANSACTION_CHECK_MAX and (pushed := _next_check(client)) is not None:
        counts.append(decode_record(pushed.body or b"").properties.get(PropertyKey.TRANSACTION_CHECK_TIMES))
    check.equal("TRANSACTION_CHECK_TIMES of the check-backs", [str(n) for n in range(1, len(counts) + 1)],
                counts)
    check.that("checked at most transactionCheckMax times", 0 < len(counts) <= TRANSACTION_CHECK_MAX,
               expected=f"1..{TRANSACTION_CHECK_MAX} check-backs", actual=len(counts))
    moved = [r for r in _discarded(client) if r.uniq_key == message.uniq]
    last = counts[-1] if counts else None
    check.equal(f"(REAL_TOPIC, TRANSACTION_CHECK_TIMES) in {TRANS_CHECK_MAX_TIME_TOPIC}", [(topic, last)],
                [(r.properties.get(PropertyKey.REAL_TOPIC),
                  r.properties.get(PropertyKey.TRANSACTION_CHECK_TIMES)) for r in moved])


def _discarded(client: Client) -> list[MessageRecord]:
    """Every record of the discard topic's queue 0 (other cases' and runs' included)."""
    records: list[MessageRecord] = []
    offset = 0
    while (response := client.pull(TRANS_CHECK_MAX_TIME_TOPIC, 0, offset)).code == ResponseCode.SUCCESS:
        records.extend(decode_records(response.body))
        offset = pull_header(response)["nextBeginOffset"]
    return records
