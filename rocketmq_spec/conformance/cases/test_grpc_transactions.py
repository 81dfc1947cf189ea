"""RocketMQ 5's gRPC protocol: what a proxy makes of a producer's group and of a consumer's receipt handle,
and how a broker's transaction check-back reaches a gRPC producer (``rocketmq_spec.spec.grpc_mapping``,
``rocketmq_spec.spec.grpc_rpcs``).

Each case checks the remoting side too, through the proxy's broker (``--broker``): the stored message's
PGROUP, the broker's producer table, the record at a handle's commitlog offset.
"""

from __future__ import annotations

import time

import pytest

from rocketmq_spec.codec.grpc.v2 import definition_pb2 as v2
from rocketmq_spec.codec.grpc.v2 import service_pb2 as rpc
from rocketmq_spec.codec.store import decode_records
from rocketmq_spec.conformance.case import case
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.grpc_client import ProxyClient, Telemetry, message
from rocketmq_spec.conformance.verdict import Outcome
from rocketmq_spec.spec.codes import RequestCode
from rocketmq_spec.spec.grpc_codes import Code
from rocketmq_spec.spec.grpc_mapping import RECEIPT_HANDLE
from rocketmq_spec.spec.properties import PropertyKey

from .grpc_support import (
    ack,
    announce,
    call,
    code_name,
    expect_status,
    new_consumer,
    receive,
    send_one,
    typed_topic,
)
from .messaging import Client
from .pop_support import broker_name
from .support import expect_success

pytestmark = pytest.mark.xdist_group("grpc")

CHECK_BACK_WAIT_S = 60.0
"""Seconds a case waits for a check-back: transactionTimeOut and transactionCheckInterval of the target (the
suite's targets set them to about a second; Java's defaults are 6 s and 30-60 s)."""
INVISIBLE_S = 10
"""The shortest invisible time a proxy accepts (RMQ-GRPC-RECEIVE-INVISIBLE)."""


@case("RMQ-GRPC-PRODUCER-GROUP", "A gRPC producer's message is stored with PGROUP = its topic, and the "
      "broker lists the producer under that group.")
def test_topic_is_the_producer_group(proxy_client: ProxyClient, admin: Client, check: Check) -> None:
    topic = typed_topic(admin, "NORMAL", queues=1)
    announce(check, proxy_client, proxy_client.producer_settings(topic))
    send_one(check, proxy_client, message(topic, b"grouped"))
    records = admin.pulled(topic, 0, 0).records
    check.equal("PGROUP of the stored message", [topic],
                [r.properties.get(PropertyKey.PRODUCER_GROUP) for r in records])
    producers = expect_success(check, "GET_PRODUCER_CONNECTION_LIST", admin.call(
        RequestCode.GET_PRODUCER_CONNECTION_LIST, {"producerGroup": topic}))
    check.that("the gRPC client among the group's producers", proxy_client.client_id.encode() in
               (producers.body or b""), expected=proxy_client.client_id, actual=producers.body)


def _handle_parts(check: Check, handle: str) -> dict[str, str]:
    parts = handle.split(" ")
    check.equal("receipt handle parts", len(RECEIPT_HANDLE), len(parts))
    return {row.remoting: value for row, value in zip(RECEIPT_HANDLE, parts, strict=False)}


@case("RMQ-GRPC-RECEIPT", "A receipt handle is the pop's extra info and the message's commitlog offset; "
      "acked once its invisible time has passed it answers INVALID_RECEIPT_HANDLE.")
def test_receipt_handle(proxy_client: ProxyClient, admin: Client, check: Check) -> None:
    topic = typed_topic(admin, "NORMAL", queues=1)
    group = new_consumer(check, proxy_client, admin, topic)
    sent = send_one(check, proxy_client, message(topic, b"handled"))
    _, got = receive(proxy_client, group, topic, invisible_s=INVISIBLE_S)
    check.equal("received", [sent.message_id], [m.system_properties.message_id for m in got])
    if not got:
        return
    received = got[0].system_properties
    parts = _handle_parts(check, received.receipt_handle)
    named = ("invisibleTime", "queueId", "retry", "brokerName")
    expected = (str(INVISIBLE_S * 1000), "0", "0", broker_name(admin))
    check.equal(", ".join(named), expected, tuple(parts.get(name) for name in named))
    check.equal("queueOffset", str(received.queue_offset), parts.get("queueOffset"))
    viewed = admin.call(RequestCode.VIEW_MESSAGE_BY_ID, {"offset": int(parts.get("commitLogOffset", "-1"))})
    check.equal("UNIQ_KEY of the record at commitLogOffset", [sent.message_id],
                [r.properties.get(PropertyKey.UNIQ_KEY) for r in decode_records(viewed.body)])
    time.sleep(max(0.0, int(parts.get("popTime", "0")) / 1000 + INVISIBLE_S - time.time()) + 1)
    late = ack(proxy_client, group, topic, got[0])
    status = late.entries[0].status if late.entries else late.status
    check.equal("ack after the invisible time", "INVALID_RECEIPT_HANDLE", code_name(status.code))


def _check_back(stream: Telemetry) -> rpc.RecoverOrphanedTransactionCommand:
    deadline = time.monotonic() + CHECK_BACK_WAIT_S
    while (left := deadline - time.monotonic()) > 0:
        command = stream.receive(left)
        if not isinstance(command, rpc.TelemetryCommand):
            raise Outcome("Telemetry ended before a check-back",
                          expected="a RecoverOrphanedTransactionCommand", actual=repr(command))
        if command.WhichOneof("command") == "recover_orphaned_transaction_command":
            return command.recover_orphaned_transaction_command
    raise TimeoutError(f"no check-back within {CHECK_BACK_WAIT_S} s")


@case("RMQ-GRPC-RECOVER-TRANSACTION", "An unresolved half message reaches its live gRPC producer as a "
      "RecoverOrphanedTransactionCommand with the message and transaction id; EndTransaction with "
      "SOURCE_SERVER_CHECK then commits it.")
def test_orphaned_transaction_recovered(proxy_client: ProxyClient, admin: Client, check: Check) -> None:
    topic = typed_topic(admin, "TRANSACTION", queues=1)
    stream, _ = call("Telemetry", lambda: proxy_client.announce(proxy_client.producer_settings(topic)))
    entry = send_one(check, proxy_client, message(topic, b"orphaned", message_type=v2.TRANSACTION))
    try:
        recover = _check_back(stream)
    except TimeoutError as exc:
        check.that("check-back on Telemetry", False, expected="a RecoverOrphanedTransactionCommand",
                   actual=str(exc))
        return
    check.equal("message and transaction id", (entry.message_id, entry.transaction_id),
                (recover.message.system_properties.message_id, recover.transaction_id))
    ended = call("EndTransaction", lambda: proxy_client.call("EndTransaction", rpc.EndTransactionRequest(
        topic=v2.Resource(name=topic), message_id=recover.message.system_properties.message_id,
        transaction_id=recover.transaction_id, resolution=v2.COMMIT, source=v2.SOURCE_SERVER_CHECK)))
    expect_status(check, "EndTransaction of the check-back", ended.status, Code.OK)
