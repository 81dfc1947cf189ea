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
from rocketmq_spec.conformance.grpc_client import ProxyClient, message
from rocketmq_spec.spec.client_grpc import GRPC_HEARTBEAT_INTERVAL_MS

ENV = os.environ
TOPIC, GROUP = ENV["RMQ_TOPIC"], ENV["RMQ_GROUP"]
SUPPORTED = ("produce", "consume-pop", "idle")
"""``idle`` starts a consumer session only (the test client is one session per process)."""
FIRST_HEARTBEAT_S = 1.0
"""An SDK's heartbeat schedule: 1 s after start, then every 10 s (ClientManagerImpl)."""
SETTINGS_WAIT_S = 5.0
RECEIVE_DEADLINE_S = 20.0


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


def main(scenario: str) -> int:
    if scenario not in SUPPORTED:
        emit("unsupported", reason=f"the test client's gRPC side does not implement {scenario!r}")
        return 3
    client = SdkLikeClient(ENV["RMQ_ENDPOINT"])
    if broken("no-client-id"):
        client.client_id = ""
    consumer = scenario != "produce"
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
    body = base64.b64decode(ENV.get("RMQ_BODY_B64", "")) or b"x"
    if scenario == "consume-pop":
        request = rpc.ReceiveMessageRequest(
            group=v2.Resource(name=GROUP),
            message_queue=v2.MessageQueue(topic=v2.Resource(name=TOPIC), id=-1),
            filter_expression=v2.FilterExpression(type=v2.TAG, expression="*"),
            batch_size=32,
            invisible_duration=duration_pb2.Duration(seconds=30),
            long_polling_timeout=duration_pb2.Duration(seconds=5),
        )
        items = list(client.stream("ReceiveMessage", request, timeout=RECEIVE_DEADLINE_S))
        messages = [item.message for item in items if item.WhichOneof("content") == "message"]
        for m in messages:
            emit(
                "received",
                msgId=m.system_properties.message_id,
                topic=m.topic.name,
                body_b64=base64.b64encode(m.body).decode(),
                reconsumeTimes=m.system_properties.delivery_attempt - 1,
            )
        handle = (lambda h: h[::-1]) if broken("bad-handle") else (lambda h: h)
        if messages:
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
                        for m in messages
                    ],
                ),
            )
    elif scenario == "produce":
        for index in range(int(ENV.get("RMQ_COUNT", "1"))):
            heartbeats.sent = True
            answer = client.send(message(TOPIC, body, tag=ENV.get("RMQ_TAG", "")))
            emit(
                "sent",
                index=index,
                msgId=answer.entries[0].message_id if answer.entries else None,
                status=v2.Code.Name(answer.status.code),
            )
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
