"""Timer messages (5.x): each trigger property, delivery never before the requested time, the parked copy in
rmq_sys_wheel_timer, precedence of a delay level, times in the past and too far ahead.

Survival across a restart (RMQ-TIMER-RESTART) needs a broker the case may restart: the ``lifecycle`` area
judges it on a broker of its own. A 4.x target has no timer: every case is UNSUPPORTED there, with the
target's version as the reason, but the one judging that it stores such a message in its topic at once
(RMQ-TIMER-4X), which is UNSUPPORTED on 5.x.
"""

from __future__ import annotations

import time

from rocketmq_spec.conformance.case import Row, case, table
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.properties import PropertyKey
from rocketmq_spec.spec.system_topics import TIMER_TOPIC
from rocketmq_spec.spec.timer import (
    RECALL_FORBIDDEN_REMARK,
    RECALL_UNAVAILABLE_REMARK,
    TIMER_MAX_DELAY_SEC,
    decode_recall_handle,
    recall_handle,
)

from .messaging import Client, Message
from .pop_support import broker_setting, require_4x, require_5x, require_code, target_setting
from .support import eventually, expect_code, expect_success, unique

DELAY_MS = 3000
HOUR_MS = 3_600_000
DAY_S = 24 * 3600
DELIVERY_WAIT_S = 30.0
"""Bound on waiting for a due message: the delay, the timer's precision and a loaded machine's lag."""


def _delivered(client: Client, topic: str, count: int = 1) -> list:
    def probe() -> list:
        answer = client.pull(topic, 0, 0)
        return client.pulled(topic).records if answer.code == ResponseCode.SUCCESS else []
    return eventually(probe, lambda records: len(records) >= count, DELIVERY_WAIT_S)


def _send_timer(client: Client, topic: str, properties: dict[str, str]) -> int:
    """Send without waiting for the message to be readable: it is parked, not in its topic."""
    sent_at = int(time.time() * 1000)
    message = Message(b"timer", user=properties)
    response = client.send_request(topic, message)
    client.check.equal("send", ResponseCode.SUCCESS, response.code)
    return sent_at


@table("trigger", [
    Row("deliver-ms", "RMQ-TIMER-PROPERTIES", "A message with TIMER_DELIVER_MS is stored in its topic no "
        "earlier than that time.", PropertyKey.TIMER_DELIVER_MS),
    Row("delay-sec", "RMQ-TIMER-PROPERTIES", "A message with TIMER_DELAY_SEC is stored in its topic no "
        "earlier than that many seconds after it was sent.", PropertyKey.TIMER_DELAY_SEC),
    Row("delay-ms", "RMQ-TIMER-PROPERTIES", "A message with TIMER_DELAY_MS is stored in its topic no "
        "earlier than that many ms after it was sent.", PropertyKey.TIMER_DELAY_MS),
])
def test_trigger(trigger: str, client: Client, check: Check) -> None:
    require_5x(client, "timer messages", "RMQ-TIMER-4X")
    topic = client.create_topic(1)
    now = int(time.time() * 1000)
    value = {PropertyKey.TIMER_DELIVER_MS: str(now + DELAY_MS),
             PropertyKey.TIMER_DELAY_SEC: str(DELAY_MS // 1000),
             PropertyKey.TIMER_DELAY_MS: str(DELAY_MS)}[trigger]
    _send_timer(client, topic, {trigger: value})
    check.equal("not in its topic at once", ResponseCode.PULL_NOT_FOUND, client.pull(topic, 0, 0).code)
    records = _delivered(client, topic)
    check.equal("delivered", 1, len(records))
    earliest = now + DELAY_MS  # the time asked for; a relative one counts from the later arrival
    check.that("not before its time", records[0].store_timestamp >= earliest, expected=f">= {earliest}",
               actual=records[0].store_timestamp)


@table("ignored_trigger", [
    Row(f"4x-{name}", "RMQ-TIMER-4X", f"A 4.x broker stores a message with {key} (an hour ahead) in its "
        "topic at once: it knows no timer property.", key)
    for name, key in (("deliver-ms", PropertyKey.TIMER_DELIVER_MS),
                      ("delay-sec", PropertyKey.TIMER_DELAY_SEC), ("delay-ms", PropertyKey.TIMER_DELAY_MS))
])
def test_timer_property_on_4x(ignored_trigger: str, client: Client, check: Check) -> None:
    require_4x(client, "timer", "RMQ-TIMER-4X")
    topic = client.create_topic(1)
    value = {PropertyKey.TIMER_DELIVER_MS: str(int(time.time() * 1000) + HOUR_MS),
             PropertyKey.TIMER_DELAY_SEC: str(HOUR_MS // 1000),
             PropertyKey.TIMER_DELAY_MS: str(HOUR_MS)}[ignored_trigger]
    _send_timer(client, topic, {ignored_trigger: value})
    check.equal("stored in its topic", [b"timer"], [record.body for record in _delivered(client, topic)])


@case("RMQ-TIMER-DELIVERED", "A delivered timer message carries TIMER_ENQUEUE_MS and TIMER_DEQUEUE_MS, and "
      "REAL_TOPIC / REAL_QID naming its own topic and queue.")
def test_delivered_properties(client: Client, check: Check) -> None:
    require_5x(client, "timer messages", "RMQ-TIMER-4X")
    topic = client.create_topic(1)
    _send_timer(client, topic, {PropertyKey.TIMER_DELAY_MS: "1500"})
    [record] = _delivered(client, topic)
    present = set(record.properties)
    check.that("timer stamps", {PropertyKey.TIMER_ENQUEUE_MS, PropertyKey.TIMER_DEQUEUE_MS} <= present,
               expected="TIMER_ENQUEUE_MS, TIMER_DEQUEUE_MS", actual=sorted(present))
    check.equal("REAL_TOPIC", topic, record.properties.get(PropertyKey.REAL_TOPIC))
    check.equal("REAL_QID", "0", record.properties.get(PropertyKey.REAL_QUEUE_ID))


@case("RMQ-TIMER-PARKED", "A pending timer message sits in rmq_sys_wheel_timer queue 0 with TIMER_OUT_MS, "
      "REAL_TOPIC and REAL_QID.")
def test_parked(client: Client, check: Check) -> None:
    require_5x(client, "timer messages", "RMQ-TIMER-4X")
    topic = client.create_topic(1)
    _send_timer(client, topic, {PropertyKey.TIMER_DELAY_SEC: "60"})
    mine = [r for r in _wheel(client) if r.properties.get(PropertyKey.REAL_TOPIC) == topic]
    check.equal("parked copies", 1, len(mine))
    if mine:
        check.equal("REAL_QID", "0", mine[0].properties.get(PropertyKey.REAL_QUEUE_ID))
        check.that("TIMER_OUT_MS", mine[0].properties.get(PropertyKey.TIMER_OUT_MS, "").isdigit(),
                   expected="a time in ms", actual=mine[0].properties.get(PropertyKey.TIMER_OUT_MS))


def _wheel(client: Client) -> list:
    """Every record of the wheel queue: other cases (and every POP checkpoint) park there too."""
    records: list = []
    while client.pull(TIMER_TOPIC, 0, len(records)).code == ResponseCode.SUCCESS:
        records += client.pulled(TIMER_TOPIC, 0, len(records)).records
    return records


@case("RMQ-TIMER-DELAY-LEVEL-WINS",
      "A message with a delay level and TIMER_DELAY_SEC is delayed by its level; "
      "the timer property is dropped.")
def test_delay_level_wins(client: Client, check: Check) -> None:
    require_5x(client, "timer messages", "RMQ-TIMER-4X")
    topic = client.create_topic(1)
    _send_timer(client, topic, {PropertyKey.DELAY: "1", PropertyKey.TIMER_DELAY_SEC: "600"})
    [record] = _delivered(client, topic)
    check.that("no TIMER_DELAY_SEC", PropertyKey.TIMER_DELAY_SEC not in record.properties,
               expected="absent", actual=sorted(record.properties))


@case("RMQ-TIMER-PAST", "A timer message whose time has passed is stored in its topic at once.")
def test_past(client: Client, check: Check) -> None:
    require_5x(client, "timer messages", "RMQ-TIMER-4X")
    topic = client.create_topic(1)
    client.send(topic, Message(b"past", user={PropertyKey.TIMER_DELIVER_MS: "1000"}))
    check.equal("stored", 1, len(client.pulled(topic).records))


@table("value", [
    Row("too-late", "RMQ-TIMER-MAX-DELAY", "A delivery time a day beyond the target's timerMaxDelaySec "
        "(Java's default 3 days) is refused with 13 MESSAGE_ILLEGAL.", {PropertyKey.TIMER_DELAY_SEC: ""}),
    Row("not-a-number", "RMQ-TIMER-BAD-VALUE", "A timer property that is not a number is refused with 13 "
        "MESSAGE_ILLEGAL.", {PropertyKey.TIMER_DELAY_MS: "soon"}),
])
def test_refused(value: dict[str, str], client: Client, check: Check) -> None:
    require_5x(client, "timer messages", "RMQ-TIMER-4X")
    if PropertyKey.TIMER_DELAY_SEC in value:  # the bound is the target's setting
        limit = int(target_setting(client, check, "timerMaxDelaySec", str(TIMER_MAX_DELAY_SEC)))
        value = {PropertyKey.TIMER_DELAY_SEC: str(limit + DAY_S)}
    topic = client.create_topic(1)
    response = client.send_request(topic, Message(b"refused", user=value))
    check.equal("code", ResponseCode.MESSAGE_ILLEGAL, response.code)


@case("RMQ-TIMER-RECALL-HANDLE", "The answer to a send that parked a timer message carries a recallHandle "
      "naming the topic, the broker, TIMER_OUT_MS + 1 and the message's UNIQ_KEY (5.3.2+).")
def test_recall_handle(client: Client, check: Check) -> None:
    require_5x(client, "timer messages", "RMQ-TIMER-4X")
    require_code(client, RequestCode.RECALL_MESSAGE, "RMQ-TIMER-RECALL-HANDLE")  # recall came with 5.3.2
    topic = client.create_topic(1)
    message = Message(b"recallable", user={PropertyKey.TIMER_DELAY_SEC: "60"})
    response = client.send_request(topic, message)
    expect_success(check, "send", response)
    handle = (response.ext_fields or {}).get("recallHandle", "")
    check.that("recallHandle", bool(handle), expected="a handle", actual=response.ext_fields)
    if handle:
        handle_topic, _, stamp, uniq = decode_recall_handle(handle)
        check.equal("handle's topic and UNIQ_KEY", (topic, message.uniq), (handle_topic, uniq))
        check.that("handle's time is in the future", int(stamp) > int(time.time() * 1000),
                   expected="> now", actual=stamp)


@case("RMQ-TIMER-RECALL", "RECALL_MESSAGE of a handle naming another broker is answered 16 NO_PERMISSION "
      "\"recall failed, operation is forbidden\" while recallMessageEnable is off (the default), and 604 "
      "ILLEGAL_OPERATION when the target reports it on.")
def test_recall_refused(client: Client, check: Check) -> None:
    require_5x(client, "timer messages", "RMQ-TIMER-4X")
    enabled = broker_setting(client, "recallMessageEnable") == "true"
    topic = client.create_topic(1)
    handle = recall_handle(topic, unique("another-broker"), int(time.time() * 1000) + 60_000, "0" * 32)
    response = client.call(RequestCode.RECALL_MESSAGE, {"producerGroup": "pg", "topic": topic,
                                                        "recallHandle": handle})
    if enabled:
        expect_code(check, "recall (recallMessageEnable=true)", response, ResponseCode.ILLEGAL_OPERATION)
        check.remark("remark", RECALL_UNAVAILABLE_REMARK, response.remark)
    else:
        expect_code(check, "recall", response, ResponseCode.NO_PERMISSION)
        check.remark("remark", RECALL_FORBIDDEN_REMARK, response.remark)
