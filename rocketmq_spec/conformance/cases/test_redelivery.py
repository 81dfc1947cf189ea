"""Later delivery: delay levels, and a consumer's send-back to the retry and dead-letter topics.

Delays are judged on the broker's own clock: the parked record (found by the offsetMsgId the send answers)
and the delivered copy both carry the broker's store time, so the copy must be stored at least the level's
delay after the parked one. Levels 1-3 (1 s, 5 s, 10 s by default) are waited for; every other level is
judged parked in its queue here, and its schedule (the tags code of its SCHEDULE_TOPIC_XXXX entry) by the
store case RMQ-CQ-DELAY-TAGS on the store the broker leaves.
"""

from __future__ import annotations

from typing import Any

from rocketmq_spec.codec.custom_header import encode_header
from rocketmq_spec.codec.fastjson import loads as fastjson_loads
from rocketmq_spec.codec.store import MessageRecord, decode_records
from rocketmq_spec.conformance.case import case
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.spec import remarks
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.consumequeue import DELAY_LEVELS, delay_level_ms
from rocketmq_spec.spec.headers import SEND_MESSAGE_REQUEST_V2
from rocketmq_spec.spec.message_id import decode_offset_msg_id
from rocketmq_spec.spec.properties import PropertyKey
from rocketmq_spec.spec.redelivery import (
    DEFAULT_MAX_RECONSUME_TIMES,
    FIRST_RETRY_DELAY_LEVEL,
)
from rocketmq_spec.spec.release_rules import Rule
from rocketmq_spec.spec.system_topics import DLQ_PREFIX, RETRY_PREFIX, SCHEDULE_TOPIC

from .admin_support import group_config
from .messaging import Client, Message
from .support import eventually, expect_code, expect_success, unique

WAITED_LEVELS = (1, 2, 3)
"""Levels whose delivery is waited for (10 s at most with the default levels)."""
DELIVERY_SLACK_MS = 15_000
"""How long past its due time a delayed message may take to arrive: Java's timer re-checks a level every
100 ms, and a loaded machine adds seconds."""
RECONSUMED = 2
"""reconsumeTimes of the message sent back with delayLevel 0: its retry waits level 3 + 2 (1 min)."""
SHORT_LOOK_MS = 3_000
"""How long a case looks for a copy that must not arrive yet (a level-1 copy would)."""
NO_RECORD_OFFSET = 1 << 50
"""A commitlog offset far beyond any store a test run writes (1 PiB): it holds no record."""


def _parked(client: Client, topic: str, message: Message, queue_id: int) -> MessageRecord:
    """Send ``message`` (which carries DELAY) and read back the record its offsetMsgId names."""
    return client.viewed(f"delayed send to {topic}", client.send_request(topic, message, queue_id=queue_id))


def _first(client: Client, topic: str, queue_id: int, timeout_ms: int) -> list[MessageRecord]:
    """The records of a queue once it holds any, waiting up to ``timeout_ms``."""
    def pull() -> list[MessageRecord]:
        response = client.connection.exchange(client.pull_command(topic, queue_id, 0))
        return decode_records(response.body) if response.code == ResponseCode.SUCCESS else []
    return eventually(pull, bool, timeout_ms / 1000)


def _queue_of(level: int) -> int:
    """Queue 0 for the levels not due within a case, 1 for those that may arrive while it runs."""
    return 1 if level in WAITED_LEVELS else 0


def _real(record: MessageRecord) -> tuple[str | None, ...]:
    return tuple(record.properties.get(k) for k in (PropertyKey.REAL_TOPIC, PropertyKey.REAL_QUEUE_ID,
                                                    PropertyKey.DELAY))


def _same_message(check: Check, what: str, sent: Message, record: MessageRecord) -> None:
    check.equal(f"{what}: (body, flag, born time, UNIQ_KEY)",
                (sent.body, sent.flag, sent.born_timestamp, sent.uniq),
                (record.body, record.flag, record.born_timestamp, record.uniq_key))


@case("RMQ-BRK-DELAY-PARK", "A message sent with DELAY=L is stored in SCHEDULE_TOPIC_XXXX queue L-1 with "
      "REAL_TOPIC and REAL_QID, for every level of messageDelayLevel, and its own queue does not count it.")
def test_delayed_messages_are_parked_by_level(client: Client, check: Check) -> None:
    topic = client.create_topic()
    levels = len(DELAY_LEVELS.split())
    for level in range(1, levels + 1):
        queue_id = _queue_of(level)
        message = Message(f"level {level}".encode(), user={PropertyKey.DELAY: str(level)})
        record = _parked(client, topic, message, queue_id)
        check.equal(f"level {level}: (topic, queue)", (SCHEDULE_TOPIC, level - 1),
                    (record.topic, record.queue_id))
        check.equal(f"level {level}: (REAL_TOPIC, REAL_QID, DELAY)", (topic, str(queue_id), str(level)),
                    _real(record))
        _same_message(check, f"level {level}", message, record)
    # levels past the waited ones are due minutes to hours from now: their queue must still be empty
    later = client.answer("GET_MAX_OFFSET", RequestCode.GET_MAX_OFFSET, {"topic": topic, "queueId": 0})
    check.equal(f"messages of levels {max(WAITED_LEVELS) + 1}-{levels} counted", 0, later["offset"])


@case("RMQ-BRK-DELAY-DELIVER", "A message of delay level 1, 2 or 3 is delivered to its own queue no earlier "
      "than its level's delay after it was parked, as the parked message (DELAY, REAL_TOPIC, REAL_QID kept).")
def test_delayed_messages_arrive_after_their_delay(client: Client, check: Check) -> None:
    topic = client.create_topic(len(WAITED_LEVELS))
    parked = {}
    for queue_id, level in enumerate(WAITED_LEVELS):
        message = Message(f"level {level}".encode(), user={PropertyKey.DELAY: str(level)})
        parked[level] = (queue_id, message, _parked(client, topic, message, queue_id))
    for level, (queue_id, message, original) in parked.items():
        delay = delay_level_ms(level)
        delivered = _first(client, topic, queue_id, delay + DELIVERY_SLACK_MS)
        check.equal(f"level {level}: messages delivered", 1, len(delivered))
        if not delivered:
            continue
        record = delivered[0]
        _same_message(check, f"level {level}", message, record)
        earliest = original.store_timestamp + delay
        check.that(f"level {level}: delivered copy's store time", record.store_timestamp >= earliest,
                   expected=f">= {earliest} (parked at {original.store_timestamp} + {delay} ms)",
                   actual=record.store_timestamp)
        check.equal(f"level {level}: (REAL_TOPIC, REAL_QID, DELAY)", (topic, str(queue_id), str(level)),
                    _real(record))


def _send_back(client: Client, offset: int, group: str, **values: Any) -> Any:
    return client.call(RequestCode.CONSUMER_SEND_MSG_BACK, {
        "offset": offset, "group": group, "delayLevel": 0, "originMsgId": "", "originTopic": "",
        "unitMode": False, "maxReconsumeTimes": DEFAULT_MAX_RECONSUME_TIMES, **values})


def _stored(client: Client, topic: str, message: Message) -> tuple[str, int]:
    """Send ``message`` and return its offsetMsgId and commitlog offset."""
    msg_id = client.send(topic, message).msg_ids[0]
    return msg_id, decode_offset_msg_id(msg_id).offset


def _copy_fields(check: Check, what: str, topic: str, msg_id: str, message: Message,
                 record: MessageRecord) -> None:
    _same_message(check, what, message, record)
    check.equal(f"{what}: (RETRY_TOPIC, ORIGIN_MESSAGE_ID, reconsumeTimes)", (topic, msg_id, 1),
                (record.properties.get(PropertyKey.RETRY_TOPIC),
                 record.properties.get(PropertyKey.ORIGIN_MESSAGE_ID), record.reconsume_times))


@case("RMQ-BRK-SEND-BACK", "A message sent back with delayLevel 1 is answered SUCCESS and arrives, after "
      "the level's delay, in %RETRY%<group> queue 0 as the original with RETRY_TOPIC, ORIGIN_MESSAGE_ID and "
      "reconsumeTimes 1.")
def test_send_back_goes_to_the_retry_topic(client: Client, check: Check) -> None:
    topic, group = client.create_topic(), unique("cg")
    message = Message(b"consume me again", tags="R", keys=(unique("key"),))
    msg_id, offset = _stored(client, topic, message)
    expect_success(check, "CONSUMER_SEND_MSG_BACK", _send_back(client, offset, group, delayLevel=1,
                                                               originMsgId=message.uniq, originTopic=topic))
    retried = _first(client, f"{RETRY_PREFIX}{group}", 0, delay_level_ms(1) + DELIVERY_SLACK_MS)
    check.equal("messages in the retry queue", 1, len(retried))
    if retried:
        _copy_fields(check, "retry copy", topic, msg_id, message, retried[0])


@case("RMQ-BRK-SEND-BACK-DLQ", "A message sent back once its reconsume limit is reached, or with a negative "
      "delayLevel, is stored at once in %DLQ%<group> queue 0 as the original with RETRY_TOPIC, "
      "ORIGIN_MESSAGE_ID and reconsumeTimes 1.")
def test_send_back_past_the_limit_goes_to_the_dead_letter_topic(client: Client, check: Check) -> None:
    topic = client.create_topic()
    for why, values in (("limit reached", {"maxReconsumeTimes": 0}), ("negative delayLevel",
                                                                      {"delayLevel": -1})):
        group = unique("cg")
        message = Message(f"dead letter: {why}".encode(), keys=(unique("key"),))
        msg_id, offset = _stored(client, topic, message)
        expect_success(check, f"CONSUMER_SEND_MSG_BACK ({why})", _send_back(client, offset, group, **values))
        dead = _first(client, f"{DLQ_PREFIX}{group}", 0, DELIVERY_SLACK_MS)
        check.equal(f"{why}: messages in the dead-letter queue", 1, len(dead))
        if dead:
            _copy_fields(check, f"{why}: dead-letter copy", topic, msg_id, message, dead[0])


@case("RMQ-BRK-SEND-BACK-NOT-FOUND", "CONSUMER_SEND_MSG_BACK of an offset holding no message is answered "
      "1 SYSTEM_ERROR 'look message by offset failed, <offset>'.")
def test_send_back_of_no_message_is_refused(client: Client, check: Check) -> None:
    response = _send_back(client, NO_RECORD_OFFSET, unique("cg"))
    expect_code(check, "CONSUMER_SEND_MSG_BACK", response, ResponseCode.SYSTEM_ERROR)
    check.equal("remark", remarks.SEND_BACK_NOT_FOUND.format(offset=NO_RECORD_OFFSET), response.remark)


def _send_to_retry_topic(client: Client, group: str, message: Message, reconsume_times: int,
                         max_reconsume_times: int) -> None:
    """A consumer's own retry send (what a client does when CONSUMER_SEND_MSG_BACK fails): to the group's
    retry topic, with its reconsume counts in the header."""
    values = {**client.send_values(f"{RETRY_PREFIX}{group}", 0, message),
              "reconsumeTimes": reconsume_times, "maxReconsumeTimes": max_reconsume_times}
    response = client.connection.call(RequestCode.SEND_MESSAGE_V2,
                                      encode_header(SEND_MESSAGE_REQUEST_V2, values), message.body)
    expect_success(client.check, f"send to {RETRY_PREFIX}{group}", response)


@case("RMQ-BRK-SEND-BACK-DLQ", "A send to %RETRY%<group> whose reconsumeTimes has reached the header's "
      "maxReconsumeTimes (5.0.0+: passed it) is stored in %DLQ%<group> queue 0; one below it in the retry "
      "topic.")
def test_retry_send_past_the_limit_goes_to_the_dead_letter_topic(client: Client, check: Check) -> None:
    below, reached = unique("cg"), unique("cg")
    past = 1 if client.follows(Rule.RETRY_SEND_DLQ_PAST_LIMIT) else 0  # 4.x dead-letters 3 of 3, 5.x 4 of 3
    kept = Message(b"retried by the consumer", keys=(unique("key"),))
    _send_to_retry_topic(client, below, kept, 2 + past, 3)
    retried = _first(client, f"{RETRY_PREFIX}{below}", 0, DELIVERY_SLACK_MS)
    check.equal("retry queue", [kept.uniq], [r.uniq_key for r in retried])
    dead = Message(b"reconsumed enough", keys=(unique("key"),))
    _send_to_retry_topic(client, reached, dead, 3 + past, 3)
    letters = _first(client, f"{DLQ_PREFIX}{reached}", 0, DELIVERY_SLACK_MS)
    check.equal("dead-letter queue", [dead.uniq], [r.uniq_key for r in letters])


@case("RMQ-BRK-SEND-BACK", "A send-back with delayLevel 0 of a message reconsumed twice waits level 3 + 2 "
      "(1 min by default), so nothing has reached the retry queue seconds later; the retry topic is created "
      "with topicSysFlag 0 for a consumer not in unit mode.")
def test_send_back_delay_grows_with_reconsume_times(client: Client, check: Check) -> None:
    topic, group = client.create_topic(), unique("cg")
    message = Message(b"reconsumed twice")
    values = {**client.send_values(topic, 0, message), "reconsumeTimes": RECONSUMED}
    response = client.connection.call(RequestCode.SEND_MESSAGE_V2,
                                      encode_header(SEND_MESSAGE_REQUEST_V2, values), message.body)
    original = client.viewed("send of a message reconsumed twice", response)
    expect_success(check, "CONSUMER_SEND_MSG_BACK", _send_back(client, original.physical_offset, group))
    early = _first(client, f"{RETRY_PREFIX}{group}", 0, SHORT_LOOK_MS)
    check.equal(f"retry copies within {SHORT_LOOK_MS} ms (due after level "
                f"{FIRST_RETRY_DELAY_LEVEL + RECONSUMED})", [], [r.uniq_key for r in early])
    response = expect_success(check, "GET_ALL_TOPIC_CONFIG", client.connection.call(
        RequestCode.GET_ALL_TOPIC_CONFIG))
    config = fastjson_loads(response.body or b"{}").get("topicConfigTable", {}).get(f"{RETRY_PREFIX}{group}")
    check.equal("retry topic's topicSysFlag", 0, (config or {}).get("topicSysFlag"))


@case("RMQ-BRK-SEND-BACK", "A send-back for a group configured with retryQueueNums 0 is answered SUCCESS and "
      "stores nothing for the group.")
def test_send_back_to_a_group_without_retry_queues(client: Client, check: Check) -> None:
    topic, group = client.create_topic(), unique("cg")
    expect_success(check, "create group", client.call(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, {},
                                                      group_config(group, retry_queues=0)))
    _, offset = _stored(client, topic, Message(b"not retried"))
    expect_success(check, "CONSUMER_SEND_MSG_BACK", _send_back(client, offset, group, delayLevel=1))
    late = _first(client, f"{RETRY_PREFIX}{group}", 0, delay_level_ms(1) + SHORT_LOOK_MS)
    check.equal("retry copies", [], [r.uniq_key for r in late])
