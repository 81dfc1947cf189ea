"""The test client's gRPC side (RMQ_PROTOCOL=grpc): a 5.x SDK's session on the project's own gRPC client,
breaking one RMQ-GCLIENT clause per RMQ_BREAK flag."""

from __future__ import annotations

import base64
import os
import sys
import time

from client import emit
from connection import broken
from google.protobuf import duration_pb2

from rocketmq_spec.codec.grpc.v2 import definition_pb2 as v2
from rocketmq_spec.codec.grpc.v2 import service_pb2 as rpc
from rocketmq_spec.conformance.grpc_client import ProxyClient, message

ENV = os.environ
TOPIC, GROUP = ENV["RMQ_TOPIC"], ENV["RMQ_GROUP"]
SUPPORTED = ("produce", "consume-pop")
SETTINGS_WAIT_S = 5.0
RECEIVE_DEADLINE_S = 20.0


class SdkLikeClient(ProxyClient):
    """The project's gRPC client with the date-time header an SDK adds to every call."""

    def metadata(self) -> list[tuple[str, str]]:
        return [*super().metadata(), ("x-mq-date-time", time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()))]


def main(scenario: str) -> int:
    if scenario not in SUPPORTED:
        emit("unsupported", reason=f"the test client's gRPC side does not implement {scenario!r}")
        return 3
    client = SdkLikeClient(ENV["RMQ_ENDPOINT"])
    if broken("no-client-id"):
        client.client_id = ""
    consumer = scenario == "consume-pop"
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
    if not broken("no-heartbeat"):
        client.call(
            "Heartbeat",
            rpc.HeartbeatRequest(
                group=v2.Resource(name=GROUP) if consumer else None,
                client_type=v2.SIMPLE_CONSUMER if consumer else v2.PRODUCER,
            ),
        )
    body = base64.b64decode(ENV.get("RMQ_BODY_B64", "")) or b"x"
    if consumer:
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
    else:
        for index in range(int(ENV.get("RMQ_COUNT", "1"))):
            answer = client.send(message(TOPIC, body, tag=ENV.get("RMQ_TAG", "")))
            emit(
                "sent",
                index=index,
                msgId=answer.entries[0].message_id if answer.entries else None,
                status=v2.Code.Name(answer.status.code),
            )
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
