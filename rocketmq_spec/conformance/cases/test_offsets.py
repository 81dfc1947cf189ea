"""Offsets: a queue's bounds, lookups by store time, and the consumer offsets a broker keeps for groups.

Store times are read back from the pulled records rather than guessed from the local clock, so the
cases hold whatever the clock skew between suite and target.
"""

from __future__ import annotations

import time
from typing import Any

from rocketmq_spec.conformance.case import Row, case, table
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.spec import remarks
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.release_rules import Rule

from .admin_support import known_group
from .messaging import Client, Message
from .support import eventually, expect_code, expect_success, unique

FILLED = 3
SEARCH_GAP_S = 0.2
"""Pause before the last of three messages, so the time between them has a nearer side."""
HOUR_MS = 3_600_000
COMMITTED = 2
"""The consumer offset the cases commit: inside the queue, and neither its first nor its last offset."""


def _queue(topic: str, queue_id: int = 0) -> dict[str, Any]:
    return {"topic": topic, "queueId": queue_id}


@table("queue", [
    Row("max-offset", "RMQ-BRK-OFFSETS", "GET_MAX_OFFSET of a queue holding 3 messages answers 3.",
        (RequestCode.GET_MAX_OFFSET, True, FILLED)),
    Row("min-offset", "RMQ-BRK-OFFSETS", "GET_MIN_OFFSET of a queue holding 3 messages answers 0.",
        (RequestCode.GET_MIN_OFFSET, True, 0)),
    Row("max-offset-unknown-queue", "RMQ-BRK-OFFSETS", "GET_MAX_OFFSET of an absent topic answers 0.",
        (RequestCode.GET_MAX_OFFSET, False, 0)),
])
def test_queue_bounds(queue: tuple[int, bool, int], client: Client, check: Check) -> None:
    code, filled, expected = queue
    topic = client.create_topic() if filled else unique("absent")
    if filled:
        client.fill(topic, FILLED)
    check.equal("offset", expected, client.answer("offset lookup", code, _queue(topic))["offset"])


@case("RMQ-BRK-SEARCH-OFFSET", "SEARCH_OFFSET_BY_TIMESTAMP with a stored message's store time answers that "
      "message's queue offset (or one stored in the same millisecond).")
def test_search_offset_by_timestamp(client: Client, check: Check) -> None:
    topic = client.create_topic()
    client.fill(topic, FILLED)
    stored = client.pulled(topic).records
    wanted = stored[1].store_timestamp
    same_time = [r.queue_offset for r in stored if r.store_timestamp == wanted]
    found = client.answer("SEARCH_OFFSET_BY_TIMESTAMP", RequestCode.SEARCH_OFFSET_BY_TIMESTAMP,
                          {**_queue(topic), "timestamp": wanted})["offset"]
    check.that("offset found", found in same_time, expected=same_time, actual=found)


@table("when", [
    Row("before-the-first", "RMQ-BRK-SEARCH-OFFSET", "SEARCH_OFFSET_BY_TIMESTAMP a millisecond before the "
        "first message's store time answers the first offset.", "before"),
    Row("between-nearer-the-later", "RMQ-BRK-SEARCH-OFFSET", "SEARCH_OFFSET_BY_TIMESTAMP a millisecond "
        "before a message stored well after the one before it answers the later message's offset.",
        "between"),
    Row("after-the-last", "RMQ-BRK-SEARCH-OFFSET", "SEARCH_OFFSET_BY_TIMESTAMP a millisecond after the last "
        "message's store time answers the last message's offset (the max offset from 5.1.1).",
        "after"),
])
def test_search_offset_around_messages(when: str, client: Client, check: Check) -> None:
    topic = client.create_topic()
    client.fill(topic, 2)
    time.sleep(SEARCH_GAP_S)
    client.fill(topic, 1)
    first, before_gap, after_gap = client.pulled(topic).records
    wanted, expected = {"before": (first.store_timestamp - 1, first.queue_offset),
                        "between": (after_gap.store_timestamp - 1, after_gap.queue_offset),
                        "after": (after_gap.store_timestamp + 1, after_gap.queue_offset
                                  + client.follows(Rule.SEARCH_OFFSET_LOWER_BOUND))}[when]
    check.note("store times", [first.store_timestamp, before_gap.store_timestamp, after_gap.store_timestamp])
    found = client.answer("SEARCH_OFFSET_BY_TIMESTAMP", RequestCode.SEARCH_OFFSET_BY_TIMESTAMP,
                          {**_queue(topic), "timestamp": wanted})["offset"]
    check.equal(f"offset found for {wanted}", expected, found)


@case("RMQ-BRK-STORE-TIMESTAMP", "Messages born an hour ago are stored with the broker's time, in order: "
      "each store time at least the one before and later than the born time.")
def test_store_timestamp_is_the_broker_s(client: Client, check: Check) -> None:
    topic = client.create_topic()
    born = int(time.time() * 1000) - HOUR_MS
    for n in range(FILLED):
        client.send(topic, Message(f"born an hour ago {n}".encode(), born_timestamp=born))
    records = client.pulled(topic).records
    stamps = [r.store_timestamp for r in records]
    check.equal("born times kept", [born] * FILLED, [r.born_timestamp for r in records])
    check.that("store times later than the born time", all(s > born + HOUR_MS // 2 for s in stamps),
               expected=f"> {born + HOUR_MS // 2}", actual=stamps)
    check.equal("store times in order", sorted(stamps), stamps)


@case("RMQ-BRK-EARLIEST-TIME", "GET_EARLIEST_MSG_STORETIME answers the store time of the first message.")
def test_earliest_store_time(client: Client, check: Check) -> None:
    topic = client.create_topic()
    client.fill(topic, FILLED)
    first = client.pulled(topic).records[0]
    answer = client.answer("earliest store time", RequestCode.GET_EARLIEST_MSG_STORETIME, _queue(topic))
    check.equal("timestamp", first.store_timestamp, answer["timestamp"])


@table("oneway", [
    Row("update-then-query", "RMQ-BRK-CONSUMER-OFFSET", "An offset stored by UPDATE_CONSUMER_OFFSET is "
        "returned by QUERY_CONSUMER_OFFSET.", False),
    Row("oneway-update", "RMQ-BRK-CONSUMER-OFFSET", "A oneway UPDATE_CONSUMER_OFFSET is applied (and not "
        "answered).", True),
])
def test_consumer_offset(oneway: bool, client: Client, check: Check) -> None:
    topic = client.create_topic()
    client.fill(topic, FILLED)
    key = {"consumerGroup": known_group(client, unique("cg")), **_queue(topic)}
    update = client.request(RequestCode.UPDATE_CONSUMER_OFFSET, {**key, "commitOffset": COMMITTED},
                            oneway=oneway)
    if oneway:
        client.connection.send(update)
    else:
        expect_success(check, "UPDATE_CONSUMER_OFFSET", client.connection.exchange(update))
    query = eventually(lambda: client.call(RequestCode.QUERY_CONSUMER_OFFSET, key),
                       lambda r: (r.ext_fields or {}).get("offset") == str(COMMITTED))
    expect_success(check, "QUERY_CONSUMER_OFFSET", query)
    check.equal("offset", str(COMMITTED), (query.ext_fields or {}).get("offset"))
    if oneway:
        check.equal("answer to the oneway update", None, client.connection.response_to(update.opaque, 0.1))


@case("RMQ-BRK-OFFSET-COMMIT-KNOWN", "UPDATE_CONSUMER_OFFSET of a group the broker does not have is 26 "
      "SUBSCRIPTION_GROUP_NOT_EXIST from 5.0.0 and SUCCESS before.")
def test_commit_of_unknown_group(client: Client, check: Check) -> None:
    topic = client.create_topic()
    client.fill(topic, FILLED)  # the offset a 4.x broker keeps lies within the queue (RMQ-STORE-OFFSET-KEY)
    group = unique("cg")
    answer = client.call(RequestCode.UPDATE_CONSUMER_OFFSET, {"consumerGroup": group, **_queue(topic),
                                                             "commitOffset": COMMITTED})
    if client.follows(Rule.OFFSET_COMMIT_NEEDS_GROUP_AND_TOPIC):
        expect_code(check, "unknown group", answer, ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST)
        check.equal("remark", remarks.OFFSET_GROUP_NOT_EXIST.format(group=group), answer.remark)
    else:
        expect_success(check, "unknown group", answer)


@case("RMQ-BRK-CONSUMER-OFFSET", "A group that never committed, asked for a queue starting at 0 whose first "
      "message was just written (so is still in memory), gets offset 0.")
def test_consumer_offset_absent(client: Client, check: Check) -> None:
    topic = client.create_topic()
    client.fill(topic, FILLED)
    key = {"consumerGroup": unique("cg"), **_queue(topic)}
    response = client.call(RequestCode.QUERY_CONSUMER_OFFSET, key)
    expect_success(check, "QUERY_CONSUMER_OFFSET of a group that never committed", response)
    check.equal("offset", "0", (response.ext_fields or {}).get("offset"))
