"""The test client's gRPC side (RMQ_PROTOCOL=grpc): a 5.x SDK's session on the project's own gRPC client,
breaking one RMQ-GCLIENT clause per RMQ_BREAK flag."""

from __future__ import annotations

import base64
import os
import sys
import threading
import time

import grpc
from client import emit
from connection import broken
from google.protobuf import duration_pb2

from rocketmq_spec.codec.grpc.v2 import definition_pb2 as v2
from rocketmq_spec.codec.grpc.v2 import service_pb2 as rpc
from rocketmq_spec.conformance.grpc_client import ProxyClient, Telemetry, message
from rocketmq_spec.spec.client_grpc import GRPC_HEARTBEAT_INTERVAL_MS

ENV = os.environ
TOPIC, GROUP = ENV["RMQ_TOPIC"], ENV["RMQ_GROUP"]
SUPPORTED = (
    "produce", "produce-fifo", "produce-transaction", "consume-pop", "consume-nack", "consume-extend", "idle"
)
"""``idle`` starts a consumer session only (the test client is one session per process)."""
FIRST_HEARTBEAT_S = 1.0
"""An SDK's heartbeat schedule: 1 s after start, then every 10 s (ClientManagerImpl)."""
SETTINGS_WAIT_S = 5.0
RECEIVE_DEADLINE_S = 20.0
LONG_POLLING_S = 5
RECEIVE_INVISIBLE_S = 30
NACK_INVISIBLE_S = 5
"""consume-nack makes a first delivery invisible again for this long, as the SDK drivers do."""
EXTEND_INVISIBLE_S = 30
"""consume-extend gives each delivery this long before acking it."""
MESSAGE_GROUPS = 2
COUNT = int(ENV.get("RMQ_COUNT", "1"))
DEADLINE = time.monotonic() + float(ENV.get("RMQ_TIMEOUT_S", "30")) - 3
RESOLUTIONS = {"commit": v2.COMMIT, "rollback": v2.ROLLBACK}


class SdkLikeClient(ProxyClient):
    """The project's gRPC client with the date-time header an SDK adds to every call."""

    def metadata(self) -> list[tuple[str, str]]:
        return [*super().metadata(), ("x-mq-date-time", time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()))]


class Heartbeats:
    """An SDK's heartbeat schedule on a thread, until stopped; ``no-heartbeat`` sends none, and
    ``no-heartbeat-after-send`` none once a message was sent."""

    def __init__(self, client: ProxyClient, consumer: bool) -> None:
        self.client, self.consumer = client, consumer
        self.sent = False
        self.stop = threading.Event()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        wait = FIRST_HEARTBEAT_S
        while not self.stop.wait(wait):
            wait = GRPC_HEARTBEAT_INTERVAL_MS / 1000
            if broken("no-heartbeat") or (self.sent and broken("no-heartbeat-after-send")):
                continue
            try:
                self.client.call(
                    "Heartbeat",
                    rpc.HeartbeatRequest(
                        group=v2.Resource(name=GROUP) if self.consumer else None,
                        client_type=v2.SIMPLE_CONSUMER if self.consumer else v2.PRODUCER,
                    ),
                )
            except grpc.RpcError as exc:
                emit("error", stage="heartbeat", message=str(exc))


def _duration(seconds: int) -> duration_pb2.Duration:
    return duration_pb2.Duration(seconds=seconds)


def _received(m: v2.Message) -> None:
    emit(
        "received",
        msgId=m.system_properties.message_id,
        topic=m.topic.name,
        body_b64=base64.b64encode(m.body).decode(),
        reconsumeTimes=m.system_properties.delivery_attempt - 1,
        group=m.system_properties.message_group,
    )


def _ack(client: ProxyClient, messages: list[v2.Message]) -> None:
    """Ack in delivery order, each with the receipt handle it holds now."""
    handle = (lambda h: h[::-1]) if broken("bad-handle") else (lambda h: h)
    ordered = messages[::-1] if broken("fifo-ack-reverse") else messages
    client.call(
        "AckMessage",
        rpc.AckMessageRequest(
            group=v2.Resource(name=GROUP),
            topic=v2.Resource(name=TOPIC),
            entries=[
                rpc.AckMessageEntry(
                    message_id=m.system_properties.message_id,
                    receipt_handle=handle(m.system_properties.receipt_handle),
                )
                for m in ordered
            ],
        ),
    )


def _change(client: ProxyClient, m: v2.Message, seconds: int) -> None:
    """ChangeInvisibleDuration; the handle it answers replaces the message's (RMQ-GCLIENT-CHANGE-HANDLE)."""
    duration = duration_pb2.Duration(nanos=-1) if broken("change-negative") else _duration(seconds)
    answer = client.call(
        "ChangeInvisibleDuration",
        rpc.ChangeInvisibleDurationRequest(
            group=v2.Resource(name=GROUP),
            topic=v2.Resource(name=TOPIC),
            receipt_handle=m.system_properties.receipt_handle,
            invisible_duration=duration,
            message_id=m.system_properties.message_id,
        ),
    )
    if answer.receipt_handle and not broken("ack-stale-handle"):
        m.system_properties.receipt_handle = answer.receipt_handle


def consume(client: ProxyClient, scenario: str) -> None:
    """Receive until RMQ_COUNT acks. consume-nack makes a first delivery invisible again and acks its
    redelivery; consume-extend gives each delivery more time (a change) before acking it."""
    nack, extend = scenario == "consume-nack", scenario == "consume-extend"
    request = rpc.ReceiveMessageRequest(
        group=v2.Resource(name=GROUP),
        message_queue=v2.MessageQueue(topic=v2.Resource(name=TOPIC), id=-1),
        filter_expression=v2.FilterExpression(type=v2.TAG, expression="*"),
        batch_size=32,
        invisible_duration=_duration(RECEIVE_INVISIBLE_S),
        long_polling_timeout=_duration(LONG_POLLING_S),
    )
    acked = 0
    while acked < COUNT and time.monotonic() < DEADLINE:
        items = list(client.stream("ReceiveMessage", request, timeout=RECEIVE_DEADLINE_S))
        messages = [item.message for item in items if item.WhichOneof("content") == "message"]
        for m in messages:
            _received(m)
        settled = []
        for m in messages:
            if nack and m.system_properties.delivery_attempt <= 1:
                _change(client, m, NACK_INVISIBLE_S)
                continue
            if extend:
                _change(client, m, EXTEND_INVISIBLE_S)
            settled.append(m)
        if settled:
            _ack(client, settled)
            acked += len(settled)


def produce(client: ProxyClient, kind: str, heartbeats: Heartbeats) -> None:
    """Sends one by one: ``normal``, ``fifo`` (message groups g0, g1...) or ``transaction``."""
    body = base64.b64decode(ENV.get("RMQ_BODY_B64", "")) or b"x"
    message_type = {"fifo": v2.FIFO, "transaction": v2.TRANSACTION}.get(kind, v2.NORMAL)
    for index in range(COUNT):
        group = f"g{index % MESSAGE_GROUPS}" if kind == "fifo" and not broken("fifo-no-group") else ""
        sent = message(TOPIC, body, tag=ENV.get("RMQ_TAG", ""), message_group=group,
                       message_type=v2.NORMAL if broken("fifo-no-group") else message_type)
        heartbeats.sent = True
        answer = client.send(sent)
        entry = answer.entries[0] if answer.entries else None
        emit("sent", index=index, msgId=entry.message_id if entry else None,
             status=v2.Code.Name(answer.status.code), group=group or None)
        answer_tx = ENV.get("RMQ_TX_ANSWER", "commit")
        if kind == "transaction" and entry is not None and answer_tx in RESOLUTIONS:
            transaction_id = entry.transaction_id[::-1] if broken("txn-wrong-id") else entry.transaction_id
            _end(client, entry.message_id, transaction_id, RESOLUTIONS[answer_tx], v2.SOURCE_CLIENT)


def _end(
    client: ProxyClient,
    message_id: str,
    transaction_id: str,
    resolution: v2.TransactionResolution,
    source: v2.TransactionSource,
) -> None:
    client.call(
        "EndTransaction",
        rpc.EndTransactionRequest(topic=v2.Resource(name=TOPIC), message_id=message_id,
                                  transaction_id=transaction_id, resolution=resolution, source=source),
    )


def recover(client: ProxyClient, stream: Telemetry) -> None:
    """For RMQ_IDLE_S, answer every RecoverOrphanedTransactionCommand with RMQ_TX_CHECK_ANSWER."""
    until = min(DEADLINE, time.monotonic() + float(ENV.get("RMQ_IDLE_S", "0")))
    resolution = RESOLUTIONS.get(ENV.get("RMQ_TX_CHECK_ANSWER", "commit"))
    while time.monotonic() < until:
        try:
            command = stream.receive(max(0.1, until - time.monotonic()))
        except TimeoutError:
            return
        if not isinstance(command, rpc.TelemetryCommand):
            return
        if command.WhichOneof("command") != "recover_orphaned_transaction_command" or resolution is None:
            continue
        orphan = command.recover_orphaned_transaction_command
        emit("checked", msgId=orphan.message.system_properties.message_id)
        source = v2.SOURCE_CLIENT if broken("recover-as-client") else v2.SOURCE_SERVER_CHECK
        _end(client, orphan.message.system_properties.message_id, orphan.transaction_id, resolution, source)


def main(scenario: str) -> int:
    if scenario not in SUPPORTED:
        emit("unsupported", reason=f"the test client's gRPC side does not implement {scenario!r}")
        return 3
    client = SdkLikeClient(ENV["RMQ_ENDPOINT"])
    if broken("no-client-id"):
        client.client_id = ""
    consumer = scenario.startswith("consume") or scenario == "idle"
    client.query_route(TOPIC)
    stream = client.telemetry()
    if broken("settings-late"):
        stream.send(
            rpc.TelemetryCommand(thread_stack_trace=rpc.ThreadStackTrace(nonce="n", thread_stack_trace=""))
        )
    settings = client.consumer_settings(GROUP, TOPIC) if consumer else client.producer_settings(TOPIC)
    stream.send(rpc.TelemetryCommand(settings=settings))
    stream.receive(SETTINGS_WAIT_S)
    emit("ready")
    heartbeats = Heartbeats(client, consumer)
    if scenario.startswith("consume"):
        consume(client, scenario)
    elif scenario.startswith("produce"):
        produce(client, scenario.removeprefix("produce-") if "-" in scenario else "normal", heartbeats)
    if scenario == "produce-transaction":
        recover(client, stream)  # stays RMQ_IDLE_S, answering recovery commands
    else:
        time.sleep(float(ENV.get("RMQ_IDLE_S", "0")))  # produce and idle stay started
    heartbeats.stop.set()
    if not broken("no-termination"):
        client.call(
            "NotifyClientTermination",
            rpc.NotifyClientTerminationRequest(group=v2.Resource(name=GROUP) if consumer else None),
        )
    stream.close()
    emit("done")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
