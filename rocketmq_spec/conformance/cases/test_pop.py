"""POP consumption (5.x): pop, ack, batch ack, change invisible time, peek, notification, polling info,
revive into the pop retry topic, ordered pop, long polling, request modes and assignment, and the
POP_ROLLBACK mqadmin's exportPopRecord sends.

Each case pops a topic it created with a group of its own. A 4.x target has no POP processor: every case
is UNSUPPORTED there, with the target's version as the reason, but the one judging that it answers each POP
code 3 (RMQ-POP-4X), which is UNSUPPORTED on 5.x.
"""

from __future__ import annotations

import base64
import time

from rocketmq_spec.codec.bodies import decode_body, encode_body
from rocketmq_spec.codec.custom_header import decode_header
from rocketmq_spec.conformance.case import case
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.spec.codes import RequestCode, ResponseCode, code_name
from rocketmq_spec.spec.pop import (
    BATCH_ACK_BODY,
    CHANGE_INVISIBLE_TIME_RESPONSE,
    NOTIFICATION_RESPONSE,
    ORDER_REVIVE_QUEUE,
    POLLING_INFO_RESPONSE,
    POP_MESSAGE_RESPONSE,
    POP_REQUEST_HEADERS,
    QUERY_ASSIGNMENT_REQUEST_BODY,
    QUERY_ASSIGNMENT_RESPONSE_BODY,
    SET_MESSAGE_REQUEST_MODE_BODY,
)
from rocketmq_spec.spec.properties import PropertyKey
from rocketmq_spec.spec.releases import release_of_version

from .messaging import Client
from .pop_support import (
    SHORT_INVISIBLE_MS,
    PopClient,
    pop_again,
    ready_topic,
    require_4x,
    require_5x,
)
from .support import expect_code, expect_success, unique


@case("RMQ-POP-4X", "A 4.x broker answers every POP request code with 3 REQUEST_CODE_NOT_SUPPORTED.")
def test_pop_codes_on_4x(client: Client, check: Check) -> None:
    require_4x(client, "POP processor", "RMQ-POP-4X")
    answers = {RequestCode(code).name: client.connection.call(code).code for code in POP_REQUEST_HEADERS}
    check.equal("answers", dict.fromkeys(answers, ResponseCode.REQUEST_CODE_NOT_SUPPORTED), answers)


@case("RMQ-POP-FOUND", "POP_MESSAGE answers SUCCESS/FOUND with the records and offset infos naming each.")
def test_pop_found(client: Client, check: Check) -> None:
    pops, topic = ready_topic(client, "RMQ-POP-FOUND")
    answer = expect_success(check, "pop", pops.pop(topic))
    check.remark("remark", "FOUND", answer.remark)
    header = decode_header(POP_MESSAGE_RESPONSE, answer.ext_fields)
    check.equal("invisibleTime", 60_000, header["invisibleTime"])
    check.equal("startOffsetInfo", "0 0 0", header["startOffsetInfo"])
    check.equal("msgOffsetInfo", "0 0 0,1,2", header["msgOffsetInfo"])
    check.equal("bodies", [b"message 0", b"message 1", b"message 2"],
                [p.record.body for p in pops.popped(answer)])


@case("RMQ-POP-INVISIBLE", "A popped message is not popped again before its invisible time ends.")
def test_popped_is_invisible(client: Client, check: Check) -> None:
    pops, topic = ready_topic(client, "RMQ-POP-INVISIBLE")
    expect_success(check, "first pop", pops.pop(topic))
    again = pops.pop(topic)
    check.equal("second pop", ResponseCode.POLLING_TIMEOUT, again.code)


@case("RMQ-CODE-RESPONSE-COLLISION", "210 answering a POP_MESSAGE is named by that request: POLLING_TIMEOUT "
      "of the target's release, not 4.9.8's DELETE_ACL_CONFIG_FAILED.")
def test_pop_210_named_by_request(client: Client, check: Check) -> None:
    pops, topic = ready_topic(client, "RMQ-CODE-RESPONSE-COLLISION", count=1)
    expect_success(check, "first pop", pops.pop(topic))
    again = pops.pop(topic)
    release = release_of_version(again.version)
    check.equal("(code, name by the request answered)", (210, "POLLING_TIMEOUT"),
                (again.code, code_name(again.code, is_response=True, release=release.name if release else "",
                                       request=RequestCode.POP_MESSAGE)))


@case("RMQ-POP-POLLING-TIMEOUT", "A pop that finds nothing is held for pollTime and answered 210 "
      "POLLING_TIMEOUT, remark NO_MESSAGE_IN_QUEUE.")
def test_pop_polling_timeout(client: Client, check: Check) -> None:
    pops, topic = ready_topic(client, "RMQ-POP-POLLING-TIMEOUT", count=0)
    started = time.monotonic()
    answer = pops.pop(topic, poll_ms=1000)
    check.equal("code", ResponseCode.POLLING_TIMEOUT, answer.code)
    check.remark("remark", "NO_MESSAGE_IN_QUEUE", answer.remark)
    check.that("held about pollTime", time.monotonic() - started >= 0.5, expected=">= 0.5 s",
               actual=round(time.monotonic() - started, 2))


@case("RMQ-POP-POLLING-TIMEOUT", "A held pop is answered SUCCESS as soon as a message arrives.")
def test_pop_woken_by_arrival(client: Client, check: Check) -> None:
    pops, topic = ready_topic(client, "RMQ-POP-POLLING-TIMEOUT", count=0)
    pending = pops.client.request(RequestCode.POP_MESSAGE, {
        "consumerGroup": pops.group, "topic": topic, "queueId": -1, "maxMsgNums": 32, "invisibleTime": 60_000,
        "pollTime": 20_000, "bornTime": int(time.time() * 1000), "initMode": 1})
    client.connection.send(pending)
    time.sleep(0.5)
    client.send(topic)
    answer = client.connection.response_to(pending.opaque, 30.0)
    check.that("answered", answer is not None, expected="an answer", actual=answer)
    assert answer is not None
    check.equal("code", ResponseCode.SUCCESS, answer.code)


@case("RMQ-POP-LIMITS", "POP_MESSAGE for more than 32 messages is answered 29 INVALID_PARAMETER.")
def test_pop_too_many(client: Client, check: Check) -> None:
    pops, topic = ready_topic(client, "RMQ-POP-LIMITS", count=1)
    check.equal("code", ResponseCode.INVALID_PARAMETER, pops.pop(topic, max_nums=33).code)


@case("RMQ-POP-LIMITS", "POP_MESSAGE for a topic the broker does not have is answered TOPIC_NOT_EXIST.")
def test_pop_unknown_topic(client: Client, check: Check) -> None:
    require_5x(client, "POP", "RMQ-POP-LIMITS")
    expect_code(check, "pop", PopClient(client).pop(unique("nosuchtopic")), ResponseCode.TOPIC_NOT_EXIST)


@case("RMQ-POP-ACK", "ACK_MESSAGE with a popped message's receipt is answered SUCCESS.")
def test_ack(client: Client, check: Check) -> None:
    pops, topic = ready_topic(client, "RMQ-POP-ACK")
    for popped in pops.popped(expect_success(check, "pop", pops.pop(topic))):
        expect_success(check, f"ack of offset {popped.offset}", pops.ack(topic, popped))


@case("RMQ-ADMIN-POP-ROLLBACK", "POP_ROLLBACK (mqadmin exportPopRecord, 5.3.2+) is answered SUCCESS without "
      "a header, and a message popped before it is then acked SUCCESS with the receipt taken before.")
def test_pop_rollback(client: Client, check: Check) -> None:
    pops, topic = ready_topic(client, "RMQ-ADMIN-POP-ROLLBACK", count=1)
    [popped] = pops.popped(expect_success(check, "pop", pops.pop(topic)))
    # the request itself asks whether the target serves the code: 3 makes the case UNSUPPORTED (expect_code)
    answer = expect_success(check, "POP_ROLLBACK", client.connection.call(RequestCode.POP_ROLLBACK))
    check.equal("extFields", {}, answer.ext_fields or {})
    expect_success(check, "ack after the rollback", pops.ack(topic, popped))


@case("RMQ-POP-ACK-OFFSET", "ACK_MESSAGE for an offset beyond the queue is answered 208 NO_MESSAGE.")
def test_ack_offset_out_of_range(client: Client, check: Check) -> None:
    pops, topic = ready_topic(client, "RMQ-POP-ACK-OFFSET", count=1)
    [popped] = pops.popped(expect_success(check, "pop", pops.pop(topic)))
    parts = popped.receipt.split()
    parts[7] = "99"
    popped.receipt = " ".join(parts)
    check.equal("code", ResponseCode.NO_MESSAGE, pops.ack(topic, popped).code)


@case("RMQ-POP-BATCH-ACK", "BATCH_ACK_MESSAGE without acks is answered 208 NO_MESSAGE, with acks SUCCESS.")
def test_batch_ack(client: Client, check: Check) -> None:
    pops, topic = ready_topic(client, "RMQ-POP-BATCH-ACK")
    batch_ack = RequestCode.BATCH_ACK_MESSAGE
    check.equal("empty batch", ResponseCode.NO_MESSAGE, client.connection.call(batch_ack, {}).code)
    answer = expect_success(check, "pop", pops.pop(topic))
    header = decode_header(POP_MESSAGE_RESPONSE, answer.ext_fields)
    entry = {"c": pops.group, "t": topic, "r": "0", "so": 0, "q": 0, "rq": header["reviveQid"],
             "pt": header["popTime"], "it": header["invisibleTime"],
             "b": base64.b64encode(bytes([0b111])).decode()}
    body = encode_body(BATCH_ACK_BODY, {"brokerName": pops.broker_name, "acks": [entry]})
    expect_success(check, "batch ack", client.connection.call(batch_ack, {}, body))


@case("RMQ-POP-REVIVE", "A message not acked comes back, once its invisible time has passed, with "
      "RECONSUME_TIMES 1, 1ST_POP_TIME and a receipt of retry flag 1; an acked one does not.")
def test_revive(client: Client, check: Check) -> None:
    pops, topic = ready_topic(client, "RMQ-POP-REVIVE", count=2)
    first = pops.popped(expect_success(check, "pop", pops.pop(topic, invisible_ms=SHORT_INVISIBLE_MS)))
    kept = next(p for p in first if p.record.body == b"message 0")
    expect_success(check, "ack", pops.ack(topic, kept))
    revived = pops.popped(pop_again(check, pops, topic))
    check.equal("revived bodies", [b"message 1"], [p.record.body for p in revived])
    check.equal("topic", topic, revived[0].record.topic)
    check.equal("reconsume times", 1, revived[0].record.reconsume_times)
    check.that("1ST_POP_TIME", PropertyKey.FIRST_POP_TIME in revived[0].record.properties,
               expected="present", actual=sorted(revived[0].record.properties))
    check.equal("retry flag of the receipt", "1", revived[0].receipt.split()[4])
    expect_success(check, "ack of the revived message", pops.ack(topic, revived[0]))


@case("RMQ-POP-CHANGE-INVISIBLE",
      "CHANGE_MESSAGE_INVISIBLETIME answers a new popTime and the invisible time; "
      "the message comes back after it.")
def test_change_invisible(client: Client, check: Check) -> None:
    pops, topic = ready_topic(client, "RMQ-POP-CHANGE-INVISIBLE", count=1)
    [popped] = pops.popped(expect_success(check, "pop", pops.pop(topic)))
    answer = expect_success(check, "change", pops.call(RequestCode.CHANGE_MESSAGE_INVISIBLETIME, {
        "topic": topic, "queueId": 0, "extraInfo": popped.receipt, "offset": popped.offset,
        "invisibleTime": SHORT_INVISIBLE_MS}))
    header = decode_header(CHANGE_INVISIBLE_TIME_RESPONSE, answer.ext_fields)
    check.equal("invisibleTime", SHORT_INVISIBLE_MS, header["invisibleTime"])
    back = pop_again(check, pops, topic)
    check.equal("the message again", [b"message 0"], [p.record.body for p in pops.popped(back)])


@case("RMQ-POP-PEEK", "PEEK_MESSAGE answers messages without hiding them: a pop afterwards finds them.")
def test_peek(client: Client, check: Check) -> None:
    pops, topic = ready_topic(client, "RMQ-POP-PEEK", count=2)
    expect_success(check, "pop of nothing yet", pops.pop(topic, max_nums=1))
    peeked = pops.call(RequestCode.PEEK_MESSAGE, {"topic": topic, "queueId": 0, "maxMsgNums": 32})
    expect_success(check, "peek", peeked)
    popped = pops.popped(expect_success(check, "pop after the peek", pops.pop(topic)))
    check.equal("popped after peeking", [b"message 1"], [p.record.body for p in popped])


@case("RMQ-POP-NOTIFICATION", "NOTIFICATION answers hasMsg=true when a pop would find a message and "
      "hasMsg=false after pollTime when none would.")
def test_notification(client: Client, check: Check) -> None:
    pops, topic = ready_topic(client, "RMQ-POP-NOTIFICATION", count=1)
    values = {"topic": topic, "queueId": -1, "pollTime": 500, "bornTime": int(time.time() * 1000)}
    has = decode_header(NOTIFICATION_RESPONSE, expect_success(
        check, "notification", pops.call(RequestCode.NOTIFICATION, values)).ext_fields)
    check.equal("hasMsg with a message", True, has["hasMsg"])
    expect_success(check, "pop", pops.pop(topic))
    none = decode_header(NOTIFICATION_RESPONSE, expect_success(
        check, "notification", pops.call(RequestCode.NOTIFICATION, values)).ext_fields)
    check.equal("hasMsg once popped", False, none["hasMsg"])


@case("RMQ-POP-POLLING-INFO", "POLLING_INFO answers SUCCESS with pollingNum.")
def test_polling_info(client: Client, check: Check) -> None:
    pops, topic = ready_topic(client, "RMQ-POP-POLLING-INFO", count=1)
    answer = expect_success(check, "polling info", pops.call(RequestCode.POLLING_INFO,
                                                             {"topic": topic, "queueId": 0}))
    check.equal("pollingNum with nothing held", 0, decode_header(POLLING_INFO_RESPONSE, answer.ext_fields)[
        "pollingNum"])


@case("RMQ-POP-ORDER", "An ordered pop answers reviveQid 999; its queue yields nothing more until the batch "
      "is acked, then the next offset.")
def test_ordered_pop(client: Client, check: Check) -> None:
    pops, topic = ready_topic(client, "RMQ-POP-ORDER")
    first = expect_success(check, "ordered pop", pops.pop(topic, queue_id=0, max_nums=2, order=True))
    check.equal("reviveQid", ORDER_REVIVE_QUEUE, decode_header(POP_MESSAGE_RESPONSE,
                                                               first.ext_fields)["reviveQid"])
    check.equal("blocked", ResponseCode.POLLING_TIMEOUT, pops.pop(topic, queue_id=0, order=True).code)
    for popped in pops.popped(first):
        expect_success(check, "ack", pops.ack(topic, popped))
    following = expect_success(check, "pop after the acks", pops.pop(topic, queue_id=0, order=True))
    check.equal("next message", [b"message 2"], [p.record.body for p in pops.popped(following)])


@case("RMQ-POP-REQUEST-MODE", "After SET_MESSAGE_REQUEST_MODE POP, QUERY_ASSIGNMENT answers POP "
      "assignments of queueId -1.")
def test_request_mode_and_assignment(client: Client, check: Check) -> None:
    pops, topic = ready_topic(client, "RMQ-POP-REQUEST-MODE", count=1)
    mode = {"topic": topic, "consumerGroup": pops.group, "mode": "POP", "popShareQueueNum": 0}
    expect_success(check, "set mode", client.connection.call(
        RequestCode.SET_MESSAGE_REQUEST_MODE, {}, encode_body(SET_MESSAGE_REQUEST_MODE_BODY, mode)))
    client_id = unique("client")
    client.heartbeat(client_id, [{"groupName": pops.group, "consumeType": "CONSUME_POP", "messageModel":
                                  "CLUSTERING", "consumeFromWhere": "CONSUME_FROM_LAST_OFFSET",
                                  "subscriptionDataSet": [], "unitMode": False}])
    query = {"topic": topic, "consumerGroup": pops.group, "clientId": client_id, "strategyName": "AVG",
             "messageModel": "CLUSTERING"}
    answer = expect_success(check, "query assignment", client.connection.call(
        RequestCode.QUERY_ASSIGNMENT, {}, encode_body(QUERY_ASSIGNMENT_REQUEST_BODY, query)))
    body = decode_body(QUERY_ASSIGNMENT_RESPONSE_BODY, answer.body or b"{}")
    check.equal("assignments", [(-1, "POP")], [(a["messageQueue"]["queueId"], a["mode"])
                                               for a in body["messageQueueAssignments"]])
