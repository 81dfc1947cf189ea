"""A recording relay for RocketMQ 5's gRPC protocol, in front of a broker's gRPC endpoint.

Built on grpcio's generic handlers: every RPC of ``spec.grpc_rpcs`` is served with identity
(de)serializers, so messages cross as the client wrote them and are recorded as bytes with their RPC,
direction, time and the call's metadata, then decoded on demand with the service's generated classes.
This was chosen over a relay at the HTTP/2 level (the ``h2`` library) because the client clauses judge
messages and metadata (Settings first on Telemetry, receipt handles, x-mq-* headers), never HTTP/2
frames, and grpcio already carries flow control, deadlines, cancellation and status across.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from dataclasses import dataclass
from typing import Any

import grpc

from rocketmq_spec.codec.grpc.v2 import service_pb2
from rocketmq_spec.spec.grpc_rpcs import RPCS, Rpc

LOOPBACK = "127.0.0.1"
WORKERS = 32
"""Threads serving calls: a client holds a Telemetry stream and a long-polling receive at once."""
_NOT_FORWARDED = ("user-agent", "grpc-", ":")
"""Metadata grpcio sets itself on the upstream call."""
_BY_PATH = {r.path: r for r in RPCS}
ROUTE_RPCS = ("QueryRoute", "QueryAssignment")
"""The RPCs whose answers name broker endpoints."""
NO_DEADLINE_S = 365 * 24 * 3600.0
"""A remaining time beyond this is a call without deadline."""


@dataclass(frozen=True)
class GrpcMessage:
    at: float
    call: int
    rpc: str
    outbound: bool
    """True for what the client sent."""
    data: bytes
    metadata: tuple[tuple[str, str], ...]
    """The call's metadata as the client sent it."""

    def decoded(self) -> Any:
        spec = next(r for r in RPCS if r.name == self.rpc)
        return getattr(service_pb2, spec.request if self.outbound else spec.response).FromString(self.data)


class GrpcRecording:
    def __init__(self) -> None:
        self._start = time.monotonic()
        self._lock = threading.Lock()
        self._calls = 0
        self.messages: list[GrpcMessage] = []

    def new_call(self) -> int:
        with self._lock:
            self._calls += 1
            return self._calls

    def add(
        self, call: int, rpc: str, outbound: bool, data: bytes, metadata: tuple[tuple[str, str], ...]
    ) -> None:
        with self._lock:
            self.messages.append(
                GrpcMessage(time.monotonic() - self._start, call, rpc, outbound, data, metadata)
            )

    def snapshot(self) -> list[GrpcMessage]:
        with self._lock:
            return list(self.messages)

    def of(self, rpc: str, *, outbound: bool = True) -> list[GrpcMessage]:
        return [m for m in self.snapshot() if m.rpc == rpc and m.outbound is outbound]


class GrpcRelay:
    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.recording = GrpcRecording()
        self._channel = grpc.insecure_channel(upstream)
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=WORKERS))
        self._server.add_generic_rpc_handlers((_Handler(self),))
        self.address = f"{LOOPBACK}:{self._server.add_insecure_port(f'{LOOPBACK}:0')}"

    def start(self) -> None:
        self._server.start()

    def stop(self) -> None:
        self._server.stop(grace=None)
        self._channel.close()

    def begin(self) -> GrpcRecording:
        """Start a scenario's recording (calls already open keep writing to the old one)."""
        self.recording = GrpcRecording()
        return self.recording

    def through_relay(self, spec: Rpc, answer: bytes) -> bytes:
        """``answer`` with every broker endpoint of a route or an assignment replaced by the relay's own
        address: a proxy names itself (its host, its gRPC port) in the routes it gives, and an SDK sends
        everything after QueryRoute to those endpoints, past a relay it was not told of."""
        if spec.name not in ROUTE_RPCS:
            return answer
        message = getattr(service_pb2, spec.response).FromString(answer)
        queues = ([a.message_queue for a in message.assignments] if spec.name == "QueryAssignment"
                  else list(message.message_queues))
        host, port = self.address.rsplit(":", 1)
        for queue in queues:
            del queue.broker.endpoints.addresses[:]
            queue.broker.endpoints.addresses.add(host=host, port=int(port))
        return bytes(message.SerializeToString())

    def upstream_callable(self, spec: Rpc) -> Callable[..., Any]:
        kind = {
            (False, False): self._channel.unary_unary,
            (False, True): self._channel.unary_stream,
            (True, False): self._channel.stream_unary,
            (True, True): self._channel.stream_stream,
        }
        return kind[(spec.client_streaming, spec.server_streaming)](spec.path)


def _metadata(context: grpc.ServicerContext) -> tuple[tuple[str, str], ...]:
    return tuple(
        (k, v)
        for k, v in context.invocation_metadata()
        if isinstance(v, str) and not k.startswith(_NOT_FORWARDED)
    )


class _Handler(grpc.GenericRpcHandler):
    def __init__(self, relay: GrpcRelay) -> None:
        self.relay = relay

    def service(self, handler_call_details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
        spec = _BY_PATH.get(handler_call_details.method)
        if spec is None:
            return None
        relay = self.relay

        def requests(
            source: Iterator[bytes],
            call: int,
            recording: GrpcRecording,
            metadata: tuple[tuple[str, str], ...],
        ) -> Iterator[bytes]:
            for data in source:
                recording.add(call, spec.name, True, data, metadata)
                yield data

        def forward(request: Any, context: grpc.ServicerContext) -> Any:
            recording, call, metadata = relay.recording, relay.recording.new_call(), _metadata(context)
            if spec.client_streaming:
                request = requests(request, call, recording, metadata)
            else:
                recording.add(call, spec.name, True, request, metadata)
            upstream = relay.upstream_callable(spec)
            remaining = context.time_remaining()
            # a call without a deadline reports a remaining time of centuries, which grpcio cannot pass on
            timeout = remaining if remaining is not None and remaining < NO_DEADLINE_S else None
            try:
                if not spec.server_streaming:
                    answer = relay.through_relay(spec, upstream(request, metadata=metadata, timeout=timeout))
                    recording.add(call, spec.name, False, answer, metadata)
                    return answer
                responses = upstream(request, metadata=metadata, timeout=timeout)
                context.add_callback(responses.cancel)
                return _answers(responses, recording, call, spec.name, metadata, context)
            except grpc.RpcError as exc:
                context.abort(exc.code(), exc.details() or "")
            return None

        def forward_stream(request: Any, context: grpc.ServicerContext) -> Iterator[bytes]:
            answers = forward(request, context)
            yield from answers if answers is not None else ()

        handler = {
            (False, False): grpc.unary_unary_rpc_method_handler,
            (True, False): grpc.stream_unary_rpc_method_handler,
        }
        if not spec.server_streaming:
            return handler[(spec.client_streaming, False)](forward)
        streaming = (
            grpc.stream_stream_rpc_method_handler
            if spec.client_streaming
            else grpc.unary_stream_rpc_method_handler
        )
        return streaming(forward_stream)


def _answers(
    responses: Iterator[bytes],
    recording: GrpcRecording,
    call: int,
    name: str,
    metadata: tuple[tuple[str, str], ...],
    context: grpc.ServicerContext,
) -> Iterator[bytes]:
    try:
        for data in responses:
            recording.add(call, name, False, data, metadata)
            yield data
    except grpc.RpcError as exc:
        if exc.code() is not grpc.StatusCode.CANCELLED:
            context.abort(exc.code(), exc.details() or "")
