"""Producing: the three send commands, the ids and offsets they answer, the sends a broker must refuse,
and the topics it creates.

Every case sends to a topic it created itself, so queue offsets start at 0 whatever else runs.
"""

from __future__ import annotations

from collections.abc import Callable

from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.fastjson import loads as fastjson_loads
from rocketmq_spec.codec.store import decode_records
from rocketmq_spec.conformance.case import Row, case, table
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.target import Server
from rocketmq_spec.conformance.verdict import NonStrict
from rocketmq_spec.conformance.wire import Wire
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.commitlog import MAX_MESSAGE_SIZE, MAX_PROPERTIES_BYTES
from rocketmq_spec.spec.frame import SerializeType
from rocketmq_spec.spec.message_id import decode_offset_msg_id
from rocketmq_spec.spec.properties import PropertyKey, encode_properties, java_hashmap_order, parse_properties
from rocketmq_spec.spec.release_rules import Rule
from rocketmq_spec.spec.sysflag import PERM_READ_WRITE
from rocketmq_spec.spec.system_topics import (
    BUILT_IN_QUEUES,
    DEFAULT_TOPIC,
    SELF_TEST_TOPIC,
    SYSTEM_TOPIC_PREFIX,
    TOPIC_MAX_LENGTH,
)

from .messaging import QUEUES, Client, Message
from .support import eventually, expect_code, expect_refused, expect_success, unique

NO_RECORD_OFFSET = 1 << 50
"""A commitlog offset far beyond any store a test run writes (1 PiB): it holds no record."""

"""``TopicValidator.TOPIC_MAX_LENGTH``."""

ROUTE_QUEUES = 3
"""Queues of the topic whose route is checked: not the default 4, so the route cannot be a default."""


@table("code", [
    Row("send-v1", "RMQ-BRK-SEND", "SEND_MESSAGE (long header names) is answered SUCCESS with msgId, queueId "
        "and queueOffset.", RequestCode.SEND_MESSAGE),
    Row("send-v2", "RMQ-BRK-SEND", "SEND_MESSAGE_V2 (one-letter header names) is answered SUCCESS with "
        "msgId, queueId and queueOffset.", RequestCode.SEND_MESSAGE_V2),
])
def test_send(code: int, client: Client, check: Check) -> None:
    topic = client.create_topic()
    result = client.send(topic, Message(), queue_id=2, code=code)
    check.equal("msgId count", 1, len(result.msg_ids))
    decode_offset_msg_id(result.msg_ids[0])
    check.equal("queueId", 2, result.queue_id)
    check.equal("queueOffset of the first message of a queue", 0, result.queue_offset)


@case("RMQ-BRK-BATCH", "A batch is stored in one queue at consecutive offsets; msgId lists each one's id.")
def test_batch(client: Client, check: Check) -> None:
    topic = client.create_topic()
    client.send(topic, Message(b"before"), queue_id=1)
    batch = [Message(f"batch {i}".encode(), tags="B", keys=(f"bk{i}",)) for i in range(3)]
    result = client.send_batch(topic, batch, queue_id=1)
    check.equal("msgIds", len(batch), len(result.msg_ids))
    check.equal("queueOffset: the first message's", 1, result.queue_offset)
    stored = client.pulled(topic, 1, result.queue_offset).records
    check.equal("queue offsets", [1, 2, 3], [r.queue_offset for r in stored])
    check.equal("bodies", [m.body for m in batch], [r.body for r in stored])
    check.equal("UNIQ_KEYs", [m.uniq for m in batch], [r.uniq_key for r in stored])
    check.equal("msgIds are the records' offsetMsgIds", result.msg_ids, [r.offset_msg_id for r in stored])


@case("RMQ-BRK-QUEUE-OFFSET", "Interleaved sends to two queues get offsets 0, 1, 2, ... in each queue.")
def test_queue_offsets_contiguous(client: Client, check: Check) -> None:
    topic = client.create_topic()
    offsets: dict[int, list[int]] = {0: [], 3: []}
    for queue_id in (0, 3, 0, 0, 3, 0, 3):
        offsets[queue_id].append(client.send(topic, queue_id=queue_id).queue_offset)
    check.equal("offsets of queue 0", [0, 1, 2, 3], offsets[0])
    check.equal("offsets of queue 3", [0, 1, 2], offsets[3])


@case("RMQ-BRK-STORE-HOST", "offsetMsgId names the broker's port and a commitlog offset where "
      "VIEW_MESSAGE_BY_ID finds the message.")
def test_offset_msg_id_views_message(broker: Server, client: Client, check: Check) -> None:
    topic = client.create_topic()
    message = Message(b"viewed", tags="V")
    msg_id = client.send(topic, message).msg_ids[0]
    decoded = decode_offset_msg_id(msg_id)
    check.note("store host", f"{decoded.host}:{decoded.port}")
    check.equal("store port", broker.endpoint.port, decoded.port)
    response = client.call(RequestCode.VIEW_MESSAGE_BY_ID, {"offset": decoded.offset})
    found = decode_records(expect_success(check, "VIEW_MESSAGE_BY_ID", response).body)
    check.equal("records returned", 1, len(found))
    check.equal("physical offset", decoded.offset, found[0].physical_offset)
    check.equal("(topic, body, UNIQ_KEY)", (topic, message.body, message.uniq),
                (found[0].topic, found[0].body, found[0].uniq_key))
    check.equal("the record's own offsetMsgId", msg_id, found[0].offset_msg_id)


@case("RMQ-BRK-VIEW-BY-ID", "VIEW_MESSAGE_BY_ID of an offset holding no record is not answered SUCCESS.")
def test_view_without_record(client: Client, check: Check) -> None:
    expect_refused(check, "VIEW_MESSAGE_BY_ID far past the end",
                   client.call(RequestCode.VIEW_MESSAGE_BY_ID, {"offset": NO_RECORD_OFFSET}))


_Refused = Callable[[Client], RemotingCommand]

_JAVA_CODES = ("Java answers 1 SYSTEM_ERROR (29 INVALID_PARAMETER from 5.3.2) for a malformed topic or "
               "queueId and 16 NO_PERMISSION for a NOT_ALLOWED_SEND system topic "
               "(AbstractSendMessageProcessor.msgCheck).")


@table("refused", [
    Row("topic-illegal-characters", "RMQ-BRK-SEND-CHECKS", "A send to 'bad topic!...' is refused (Java: 1).",
        (lambda c: c.send_request(unique("bad topic!")), ResponseCode.SYSTEM_ERROR), java_note=_JAVA_CODES),
    Row("topic-too-long", "RMQ-BRK-SEND-CHECKS", "A send to a 128-character topic is refused (Java: 1).",
        (lambda c: c.send_request(unique("t").ljust(TOPIC_MAX_LENGTH + 1, "x")), ResponseCode.SYSTEM_ERROR),
        java_note=_JAVA_CODES),
    Row("topic-system", "RMQ-BRK-SEND-CHECKS", "A send to SELF_TEST_TOPIC (NOT_ALLOWED_SEND) is refused "
        "(Java: 16).", (lambda c: c.send_request(SELF_TEST_TOPIC), ResponseCode.NO_PERMISSION),
        java_note=_JAVA_CODES),
    Row("queue-id-out-of-range", "RMQ-BRK-SEND-CHECKS", "A send to queueId 4 of a 4-queue topic is refused "
        "(Java: 1).", (lambda c: c.send_request(c.create_topic(), queue_id=QUEUES),
                       ResponseCode.SYSTEM_ERROR), java_note=_JAVA_CODES),
])
def test_send_refused(refused: tuple[_Refused, int], client: Client, check: Check) -> None:
    """Refused is the rule; the code Java answers is checked as a SHOULD, since clients act on the code."""
    send, java_code = refused
    if java_code == ResponseCode.SYSTEM_ERROR and client.follows(Rule.SEND_CHECK_INVALID_PARAMETER):
        java_code = ResponseCode.INVALID_PARAMETER
    response = expect_refused(check, "send", send(client))
    if response.code != java_code:
        raise NonStrict("send refused with another code than Java's", expected=java_code,
                        actual=f"{response.code} {response.remark or ''}".strip())


@case("RMQ-BRK-CREATE-TOPIC", "UPDATE_AND_CREATE_TOPIC of a 128-character topic is refused; one of 127 is "
      "created.")
def test_create_topic_length_limit(client: Client, check: Check) -> None:
    longest = unique("t").ljust(TOPIC_MAX_LENGTH, "x")
    expect_refused(check, "create a 128-character topic", client.create_topic_request(longest + "x"))
    expect_success(check, "create a 127-character topic", client.create_topic_request(longest))


@case("RMQ-BRK-SEND-CHECKS", "A send to a topic of 127 characters, the longest allowed, is stored.")
def test_longest_topic_is_accepted(client: Client, check: Check) -> None:
    topic = client.create_topic(name=unique("t").ljust(TOPIC_MAX_LENGTH, "x"))
    client.send(topic, Message(b"longest topic"))
    check.equal("topic stored", [topic], [r.topic for r in client.pulled(topic).records])


@table("over", [
    Row("body-of-max-message-size", "RMQ-BRK-MESSAGE-ILLEGAL", "A message whose body is exactly "
        "maxMessageSize (4 MiB) long is stored whole.", 0),
    Row("body-one-byte-over", "RMQ-BRK-MESSAGE-ILLEGAL", "A message whose body is one byte longer than "
        "maxMessageSize is refused with 13 MESSAGE_ILLEGAL.", 1),
])
def test_message_size_limit(over: int, client: Client, check: Check) -> None:
    topic = client.create_topic()
    response = client.send_request(topic, Message(bytes(MAX_MESSAGE_SIZE + over), tags="S"))
    if over:
        expect_code(check, "send one byte over", response, ResponseCode.MESSAGE_ILLEGAL)
        return
    record = client.viewed("send at the limit", response)
    check.equal("body length stored", MAX_MESSAGE_SIZE, len(record.body))


@table("over", [
    Row("properties-of-32767-bytes", "RMQ-BRK-MESSAGE-ILLEGAL", "A message whose stored properties string "
        "is exactly 32767 bytes long is stored.", 0),
    Row("properties-one-byte-over", "RMQ-BRK-MESSAGE-ILLEGAL", "A message whose stored properties string "
        "would be one byte longer than 32767 is refused with 13 MESSAGE_ILLEGAL.", 1),
])
def test_properties_size_limit(over: int, client: Client, check: Check) -> None:
    """What the broker adds to the properties (CLUSTER) is measured on a small message of the same
    properties, so the padding puts the stored string exactly at the limit, or one past it."""
    topic = client.create_topic()
    client.send(topic, Message(b"p", user={"pad": "x"}))
    (probe,) = client.pulled(topic).records
    pad = "x" * (1 + MAX_PROPERTIES_BYTES - len(probe.properties_text.encode()) + over)
    response = client.send_request(topic, Message(b"p", user={"pad": pad}))
    if over:
        expect_code(check, "send one byte over", response, ResponseCode.MESSAGE_ILLEGAL)
        return
    record = client.viewed("send at the limit", response)
    check.equal("stored properties length", MAX_PROPERTIES_BYTES, len(record.properties_text.encode()))


@table("serialize_type", [
    Row(t.name.lower(), "RMQ-BRK-STORED-PROPERTIES", f"A message sent with a {t.name} header whose tags, "
        "keys and user property are non-ASCII is stored with exactly its properties, CLUSTER added, WAIT "
        "left out.", t) for t in (SerializeType.JSON, SerializeType.ROCKETMQ)])
def test_stored_properties_are_the_sent_ones(serialize_type: SerializeType, client: Client,
                                            check: Check) -> None:
    topic = client.create_topic()
    message = Message("body ✓".encode(), tags="标签", keys=("ключ", "clé"), user={"note": "héllo 中文 🚀"})
    client.send(topic, message, serialize_type=serialize_type)
    (record,) = client.pulled(topic).records
    stored = dict(record.properties)
    check.that("CLUSTER added", bool(stored.pop(PropertyKey.CLUSTER, "")), expected="a cluster name",
               actual=record.properties.get(PropertyKey.CLUSTER))
    check.equal("the other properties", message.stored_properties, stored)
    check.equal("body", message.body, record.body)


@case("RMQ-BRK-SEND-EXT", "A send response carries MSG_REGION and TRACE_ON ('true' or 'false').")
def test_send_response_ext_fields(client: Client, check: Check) -> None:
    ext = client.send(client.create_topic()).response.ext_fields or {}
    check.that("MSG_REGION", bool(ext.get(PropertyKey.MSG_REGION)), expected="a region name",
               actual=ext.get(PropertyKey.MSG_REGION))
    check.that("TRACE_ON", ext.get(PropertyKey.TRACE_SWITCH) in ("true", "false"), expected="true or false",
               actual=ext.get(PropertyKey.TRACE_SWITCH))


@case("RMQ-BRK-CREATE-TOPIC", "A topic created without the optional topicSysFlag is listed by "
      "GET_ALL_TOPIC_CONFIG with topicSysFlag 0.")
def test_create_topic_defaults(client: Client, check: Check) -> None:
    topic = unique("topic")
    expect_success(check, "UPDATE_AND_CREATE_TOPIC", client.connection.call(
        RequestCode.UPDATE_AND_CREATE_TOPIC, {"topic": topic, "defaultTopic": DEFAULT_TOPIC,
                                              "readQueueNums": "2", "writeQueueNums": "2",
                                              "perm": str(int(PERM_READ_WRITE)),
                                              "topicFilterType": "SINGLE_TAG", "order": "false"}))
    response = expect_success(check, "GET_ALL_TOPIC_CONFIG",
                              client.connection.call(RequestCode.GET_ALL_TOPIC_CONFIG))
    config = fastjson_loads(response.body or b"{}").get("topicConfigTable", {}).get(topic, {})
    check.equal("topicSysFlag", 0, config.get("topicSysFlag"))


@case("RMQ-BRK-CREATE-TOPIC", "A created topic is listed by GET_ALL_TOPIC_CONFIG with its queues and perm.")
def test_create_topic(client: Client, check: Check) -> None:
    topic = client.create_topic(ROUTE_QUEUES)
    response = expect_success(check, "GET_ALL_TOPIC_CONFIG",
                              client.connection.call(RequestCode.GET_ALL_TOPIC_CONFIG))
    config = fastjson_loads(response.body or b"{}").get("topicConfigTable", {}).get(topic, {})
    check.equal("(readQueueNums, writeQueueNums, perm)", (ROUTE_QUEUES, ROUTE_QUEUES, int(PERM_READ_WRITE)),
                (config.get("readQueueNums"), config.get("writeQueueNums"), config.get("perm")))




@case("RMQ-ADMIN-SYSTEM-TOPICS", "GET_ALL_TOPIC_CONFIG lists the built-in topics with their queue counts, "
      "perm 6 and topicSysFlag 0.")
def test_built_in_topics(client: Client, check: Check) -> None:
    response = expect_success(check, "GET_ALL_TOPIC_CONFIG",
                              client.connection.call(RequestCode.GET_ALL_TOPIC_CONFIG))
    table = fastjson_loads(response.body or b"{}").get("topicConfigTable", {})
    for topic, queues in BUILT_IN_QUEUES.items():
        config = table.get(topic, {})
        check.equal(f"{topic}: (readQueueNums, writeQueueNums, perm, topicSysFlag)",
                    (queues, queues, int(PERM_READ_WRITE), 0), (config.get("readQueueNums"),
                    config.get("writeQueueNums"), config.get("perm"), config.get("topicSysFlag")))


@case("RMQ-BRK-CREATE-TOPIC", "Creating a topic advances the counter of the dataVersion GET_ALL_TOPIC_CONFIG "
      "answers with the topic table.")
def test_create_topic_advances_data_version(client: Client, check: Check) -> None:
    def counter() -> int | None:
        response = expect_success(check, "GET_ALL_TOPIC_CONFIG",
                                  client.connection.call(RequestCode.GET_ALL_TOPIC_CONFIG))
        return fastjson_loads(response.body or b"{}").get("dataVersion", {}).get("counter")

    before = counter()
    client.create_topic()
    after = counter()
    check.that("dataVersion counter advanced", isinstance(before, int) and isinstance(after, int)
               and after > before, expected=f"more than {before}", actual=after)


@case("RMQ-BRK-CREATE-TOPIC", "UPDATE_AND_CREATE_TOPIC of an rmq_sys_ topic is refused with SYSTEM_ERROR.")
def test_create_system_topic_refused(client: Client, check: Check) -> None:
    code = (ResponseCode.INVALID_PARAMETER if client.follows(Rule.TOPIC_CONFLICT_INVALID_PARAMETER)
            else ResponseCode.SYSTEM_ERROR)
    expect_code(check, "create rmq_sys_ topic",
                client.create_topic_request(unique(SYSTEM_TOPIC_PREFIX + "conformance")), code)


@case("RMQ-BRK-ROUTE-PUBLISHED", "A topic created on the broker is routed by the name server to the broker.")
def test_created_topic_routed(namesrv: Server, broker: Server, client: Client, wire: Wire,
                              check: Check) -> None:
    topic = client.create_topic(ROUTE_QUEUES)
    lookup = wire.connect(namesrv.endpoint)
    route = eventually(lambda: lookup.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": topic}),
                       lambda r: r.code == ResponseCode.SUCCESS)
    data = fastjson_loads(expect_success(check, "route of the created topic", route).body or b"{}")
    queues = [(q.get("readQueueNums"), q.get("writeQueueNums"), q.get("perm")) for q in data["queueDatas"]]
    check.equal("queue data", [(ROUTE_QUEUES, ROUTE_QUEUES, int(PERM_READ_WRITE))], queues)
    ports = {int(str(a).rpartition(":")[2]) for b in data["brokerDatas"] for a in b["brokerAddrs"].values()}
    check.that("the broker's port among the routed addresses", broker.endpoint.port in ports,
               expected=broker.endpoint.port, actual=sorted(ports))


@case("RMQ-PROP-PARSING",
      "A broker reads a sent properties string as Java does: a repeated name keeps its last value (the "
      "queue's tags code filters by it) and segments without a name or a value are dropped.")
def test_broker_parses_properties_as_java(client: Client, check: Check) -> None:
    topic = client.create_topic()
    message = Message(b"parsed")
    text = "\x02".join([f"{PropertyKey.TAGS}\x01first", "no-separator", "\x01nameless", "EMPTY\x01",
                        f"{PropertyKey.UNIQ_KEY}\x01{message.uniq}", f"{PropertyKey.TAGS}\x01last"])
    client.send(topic, message, properties_text=text)
    (record,) = client.pulled(topic, expression="last").records
    check.equal("TAGS stored", "last", record.properties.get(PropertyKey.TAGS))
    check.equal("segments kept without a name or a value", [],
                [s for s in ("no-separator", "\x01nameless", "EMPTY\x01", "TAGS\x01first")
                 if s in record.properties_text.split("\x02")])
    first = client.pull(topic, 0, 0, expression="first")
    check.equal("messages a filter on the first TAGS value finds", [],
                decode_records(first.body) if first.code == ResponseCode.SUCCESS else [])


@case("RMQ-CL-BATCH-PROPERTIES",
      "Each record of a batch keeps its message's properties string, then U+0002 and the broker's pairs, "
      "CLUSTER among them; since 5.4.0 the string alone (spec.release_rules).")
def test_batch_records_keep_their_properties(client: Client, check: Check) -> None:
    topic = client.create_topic()
    sent = [Message(f"batch {i}".encode(), tags="B", keys=(f"bk{i}",)) for i in range(2)]
    client.send_batch(topic, sent)
    records = client.pulled(topic).records
    check.equal("records", len(sent), len(records))
    alone = client.follows(Rule.BATCH_KEEPS_OWN_PROPERTIES)
    for message, record in zip(sent, records, strict=False):
        own = encode_properties(message.stored_properties)
        text = record.properties_text
        appended = parse_properties(text.removeprefix(own + "\x02")).get(PropertyKey.CLUSTER)
        kept = text == own if alone else text.startswith(own + "\x02") and bool(appended)
        if not kept:
            raise NonStrict(f"batch record {record.queue_offset} does not keep its own properties string"
                            f"{'' if alone else ' followed by the broker CLUSTER'}",
                            expected=own if alone else own + "\\x02...CLUSTER...", actual=text)


HASHMAP_CAPACITIES = tuple(16 << n for n in range(5))
"""Capacities a message's property map may have grown to (16 to 256 names)."""


@case("RMQ-CL-PROPERTIES-ORDER",
      "A message sent with its properties in another order is stored with them in java.util.HashMap "
      "iteration order (for some capacity the map can have).")
def test_stored_properties_in_hashmap_order(client: Client, check: Check) -> None:
    topic = client.create_topic()
    message = Message(b"ordered", tags="O", keys=("k",), user={f"p{i}": str(i) for i in range(6)})
    names = list(message.properties)
    sent = dict(sorted(message.properties.items(), key=lambda item: java_hashmap_order(names).index(item[0]),
                       reverse=True))
    client.send(topic, message, properties_text=encode_properties(sent))
    (record,) = client.pulled(topic).records
    stored = [s.partition("\x01")[0] for s in record.properties_text.removesuffix("\x02").split("\x02")]
    check.note("names as sent", list(sent))
    if not any(java_hashmap_order(stored, capacity * 3 // 4) == stored for capacity in HASHMAP_CAPACITIES):
        raise NonStrict("properties not stored in HashMap order", expected=java_hashmap_order(stored),
                        actual=stored)
