"""Admin commands: what mqadmin and the Dashboard ask brokers and name servers, and what they must answer.

Every case creates its own topics, groups and (on the name server) fake brokers, so it holds on a
target that serves other traffic; checks are on shapes and on figures the case itself caused.
"""

from __future__ import annotations

import re
import time
from typing import Any

from rocketmq_spec.codec.bodies import decode_body, encode_body
from rocketmq_spec.codec.custom_header import decode_header, encode_header
from rocketmq_spec.codec.fastjson import loads as fastjson_loads
from rocketmq_spec.codec.store import decode_records
from rocketmq_spec.conformance.case import Row, case, table
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.target import Server
from rocketmq_spec.conformance.wire import RESPONSE_TIMEOUT, Wire
from rocketmq_spec.spec import admin, admin_headers
from rocketmq_spec.spec.admin_bodies import (
    BROKER_STATS_DATA,
    CONSUME_STATS,
    CONSUMER_CONNECTION,
    GROUP_LIST,
    PRODUCER_CONNECTION,
    QUERY_CONSUME_QUEUE_RESPONSE,
    RESET_OFFSET_BODY,
    RESET_OFFSET_BODY_FOR_C,
    TOPIC_LIST,
    TOPIC_STATS_TABLE,
)
from rocketmq_spec.spec.admin_headers import RESET_OFFSET_REQUEST
from rocketmq_spec.spec.bodies import HEARTBEAT_DATA, KV_TABLE
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.hashing import tags_code
from rocketmq_spec.spec.headers import WIPE_WRITE_PERM_RESPONSE, header_for
from rocketmq_spec.spec.message_id import encode_offset_msg_id
from rocketmq_spec.spec.release_rules import Rule, holds
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC, SCHEDULE_TOPIC

from .admin_support import (
    FILLED,
    Consumer,
    body_of,
    by_queue,
    commit,
    filled_topic,
    group_config,
    listed_groups,
    properties,
    query_cq,
    refused,
    reset_offset,
)
from .messaging import QUEUES, Client, Message
from .support import expect_code, expect_refused, expect_success, unique
from .test_namesrv import _registered

RUNTIME = re.compile(r"\[ ([\d,]+) days, ([\d,]+) hours, ([\d,]+) minutes, ([\d,]+) seconds \]")
"""``StoreStatsService.getFormatRuntime`` (a MessageFormat: numbers may carry grouping commas)."""
CAPACITY = re.compile(r"Total : ([\d.]+) (B|[KMGTPE]iB), Free : ([\d.]+) (B|[KMGTPE]iB)\.")
"""``MixAll.humanReadableByteCount`` of the CommitLog directory's total and usable space."""
BYTE_UNITS = {"B": 1, **{f"{p}iB": 1024 ** (n + 1) for n, p in enumerate("KMGTPE")}}
CLOCK_SLACK_S = 60
CALL_CLIENT_TIMEOUT_S = 10
"""How long a broker waits for a client it calls (``Broker2Client.callClient``: invokeSync, 10000 ms)."""
"""How far the target's clock may be from the suite's for a case comparing its times with now."""


# -- runtime figures and settings ---------------------------------------------------------------------

@case("RMQ-ADMIN-RUNTIME-INFO", "GET_BROKER_RUNTIME_INFO answers a KVTable holding every key mqadmin's "
      "clusterList and brokerStatus read, the message counters as decimal numbers.")
def test_runtime_info_keys(client: Client, check: Check) -> None:
    response = client.call(RequestCode.GET_BROKER_RUNTIME_INFO, {})
    info = body_of(check, "runtime info", KV_TABLE, response)["table"]
    wanted = admin.runtime_info_keys(response.version)
    check.equal("missing keys", [], [k for k in wanted if k not in info])
    counters = [k for k in info if k.startswith(("msgPutTotal", "msgGetTotal"))]
    check.equal("non-numeric counters", [], [k for k in counters if not info[k].lstrip("-").isdigit()])


@case("RMQ-ADMIN-RUNTIME-INFO", "msgPutTotalTodayNow grows by at least the number of messages stored since "
      "the last look.")
def test_runtime_info_counts_puts(client: Client, check: Check) -> None:
    def puts() -> int:
        body = decode_body(KV_TABLE, client.call(RequestCode.GET_BROKER_RUNTIME_INFO, {}).body or b"{}")
        return int(body["table"]["msgPutTotalTodayNow"])
    before = puts()
    filled_topic(client)
    after = puts()
    check.that("put counter grew by the sends", after - before >= FILLED, expected=f">= {before + FILLED}",
               actual=after)


@case("RMQ-ADMIN-BROKER-CONFIG", "GET_BROKER_CONFIG answers the settings as Properties text (brokerName "
      "among them) and the DataVersion JSON in the header's version.")
def test_broker_config(client: Client, check: Check) -> None:
    response = expect_success(check, "GET_BROKER_CONFIG", client.call(RequestCode.GET_BROKER_CONFIG, {}))
    settings = properties(response.body)
    check.that("brokerName set", bool(settings.get("brokerName")), expected="brokerName=…",
               actual=sorted(settings)[:8])
    version = fastjson_loads((response.ext_fields or {}).get("version", "{}"))
    check.that("version is a DataVersion", isinstance(version, dict) and "counter" in version,
               expected="{counter, timestamp}", actual=version)


@table("black_listed", [
    Row("broker-black-list", "RMQ-ADMIN-UPDATE-CONFIG", "UPDATE_BROKER_CONFIG naming brokerConfigPath is "
        "refused with 16 and the black-list remark (4.9.8, 5.2.0+; applied before).",
        (RequestCode.UPDATE_BROKER_CONFIG, "brokerConfigPath")),
    Row("namesrv-black-list", "RMQ-ADMIN-UPDATE-CONFIG", "UPDATE_NAMESRV_CONFIG naming kvConfigPath is "
        "refused with 16 and the black-list remark (4.9.8, 5.2.0+; 'Can not update config path' before).",
        (RequestCode.UPDATE_NAMESRV_CONFIG, "kvConfigPath")),
])
def test_update_config_black_list(black_listed: tuple[int, str], broker: Server, namesrv: Server, wire: Wire,
                                  check: Check) -> None:
    code, key = black_listed
    server = namesrv if code == RequestCode.UPDATE_NAMESRV_CONFIG else broker
    response = wire.connect(server.endpoint).call(code, body=f"{key}=/tmp/not-here\n".encode())
    if holds(Rule.CONFIG_BLACK_LIST, response.version):
        refused(check, "black-listed update", response, ResponseCode.NO_PERMISSION, admin.BLACK_LIST_REMARK)
    elif code == RequestCode.UPDATE_NAMESRV_CONFIG:
        refused(check, "config path update (no black list)", response, ResponseCode.NO_PERMISSION,
                admin.CONFIG_PATH_REMARK)
    else:
        expect_success(check, "update of a key 4.9.8 black-lists (no black list in this release)", response)


@case("RMQ-ADMIN-UPDATE-CONFIG", "UPDATE_BROKER_CONFIG changes a setting GET_BROKER_CONFIG then reports "
      "(defaultTopicQueueNums, restored afterwards).")
def test_update_broker_config(client: Client, check: Check) -> None:
    settings = properties(client.call(RequestCode.GET_BROKER_CONFIG, {}).body)
    check.that("defaultTopicQueueNums listed", "defaultTopicQueueNums" in settings,
               expected="defaultTopicQueueNums=…", actual=sorted(settings)[:8])
    before = settings["defaultTopicQueueNums"]
    changed = str(int(before) + 1)
    try:
        expect_success(check, "update", client.call(RequestCode.UPDATE_BROKER_CONFIG, {},
                                                    f"defaultTopicQueueNums={changed}\n".encode()))
        after = properties(client.call(RequestCode.GET_BROKER_CONFIG, {}).body)["defaultTopicQueueNums"]
        check.equal("defaultTopicQueueNums", changed, after)
    finally:
        client.call(RequestCode.UPDATE_BROKER_CONFIG, {}, f"defaultTopicQueueNums={before}\n".encode())


@case("RMQ-ADMIN-NAMESRV-CONFIG", "GET_NAMESRV_CONFIG answers the name server's settings as Properties "
      "text, listenPort among them.")
def test_namesrv_config(namesrv: Server, wire: Wire, check: Check) -> None:
    response = expect_success(check, "GET_NAMESRV_CONFIG",
                              wire.connect(namesrv.endpoint).call(RequestCode.GET_NAMESRV_CONFIG))
    check.that("listenPort listed", "listenPort" in properties(response.body), expected="listenPort=…",
               actual=(response.body or b"")[:120])


# -- queues and consumption ---------------------------------------------------------------------------

@case("RMQ-ADMIN-TOPIC-STATS", "GET_TOPIC_STATS_INFO lists every write queue with its min and max offset, "
      "and the store time of the last message of a non-empty queue (one of 3 messages, one of 1, 0 empty).")
def test_topic_stats(client: Client, check: Check) -> None:
    topic, records = filled_topic(client)
    client.send(topic, Message(b"alone"), queue_id=2)
    (alone,) = client.pulled(topic, 2).records
    stats = body_of(check, "topic stats", TOPIC_STATS_TABLE,
                    client.call(RequestCode.GET_TOPIC_STATS_INFO, {"topic": topic}))
    queues = by_queue(stats["offsetTable"], topic)
    check.equal("queues", list(range(QUEUES)), sorted(queues))
    check.equal("queue 0", {"lastUpdateTimestamp": records[-1].store_timestamp, "maxOffset": FILLED,
                            "minOffset": 0}, queues.get(0))
    check.equal("queue 1", {"lastUpdateTimestamp": 0, "maxOffset": 0, "minOffset": 0}, queues.get(1))
    check.equal("queue 2", {"lastUpdateTimestamp": alone.store_timestamp, "maxOffset": 1, "minOffset": 0},
                queues.get(2))


@case("RMQ-ADMIN-CONSUME-STATS", "GET_CONSUME_STATS of a group lists each read queue of the topics it "
      "committed to: max offset, committed offset and store time of the last consumed message.")
def test_consume_stats(client: Client, check: Check) -> None:
    topic, records = filled_topic(client)
    group = unique("cg")
    commit(client, group, topic, 0, 2)
    stats = body_of(check, "consume stats", CONSUME_STATS,
                    client.call(RequestCode.GET_CONSUME_STATS, {"consumerGroup": group}))
    queues = by_queue(stats["offsetTable"], topic)
    check.equal("queues", list(range(QUEUES)), sorted(queues))
    expected = {"brokerOffset": FILLED, "consumerOffset": 2, "lastTimestamp": records[1].store_timestamp}
    if client.follows(Rule.CONSUME_STATS_PULL_OFFSET):
        expected["pullOffset"] = 2  # no pull: the committed offset
    check.equal("queue 0", expected, queues.get(0))
    check.that("consumeTps is a number", isinstance(stats.get("consumeTps"), int | float),
               expected="number", actual=stats.get("consumeTps"))


@case("RMQ-ADMIN-CONSUME-STATS", "GET_CONSUME_STATS naming a topic the group never committed to answers its "
      "queues with consumer offset 0.")
def test_consume_stats_no_offsets(client: Client, check: Check) -> None:
    topic, _ = filled_topic(client)
    stats = body_of(check, "consume stats", CONSUME_STATS, client.call(
        RequestCode.GET_CONSUME_STATS, {"consumerGroup": unique("cg"), "topic": topic}))
    queues = by_queue(stats["offsetTable"], topic)
    expected = {"brokerOffset": FILLED, "consumerOffset": 0, "lastTimestamp": 0}
    if client.follows(Rule.CONSUME_STATS_PULL_OFFSET):
        expected["pullOffset"] = 0
    check.equal("queue 0", expected, queues.get(0))


@case("RMQ-ADMIN-CONSUMER-CONNECTION", "GET_CONSUMER_CONNECTION_LIST of an online group names its client, "
      "subscription, consume type and message model.")
def test_consumer_connection(client: Client, broker: Server, wire: Wire, check: Check) -> None:
    topic = client.create_topic()
    consumer = Consumer.online(wire.connect(broker.endpoint), check, topic)
    found = body_of(check, "connections", CONSUMER_CONNECTION, client.call(
        RequestCode.GET_CONSUMER_CONNECTION_LIST, {"consumerGroup": consumer.group}))
    check.equal("clients", [(consumer.client_id, "JAVA")],
                [(c.get("clientId"), c.get("language")) for c in found.get("connectionSet", [])])
    check.equal("subscribed topics", [topic], list(found.get("subscriptionTable", {})))
    check.equal("consume type and model", ("CONSUME_PASSIVELY", "CLUSTERING"),
                (found.get("consumeType"), found.get("messageModel")))


@case("RMQ-ADMIN-PRODUCER-CONNECTION", "GET_PRODUCER_CONNECTION_LIST names the clients that heartbeat as "
      "producers of the group.")
def test_producer_connection(client: Client, check: Check) -> None:
    group, client_id = unique("pg"), unique("127.0.0.1@producer")
    body = encode_body(HEARTBEAT_DATA, {"clientID": client_id, "consumerDataSet": [],
                                        "producerDataSet": [{"groupName": group}]})
    expect_success(check, "producer HEART_BEAT", client.connection.call(RequestCode.HEART_BEAT, body=body))
    found = body_of(check, "producers", PRODUCER_CONNECTION, client.call(
        RequestCode.GET_PRODUCER_CONNECTION_LIST, {"producerGroup": group}))
    check.equal("clients", [client_id], [c.get("clientId") for c in found.get("connectionSet", [])])


@case("RMQ-ADMIN-PRODUCER-CONNECTION", "After UNREGISTER_CLIENT of one of a group's two producers, "
      "GET_PRODUCER_CONNECTION_LIST names the other one only.")
def test_producer_unregistered(client: Client, broker: Server, wire: Wire, check: Check) -> None:
    group, staying, leaving = unique("pg"), unique("127.0.0.1@producer"), unique("127.0.0.1@producer")
    connections = {}
    for client_id in (staying, leaving):
        connection = connections[client_id] = wire.connect(broker.endpoint)
        body = encode_body(HEARTBEAT_DATA, {"clientID": client_id, "consumerDataSet": [],
                                            "producerDataSet": [{"groupName": group}]})
        expect_success(check, "producer HEART_BEAT", connection.call(RequestCode.HEART_BEAT, body=body))
    expect_success(check, "UNREGISTER_CLIENT", connections[leaving].call(
        RequestCode.UNREGISTER_CLIENT, {"clientID": leaving, "producerGroup": group}))
    found = body_of(check, "producers", PRODUCER_CONNECTION, client.call(
        RequestCode.GET_PRODUCER_CONNECTION_LIST, {"producerGroup": group}))
    check.equal("clients", [staying], [c.get("clientId") for c in found.get("connectionSet", [])])


@case("RMQ-ADMIN-RUNTIME-INFO", "runtime is the time since bootTimestamp (within a minute of the suite's "
      "clock), and commitLogDirCapacity's Free is at most its Total.")
def test_runtime_info_consistent(client: Client, check: Check) -> None:
    response = client.call(RequestCode.GET_BROKER_RUNTIME_INFO, {})
    info = body_of(check, "runtime info", KV_TABLE, response)["table"]
    now_ms = time.time() * 1000
    up = RUNTIME.fullmatch(info.get("runtime", ""))
    check.that("runtime format", up is not None, expected=RUNTIME.pattern, actual=info.get("runtime"))
    days, hours, minutes, seconds = (int(n.replace(",", "")) for n in up.groups()) if up else (0, 0, 0, 0)
    reported = ((days * 24 + hours) * 60 + minutes) * 60 + seconds
    since_boot = (now_ms - int(info.get("bootTimestamp", "0"))) / 1000
    check.that("runtime against bootTimestamp", abs(reported - since_boot) <= CLOCK_SLACK_S,
               expected=f"{since_boot:.0f} s ± {CLOCK_SLACK_S}", actual=reported)
    capacity = CAPACITY.fullmatch(info.get("commitLogDirCapacity", ""))
    check.that("commitLogDirCapacity format", capacity is not None, expected=CAPACITY.pattern,
               actual=info.get("commitLogDirCapacity"))
    if capacity:
        total, free = (float(n) * BYTE_UNITS[u] for n, u in (capacity.group(1, 2), capacity.group(3, 4)))
        check.that("Free at most Total", free <= total, expected=f"<= {total:.0f} bytes", actual=free)


@case("RMQ-ADMIN-CONSUME-BY-WHO", "QUERY_TOPIC_CONSUME_BY_WHO names a group that committed an offset of the "
      "topic and a group subscribed to it online.")
def test_consumed_by(client: Client, broker: Server, wire: Wire, check: Check) -> None:
    topic, _ = filled_topic(client)
    offline = unique("cg")
    commit(client, offline, topic, 0, 1)
    online = Consumer.online(wire.connect(broker.endpoint), check, topic)
    groups = body_of(check, "consumed by", GROUP_LIST,
                     client.call(RequestCode.QUERY_TOPIC_CONSUME_BY_WHO, {"topic": topic}))["groupList"]
    check.equal("groups", sorted([offline, online.group]), sorted(groups))


# -- subscription groups and offsets ------------------------------------------------------------------





@case("RMQ-ADMIN-SUBSCRIPTION-GROUP", "A group created by UPDATE_AND_CREATE_SUBSCRIPTIONGROUP is listed by "
      "GET_ALL_SUBSCRIPTIONGROUP_CONFIG with the settings given.")
def test_create_group(client: Client, check: Check) -> None:
    group = unique("cg")
    expect_success(check, "create group", client.call(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, {},
                                                      group_config(group)))
    listed = listed_groups(client, check).get(group, {})
    check.equal("retryMaxTimes and consumeFromMinEnable", (5, False),
                (listed.get("retryMaxTimes"), listed.get("consumeFromMinEnable")))


@case("RMQ-ADMIN-SUBSCRIPTION-GROUP", "DELETE_SUBSCRIPTIONGROUP removes the group from the list.")
def test_delete_group(client: Client, check: Check) -> None:
    group = unique("cg")
    client.call(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, {}, group_config(group))
    expect_success(check, "delete group",
                   client.call(RequestCode.DELETE_SUBSCRIPTIONGROUP, {"groupName": group}))
    check.that("group gone", group not in listed_groups(client, check), expected="absent", actual="listed")


@case("RMQ-ADMIN-SUBSCRIPTION-GROUP",
      "DELETE_SUBSCRIPTIONGROUP with removeOffset (cleanOffset in 5.x) drops the group's "
      "committed offsets: its consume stats list no topic afterwards.")
def test_delete_group_offsets(client: Client, check: Check) -> None:
    topic, _ = filled_topic(client)
    group = unique("cg")
    commit(client, group, topic, 0, 1)
    expect_success(check, "delete group", client.call(RequestCode.DELETE_SUBSCRIPTIONGROUP,
                                                      {"groupName": group, "removeOffset": True,
                                                       "cleanOffset": True}))
    stats = body_of(check, "consume stats", CONSUME_STATS,
                    client.call(RequestCode.GET_CONSUME_STATS, {"consumerGroup": group}))
    check.equal("queues left", {}, by_queue(stats.get("offsetTable", {}), topic))


@case("RMQ-ADMIN-CLONE-OFFSET", "CLONE_GROUP_OFFSET gives the target group the source group's committed "
      "offsets of the topic.")
def test_clone_offsets(client: Client, check: Check) -> None:
    topic, _ = filled_topic(client)
    source, target = unique("cg"), unique("cg")
    commit(client, source, topic, 0, 2)
    expect_success(check, "clone", client.call(RequestCode.CLONE_GROUP_OFFSET, {
        "srcGroup": source, "destGroup": target, "topic": topic, "offline": False}))
    found = client.answer("query", RequestCode.QUERY_CONSUMER_OFFSET,
                          {"consumerGroup": target, "topic": topic, "queueId": 0})["offset"]
    check.equal("target's offset", 2, found)


@case("RMQ-ADMIN-STATS-DATA", "VIEW_BROKER_STATS_DATA of a topic messages were put to answers minute, hour "
      "and day figures.")
def test_stats_data(client: Client, check: Check) -> None:
    topic, _ = filled_topic(client)
    data = body_of(check, "stats", BROKER_STATS_DATA, client.call(
        RequestCode.VIEW_BROKER_STATS_DATA, {"statsName": "TOPIC_PUT_NUMS", "statsKey": topic}))
    check.equal("windows", ["statsDay", "statsHour", "statsMinute"], sorted(data))


# -- consume queue view, system topics, clean-up --------------------------------------------------------



@case("RMQ-ADMIN-QUERY-CQ", "QUERY_CONSUME_QUEUE answers the queue's bounds and, from index, the entries: "
      "commitlog offset, record size and tag hash of each message.")
def test_query_consume_queue(client: Client, check: Check) -> None:
    topic, records = filled_topic(client)
    body = body_of(check, "query cq", QUERY_CONSUME_QUEUE_RESPONSE, query_cq(client, topic, 1, 2))
    check.equal("bounds", (0, FILLED), (body.get("minQueueIndex"), body.get("maxQueueIndex")))
    expected = [(r.physical_offset, r.total_size, tags_code(r.tags or "")) for r in records[1:3]]
    check.equal("entries", expected, [(e.get("physicOffset"), e.get("physicSize"), e.get("tagsCode"))
                                      for e in body.get("queueData", [])])


@case("RMQ-ADMIN-QUERY-CQ", "QUERY_CONSUME_QUEUE from an index past the queue's end answers SUCCESS without "
      "a body and says the index does not exist.")
def test_query_consume_queue_past_end(client: Client, check: Check) -> None:
    topic, _ = filled_topic(client)
    response = expect_success(check, "index past end", query_cq(client, topic, FILLED + 2, 1))
    check.equal("remark", admin.CQ_INDEX_NOT_EXIST_REMARK.format(index=FILLED + 2, queue_id=0, topic=topic),
                response.remark)
    check.equal("body", None, response.body or None)


@case("RMQ-ADMIN-QUERY-CQ", "QUERY_CONSUME_QUEUE naming a group that is not online says so in filterData.")
def test_query_consume_queue_offline_group(client: Client, check: Check) -> None:
    topic, _ = filled_topic(client)
    group = unique("cg")
    body = body_of(check, "query cq", QUERY_CONSUME_QUEUE_RESPONSE,
                   query_cq(client, topic, 0, 1, consumerGroup=group))
    check.equal("filterData", admin.CQ_GROUP_OFFLINE_FILTER.format(group=group, topic=topic),
                body.get("filterData"))


@case("RMQ-ADMIN-SYSTEM-TOPICS", "GET_SYSTEM_TOPIC_LIST_FROM_BROKER lists the system topics, TBW102 and "
      "SCHEDULE_TOPIC_XXXX among them.")
def test_system_topics_broker(client: Client, check: Check) -> None:
    topics = body_of(check, "system topics", TOPIC_LIST,
                     client.call(RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_BROKER, {}))["topicList"]
    check.equal("missing", [], [t for t in (DEFAULT_TOPIC, SCHEDULE_TOPIC) if t not in topics])


@table("code", [
    Row("clean-expired-cq", "RMQ-ADMIN-CLEAN", "CLEAN_EXPIRED_CONSUMEQUEUE answers SUCCESS.",
        RequestCode.CLEAN_EXPIRED_CONSUMEQUEUE),
    Row("delete-expired-commitlog", "RMQ-ADMIN-CLEAN", "DELETE_EXPIRED_COMMITLOG answers SUCCESS.",
        RequestCode.DELETE_EXPIRED_COMMITLOG),
])
def test_clean_up(code: int, client: Client, check: Check) -> None:
    topic, _ = filled_topic(client)
    expect_success(check, "clean-up", client.call(code, {}))
    check.equal("messages still readable", FILLED, len(client.pulled(topic).records))


# -- offset resets and calls relayed to consumers ------------------------------------------------------



@case("RMQ-ADMIN-RESET-OFFSET", "INVOKE_BROKER_TO_RESET_OFFSET for a group without committed offsets is 1 "
      "SYSTEM_ERROR.")
def test_reset_group_without_offsets(client: Client, check: Check) -> None:
    topic, _ = filled_topic(client)
    group = unique("cg")
    if client.follows(Rule.SERVER_SIDE_RESET_OFFSET):  # 5.2.0+: the group itself must exist
        remark = admin.RESET_SERVER_NO_GROUP_REMARK.format(group=group)
        refused(check, "unknown group", reset_offset(client, topic, group, 0),
                ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, remark)
        return
    refused(check, "no offsets", reset_offset(client, topic, group, 0), ResponseCode.SYSTEM_ERROR,
             admin.RESET_NO_GROUP_REMARK.format(group=group))


@case("RMQ-ADMIN-RESET-OFFSET", "INVOKE_BROKER_TO_RESET_OFFSET for a group with offsets but no client is "
      "206 CONSUMER_NOT_ONLINE.")
def test_reset_offline_group(client: Client, check: Check) -> None:
    topic, _ = filled_topic(client)
    group = unique("cg")
    for queue_id in range(QUEUES):  # offsets within each queue: only queue 0 holds messages
        commit(client, group, topic, queue_id, FILLED if queue_id == 0 else 0)
    if client.follows(Rule.SERVER_SIDE_RESET_OFFSET):  # 5.2.0+: reset in the broker, online or not
        answer = body_of(check, "reset", RESET_OFFSET_BODY, reset_offset(client, topic, group, -1))
        check.equal("offsets answered", {q: FILLED if q == 0 else 0 for q in range(QUEUES)},
                    by_queue(answer["offsetTable"], topic))
        committed = client.answer("query", RequestCode.QUERY_CONSUMER_OFFSET,
                                  {"consumerGroup": group, "topic": topic, "queueId": 0})["offset"]
        check.equal("queue 0 reset to its max offset", FILLED, committed)
        return
    refused(check, "offline group", reset_offset(client, topic, group, 0), ResponseCode.CONSUMER_NOT_ONLINE,
             admin.RESET_OFFLINE_REMARK.format(group=group, topic=topic, timestamp=0))


@table("language", [
    Row("java", "RMQ-ADMIN-RESET-OFFSET", "A reset of an online group sends RESET_CONSUMER_CLIENT_OFFSET to "
        "its client with the offsets it answers: the queue offset of the message stored at the timestamp.",
        "JAVA"),
    Row("cpp", "RMQ-ADMIN-RESET-OFFSET", "A reset asked by a CPP client sends the offsets to the consumer as "
        "a ResetOffsetBodyForC list (brokerName, offset, queueId, topic).", "CPP"),
])
def test_reset_online_group(language: str, client: Client, broker: Server, wire: Wire, check: Check) -> None:
    topic, records = filled_topic(client)
    consumer = Consumer.online(wire.connect(broker.endpoint), check, topic)
    for queue_id in range(QUEUES):
        commit(client, consumer.group, topic, queue_id, FILLED if queue_id == 0 else 0)
    stamp = records[1].store_timestamp
    same_time = [r.queue_offset for r in records if r.store_timestamp == stamp]
    answer = body_of(check, "reset", RESET_OFFSET_BODY,
                     reset_offset(client, topic, consumer.group, stamp, language))
    check.that("queue 0 offset", by_queue(answer["offsetTable"], topic).get(0) in same_time,
               expected=same_time, actual=by_queue(answer["offsetTable"], topic).get(0))
    if client.follows(Rule.SERVER_SIDE_RESET_OFFSET):  # 5.2.0+: the broker keeps the reset to itself
        committed = client.answer("query", RequestCode.QUERY_CONSUMER_OFFSET,
                                  {"consumerGroup": consumer.group, "topic": topic, "queueId": 0})["offset"]
        check.equal("queue 0 committed", by_queue(answer["offsetTable"], topic).get(0), committed)
        return
    told = consumer.called(RequestCode.RESET_CONSUMER_CLIENT_OFFSET)
    check.that("consumer told", told is not None, expected="RESET_CONSUMER_CLIENT_OFFSET", actual="nothing")
    if told is not None:
        header = decode_header(RESET_OFFSET_REQUEST, told.ext_fields)
        check.equal("reset header", (topic, consumer.group, stamp),
                    (header["topic"], header["group"], header["timestamp"]))
        if language == "CPP":
            sent = decode_body(RESET_OFFSET_BODY_FOR_C, told.body or b"{}")["offsetTable"]
            answered = sorted((k.as_dict()["queueId"], v) for k, v in answer["offsetTable"].items())
            check.equal("offsets sent", answered, sorted((e["queueId"], e["offset"]) for e in sent))
        else:
            check.equal("offsets sent", answer["offsetTable"],
                        decode_body(RESET_OFFSET_BODY, told.body or b"{}")["offsetTable"])


@table("relayed", [
    Row("running-info", "RMQ-ADMIN-CALL-CONSUMER", "GET_CONSUMER_RUNNING_INFO reaches the named client and "
        "its answer is the broker's answer.", RequestCode.GET_CONSUMER_RUNNING_INFO),
    Row("consume-directly", "RMQ-ADMIN-CALL-CONSUMER", "CONSUME_MESSAGE_DIRECTLY reaches the named client "
        "with the message's record as body, and its answer is the broker's answer.",
        RequestCode.CONSUME_MESSAGE_DIRECTLY),
])
def test_call_consumer(relayed: int, client: Client, broker: Server, wire: Wire, check: Check) -> None:
    topic, records = filled_topic(client)
    consumer = Consumer.online(wire.connect(broker.endpoint), check, topic)
    values: dict[str, Any] = {"consumerGroup": consumer.group, "clientId": consumer.client_id}
    if relayed == RequestCode.CONSUME_MESSAGE_DIRECTLY:
        values["msgId"] = records[0].offset_msg_id
    request = client.request(relayed, values)
    client.connection.send(request)
    call = consumer.called(relayed)
    check.that("client called", call is not None, expected=relayed, actual="nothing")
    if call is None:
        return
    check.equal("forwarded clientId", consumer.client_id, (call.ext_fields or {}).get("clientId"))
    if relayed == RequestCode.CONSUME_MESSAGE_DIRECTLY:
        forwarded = decode_records(call.body or b"")
        check.equal("message record forwarded", [records[0].physical_offset],
                    [r.physical_offset for r in forwarded])
    consumer.answer(call, b'{"jstack":"relayed"}')
    answer = client.connection.response_to(request.opaque, RESPONSE_TIMEOUT * 3)
    check.that("admin answered", answer is not None, expected="a response", actual="none")
    if answer is not None:
        expect_success(check, "relayed answer", answer)
        check.equal("client's body", b'{"jstack":"relayed"}', answer.body)


@case("RMQ-ADMIN-CALL-CONSUMER", "GET_CONSUMER_RUNNING_INFO naming a client that is not among the group's "
      "online members (though the group has one) is answered 1 'The Consumer <group> <client> not online'.")
def test_call_consumer_not_among_members(client: Client, broker: Server, wire: Wire, check: Check) -> None:
    consumer = Consumer.online(wire.connect(broker.endpoint), check, client.create_topic())
    other = unique("127.0.0.1@client")
    refused(check, "running info of another client", client.call(
        RequestCode.GET_CONSUMER_RUNNING_INFO, {"consumerGroup": consumer.group, "clientId": other}),
        ResponseCode.SYSTEM_ERROR, admin.CLIENT_NOT_ONLINE_REMARK.format(group=consumer.group, client=other))


@table("message_id", [
    Row("undecodable", "RMQ-ADMIN-CALL-CONSUMER", "CONSUME_MESSAGE_DIRECTLY whose msgId does not decode is "
        "answered 1 SYSTEM_ERROR at once, though the named consumer is online.", "zz"),
    Row("no-record", "RMQ-ADMIN-CALL-CONSUMER", "CONSUME_MESSAGE_DIRECTLY whose msgId names an offset past "
        "the CommitLog's end is answered 1 SYSTEM_ERROR at once, though the named consumer is online.",
        encode_offset_msg_id("127.0.0.1", 10911, 1 << 40)),
])
def test_consume_directly_unknown_message(message_id: str, client: Client, broker: Server, wire: Wire,
                                          check: Check) -> None:
    consumer = Consumer.online(wire.connect(broker.endpoint), check, client.create_topic())
    answer = client.call(RequestCode.CONSUME_MESSAGE_DIRECTLY, {
        "consumerGroup": consumer.group, "clientId": consumer.client_id, "msgId": message_id})
    expect_code(check, "direct consumption of no message", answer, ResponseCode.SYSTEM_ERROR)


@case("RMQ-ADMIN-CALL-CONSUMER", "A consumer that does not answer the broker's call within 10 s makes the "
      "broker answer 207 CONSUME_MSG_TIMEOUT.")
def test_call_consumer_unanswered(client: Client, broker: Server, wire: Wire, check: Check) -> None:
    consumer = Consumer.online(wire.connect(broker.endpoint), check, client.create_topic())
    request = client.request(RequestCode.GET_CONSUMER_RUNNING_INFO,
                             {"consumerGroup": consumer.group, "clientId": consumer.client_id})
    client.connection.send(request)
    check.that("client called", consumer.called(RequestCode.GET_CONSUMER_RUNNING_INFO) is not None,
               expected="a call", actual="nothing")
    answer = client.connection.response_to(request.opaque, CALL_CLIENT_TIMEOUT_S + RESPONSE_TIMEOUT * 3)
    check.that("admin answered", answer is not None, expected="a response", actual="none")
    if answer is not None:
        expect_code(check, "unanswered call", answer, ResponseCode.CONSUME_MSG_TIMEOUT)


# -- refusals of unknown names ------------------------------------------------------------------------

_STATS = "TOPIC_PUT_NUMS"
_C = RequestCode


@table("refusal", [
    Row("topic-stats-unknown-topic", "RMQ-ADMIN-TOPIC-STATS", "GET_TOPIC_STATS_INFO of an unknown topic is "
        "17 TOPIC_NOT_EXIST.", (_C.GET_TOPIC_STATS_INFO, ("topic",), ResponseCode.TOPIC_NOT_EXIST,
                             admin.TOPIC_NOT_EXIST_REMARK)),
    Row("consumer-connection-offline", "RMQ-ADMIN-CONSUMER-CONNECTION", "GET_CONSUMER_CONNECTION_LIST of a "
        "group without clients is 206 CONSUMER_NOT_ONLINE.",
        (_C.GET_CONSUMER_CONNECTION_LIST, ("consumerGroup",), ResponseCode.CONSUMER_NOT_ONLINE,
         admin.CONSUMER_NOT_ONLINE_REMARK)),
    Row("producer-connection-unknown", "RMQ-ADMIN-PRODUCER-CONNECTION", "GET_PRODUCER_CONNECTION_LIST of an "
        "unknown group is 1 SYSTEM_ERROR.", (_C.GET_PRODUCER_CONNECTION_LIST, ("producerGroup",),
                                             ResponseCode.SYSTEM_ERROR, admin.PRODUCER_NOT_EXIST_REMARK)),
    Row("stats-data-absent", "RMQ-ADMIN-STATS-DATA", "VIEW_BROKER_STATS_DATA of a key never counted is 1 "
        "SYSTEM_ERROR.", (_C.VIEW_BROKER_STATS_DATA, ("statsKey",), ResponseCode.SYSTEM_ERROR,
                          admin.STATS_NOT_EXIST_REMARK)),
    Row("query-cq-absent", "RMQ-ADMIN-QUERY-CQ", "QUERY_CONSUME_QUEUE of a queue that does not exist is 1 "
        "SYSTEM_ERROR.", (_C.QUERY_CONSUME_QUEUE, ("topic",), ResponseCode.SYSTEM_ERROR,
                          admin.CQ_NOT_EXIST_REMARK)),
    Row("reset-unknown-topic", "RMQ-ADMIN-RESET-OFFSET", "INVOKE_BROKER_TO_RESET_OFFSET of an unknown topic "
        "is 1 SYSTEM_ERROR.", (_C.INVOKE_BROKER_TO_RESET_OFFSET, ("topic", "group"),
                               ResponseCode.SYSTEM_ERROR, admin.RESET_NO_TOPIC_REMARK)),
    Row("running-info-absent-client", "RMQ-ADMIN-CALL-CONSUMER", "GET_CONSUMER_RUNNING_INFO for a client "
        "that is not connected is 1 SYSTEM_ERROR.",
        (_C.GET_CONSUMER_RUNNING_INFO, ("consumerGroup", "clientId"), ResponseCode.SYSTEM_ERROR,
         admin.CLIENT_NOT_ONLINE_REMARK)),
])
def test_unknown_name_refused(refusal: tuple[int, tuple[str, ...], int, str], client: Client,
                              check: Check) -> None:
    """Each request names something that does not exist (one fresh name in every field it names)."""
    code, named, expected, remark = refusal
    name = unique("absent")
    fixed: dict[str, Any] = {"statsName": _STATS, "queueId": 0, "index": 0, "count": 1, "timestamp": 0,
                             "isForce": True}
    spec = header_for(code, is_response=False)
    assert spec is not None
    values = {f.key: name if f.key in named else fixed.get(f.key) for f in spec.fields}
    response = client.call(code, {k: v for k, v in values.items() if v is not None})
    if code == _C.INVOKE_BROKER_TO_RESET_OFFSET and client.follows(Rule.SERVER_SIDE_RESET_OFFSET):
        expected, remark = ResponseCode.TOPIC_NOT_EXIST, admin.RESET_SERVER_NO_TOPIC_REMARK
    refused(check, "unknown name", response, expected, remark.format(
        topic=name, group=name, client=name, key=name, name=_STATS, queue_id=0))


# -- name server ---------------------------------------------------------------------------------------

@case("RMQ-ADMIN-TOPIC-LIST", "GET_ALL_TOPIC_LIST_FROM_NAMESERVER lists a registered broker's topic.")
def test_all_topics(namesrv: Server, wire: Wire, check: Check) -> None:
    fake, connection = _registered(check, namesrv, wire)
    topics = body_of(check, "topics", TOPIC_LIST,
                     connection.call(RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER))["topicList"]
    check.that("topic listed", fake.topic in topics, expected=fake.topic, actual=len(topics))


@case("RMQ-ADMIN-TOPIC-LIST", "GET_TOPICS_BY_CLUSTER lists exactly the topics of the cluster's brokers.")
def test_topics_by_cluster(namesrv: Server, wire: Wire, check: Check) -> None:
    fake, connection = _registered(check, namesrv, wire)
    fields = encode_header(admin_headers.GET_TOPICS_BY_CLUSTER_REQUEST, {"cluster": fake.cluster})
    topics = body_of(check, "topics", TOPIC_LIST,
                     connection.call(RequestCode.GET_TOPICS_BY_CLUSTER, fields))["topicList"]
    check.equal("topics", sorted(fake.topics), sorted(topics))


@case("RMQ-ADMIN-SYSTEM-TOPICS", "GET_SYSTEM_TOPIC_LIST_FROM_NS lists each cluster name and broker name.")
def test_system_topics_namesrv(namesrv: Server, wire: Wire, check: Check) -> None:
    fake, connection = _registered(check, namesrv, wire)
    topics = body_of(check, "system topics", TOPIC_LIST,
                     connection.call(RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_NS))["topicList"]
    check.equal("missing", [], [t for t in (fake.cluster, fake.name) if t not in topics])


@case("RMQ-ADMIN-WRITE-PERM", "WIPE_WRITE_PERM_OF_BROKER then ADD_WRITE_PERM_OF_BROKER each count the "
      "broker's two topics, whose routes lose and regain PERM_WRITE.")
def test_write_perm(namesrv: Server, wire: Wire, check: Check) -> None:
    fake, connection = _registered(check, namesrv, wire)
    fields = encode_header(admin_headers.BROKER_NAME_REQUEST, {"brokerName": fake.name})

    def perm() -> Any:
        route = fastjson_loads(connection.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": fake.topic}).body
                               or b"{}")
        return [q.get("perm") for q in route.get("queueDatas", [])]
    wiped = expect_success(check, "wipe", connection.call(RequestCode.WIPE_WRITE_PERM_OF_BROKER, fields))
    check.equal("wipeTopicCount", len(fake.topics),
                decode_header(WIPE_WRITE_PERM_RESPONSE, wiped.ext_fields)["wipeTopicCount"])
    check.equal("perm after wipe", [4], perm())
    added = expect_success(check, "add", connection.call(RequestCode.ADD_WRITE_PERM_OF_BROKER, fields))
    check.equal("addTopicCount", len(fake.topics),
                decode_header(admin_headers.ADD_WRITE_PERM_RESPONSE, added.ext_fields)["addTopicCount"])
    check.equal("perm after add", [6], perm())


@table("lacking", [
    Row("consume-stats-without-group", "RMQ-CMD-REQUIRED", "GET_CONSUME_STATS naming a topic but no "
        "consumerGroup is refused.", (RequestCode.GET_CONSUME_STATS, {"topic": DEFAULT_TOPIC})),
    Row("reset-without-timestamp", "RMQ-CMD-REQUIRED", "INVOKE_BROKER_TO_RESET_OFFSET without its timestamp "
        "is refused.", (RequestCode.INVOKE_BROKER_TO_RESET_OFFSET,
                        {"topic": DEFAULT_TOPIC, "group": "g", "isForce": "true"})),
])
def test_admin_request_lacking_a_field(lacking: tuple[int, dict[str, str]], client: Client,
                                       check: Check) -> None:
    code, fields = lacking
    response = client.connection.call(code, fields)
    expect_refused(check, "admin request lacking a required field", response)
