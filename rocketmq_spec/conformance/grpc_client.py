"""A client of ``apache.rocketmq.v2.MessagingService`` for the ``grpc`` cases: one channel to a proxy,
the metadata an SDK sends, and a Telemetry stream that can be read with a timeout.

Synchronous (grpcio's blocking stubs), as the remoting cases are; a Telemetry stream's responses are read
by a thread of their own into a queue, so a case can wait for a server command with a bound.
"""

from __future__ import annotations

import datetime
import itertools
import queue
import threading
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

import grpc
from google.protobuf import timestamp_pb2

from rocketmq_spec.codec.acl import Credentials
from rocketmq_spec.codec.grpc.v2 import definition_pb2 as v2
from rocketmq_spec.codec.grpc.v2 import service_pb2 as rpc
from rocketmq_spec.codec.grpc.v2 import service_pb2_grpc as rpc_grpc
from rocketmq_spec.codec.grpc_auth import signed_metadata
from rocketmq_spec.conformance.tls import ClientTls
from rocketmq_spec.spec.grpc_auth import DATE_TIME_FORMAT

CALL_TIMEOUT_S = 10.0
"""Deadline of a unary call: a live proxy answers in milliseconds; a hung one is a failed case."""

_SEQUENCE = itertools.count()


def new_message_id() -> str:
    """A unique message id in the SDKs' format (32 upper-case hex digits; any unique string is valid)."""
    return uuid.uuid4().hex.upper()


def message(topic: str, body: bytes = b"hello", *, tag: str = "", keys: Sequence[str] = (),
            message_group: str = "", message_type: v2.MessageType = v2.NORMAL, delivery_ms: int | None = None,
            properties: dict[str, str] | None = None, message_id: str | None = None) -> v2.Message:
    """A v2 message as an SDK builds it (born time and host set, a fresh id unless given)."""
    system = v2.SystemProperties(message_id=new_message_id() if message_id is None else message_id,
                                 message_type=message_type, body_encoding=v2.IDENTITY, born_host="127.0.0.1")
    system.born_timestamp.GetCurrentTime()
    if tag:
        system.tag = tag
    system.keys.extend(keys)
    if message_group:
        system.message_group = message_group
    if delivery_ms is not None:
        system.delivery_timestamp.CopyFrom(timestamp_pb2.Timestamp(seconds=delivery_ms // 1000,
                                                                   nanos=delivery_ms % 1000 * 1_000_000))
    return v2.Message(topic=v2.Resource(name=topic), body=body, user_properties=properties or {},
                      system_properties=system)


class Telemetry:
    """An open Telemetry stream: ``send`` commands, ``receive`` the server's with a timeout."""

    def __init__(self, stub: rpc_grpc.MessagingServiceStub, metadata: Sequence[tuple[str, str]]) -> None:
        self._outgoing: queue.Queue[rpc.TelemetryCommand | None] = queue.Queue()
        self._incoming: queue.Queue[rpc.TelemetryCommand | grpc.RpcError | None] = queue.Queue()
        self._call = stub.Telemetry(iter(self._outgoing.get, None), metadata=metadata)
        self._reader = threading.Thread(target=self._read, daemon=True, name="telemetry-reader")
        self._reader.start()

    def _read(self) -> None:
        try:
            for command in self._call:
                self._incoming.put(command)
            self._incoming.put(None)
        except grpc.RpcError as exc:
            self._incoming.put(exc)

    def send(self, command: rpc.TelemetryCommand) -> None:
        self._outgoing.put(command)

    def receive(self, timeout: float) -> rpc.TelemetryCommand | grpc.RpcError | None:
        """The server's next command, the error that ended the stream, or None when it ended cleanly.
        Raises TimeoutError when nothing arrives in ``timeout`` seconds."""
        try:
            return self._incoming.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no Telemetry command within {timeout} s") from None

    def close(self) -> None:
        self._outgoing.put(None)
        self._call.cancel()


class ProxyClient:
    """One gRPC channel to a proxy, calling as one client id."""

    def __init__(self, address: str, client_id: str | None = None, *, language: str = "PYTHON",
                 tls: ClientTls | None = None, credentials: Credentials | None = None) -> None:
        """``tls``: a channel over TLS (a run with ``--tls``), plain text otherwise. ``credentials``: every
        call signed as a 5.x SDK signs it (ACL 2.0 authentication, RMQ-GRPC-AUTHENTICATE)."""
        self.credentials = credentials
        self.address = address
        self.client_id = (f"rmq-spec-{next(_SEQUENCE)}-{uuid.uuid4().hex[:8]}" if client_id is None
                          else client_id)
        self.language = language
        self._channel = tls.grpc_channel(address) if tls is not None else grpc.insecure_channel(address)
        self.stub = rpc_grpc.MessagingServiceStub(self._channel)
        self._telemetry: list[Telemetry] = []

    def metadata(self) -> list[tuple[str, str]]:
        values = [("x-mq-language", self.language), ("x-mq-protocol", "v2"),
                  ("x-mq-client-version", "5.0.0"), ("x-mq-request-id", uuid.uuid4().hex)]
        if self.credentials is not None:
            now = datetime.datetime.now(datetime.UTC).strftime(DATE_TIME_FORMAT)
            values += signed_metadata(self.credentials.access_key, self.credentials.secret_key, now)
        return values + ([("x-mq-client-id", self.client_id)] if self.client_id else [])

    def call(self, rpc_name: str, request: Any, timeout: float = CALL_TIMEOUT_S) -> Any:
        """A unary RPC by name; gRPC errors propagate as grpc.RpcError."""
        return getattr(self.stub, rpc_name)(request, metadata=self.metadata(), timeout=timeout)

    def raw(self, path: str, request: bytes,
            timeout: float = CALL_TIMEOUT_S) -> tuple[bytes, grpc.StatusCode]:
        """A unary call at ``path`` with bytes encoded by hand: the response bytes and the gRPC status
        (a gRPC error propagates as grpc.RpcError)."""
        method = self._channel.unary_unary(path)
        response, call = method.with_call(request, metadata=self.metadata(), timeout=timeout)
        return response, call.code()

    def stream(self, rpc_name: str, request: Any, timeout: float = CALL_TIMEOUT_S) -> Iterator[Any]:
        return iter(getattr(self.stub, rpc_name)(request, metadata=self.metadata(), timeout=timeout))

    def endpoints(self) -> v2.Endpoints:
        host, port = self.address.rsplit(":", 1)
        return v2.Endpoints(scheme=v2.IPv4, addresses=[v2.Address(host=host, port=int(port))])

    def query_route(self, topic: str) -> rpc.QueryRouteResponse:
        return self.call("QueryRoute", rpc.QueryRouteRequest(topic=v2.Resource(name=topic),
                                                             endpoints=self.endpoints()))

    def send(self, *messages: v2.Message) -> rpc.SendMessageResponse:
        return self.call("SendMessage", rpc.SendMessageRequest(messages=list(messages)))

    def telemetry(self) -> Telemetry:
        stream = Telemetry(self.stub, self.metadata())
        self._telemetry.append(stream)
        return stream

    def producer_settings(self, *topics: str) -> v2.Settings:
        settings = v2.Settings(client_type=v2.PRODUCER, access_point=self.endpoints(),
                               publishing=v2.Publishing(topics=[v2.Resource(name=t) for t in topics]))
        settings.request_timeout.FromSeconds(3)
        settings.user_agent.CopyFrom(v2.UA(language=v2.PYTHON, version="5.0.0", platform="linux",
                                           hostname="localhost"))
        return settings

    def consumer_settings(self, group: str, *topics: str,
                          client_type: v2.ClientType = v2.SIMPLE_CONSUMER) -> v2.Settings:
        entries = [v2.SubscriptionEntry(topic=v2.Resource(name=t),
                                        expression=v2.FilterExpression(type=v2.TAG, expression="*"))
                   for t in topics]
        settings = v2.Settings(client_type=client_type, access_point=self.endpoints(),
                               subscription=v2.Subscription(group=v2.Resource(name=group),
                                                            subscriptions=entries))
        settings.request_timeout.FromSeconds(3)
        return settings

    def announce(self, settings: v2.Settings, timeout: float = CALL_TIMEOUT_S) -> tuple[Telemetry, Any]:
        """Open a Telemetry stream, send ``settings`` and return the stream and the server's first answer."""
        stream = self.telemetry()
        stream.send(rpc.TelemetryCommand(settings=settings))
        return stream, stream.receive(timeout)

    def close(self) -> None:
        for stream in self._telemetry:
            stream.close()
        self._channel.close()
