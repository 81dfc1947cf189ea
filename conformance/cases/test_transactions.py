"""Transactions a producer never ended: the broker checks them back with the producer.

Each case registers its connection as the only producer of a fresh group, sends a half message and does
not end it. The broker must then ask (CHECK_TRANSACTION_STATE, oneway, to that connection) once the half
message is older than transactionTimeOut; how soon depends on the target's transactionCheckInterval, so a
case waits up to 4.9.8's defaults (6 s + 60 s) — a target started with a short interval answers in seconds.
"""

from __future__ import annotations

import time

import pytest

from codec.bodies import encode_body
from codec.command import RemotingCommand
from codec.custom_header import decode_header
from codec.store import MessageRecord, decode_record, decode_records
from conformance.case import Row, case, table
from conformance.checks import Check
from spec.behaviour import TRANSACTION_CHECK_INTERVAL_MS, TRANSACTION_CHECK_MAX, TRANSACTION_TIMEOUT_MS
from spec.bodies import HEARTBEAT_DATA
from spec.codes import RequestCode, ResponseCode
from spec.headers import CHECK_TRANSACTION_STATE_REQUEST
from spec.message_id import decode_offset_msg_id
from spec.properties import PropertyKey
from spec.sysflag import TransactionType

from .messaging import Client, Message, pull_header
from .support import eventually, expect_code, expect_success, unique

CHECK_WAIT_S = (TRANSACTION_TIMEOUT_MS + TRANSACTION_CHECK_INTERVAL_MS) / 1000 + 10
"""Longest wait for a check-back: a 4.9.8 broker with default settings sends it within timeout +
interval; 10 s of headroom for a loaded machine."""
HALF_QUEUE = "RMQ_SYS_TRANS_HALF_TOPIC"
DISCARD_TOPIC = "TRANS_CHECK_MAX_TIME_TOPIC"
REAL_QUEUE = 1


def _register_producer(client: Client) -> None:
    body = encode_body(HEARTBEAT_DATA, {"clientID": unique("tx-producer"), "consumerDataSet": [],
                                        "producerDataSet": [{"groupName": client.producer_group}]})
    expect_success(client.check, "HEART_BEAT of the producer", client.connection.call(RequestCode.HEART_BEAT,
                                                                                       body=body))


def _unended(client: Client, body: bytes) -> tuple[str, Message]:
    """A fresh topic, this connection registered as its group's producer, and a half message sent to the
    topic that is never ended."""
    topic = client.create_topic()
    _register_producer(client)
    return topic, _send_half(client, topic, body)


def _send_half(client: Client, topic: str, body: bytes) -> Message:
    message = Message(body, tags="tx", sys_flag=int(TransactionType.PREPARED),
                      user={PropertyKey.TRANSACTION_PREPARED: "true", PropertyKey.PRODUCER_GROUP:
                            client.producer_group})
    client.send(topic, message, queue_id=REAL_QUEUE)
    return message


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


@case("RMQ-BRK-TXN-CHECK", "A half message left unended is checked back with its producer: header and "
      "body name a new copy in the half queue and the message under its real topic, checked once.")
def test_check_back(client: Client, check: Check) -> None:
    topic, message = _unended(client, b"check me")
    pushed = _checked(client, message)
    header = decode_header(CHECK_TRANSACTION_STATE_REQUEST, pushed.ext_fields)
    check.equal("transactionId", message.uniq, header["transactionId"])
    check.that("oneway", pushed.is_oneway, expected="the ONEWAY flag", actual=pushed.flag)
    offset_id = header.get("offsetMsgId")
    check.equal("offsetMsgId names commitLogOffset", header["commitLogOffset"],
                decode_offset_msg_id(offset_id).offset if offset_id else None)
    copy = _view(client, header["commitLogOffset"])
    check.equal("(topic, queue offset) of the copy", (HALF_QUEUE, header["tranStateTableOffset"]),
                (copy.topic, copy.queue_offset) if copy else None)
    shown = decode_record(pushed.body or b"")
    check.equal("(topic, queueId, body, UNIQ_KEY) in the body",
                (topic, REAL_QUEUE, b"check me", message.uniq),
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
def test_check_back_answer(decision: TransactionType, client: Client, check: Check) -> None:
    topic, message = _unended(client, b"decide me")
    answer = _end(client, _checked(client, message), decision)
    expect_success(check, "END_TRANSACTION answering the check", answer)
    if decision is TransactionType.COMMIT:
        # the committed copy reaches the consume queue after the answer (4.9.8 dispatches asynchronously)
        delivered = eventually(lambda: client.pull(topic, REAL_QUEUE, 0),
                               lambda response: response.code == ResponseCode.SUCCESS)
        records = decode_records(expect_success(check, "pull after COMMIT", delivered).body)
        check.equal("delivered (body, UNIQ_KEY, type)",
                    [(b"decide me", message.uniq, TransactionType.COMMIT)],
                    [(r.body, r.uniq_key, r.transaction_type) for r in records])
    else:
        expect_code(check, "pull after ROLLBACK", client.pull(topic, REAL_QUEUE, 0),
                    ResponseCode.PULL_NOT_FOUND)


@pytest.mark.slow
@case("RMQ-BRK-TXN-CHECK-MAX", "A half message never answered is checked until the limit, then moved to "
      "TRANS_CHECK_MAX_TIME_TOPIC and not checked again.")
def test_check_limit(client: Client, check: Check) -> None:
    topic, message = _unended(client, b"abandoned")
    counts = []
    while len(counts) <= TRANSACTION_CHECK_MAX and (pushed := _next_check(client)) is not None:
        counts.append(decode_record(pushed.body or b"").properties.get(PropertyKey.TRANSACTION_CHECK_TIMES))
    check.equal("TRANSACTION_CHECK_TIMES of the check-backs", [str(n) for n in range(1, len(counts) + 1)],
                counts)
    check.that("checked at most transactionCheckMax times", 0 < len(counts) <= TRANSACTION_CHECK_MAX,
               expected=f"1..{TRANSACTION_CHECK_MAX} check-backs", actual=len(counts))
    moved = [r for r in _discarded(client) if r.uniq_key == message.uniq]
    last = counts[-1] if counts else None
    check.equal(f"(REAL_TOPIC, TRANSACTION_CHECK_TIMES) in {DISCARD_TOPIC}", [(topic, last)],
                [(r.properties.get(PropertyKey.REAL_TOPIC),
                  r.properties.get(PropertyKey.TRANSACTION_CHECK_TIMES)) for r in moved])


def _discarded(client: Client) -> list[MessageRecord]:
    """Every record of the discard topic's queue 0 (other cases' and runs' included)."""
    records: list[MessageRecord] = []
    offset = 0
    while (response := client.pull(DISCARD_TOPIC, 0, offset)).code == ResponseCode.SUCCESS:
        records.extend(decode_records(response.body))
        offset = pull_header(response)["nextBeginOffset"]
    return records
