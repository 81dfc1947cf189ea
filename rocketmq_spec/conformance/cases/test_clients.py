"""Clients: heartbeats and the consumer list they build, the notification when a group changes, and the
queue locks of orderly consumers.

Client ids and groups are fresh per case, so the consumer lists a case reads contain only its own clients.
"""

from __future__ import annotations

from rocketmq_spec.codec.bodies import decode_body, encode_body
from rocketmq_spec.conformance.case import Row, case, table
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.target import Server
from rocketmq_spec.conformance.wire import RESPONSE_TIMEOUT, Wire
from rocketmq_spec.spec.admin_bodies import CONSUMER_CONNECTION
from rocketmq_spec.spec.bodies import CONSUMER_LIST, LOCK_BATCH_REQUEST, LOCK_BATCH_RESPONSE
from rocketmq_spec.spec.codes import RequestCode, ResponseCode

from .messaging import Client, subscription
from .support import expect_code, expect_success, unique

LOCKED_QUEUES = (0, 1)
LOCK_BROKER_NAME = "conformance-broker"
"""brokerName of the locked MessageQueues: a lock is keyed by the whole queue, the broker never checks it."""


def _consumers(client: Client, group: str) -> list[str]:
    response = expect_success(client.check, "GET_CONSUMER_LIST_BY_GROUP", client.call(
        RequestCode.GET_CONSUMER_LIST_BY_GROUP, {"consumerGroup": group}))
    return list(decode_body(CONSUMER_LIST, response.body or b"{}")["consumerIdList"])


def _joined(client: Client, group: str, topic: str) -> str:
    client_id = unique("client")
    expect_success(client.check, "HEART_BEAT", client.heartbeat(client_id, [subscription(group, topic)]))
    return client_id


@table("unregister", [
    Row("listed", "RMQ-BRK-HEARTBEAT", "A consumer's HEART_BEAT puts its clientID in the group's consumer "
        "list.", False),
    Row("unregistered", "RMQ-BRK-HEARTBEAT", "After UNREGISTER_CLIENT the group without consumers is "
        "answered SYSTEM_ERROR.", True),
])
def test_heartbeat(unregister: bool, client: Client, check: Check) -> None:
    group, topic = unique("cg"), client.create_topic()
    client_id = _joined(client, group, topic)
    if not unregister:
        check.equal("consumer list", [client_id], _consumers(client, group))
        return
    expect_success(check, "UNREGISTER_CLIENT", client.call(RequestCode.UNREGISTER_CLIENT,
                                                           {"clientID": client_id, "consumerGroup": group}))
    expect_code(check, "GET_CONSUMER_LIST_BY_GROUP after unregistering", client.call(
        RequestCode.GET_CONSUMER_LIST_BY_GROUP, {"consumerGroup": group}), ResponseCode.SYSTEM_ERROR)


@case("RMQ-BRK-HEARTBEAT", "After UNREGISTER_CLIENT of one of a group's two consumers the other one is "
      "still listed.")
def test_one_consumer_leaves(broker: Server, wire: Wire, client: Client, check: Check) -> None:
    """Each consumer on a connection of its own: a broker keeps a group's members by channel."""
    group, topic = unique("cg"), client.create_topic()
    staying, leaving = (Client(wire.connect(broker.endpoint), check) for _ in range(2))
    staying_id, leaving_id = _joined(staying, group, topic), _joined(leaving, group, topic)
    expect_success(check, "UNREGISTER_CLIENT", leaving.call(RequestCode.UNREGISTER_CLIENT,
                                                            {"clientID": leaving_id, "consumerGroup": group}))
    check.equal("consumer list", [staying_id], _consumers(client, group))


@case("RMQ-BRK-HEARTBEAT", "A heartbeat's subscription replaces the group's one for its topic only when its "
      "subVersion is greater: one of the same version is ignored; one without subVersion is as new as the "
      "moment it is decoded (SubscriptionData's default), so it replaces one of an older version.")
def test_subscription_kept_unless_newer(client: Client, check: Check) -> None:
    group, topic, client_id = unique("cg"), client.create_topic(), unique("client")
    for expression, version, kept in (("A", 5, "A"), ("B", 5, "A"), ("C", 6, "C"), ("D", None, "D")):
        consumer = subscription(group, topic, expression)
        if version is None:
            del consumer["subscriptionDataSet"][0]["subVersion"]
        else:
            consumer["subscriptionDataSet"][0]["subVersion"] = version
        expect_success(check, f"HEART_BEAT {expression}@{version}", client.heartbeat(client_id, [consumer]))
        listed = client.call(RequestCode.GET_CONSUMER_CONNECTION_LIST, {"consumerGroup": group})
        found = decode_body(CONSUMER_CONNECTION,
                            expect_success(check, "GET_CONSUMER_CONNECTION_LIST", listed).body or b"{}")
        check.equal(f"after {expression}@{version}: subscription", kept,
                    (found.get("subscriptionTable", {}).get(topic) or {}).get("subString"))


@case("RMQ-BRK-HEARTBEAT", "GET_CONSUMER_LIST_BY_GROUP of a group no consumer joined is answered 1.")
def test_empty_group(client: Client, check: Check) -> None:
    expect_code(check, "GET_CONSUMER_LIST_BY_GROUP", client.call(
        RequestCode.GET_CONSUMER_LIST_BY_GROUP, {"consumerGroup": unique("cg")}), ResponseCode.SYSTEM_ERROR)


@case("RMQ-BRK-NOTIFY-IDS", "When a second consumer joins a group, the first one's connection receives "
      "NOTIFY_CONSUMER_IDS_CHANGED naming the group.")
def test_notify_consumer_ids_changed(broker: Server, client: Client, wire: Wire, check: Check) -> None:
    group, topic = unique("cg"), client.create_topic()
    _joined(client, group, topic)
    client.connection.drain()  # Java also notifies the joining consumer itself, before answering it
    second = Client(wire.connect(broker.endpoint), check)
    _joined(second, group, topic)
    pushed = client.connection.next_command(RESPONSE_TIMEOUT)
    check.that("a request pushed to the first consumer", pushed is not None, expected="a request",
               actual=f"nothing within {RESPONSE_TIMEOUT} s")
    assert pushed is not None
    check.equal("(code, consumerGroup)", (RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, group),
                (pushed.code, (pushed.ext_fields or {}).get("consumerGroup")))


def _lock(client: Client, code: int, group: str, client_id: str, topic: str) -> set[int]:
    body = encode_body(LOCK_BATCH_REQUEST, {"clientId": client_id, "consumerGroup": group, "mqSet": [
        {"brokerName": LOCK_BROKER_NAME, "queueId": q, "topic": topic} for q in LOCKED_QUEUES]})
    response = expect_success(client.check, f"request {code}", client.connection.call(code, body=body))
    if code == RequestCode.UNLOCK_BATCH_MQ:
        return set()
    return {mq["queueId"] for mq in decode_body(LOCK_BATCH_RESPONSE, response.body or b"{}")["lockOKMQSet"]}


@table("step", [
    Row("lock", "RMQ-BRK-LOCK", "LOCK_BATCH_MQ of free queues grants all of them.", "lock"),
    Row("conflict", "RMQ-BRK-LOCK", "Queues locked by one client are not granted to another client of the "
        "group (empty lockOKMQSet).", "conflict"),
    Row("unlock", "RMQ-BRK-LOCK", "After UNLOCK_BATCH_MQ the queues are granted to another client.",
        "unlock"),
])
def test_lock_batch(step: str, client: Client, check: Check) -> None:
    group, topic = unique("cg"), client.create_topic()
    first, second = unique("client"), unique("client")
    check.equal("queues granted to the first client", set(LOCKED_QUEUES),
                _lock(client, RequestCode.LOCK_BATCH_MQ, group, first, topic))
    if step == "lock":
        return
    if step == "unlock":
        _lock(client, RequestCode.UNLOCK_BATCH_MQ, group, first, topic)
    expected = set() if step == "conflict" else set(LOCKED_QUEUES)
    check.equal("queues granted to the second client", expected,
                _lock(client, RequestCode.LOCK_BATCH_MQ, group, second, topic))
