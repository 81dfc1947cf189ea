"""Helpers of the ``grpc`` cases: a client of the proxy under test, typed topics made through its broker,
and the checks every gRPC answer goes through.

A status is judged by its Code name, which is what the clauses speak of; a gRPC error where a status was
due fails the case with the error's code, and UNIMPLEMENTED makes it UNSUPPORTED (the proxy lacks the RPC).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc
from google.protobuf import duration_pb2

from rocketmq_spec.codec.grpc.v2 import definition_pb2 as v2
from rocketmq_spec.codec.grpc.v2 import service_pb2 as rpc
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.grpc_client import ProxyClient, message
from rocketmq_spec.conformance.tls import ClientTls
from rocketmq_spec.conformance.verdict import Outcome, Unsupported
from rocketmq_spec.conformance.wire import Endpoint
from rocketmq_spec.spec.codes import RequestCode
from rocketmq_spec.spec.grpc_codes import Code
from rocketmq_spec.spec.sysflag import PERM_READ_WRITE

from .admin_support import group_config
from .messaging import DEFAULT_TOPIC, Client
from .support import expect_success, unique

RECEIVE_DEADLINE_S = 30.0
"""Deadline of a ReceiveMessage call: above the 20 s longest long-polling time a proxy may choose."""


def code_name(value: int) -> str:
    try:
        return Code(value).name
    except ValueError:
        return str(value)


def call(what: str, rpc_call: Callable[[], Any]) -> Any:
    """Run an RPC; a gRPC error is the case's outcome (UNSUPPORTED for UNIMPLEMENTED)."""
    try:
        return rpc_call()
    except grpc.RpcError as error:
        code = error.code()
        details = error.details()
        if code is grpc.StatusCode.UNIMPLEMENTED:
            raise Unsupported(f"{what}: the proxy does not serve it ({details})", actual=code.name) from None
        raise Outcome(f"{what}: gRPC error instead of a status", expected="gRPC OK with a status",
                      actual=f"{code.name} {details}") from None


def expect_status(check: Check, what: str, status: v2.Status, expected: Code) -> None:
    check.that(f"{what}: status code", status.code == expected, expected=expected.name,
               actual=f"{code_name(status.code)} {status.message}".strip())


def typed_topic(client: Client, message_type: str, queues: int = 4) -> str:
    """A new topic accepting ``message_type`` (its ``message.type`` attribute), made through the broker."""
    topic = unique(f"grpc_{message_type.lower()}")
    expect_success(client.check, f"create {message_type} topic {topic}", client.call(
        RequestCode.UPDATE_AND_CREATE_TOPIC, {
            "topic": topic, "defaultTopic": DEFAULT_TOPIC, "readQueueNums": queues, "writeQueueNums": queues,
            "perm": int(PERM_READ_WRITE), "topicFilterType": "SINGLE_TAG", "topicSysFlag": 0, "order": False,
            "attributes": f"+message.type={message_type}"}))
    return topic


def consumer_group(client: Client) -> str:
    """A new consumer group made through the broker (as ``mqadmin updateSubGroup`` does): 5.5.0's proxy
    refuses the settings of a group its broker does not have."""
    group = unique("grpc_group")
    expect_success(client.check, f"create group {group}", client.call(
        RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, {}, group_config(group)))
    return group


def connected(proxy: Endpoint, tls: ClientTls | None = None) -> Iterator[ProxyClient]:
    client = ProxyClient(str(proxy), tls=tls)
    try:
        yield client
    finally:
        client.close()


def announce(check: Check, client: ProxyClient, settings: v2.Settings) -> rpc.TelemetryCommand:
    """Open a Telemetry stream with ``settings``; the server's answer must be a settings command."""
    _, answer = call("Telemetry", lambda: client.announce(settings))
    if not isinstance(answer, rpc.TelemetryCommand):
        raise Outcome("Telemetry: no settings answer", expected="a TelemetryCommand", actual=repr(answer))
    return answer


def receive(client: ProxyClient, group: str, topic: str, *, invisible_s: float = 30.0, batch: int = 32,
            polling_s: float = 5.0, auto_renew: bool = False
            ) -> tuple[list[rpc.ReceiveMessageResponse], list[v2.Message]]:
    """One ReceiveMessage: every item of the stream, and the messages among them (``auto_renew``: as a
    push consumer receives, the proxy choosing the invisible time and renewing it)."""
    request = rpc.ReceiveMessageRequest(
        group=v2.Resource(name=group), message_queue=v2.MessageQueue(topic=v2.Resource(name=topic), id=-1),
        filter_expression=v2.FilterExpression(type=v2.TAG, expression="*"), batch_size=batch,
        invisible_duration=duration_pb2.Duration(seconds=int(invisible_s), nanos=int(invisible_s % 1 * 1e9)),
        long_polling_timeout=duration_pb2.Duration(seconds=int(polling_s)), auto_renew=auto_renew)
    items = call("ReceiveMessage", lambda: list(client.stream("ReceiveMessage", request,
                                                              timeout=RECEIVE_DEADLINE_S)))
    return items, [item.message for item in items if item.WhichOneof("content") == "message"]


def ack(client: ProxyClient, group: str, topic: str, *messages: v2.Message) -> rpc.AckMessageResponse:
    entries = [rpc.AckMessageEntry(message_id=m.system_properties.message_id,
                                   receipt_handle=m.system_properties.receipt_handle) for m in messages]
    return call("AckMessage", lambda: client.call("AckMessage", rpc.AckMessageRequest(
        group=v2.Resource(name=group), topic=v2.Resource(name=topic), entries=entries)))


def send_one(check: Check, client: ProxyClient, msg: v2.Message) -> rpc.SendResultEntry:
    response = call("SendMessage", lambda: client.send(msg))
    expect_status(check, "SendMessage", response.status, Code.OK)
    check.equal("entries", 1, len(response.entries))
    return response.entries[0]


def new_consumer(check: Check, client: ProxyClient, admin: Client, topic: str) -> str:
    """A new group, made through the broker, whose simple consumer has announced itself on Telemetry."""
    group = consumer_group(admin)
    answer = announce(check, client, client.consumer_settings(group, topic))
    expect_status(check, "consumer settings", answer.status, Code.OK)
    return group


def sent_messages(check: Check, client: ProxyClient, topic: str, count: int, **options: object) -> list[str]:
    return [send_one(check, client, message(topic, f"m{i}".encode(), **options)).message_id  # type: ignore[arg-type]
            for i in range(count)]


def received_again(client: ProxyClient, group: str, topic: str, bound_s: float) -> list[v2.Message]:
    """Receives until something comes or ``bound_s`` passes: what came (nothing, when nothing did)."""
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        _, got = receive(client, group, topic)
        if got:
            return got
    return []
