"""RocketMQ 5's gRPC protocol: what a proxy answers the 5.x SDKs (``rmq-conformance --proxy HOST:PORT``).

Every case speaks ``apache.rocketmq.v2.MessagingService`` to the proxy; cases that need a typed topic (a
topic's ``message.type``) create it through the proxy's broker, given with ``--broker``, and are left out
without one. Outcomes are the ``Code`` in each response's status (RMQ-GRPC-STATUS-IN-BODY).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import time
from collections.abc import Callable

import grpc
import pytest
from google.protobuf import duration_pb2

from rocketmq_spec.codec.bodies import decode_body
from rocketmq_spec.codec.grpc.v2 import definition_pb2 as v2
from rocketmq_spec.codec.grpc.v2 import service_pb2 as rpc
from rocketmq_spec.conformance.case import Row, case, table
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.grpc_client import ProxyClient, Telemetry, message
from rocketmq_spec.conformance.target import Server
from rocketmq_spec.conformance.verdict import Unsupported
from rocketmq_spec.conformance.wire import Endpoint, Wire
from rocketmq_spec.spec.admin_bodies import CONSUME_MESSAGE_DIRECTLY_RESULT, CONSUMER_RUNNING_INFO
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.faq import NO_ROUTE_TEXT, client_exception_message, suggest_todo
from rocketmq_spec.spec.grpc_codes import Code
from rocketmq_spec.spec.grpc_rpcs import MAX_MESSAGE_SIZE
from rocketmq_spec.spec.message_id import encode_offset_msg_id
from rocketmq_spec.spec.release_rules import Rule, holds
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC, DLQ_PREFIX, SYSTEM_TOPIC_PREFIX, TOPIC_MAX_LENGTH

from .grpc_support import (
    ack,
    announce,
    call,
    code_name,
    consumer_group,
    expect_status,
    new_consumer,
    receive,
    received_again,
    send_one,
    sent_messages,
    typed_topic,
)
from .messaging import Client
from .pop_support import broker_setting
from .support import expect_success, unique

pytestmark = pytest.mark.xdist_group("grpc")

RELAY_WAIT_S = 20.0
"""Seconds a case waits for the relayed Telemetry command (the broker waits 10 s for the client)."""
RELEASE_BOUND_S = 30.0
"""Seconds within which a terminated push consumer's auto-renewed message reaches another client (1 s of
invisibility after the release, a revive pass, a receive's long polling)."""
REDELIVERY_BOUND_S = 30.0
"""Seconds after its invisible time within which an unacked message must be received again: a 5.x broker
revives checkpoints every second or so, the bound only keeps a broken target from hanging the run."""


# -- metadata and routes -------------------------------------------------------------------------------


@case("RMQ-GRPC-CLIENT-ID", "A request without x-mq-client-id is answered CLIENT_ID_REQUIRED.")
def test_client_id_required(proxy: Endpoint, wire: Wire, check: Check) -> None:
    client = ProxyClient(str(proxy), client_id="", tls=wire.tls)
    try:
        response = call("QueryRoute", lambda: client.query_route(DEFAULT_TOPIC))
    finally:
        client.close()
    expect_status(check, "QueryRoute without a client id", response.status, Code.CLIENT_ID_REQUIRED)


@case("RMQ-GRPC-ROUTE", "QueryRoute lists one READ_WRITE queue per queue id, the proxy as the endpoint.")
def test_route(proxy_client: ProxyClient, admin: Client, proxy: Endpoint, check: Check) -> None:
    topic = typed_topic(admin, "NORMAL", queues=3)
    response = call("QueryRoute", lambda: proxy_client.query_route(topic))
    expect_status(check, "QueryRoute", response.status, Code.OK)
    queues = response.message_queues
    check.equal("queue ids", [0, 1, 2], sorted(q.id for q in queues))
    check.equal("permissions", {"READ_WRITE"}, {v2.Permission.Name(q.permission) for q in queues})
    check.equal("accepted message types", {("NORMAL",)},
                {tuple(v2.MessageType.Name(t) for t in q.accept_message_types) for q in queues})
    ports = {a.port for q in queues for a in q.broker.endpoints.addresses}
    check.equal("endpoint port (the proxy's, not the broker's remoting port)", {proxy.port}, ports)


@case("RMQ-GRPC-TOPIC-NOT-FOUND-TEXT", "QueryRoute of an unknown topic answers TOPIC_NOT_FOUND with the "
      "proxy's own text: \"CODE: 17  DESC: No topic route info ...\" and the release's default FAQ line.")
def test_route_not_found_text(proxy_client: ProxyClient, admin: Client, check: Check) -> None:
    topic = unique("nowhere")
    response = call("QueryRoute", lambda: proxy_client.query_route(topic))
    expected = client_exception_message(ResponseCode.TOPIC_NOT_EXIST, NO_ROUTE_TEXT.format(topic=topic),
                                        admin.target_version())
    check.equal("status", (int(Code.TOPIC_NOT_FOUND), expected),
                (response.status.code, response.status.message))


@case("RMQ-GRPC-SETTINGS-GROUP", "A consumer's Settings naming a group the broker does not have: refused "
      "\"group not found: <g>\" (the stream fails INVALID_ARGUMENT) from 5.5.0, accepted before.")
def test_settings_of_an_unknown_group(proxy_client: ProxyClient, admin: Client, check: Check) -> None:
    topic, group = typed_topic(admin, "NORMAL"), unique("grpc_no_group")
    _, answer = call("Telemetry", lambda: proxy_client.announce(proxy_client.consumer_settings(group, topic)))
    if holds(Rule.GRPC_SETTINGS_GROUP_REQUIRED, admin.target_version()):
        expected = (grpc.StatusCode.INVALID_ARGUMENT.name,
                    f"process client telemetryCommand failed. group not found: {group}")
        seen = (answer.code().name, answer.details()) if isinstance(answer, grpc.RpcError) else repr(answer)
        check.equal("Telemetry", expected, seen)
    else:
        check.equal("status", int(Code.OK), getattr(getattr(answer, "status", None), "code", repr(answer)))


@case("RMQ-GRPC-GROUP-NOT-FOUND", "ReceiveMessage for a group the broker no longer has: "
      "CONSUMER_GROUP_NOT_FOUND with the broker's remark if it does not create groups "
      "(autoCreateSubscriptionGroup=false), else the receive goes on.")
def test_receive_for_an_unknown_group(proxy_client: ProxyClient, admin: Client, check: Check) -> None:
    topic = typed_topic(admin, "NORMAL")
    group = new_consumer(check, proxy_client, admin, topic)
    expect_success(check, f"delete group {group}", admin.call(RequestCode.DELETE_SUBSCRIPTIONGROUP,
                                                               {"groupName": group}))
    items, _ = receive(proxy_client, group, topic, polling_s=1)
    statuses = [(i.status.code, i.status.message) for i in items if i.WhichOneof("content") == "status"]
    if broker_setting(admin, "autoCreateSubscriptionGroup") == "false":
        expected = (int(Code.CONSUMER_GROUP_NOT_FOUND),
                    f"subscription group [{group}] does not exist, {suggest_todo(admin.target_version())}")
        check.equal("status", [expected], statuses)
    else:
        check.equal("status", [int(Code.MESSAGE_NOT_FOUND)], [code for code, _ in statuses])


@case("RMQ-GRPC-ROUTE-NOT-FOUND", "QueryRoute of an unknown topic answers TOPIC_NOT_FOUND.")
def test_route_not_found(proxy_client: ProxyClient, check: Check) -> None:
    response = call("QueryRoute", lambda: proxy_client.query_route(unique("nowhere")))
    expect_status(check, "QueryRoute of an unknown topic", response.status, Code.TOPIC_NOT_FOUND)
    check.equal("queues", 0, len(response.message_queues))


@table("topic", [
    Row("illegal-character", "RMQ-GRPC-ILLEGAL-TOPIC", "A topic with a space is ILLEGAL_TOPIC.", "bad topic"),
    Row("too-long", "RMQ-GRPC-ILLEGAL-TOPIC", "A 128-character topic is ILLEGAL_TOPIC.",
        "t" * (TOPIC_MAX_LENGTH + 1)),
    Row("system-topic", "RMQ-GRPC-ILLEGAL-TOPIC", "TBW102 is a system topic: ILLEGAL_TOPIC.", DEFAULT_TOPIC),
    Row("system-prefix", "RMQ-GRPC-ILLEGAL-TOPIC", "rmq_sys_* topics are ILLEGAL_TOPIC.",
        SYSTEM_TOPIC_PREFIX + "x"),
])
def test_illegal_topic(topic: str, proxy_client: ProxyClient, check: Check) -> None:
    response = call("QueryRoute", lambda: proxy_client.query_route(topic))
    expect_status(check, f"QueryRoute of {topic[:20]!r}", response.status, Code.ILLEGAL_TOPIC)


# -- client lifecycle ----------------------------------------------------------------------------------


@case("RMQ-GRPC-SETTINGS", "Settings on Telemetry are answered OK with the server's producer settings.")
def test_producer_settings(proxy_client: ProxyClient, admin: Client, check: Check) -> None:
    topic = typed_topic(admin, "NORMAL")
    answer = announce(check, proxy_client, proxy_client.producer_settings(topic))
    expect_status(check, "settings answer", answer.status, Code.OK)
    settings = answer.settings
    check.that("publishing.max_body_size set", settings.publishing.max_body_size > 0, expected="> 0",
               actual=settings.publishing.max_body_size)
    check.that("backoff_policy.max_attempts set", settings.backoff_policy.max_attempts > 0, expected="> 0",
               actual=settings.backoff_policy.max_attempts)
    check.equal("topics echoed", [topic], [t.name for t in settings.publishing.topics])


@case("RMQ-GRPC-SETTINGS", "A consumer's settings come back with batch size and long-polling time.")
def test_consumer_settings(proxy_client: ProxyClient, admin: Client, check: Check) -> None:
    topic = typed_topic(admin, "NORMAL")
    answer = announce(check, proxy_client, proxy_client.consumer_settings(consumer_group(admin), topic))
    expect_status(check, "settings answer", answer.status, Code.OK)
    subscription = answer.settings.subscription
    check.that("receive_batch_size set", subscription.receive_batch_size > 0, expected="> 0",
               actual=subscription.receive_batch_size)
    check.that("long_polling_timeout set", subscription.long_polling_timeout.seconds > 0, expected="> 0 s",
               actual=subscription.long_polling_timeout.seconds)


@table("rpc_name", [
    Row("heartbeat", "RMQ-GRPC-SETTINGS-REQUIRED", "Heartbeat before any Settings: UNRECOGNIZED_CLIENT_TYPE.",
        "Heartbeat"),
    Row("termination", "RMQ-GRPC-SETTINGS-REQUIRED",
        "NotifyClientTermination before any Settings: UNRECOGNIZED_CLIENT_TYPE.", "NotifyClientTermination"),
])
def test_settings_required(rpc_name: str, proxy_client: ProxyClient, check: Check) -> None:
    request = rpc.HeartbeatRequest(client_type=v2.PRODUCER) if rpc_name == "Heartbeat" else \
        rpc.NotifyClientTerminationRequest()
    response = call(rpc_name, lambda: proxy_client.call(rpc_name, request))
    expect_status(check, rpc_name, response.status, Code.UNRECOGNIZED_CLIENT_TYPE)


@case("RMQ-GRPC-HEARTBEAT", "Heartbeat after Settings answers OK.")
def test_heartbeat(proxy_client: ProxyClient, admin: Client, check: Check) -> None:
    announce(check, proxy_client, proxy_client.producer_settings(typed_topic(admin, "NORMAL")))
    response = call("Heartbeat", lambda: proxy_client.call("Heartbeat", rpc.HeartbeatRequest(
        client_type=v2.PRODUCER)))
    expect_status(check, "Heartbeat", response.status, Code.OK)


@case("RMQ-GRPC-TERMINATION", "NotifyClientTermination answers OK and forgets the client's settings.")
def test_termination(proxy_client: ProxyClient, admin: Client, check: Check) -> None:
    announce(check, proxy_client, proxy_client.producer_settings(typed_topic(admin, "NORMAL")))
    response = call("NotifyClientTermination", lambda: proxy_client.call(
        "NotifyClientTermination", rpc.NotifyClientTerminationRequest()))
    expect_status(check, "NotifyClientTermination", response.status, Code.OK)
    after = call("Heartbeat", lambda: proxy_client.call("Heartbeat", rpc.HeartbeatRequest(
        client_type=v2.PRODUCER)))
    expect_status(check, "Heartbeat after termination", after.status, Code.UNRECOGNIZED_CLIENT_TYPE)


# -- producing -----------------------------------------------------------------------------------------


@case("RMQ-GRPC-SEND", "SendMessage answers OK with the message's own id.")
def test_send(proxy_client: ProxyClient, admin: Client, check: Check) -> None:
    msg = message(typed_topic(admin, "NORMAL"), b"hello", tag="TagA", keys=("k1",))
    entry = send_one(check, proxy_client, msg)
    expect_status(check, "entry", entry.status, Code.OK)
    check.equal("message_id", msg.system_properties.message_id, entry.message_id)


@case("RMQ-GRPC-SEND-CORRUPTED", "SendMessage without messages, or with two topics, is MESSAGE_CORRUPTED.")
def test_send_corrupted(proxy_client: ProxyClient, admin: Client, check: Check) -> None:
    empty = call("SendMessage", lambda: proxy_client.call("SendMessage", rpc.SendMessageRequest()))
    expect_status(check, "no message", empty.status, Code.MESSAGE_CORRUPTED)
    first, second = typed_topic(admin, "NORMAL"), typed_topic(admin, "NORMAL")
    mixed = call("SendMessage", lambda: proxy_client.send(message(first), message(second)))
    expect_status(check, "two topics", mixed.status, Code.MESSAGE_CORRUPTED)


def _invalid(kind: str, topic: str) -> v2.Message:
    far = int(time.time() * 1000) + 2 * 24 * 3600 * 1000
    return {
        "no-id": lambda: message(topic, message_id=""),
        "empty-body": lambda: message(topic, b""),
        "body-too-large": lambda: message(topic, b"x" * (MAX_MESSAGE_SIZE + 1)),
        "tag-bar": lambda: message(topic, tag="a|b"),
        "key-blank": lambda: message(topic, keys=(" ",)),
        "group-blank": lambda: message(topic, message_group=" "),
        "reserved-property": lambda: message(topic, properties={"UNIQ_KEY": "x"}),
        "delivery-too-late": lambda: message(topic, delivery_ms=far),
    }[kind]()


@table("kind_code", [
    Row("no-id", "RMQ-GRPC-SEND-VALIDATION", "A message without id: ILLEGAL_MESSAGE_ID.",
        ("no-id", Code.ILLEGAL_MESSAGE_ID)),
    Row("empty-body", "RMQ-GRPC-SEND-VALIDATION", "An empty body: MESSAGE_BODY_EMPTY.",
        ("empty-body", Code.MESSAGE_BODY_EMPTY)),
    Row("body-too-large", "RMQ-GRPC-SEND-VALIDATION", "A body over 4 MiB: MESSAGE_BODY_TOO_LARGE.",
        ("body-too-large", Code.MESSAGE_BODY_TOO_LARGE)),
    Row("tag-bar", "RMQ-GRPC-SEND-VALIDATION", "A tag with '|': ILLEGAL_MESSAGE_TAG.",
        ("tag-bar", Code.ILLEGAL_MESSAGE_TAG)),
    Row("key-blank", "RMQ-GRPC-SEND-VALIDATION", "A blank key: ILLEGAL_MESSAGE_KEY.",
        ("key-blank", Code.ILLEGAL_MESSAGE_KEY)),
    Row("group-blank", "RMQ-GRPC-SEND-VALIDATION", "A blank message group: ILLEGAL_MESSAGE_GROUP.",
        ("group-blank", Code.ILLEGAL_MESSAGE_GROUP)),
    Row("reserved-property", "RMQ-GRPC-SEND-VALIDATION", "A user property named UNIQ_KEY: "
        "ILLEGAL_MESSAGE_PROPERTY_KEY.", ("reserved-property", Code.ILLEGAL_MESSAGE_PROPERTY_KEY)),
    Row("delivery-too-late", "RMQ-GRPC-SEND-VALIDATION", "A delivery time two days ahead: "
        "ILLEGAL_DELIVERY_TIME.", ("delivery-too-late", Code.ILLEGAL_DELIVERY_TIME)),
])
def test_send_validation(kind_code: tuple[str, Code], proxy_client: ProxyClient, admin: Client,
                         check: Check) -> None:
    kind, code = kind_code
    message_type = "DELAY" if kind == "delivery-too-late" else "NORMAL"
    topic = typed_topic(admin, message_type)
    response = call("SendMessage", lambda: proxy_client.send(_invalid(kind, topic)))
    expect_status(check, kind, response.status, code)


@case("RMQ-GRPC-SEND-TYPE", "A FIFO message to a NORMAL topic is MESSAGE_PROPERTY_CONFLICT_WITH_TYPE.")
def test_send_type(proxy_client: ProxyClient, admin: Client, check: Check) -> None:
    response = call("SendMessage", lambda: proxy_client.send(message(typed_topic(admin, "NORMAL"),
                                                                        message_group="g1")))
    expect_status(check, "FIFO to NORMAL", response.status, Code.MESSAGE_PROPERTY_CONFLICT_WITH_TYPE)


@case("RMQ-GRPC-SEND-UNKNOWN-TOPIC", "SendMessage to a topic the broker lacks: "
      "MESSAGE_PROPERTY_CONFLICT_WITH_TYPE.")
def test_send_unknown_topic(proxy_client: ProxyClient, check: Check) -> None:
    response = call("SendMessage", lambda: proxy_client.send(message(unique("nowhere"))))
    expect_status(check, "unknown topic", response.status, Code.MESSAGE_PROPERTY_CONFLICT_WITH_TYPE)


@case("RMQ-GRPC-END-TRANSACTION", "EndTransaction commits a half message once; blank or unknown ids refused.")
def test_end_transaction(proxy_client: ProxyClient, admin: Client, check: Check) -> None:
    topic = typed_topic(admin, "TRANSACTION")
    announce(check, proxy_client, proxy_client.producer_settings(topic))
    entry = send_one(check, proxy_client, message(topic, message_type=v2.TRANSACTION))
    check.that("transaction_id answered", bool(entry.transaction_id), expected="non-empty",
               actual=entry.transaction_id)

    def end(transaction_id: str) -> rpc.EndTransactionResponse:
        return call("EndTransaction", lambda: proxy_client.call("EndTransaction", rpc.EndTransactionRequest(
            topic=v2.Resource(name=topic), message_id=entry.message_id, transaction_id=transaction_id,
            resolution=v2.COMMIT, source=v2.SOURCE_CLIENT)))

    expect_status(check, "blank transaction id", end(" ").status, Code.INVALID_TRANSACTION_ID)
    expect_status(check, "commit", end(entry.transaction_id).status, Code.OK)
    expect_status(check, "commit again", end(entry.transaction_id).status, Code.INTERNAL_SERVER_ERROR)


@table("rpc_name", [Row(name.lower(), "RMQ-GRPC-UNIMPLEMENTED", f"{name}: a status or UNIMPLEMENTED.", name)
                    for name in ("UpdateOffset", "GetOffset", "QueryOffset")])
def test_unimplemented(rpc_name: str, proxy_client: ProxyClient, check: Check) -> None:
    request = getattr(rpc, f"{rpc_name}Request")()
    try:
        response = proxy_client.call(rpc_name, request)
    except Exception as exc:  # grpc.RpcError: UNIMPLEMENTED is what the clause allows
        code = exc.code().name if hasattr(exc, "code") else type(exc).__name__
        check.equal(f"{rpc_name}: gRPC status", "UNIMPLEMENTED", code)
        return
    check.note(f"{rpc_name}: served, status", code_name(response.status.code))


# -- consuming -----------------------------------------------------------------------------------------


@case("RMQ-GRPC-RECEIVE", "ReceiveMessage streams OK, the messages, then a delivery timestamp; none twice.")
def test_receive(proxy_client: ProxyClient, admin: Client, check: Check) -> None:
    topic = typed_topic(admin, "NORMAL")
    group = new_consumer(check, proxy_client, admin, topic)
    sent = sent_messages(check, proxy_client, topic, 3)
    items, got = receive(proxy_client, group, topic)
    kinds = [item.WhichOneof("content") for item in items]
    check.equal("stream shape", ["status", "message", "message", "message", "delivery_timestamp"], kinds)
    expect_status(check, "first item", items[0].status, Code.OK)
    check.equal("received ids", sorted(sent), sorted(m.system_properties.message_id for m in got))
    check.that("receipt handles", all(m.system_properties.receipt_handle for m in got), expected="every one",
               actual=[m.system_properties.receipt_handle for m in got])
    check.equal("delivery attempts", {1}, {m.system_properties.delivery_attempt for m in got})
    items, again = receive(proxy_client, group, topic)
    check.equal("received while invisible", [], [m.system_properties.message_id for m in again])
    expect_status(check, "nothing to receive", items[0].status, Code.MESSAGE_NOT_FOUND)


@case("RMQ-GRPC-RECEIVE-INVISIBLE", "An invisible duration under 10 s is ILLEGAL_INVISIBLE_TIME.")
def test_receive_invisible(proxy_client: ProxyClient, admin: Client, check: Check) -> None:
    topic = typed_topic(admin, "NORMAL")
    group = new_consumer(check, proxy_client, admin, topic)
    items, _ = receive(proxy_client, group, topic, invisible_s=5)
    expect_status(check, "5 s invisibility", items[0].status, Code.ILLEGAL_INVISIBLE_TIME)


@case("RMQ-GRPC-ACK", "AckMessage answers OK per entry; a garbled receipt handle is INTERNAL_SERVER_ERROR.")
def test_ack(proxy_client: ProxyClient, admin: Client, check: Check) -> None:
    topic = typed_topic(admin, "NORMAL")
    group = new_consumer(check, proxy_client, admin, topic)
    sent_messages(check, proxy_client, topic, 2)
    _, got = receive(proxy_client, group, topic)
    response = ack(proxy_client, group, topic, *got)
    expect_status(check, "ack", response.status, Code.OK)
    check.equal("entry codes", ["OK"] * len(got), [code_name(e.status.code) for e in response.entries])
    garbled = v2.Message(system_properties=v2.SystemProperties(message_id="x", receipt_handle="garbled"))
    bad = ack(proxy_client, group, topic, garbled)
    check.equal("garbled handle", "INTERNAL_SERVER_ERROR", code_name(bad.entries[0].status.code)
                if bad.entries else code_name(bad.status.code))


@case("RMQ-GRPC-REDELIVERY", "An unacked message comes back after its invisible duration, one attempt later.")
def test_redelivery(proxy_client: ProxyClient, admin: Client, check: Check) -> None:
    topic = typed_topic(admin, "NORMAL")
    group = new_consumer(check, proxy_client, admin, topic)
    sent = sent_messages(check, proxy_client, topic, 1)
    _, first = receive(proxy_client, group, topic, invisible_s=10)
    check.equal("first receive", sent, [m.system_properties.message_id for m in first])
    again = received_again(proxy_client, group, topic, 10 + REDELIVERY_BOUND_S)
    check.equal("received again", sent, [m.system_properties.message_id for m in again])
    check.equal("delivery attempt", [2], [m.system_properties.delivery_attempt for m in again])
    acked = ack(proxy_client, group, topic, *again)
    expect_status(check, "ack of the redelivered message", acked.status, Code.OK)


@case("RMQ-GRPC-CHANGE-INVISIBLE", "ChangeInvisibleDuration answers a new handle; the message returns then.")
def test_change_invisible(proxy_client: ProxyClient, admin: Client, check: Check) -> None:
    topic = typed_topic(admin, "NORMAL")
    group = new_consumer(check, proxy_client, admin, topic)
    sent = sent_messages(check, proxy_client, topic, 1)
    _, (received,) = receive(proxy_client, group, topic, invisible_s=60)
    changed = call("ChangeInvisibleDuration", lambda: proxy_client.call(
        "ChangeInvisibleDuration", rpc.ChangeInvisibleDurationRequest(
            group=v2.Resource(name=group), topic=v2.Resource(name=topic),
            receipt_handle=received.system_properties.receipt_handle,
            invisible_duration=duration_pb2.Duration(seconds=1), message_id=sent[0])))
    expect_status(check, "ChangeInvisibleDuration", changed.status, Code.OK)
    old_handle = received.system_properties.receipt_handle
    check.that("a new receipt handle", changed.receipt_handle not in ("", old_handle),
               expected="a different handle", actual=changed.receipt_handle)
    again = received_again(proxy_client, group, topic, REDELIVERY_BOUND_S)
    check.equal("received again well before the first 60 s", sent,
                [m.system_properties.message_id for m in again])


@case("RMQ-GRPC-AUTO-RENEW", "A push consumer's auto-renewed message is released when the consumer "
      "terminates: another client of the group receives it within seconds, not after 60 s.")
def test_auto_renew_released_on_termination(proxy: Endpoint, admin: Client, wire: Wire, check: Check) -> None:
    topic = typed_topic(admin, "NORMAL")
    group = consumer_group(admin)
    with contextlib.ExitStack() as stack:
        pusher = stack.enter_context(contextlib.closing(ProxyClient(str(proxy), tls=wire.tls)))
        other = stack.enter_context(contextlib.closing(ProxyClient(str(proxy), tls=wire.tls)))
        for client, kind in ((pusher, v2.PUSH_CONSUMER), (other, v2.SIMPLE_CONSUMER)):
            answer = announce(check, client, client.consumer_settings(group, topic, client_type=kind))
            expect_status(check, f"{v2.ClientType.Name(kind)} settings", answer.status, Code.OK)
        sent = sent_messages(check, other, topic, 1)
        _, got = receive(pusher, group, topic, auto_renew=True)
        check.equal("received with auto_renew", sent, [m.system_properties.message_id for m in got])
        started = time.monotonic()
        terminated = call("NotifyClientTermination", lambda: pusher.call(
            "NotifyClientTermination", rpc.NotifyClientTerminationRequest(group=v2.Resource(name=group))))
        expect_status(check, "NotifyClientTermination", terminated.status, Code.OK)
        again = received_again(other, group, topic, RELEASE_BOUND_S)
        check.equal("received by the other client", sent, [m.system_properties.message_id for m in again])
        check.that("released well before the 60 s a receive with auto_renew is invisible for",
                   time.monotonic() - started < RELEASE_BOUND_S, expected=f"< {RELEASE_BOUND_S:.0f} s",
                   actual=f"{time.monotonic() - started:.1f} s")
        if again:
            expect_status(check, "ack by the other client", ack(other, group, topic, *again).status, Code.OK)


def _announced_consumer(check: Check, client: ProxyClient, admin: Client) -> tuple[str, str, Telemetry]:
    """A topic, a new group, and the Telemetry stream on which the group's consumer announced itself
    (the stream the broker's relayed requests come on)."""
    topic = typed_topic(admin, "NORMAL")
    group = consumer_group(admin)
    stream, settings = call("Telemetry", lambda: client.announce(client.consumer_settings(group, topic)))
    check.that("settings answered", isinstance(settings, rpc.TelemetryCommand), expected="a TelemetryCommand",
               actual=repr(settings))
    return topic, group, stream


def _answering(stream: Telemetry, answer: Callable[[rpc.TelemetryCommand], rpc.TelemetryCommand | None]
               ) -> concurrent.futures.Future[rpc.TelemetryCommand | None]:
    """Answer the first relayed command the stream brings (in a thread: the admin request that makes the
    broker relay it blocks the case); the future holds that command, or None when none came."""
    def run() -> rpc.TelemetryCommand | None:
        deadline = time.monotonic() + RELAY_WAIT_S
        while time.monotonic() < deadline:
            try:
                command = stream.receive(max(deadline - time.monotonic(), 0.1))
            except TimeoutError:
                return None
            if not isinstance(command, rpc.TelemetryCommand):
                return None
            reply = answer(command)
            if reply is not None:
                stream.send(reply)
                return command
        return None

    pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="telemetry-answer")
    future = pool.submit(run)
    pool.shutdown(wait=False)
    return future


@case("RMQ-GRPC-RELAY", "GET_CONSUMER_RUNNING_INFO with jstackEnable reaches a gRPC consumer as a "
      "PrintThreadStackTraceCommand; its ThreadStackTrace is the broker's answer.")
def test_relay_running_info(proxy_client: ProxyClient, admin: Client, check: Check) -> None:
    _, group, stream = _announced_consumer(check, proxy_client, admin)
    stack = "rmq-spec thread stack"

    def answer(command: rpc.TelemetryCommand) -> rpc.TelemetryCommand | None:
        if command.WhichOneof("command") != "print_thread_stack_trace_command":
            return None
        nonce = command.print_thread_stack_trace_command.nonce
        return rpc.TelemetryCommand(status=v2.Status(code=v2.Code.OK, message="OK"), thread_stack_trace=(
            rpc.ThreadStackTrace(nonce=nonce, thread_stack_trace=stack)))

    relayed = _answering(stream, answer)
    response = admin.call(RequestCode.GET_CONSUMER_RUNNING_INFO, {
        "consumerGroup": group, "clientId": proxy_client.client_id, "jstackEnable": True})
    command = relayed.result(timeout=RELAY_WAIT_S + 5)
    check.that("a PrintThreadStackTraceCommand with a nonce", command is not None and bool(
        command.print_thread_stack_trace_command.nonce), expected="a nonce", actual=repr(command))
    expect_success(check, "GET_CONSUMER_RUNNING_INFO", response)
    info = decode_body(CONSUMER_RUNNING_INFO, response.body or b"{}")
    check.equal("jstack of the running info", stack, info.get("jstack"))


@case("RMQ-GRPC-RELAY", "CONSUME_MESSAGE_DIRECTLY reaches a gRPC consumer as a VerifyMessageCommand with "
      "the message; its VerifyMessageResult is CR_SUCCESS from gRPC client.")
def test_relay_consume_directly(proxy_client: ProxyClient, admin: Client, broker: Server,
                                check: Check) -> None:
    topic, group, stream = _announced_consumer(check, proxy_client, admin)
    sent = sent_messages(check, proxy_client, topic, 1)
    _, (received,) = receive(proxy_client, group, topic)
    expect_status(check, "ack", ack(proxy_client, group, topic, received).status, Code.OK)
    physical = int(received.system_properties.receipt_handle.split(" ")[-1])
    msg_id = encode_offset_msg_id(broker.endpoint.host, broker.endpoint.port, physical)

    def answer(command: rpc.TelemetryCommand) -> rpc.TelemetryCommand | None:
        if command.WhichOneof("command") != "verify_message_command":
            return None
        return rpc.TelemetryCommand(status=v2.Status(code=v2.Code.OK, message="OK"), verify_message_result=(
            rpc.VerifyMessageResult(nonce=command.verify_message_command.nonce)))

    relayed = _answering(stream, answer)
    response = admin.call(RequestCode.CONSUME_MESSAGE_DIRECTLY, {
        "consumerGroup": group, "clientId": proxy_client.client_id, "msgId": msg_id})
    command = relayed.result(timeout=RELAY_WAIT_S + 5)
    check.equal("the message to verify", sent, [] if command is None else [
        command.verify_message_command.message.system_properties.message_id])
    expect_success(check, "CONSUME_MESSAGE_DIRECTLY", response)
    result = decode_body(CONSUME_MESSAGE_DIRECTLY_RESULT, response.body or b"{}")
    check.equal("consume result", ("CR_SUCCESS", "from gRPC client"),
                (result.get("consumeResult"), result.get("remark")))


@case("RMQ-GRPC-SEND-FIFO", "Messages of one message group are stored in one queue, in send order.")
def test_send_fifo(proxy_client: ProxyClient, admin: Client, check: Check) -> None:
    topic = typed_topic(admin, "FIFO")
    group = new_consumer(check, proxy_client, admin, topic)
    sent = {name: sent_messages(check, proxy_client, topic, 3, message_group=name) for name in ("A", "B")}
    _, got = receive(proxy_client, group, topic)
    for name, ids in sent.items():
        mine = [m for m in got if m.system_properties.message_group == name]
        check.equal(f"group {name}: queues", 1, len({m.system_properties.queue_id for m in mine}))
        check.equal(f"group {name}: order", ids, [m.system_properties.message_id for m in mine])


@case("RMQ-GRPC-DLQ", "ForwardMessageToDeadLetterQueue answers OK; the message is in %DLQ%<group>, not again "
      "received.")
def test_forward_to_dead_letter_queue(proxy_client: ProxyClient, admin: Client, check: Check) -> None:
    topic = typed_topic(admin, "NORMAL")
    group = new_consumer(check, proxy_client, admin, topic)
    sent = sent_messages(check, proxy_client, topic, 1)
    _, (received,) = receive(proxy_client, group, topic, invisible_s=10)
    forwarded = call("ForwardMessageToDeadLetterQueue", lambda: proxy_client.call(
        "ForwardMessageToDeadLetterQueue", rpc.ForwardMessageToDeadLetterQueueRequest(
            group=v2.Resource(name=group), topic=v2.Resource(name=topic), message_id=sent[0],
            receipt_handle=received.system_properties.receipt_handle, delivery_attempt=1,
            max_delivery_attempts=16)))
    expect_status(check, "ForwardMessageToDeadLetterQueue", forwarded.status, Code.OK)
    dead = admin.answer("GET_MAX_OFFSET of the DLQ", RequestCode.GET_MAX_OFFSET,
                        {"topic": DLQ_PREFIX + group, "queueId": 0})
    check.equal("messages in the DLQ", 1, dead["offset"])
    check.equal("received again after the invisible time", [],
                [m.system_properties.message_id for m in received_again(proxy_client, group, topic, 15)])


@case("RMQ-GRPC-RECALL", "A delay message recalled with its send's recall_handle is never delivered.")
def test_recall(proxy_client: ProxyClient, admin: Client, check: Check) -> None:
    topic = typed_topic(admin, "DELAY")
    group = new_consumer(check, proxy_client, admin, topic)
    due = int(time.time() * 1000) + 3000
    entry = send_one(check, proxy_client, message(topic, delivery_ms=due))
    if not entry.recall_handle:
        raise Unsupported("the send answered no recall_handle: the broker cannot recall", actual="")
    recalled = call("RecallMessage", lambda: proxy_client.call("RecallMessage", rpc.RecallMessageRequest(
        topic=v2.Resource(name=topic), recall_handle=entry.recall_handle)))
    if recalled.status.code == Code.INTERNAL_SERVER_ERROR and "forbidden" in recalled.status.message:
        raise Unsupported("the broker does not allow recall (Apache: recallMessageEnable=false, its default)",
                          actual=recalled.status.message)
    expect_status(check, "RecallMessage", recalled.status, Code.OK)
    check.equal("recalled message id", entry.message_id, recalled.message_id)
    check.equal("delivered after its time", [],
                [m.system_properties.message_id for m in received_again(proxy_client, group, topic, 10)])
