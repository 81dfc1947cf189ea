"""Command bodies: the JSON beans servers write, the lenient ones they read, and the binary bodies of a
compressed registration and a batch send, each judged by what the server answers or stores afterwards.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rocketmq_spec.codec.batch import BatchBlock, encode_batch
from rocketmq_spec.codec.custom_header import encode_header
from rocketmq_spec.codec.fastjson import loads as fastjson_loads
from rocketmq_spec.conformance.case import Row, case, table
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.target import Server
from rocketmq_spec.conformance.wire import Wire
from rocketmq_spec.spec.bodies import CONSUME_FROM_WHERE, CONSUME_TYPE, MESSAGE_MODEL
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.headers import SEND_MESSAGE_REQUEST_V2
from rocketmq_spec.spec.properties import encode_properties

from .messaging import Client, Message, subscription
from .support import expect_code, expect_refused, expect_success, unique
from .test_namesrv import QUEUES, FakeBroker, _registered, _route

Pairs = list[tuple[str, Any]]
"""A JSON object as written: its members in order (``json.loads`` with ``object_pairs_hook=list``)."""


def _objects(value: Any, path: tuple[str, ...]) -> list[Pairs]:
    """The objects at ``path``: a member name, ``name[]`` for each element of an array member."""
    if not path:
        return [value] if isinstance(value, list) else []
    head, rest = path[0], path[1:]
    member = dict(value).get(head.removesuffix("[]")) if isinstance(value, list) else None
    items = member if head.endswith("[]") and isinstance(member, list) else [member]
    return [found for item in items for found in _objects(item, rest)]


@dataclass(frozen=True)
class BeanBody:
    """Where to get a JSON body and the paths of the beans in it (the other objects are maps)."""

    role: str
    fetch: Callable[[Server, Wire, Check], tuple[bytes, dict[str, str]]]
    beans: tuple[tuple[str, ...], ...]


def _route_body(namesrv: Server, wire: Wire, check: Check) -> tuple[bytes, dict[str, str]]:
    broker, connection = _registered(check, namesrv, wire)
    return expect_success(check, "route", _route(connection, broker.topic)).body or b"", {}


def _topic_config_body(broker: Server, wire: Wire, check: Check) -> tuple[bytes, dict[str, str]]:
    client = Client(wire.connect(broker.endpoint), check)
    topic = client.create_topic()
    answer = client.connection.call(RequestCode.GET_ALL_TOPIC_CONFIG)
    return expect_success(check, "GET_ALL_TOPIC_CONFIG", answer).body or b"", {"topic": topic}


BEAN_BODIES = [
    Row("route", "RMQ-CMD-BODY-BEAN-ORDER", "A route (TopicRouteData and its BrokerData and QueueData) is "
        "written with each bean's properties in alphabetical order and no null property.",
        BeanBody("namesrv", _route_body, ((), ("brokerDatas[]",), ("queueDatas[]",)))),
    Row("topic-config", "RMQ-CMD-BODY-BEAN-ORDER", "GET_ALL_TOPIC_CONFIG (TopicConfigSerializeWrapper, its "
        "DataVersion and a TopicConfig) is written with each bean's properties in alphabetical order and no "
        "null property.",
        BeanBody("broker", _topic_config_body, ((), ("dataVersion",), ("topicConfigTable", "{topic}")))),
]


@table("body", BEAN_BODIES)
def test_bean_order(body: BeanBody, namesrv: Server, broker: Server, wire: Wire, check: Check) -> None:
    data, names = body.fetch(namesrv if body.role == "namesrv" else broker, wire, check)
    written = json.loads(data.decode("utf-8"), object_pairs_hook=list)
    for path in body.beans:
        path = tuple(part.format(**names) for part in path)
        beans = _objects(written, path)
        check.that(f"beans at {'.'.join(path) or 'the top'}", bool(beans), expected="at least one",
                   actual=data.decode("utf-8", "replace")[:300])
        for bean in beans:
            keys = [key for key, _ in bean]
            check.equal(f"property order at {'.'.join(path) or 'the top'}", sorted(keys), keys)
            check.equal(f"null properties at {'.'.join(path) or 'the top'}", [],
                        [key for key, value in bean if value is None])


def _consumer_data(group: str, topic: str) -> dict[str, Any]:
    """A C++ client's ConsumerData: enums as ordinals, subVersion as a decimal string."""
    data = subscription(group, topic)
    data |= {"consumeType": CONSUME_TYPE.index("CONSUME_PASSIVELY"),
             "messageModel": MESSAGE_MODEL.index("BROADCASTING"),
             "consumeFromWhere": CONSUME_FROM_WHERE.index("CONSUME_FROM_FIRST_OFFSET")}
    data["subscriptionDataSet"][0]["subVersion"] = "1700000000123"
    return data


def _heartbeat(client: Client, client_id: str, consumers: list[dict[str, Any]]) -> Any:
    body = json.dumps({"clientID": client_id, "consumerDataSet": consumers, "producerDataSet": []}).encode()
    return client.connection.call(RequestCode.HEART_BEAT, body=body)


@case("RMQ-CMD-BODY-LENIENT-SCALARS", "A HEART_BEAT whose consumeType, messageModel and consumeFromWhere are "
      "ordinals (1, 0, 4) and whose subVersion is a decimal string is read as CONSUME_PASSIVELY, "
      "BROADCASTING, CONSUME_FROM_FIRST_OFFSET and that number: GET_CONSUMER_CONNECTION_LIST shows them.")
def test_lenient_scalars(client: Client, check: Check) -> None:
    group, topic = unique("cg"), client.create_topic()
    expect_success(check, "HEART_BEAT", _heartbeat(client, unique("client"), [_consumer_data(group, topic)]))
    answer = expect_success(check, "GET_CONSUMER_CONNECTION_LIST", client.call(
        RequestCode.GET_CONSUMER_CONNECTION_LIST, {"consumerGroup": group}))
    found = fastjson_loads(answer.body or b"{}")
    check.equal("(consumeType, messageModel, consumeFromWhere)",
                ("CONSUME_PASSIVELY", "BROADCASTING", "CONSUME_FROM_FIRST_OFFSET"),
                (found.get("consumeType"), found.get("messageModel"), found.get("consumeFromWhere")))
    subscribed = found.get("subscriptionTable", {}).get(topic, {})
    check.equal("subVersion", 1700000000123, subscribed.get("subVersion"))


@table("lacking", [
    Row("consumer-without-group", "RMQ-CMD-BODY-REQUIRED", "A HEART_BEAT whose ConsumerData has no "
        "groupName, which the broker dereferences, is answered 1 SYSTEM_ERROR.", "groupName"),
    Row("consumer-without-unit-mode", "RMQ-CMD-BODY-REQUIRED", "A ConsumerData without the primitive "
        "unitMode keeps its default (false): the heartbeat is answered SUCCESS and the group is online.",
        "unitMode"),
])
def test_body_required(lacking: str, client: Client, check: Check) -> None:
    group, topic = unique("cg"), client.create_topic()
    data = {key: value for key, value in subscription(group, topic).items() if key != lacking}
    answer = _heartbeat(client, unique("client"), [data])
    if lacking == "groupName":
        expect_code(check, "HEART_BEAT without groupName", answer, ResponseCode.SYSTEM_ERROR)
        return
    expect_success(check, "HEART_BEAT without unitMode", answer)
    expect_success(check, "the group is online", client.call(RequestCode.GET_CONSUMER_LIST_BY_GROUP,
                                                              {"consumerGroup": group}))


@case("RMQ-CMD-BODY-REGISTER-COMPRESSED", "A REGISTER_BROKER with compressed=true and the zlib "
      "body (DataVersion JSON, topic count, TopicConfig.encode() strings, filter servers) registers the "
      "broker: its topics are routed with the queues sent.")
def test_register_compressed(namesrv: Server, wire: Wire, check: Check) -> None:
    broker, connection = FakeBroker.fresh(), wire.connect(namesrv.endpoint)
    expect_success(check, "compressed REGISTER_BROKER", connection.exchange(broker.register(connection,
                                                                                            compressed=True)))
    for topic in broker.topics:
        answer = expect_success(check, f"route of {topic}", _route(connection, topic))
        route = fastjson_loads(answer.body or b"{}")
        check.equal(f"queues routed for {topic}", [(broker.name, QUEUES, QUEUES)],
                    [(q.get("brokerName"), q.get("readQueueNums"), q.get("writeQueueNums"))
                     for q in route.get("queueDatas", [])])


BATCH = [Message(f"batch {i}".encode(), tags=f"T{i}", flag=i + 1) for i in range(3)]


def _batch_request(client: Client, topic: str, body: bytes) -> Any:
    values = {**client.send_values(topic, 0, Message(), batch=True), "properties": encode_properties({})}
    return client.connection.call(RequestCode.SEND_BATCH_MESSAGE,
                                  encode_header(SEND_MESSAGE_REQUEST_V2, values), body)


def _blocks() -> bytes:
    return encode_batch([BatchBlock(m.flag, m.body, encode_properties(m.stored_properties)) for m in BATCH])


@table("cut", [
    Row("batch-blocks-stored", "RMQ-CMD-BATCH-BODY", "Each block of a SEND_BATCH_MESSAGE body is stored as a "
        "message with its own body, flag and properties, in order.", 0),
    Row("batch-block-past-end", "RMQ-CMD-BATCH-BODY", "A batch whose last block runs past the body (3 bytes "
        "cut off) is refused whole: nothing of it is stored.", 3),
])
def test_batch_body(cut: int, client: Client, check: Check) -> None:
    topic = client.create_topic()
    body = _blocks()
    answer = _batch_request(client, topic, body[:len(body) - cut])
    if cut:
        expect_refused(check, "truncated batch", answer)
        check.equal("messages stored", 0, client.answer("max offset", RequestCode.GET_MAX_OFFSET,
                                                        {"topic": topic, "queueId": 0})["offset"])
        return
    expect_success(check, "batch", answer)
    client.expect_stored(topic, 0, len(BATCH))
    records = client.pulled(topic).records
    check.equal("(body, flag, TAGS) of each message",
                [(m.body, m.flag, m.tags) for m in BATCH], [(r.body, r.flag, r.tags) for r in records])
