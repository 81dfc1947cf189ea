"""Admin commands 5.x added or changed: GET_TOPIC_CONFIG and GET_SUBSCRIPTIONGROUP_CONFIG (which 5.x
mqadmin asks before most others), topic attributes, and offsets reset in the broker itself.

A target whose release predates a command or rule is reported UNSUPPORTED with its version as the
reason; each case makes its own topics and groups.
"""

from __future__ import annotations

from typing import Any

from rocketmq_spec.conformance.case import Row, case, table
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.target import Server
from rocketmq_spec.conformance.verdict import Unsupported
from rocketmq_spec.conformance.wire import Wire
from rocketmq_spec.spec import admin
from rocketmq_spec.spec.admin_bodies import (
    RESET_OFFSET_BODY,
    SUBSCRIPTION_GROUP_CONFIG,
    TOPIC_CONFIG_AND_QUEUE_MAPPING,
)
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.release_rules import Rule
from rocketmq_spec.spec.topic_attributes import MESSAGE_TYPE

from .admin_support import (
    FILLED,
    Consumer,
    body_of,
    by_queue,
    commit,
    filled_topic,
    group_config,
    known_group,
    listed_groups,
    refused,
    reset_offset,
)
from .messaging import QUEUES, Client
from .pop_support import broker_setting, require_code
from .support import expect_code, expect_success, unique

NOT_CALLED_WAIT_S = 3.0
"""How long the consumer listens for a call the broker must not make (4.x sends it before answering)."""
RETRY_QUEUES = 3
"""A retryQueueNums other than Java's default (1), so an answer of defaults cannot pass for the group's."""


def _topic_config(client: Client, topic: str) -> dict[str, Any]:
    return body_of(client.check, f"GET_TOPIC_CONFIG {topic}", TOPIC_CONFIG_AND_QUEUE_MAPPING,
                   client.call(RequestCode.GET_TOPIC_CONFIG, {"topic": topic}))


# -- GET_TOPIC_CONFIG / GET_SUBSCRIPTIONGROUP_CONFIG --------------------------------------------------

@case("RMQ-ADMIN-GET-TOPIC-CONFIG", "GET_TOPIC_CONFIG answers the topic's TopicConfig as JSON: its name, "
      "queue counts and permission as created.")
def test_get_topic_config(client: Client, check: Check) -> None:
    require_code(client, RequestCode.GET_TOPIC_CONFIG, "RMQ-ADMIN-GET-TOPIC-CONFIG")
    topic = client.create_topic(3)
    config = _topic_config(client, topic)
    check.equal("topic config", (topic, 3, 3, 6), (config.get("topicName"), config.get("readQueueNums"),
                                                   config.get("writeQueueNums"), config.get("perm")))


@case("RMQ-ADMIN-GET-TOPIC-CONFIG", "GET_TOPIC_CONFIG of a topic the broker does not have is 17 "
      "TOPIC_NOT_EXIST \"No topic in this broker. topic: <t>\".")
def test_get_topic_config_unknown(client: Client, check: Check) -> None:
    require_code(client, RequestCode.GET_TOPIC_CONFIG, "RMQ-ADMIN-GET-TOPIC-CONFIG")
    topic = unique("topic")
    refused(check, "unknown topic", client.call(RequestCode.GET_TOPIC_CONFIG, {"topic": topic}),
            ResponseCode.TOPIC_NOT_EXIST, admin.GET_TOPIC_CONFIG_NOT_EXIST_REMARK.format(topic=topic))


@case("RMQ-ADMIN-GET-GROUP-CONFIG", "GET_SUBSCRIPTIONGROUP_CONFIG answers the group's "
      "SubscriptionGroupConfig as it was created (a retryQueueNums other than the default).")
def test_get_group_config(client: Client, check: Check) -> None:
    require_code(client, RequestCode.GET_SUBSCRIPTIONGROUP_CONFIG, "RMQ-ADMIN-GET-GROUP-CONFIG")
    group = unique("cg")
    expect_success(check, "create group", client.call(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, {},
                                                      group_config(group, retry_queues=RETRY_QUEUES)))
    config = body_of(check, "group config", SUBSCRIPTION_GROUP_CONFIG,
                     client.call(RequestCode.GET_SUBSCRIPTIONGROUP_CONFIG, {"group": group}))
    check.equal("group config", (group, RETRY_QUEUES),
                (config.get("groupName"), config.get("retryQueueNums")))


@case("RMQ-ADMIN-GET-GROUP-CONFIG", "GET_SUBSCRIPTIONGROUP_CONFIG of an unknown group creates it with "
      "default settings when autoCreateSubscriptionGroup is on (26 \"No group in this broker\" when off).")
def test_get_group_config_unknown(client: Client, check: Check) -> None:
    require_code(client, RequestCode.GET_SUBSCRIPTIONGROUP_CONFIG, "RMQ-ADMIN-GET-GROUP-CONFIG")
    group = unique("cg")
    answer = client.call(RequestCode.GET_SUBSCRIPTIONGROUP_CONFIG, {"group": group})
    if broker_setting(client, "autoCreateSubscriptionGroup") == "false":
        refused(check, "unknown group", answer, ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST,
                admin.GET_GROUP_CONFIG_NOT_EXIST_REMARK)
        return
    config = body_of(check, "auto-created group", SUBSCRIPTION_GROUP_CONFIG, answer)
    check.equal("group name", group, config.get("groupName"))
    check.that("group now listed", group in listed_groups(client, check), expected=group, actual="absent")


# -- topic attributes ---------------------------------------------------------------------------------

def _attributed_topic(client: Client) -> str:
    require_code(client, RequestCode.GET_TOPIC_CONFIG, "RMQ-TOPIC-ATTRIBUTES")
    topic = unique("topic")
    expect_success(client.check, "create with +message.type=FIFO",
                   client.create_topic_request(topic, attributes=f"+{MESSAGE_TYPE}=FIFO"))
    return topic


@table("change", [
    Row("set", "RMQ-TOPIC-ATTRIBUTES", "+key=value on an existing topic sets the attribute (message.type "
        "FIFO to NORMAL).", (f"+{MESSAGE_TYPE}=NORMAL", {MESSAGE_TYPE: "NORMAL"})),
    Row("remove", "RMQ-TOPIC-ATTRIBUTES", "-key on an existing topic removes the attribute.",
        (f"-{MESSAGE_TYPE}", {})),
])
def test_topic_attribute_change(change: tuple[str, dict[str, str]], client: Client, check: Check) -> None:
    text, expected = change
    topic = _attributed_topic(client)
    created = _topic_config(client, topic).get("attributes")
    check.equal("attributes as created", {MESSAGE_TYPE: "FIFO"}, created)
    expect_success(check, f"update {text}", client.create_topic_request(topic, attributes=text))
    check.equal(f"attributes after {text}", expected, _topic_config(client, topic).get("attributes") or {})


@table("refused_change", [
    Row("unknown-key", "RMQ-TOPIC-ATTRIBUTES", "A key outside TOPIC_ATTRIBUTES is refused with SYSTEM_ERROR "
        "and the topic keeps its attributes and queues.", "+no.such.attribute=1"),
    Row("unknown-value", "RMQ-TOPIC-ATTRIBUTES", "A value outside the attribute's list is refused with "
        "SYSTEM_ERROR and the topic keeps its attributes and queues.", f"+{MESSAGE_TYPE}=NOT_A_TYPE"),
])
def test_topic_attribute_refused(refused_change: str, client: Client, check: Check) -> None:
    topic = _attributed_topic(client)
    expect_code(check, f"update {refused_change}", client.create_topic_request(
        topic, QUEUES * 2, attributes=refused_change), ResponseCode.SYSTEM_ERROR)
    config = _topic_config(client, topic)
    check.equal("topic left as it was", ({MESSAGE_TYPE: "FIFO"}, QUEUES, QUEUES),
                (config.get("attributes"), config.get("readQueueNums"), config.get("writeQueueNums")))


# -- offsets reset in the broker (5.2.0+) -------------------------------------------------------------

def _require_server_side_reset(client: Client) -> None:
    if not client.follows(Rule.SERVER_SIDE_RESET_OFFSET):
        raise Unsupported("offsets are reset in the broker from 5.2.0; the target announces version "
                          f"{client.target_version()} (RMQ-ADMIN-RESET-SERVER-SIDE)", expected="5.2.0+",
                          actual=client.target_version())


@case("RMQ-ADMIN-RESET-SERVER-SIDE", "INVOKE_BROKER_TO_RESET_OFFSET sets an online group's offsets in the "
      "broker and answers the ResetOffsetBody without calling the group's client.")
def test_reset_in_broker(client: Client, broker: Server, wire: Wire, check: Check) -> None:
    _require_server_side_reset(client)
    topic, _ = filled_topic(client)
    consumer = Consumer.online(wire.connect(broker.endpoint), check, topic)
    for queue_id in range(QUEUES):
        commit(client, consumer.group, topic, queue_id, 0)
    answer = body_of(check, "reset", RESET_OFFSET_BODY, reset_offset(client, topic, consumer.group, -1))
    check.equal("offsets answered", {q: FILLED if q == 0 else 0 for q in range(QUEUES)},
                by_queue(answer["offsetTable"], topic))
    committed = client.answer("query", RequestCode.QUERY_CONSUMER_OFFSET,
                              {"consumerGroup": consumer.group, "topic": topic, "queueId": 0})["offset"]
    check.equal("queue 0 committed in the broker", FILLED, committed)
    call = consumer.connection.next_command(NOT_CALLED_WAIT_S)
    while call is not None and call.code == RequestCode.NOTIFY_CONSUMER_IDS_CHANGED:
        call = consumer.connection.next_command(NOT_CALLED_WAIT_S)
    check.equal("calls to the client", None, call and call.code)


@table("unknown", [
    Row("topic", "RMQ-ADMIN-RESET-SERVER-SIDE", "A reset naming a topic the broker does not have is 17 "
        "\"Topic <t> does not exist\".",
        ("topic", ResponseCode.TOPIC_NOT_EXIST, admin.RESET_SERVER_NO_TOPIC_REMARK)),
    Row("group", "RMQ-ADMIN-RESET-SERVER-SIDE", "A reset naming a group the broker does not have is 26 "
        "\"Group <g> does not exist\".",
        ("group", ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, admin.RESET_SERVER_NO_GROUP_REMARK)),
])
def test_reset_in_broker_unknown(unknown: tuple[str, int, str], client: Client, check: Check) -> None:
    _require_server_side_reset(client)
    missing, code, remark = unknown
    topic = unique("topic") if missing == "topic" else client.create_topic()
    group = unique("cg") if missing == "group" else known_group(client, unique("cg"))
    refused(check, f"unknown {missing}", reset_offset(client, topic, group, -1), code,
            remark.format(topic=topic, group=group))
