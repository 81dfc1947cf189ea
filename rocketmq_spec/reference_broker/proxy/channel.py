"""A gRPC client as the broker sees it: a channel without a socket (``GrpcClientChannel``).

The broker's managers key producer and consumer registrations by channel and reach a client back through
it (a transaction check-back). For a gRPC client the proxy hands the handlers one of these: responses the
broker writes to it later (a parked request answered when a message arrives) complete the call waiting
for them, and requests the broker sends to it are turned into Telemetry commands by ``on_request`` and
written to the client's Telemetry stream, if it has one open.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from typing import Any

from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.grpc.v2 import service_pb2 as rpc
from rocketmq_spec.reference_broker.proxy.relay import relay_answer
from rocketmq_spec.reference_broker.server import Channel

log = logging.getLogger(__name__)

TELEMETRY_BACKLOG = 1024
"""Commands queued for a client's Telemetry stream before further ones are dropped (a client that does
not read its stream must not make the broker hold its check-backs without bound)."""

RequestTranslator = Callable[["GrpcClientChannel", RemotingCommand], rpc.TelemetryCommand | None]
RelayTranslator = Callable[[RemotingCommand, str], rpc.TelemetryCommand | None]
"""A request the broker relays to the client (running info, direct consumption) and a nonce: the
Telemetry command to send, or None to send nothing."""


class GrpcClientChannel(Channel):
    def __init__(self, client_id: str, peer: str, on_request: RequestTranslator,
                 on_relay: RelayTranslator | None = None) -> None:
        self.client_id = client_id
        self.peer = peer
        self.closed = asyncio.Event()
        self._on_request = on_request
        self._on_relay = on_relay
        self._relays: dict[str, asyncio.Future[rpc.TelemetryCommand]] = {}
        self._awaiting: dict[int, asyncio.Future[RemotingCommand]] = {}
        self._telemetry: asyncio.Queue[rpc.TelemetryCommand | None] | None = None

    def expect(self, opaque: int) -> asyncio.Future[RemotingCommand]:
        """A future for the response the broker will write for request ``opaque``."""
        future: asyncio.Future[RemotingCommand] = asyncio.get_running_loop().create_future()
        self._awaiting[opaque] = future
        return future

    def forget(self, opaque: int) -> None:
        self._awaiting.pop(opaque, None)

    def attach(self, stream: asyncio.Queue[rpc.TelemetryCommand | None]) -> None:
        """Route the broker's requests to this Telemetry stream (the newest stream of the client wins)."""
        self._telemetry = stream

    def detach(self, stream: asyncio.Queue[rpc.TelemetryCommand | None]) -> None:
        if self._telemetry is stream:
            self._telemetry = None

    def push(self, command: rpc.TelemetryCommand) -> bool:
        """Write a command to the client's Telemetry stream; False when it has none open or is not
        reading it."""
        stream = self._telemetry
        if stream is None or self.closed.is_set() or stream.qsize() >= TELEMETRY_BACKLOG:
            return False
        stream.put_nowait(command)
        return True

    def write(self, command: RemotingCommand) -> bool:
        if command.is_response:
            future = self._awaiting.pop(command.opaque, None)
            if future is None or future.done():
                return False
            future.set_result(command)
            return True
        translated = self._on_request(self, command)
        if translated is None:
            log.debug("no Telemetry command for request %d to gRPC client %s", command.code, self.client_id)
            return False
        return self.push(translated)

    async def send(self, command: RemotingCommand) -> bool:
        return self.write(command)

    async def invoke(self, command: RemotingCommand, timeout: float) -> RemotingCommand:
        """A relayed request (``GrpcClientChannel.writeAndFlush``): sent on Telemetry with a nonce, the
        client's answer as the broker's response. When nothing can be sent the call waits out its time,
        as the broker's invokeSync does against Apache's proxy."""
        nonce = uuid.uuid4().hex
        future: asyncio.Future[rpc.TelemetryCommand] = asyncio.get_running_loop().create_future()
        self._relays[nonce] = future
        try:
            if self.closed.is_set():
                raise ConnectionError("the gRPC client is gone")
            translated = None if self._on_relay is None else self._on_relay(command, nonce)
            if translated is None or not self.push(translated):
                log.debug("request %d not relayed to gRPC client %s", command.code, self.client_id)
            answer = await asyncio.wait_for(future, timeout)
        except ValueError as exc:
            raise ConnectionError(str(exc)) from None
        finally:
            self._relays.pop(nonce, None)
        return relay_answer(command, answer)

    def relayed(self, nonce: str, answer: rpc.TelemetryCommand) -> bool:
        """The client's answer to a relayed request (``getAndRemoveResponseFuture``); False when no
        request waits for this nonce."""
        future = self._relays.pop(nonce, None)
        if future is None or future.done():
            return False
        future.set_result(answer)
        return True

    def close(self) -> None:
        self.closed.set()
        if self._telemetry is not None:
            self._telemetry.put_nowait(None)
            self._telemetry = None
        futures: list[asyncio.Future[Any]] = [*self._awaiting.values(), *self._relays.values()]
        for future in futures:
            if not future.done():
                future.set_exception(ConnectionError("the gRPC client is gone"))
                future.exception()  # nobody may be waiting any more: the failure is not worth a warning
        self._awaiting.clear()
        self._relays.clear()

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other


class ChannelRegistry:
    """One channel per client id (``GrpcChannelManager``): every RPC of a client, and its Telemetry
    stream, reach the broker through the same channel."""

    def __init__(self, on_request: RequestTranslator, on_relay: RelayTranslator | None = None) -> None:
        self._on_request = on_request
        self._on_relay = on_relay
        self._channels: dict[str, GrpcClientChannel] = {}

    def channel(self, client_id: str, peer: str) -> GrpcClientChannel:
        channel = self._channels.get(client_id)
        if channel is None or channel.closed.is_set():
            channel = self._channels[client_id] = GrpcClientChannel(client_id, peer, self._on_request,
                                                                    self._on_relay)
        return channel

    def find(self, client_id: str) -> GrpcClientChannel | None:
        return self._channels.get(client_id)

    def remove(self, client_id: str) -> GrpcClientChannel | None:
        channel = self._channels.pop(client_id, None)
        if channel is not None:
            channel.close()
        return channel

    def close_all(self) -> None:
        for client_id in list(self._channels):
            self.remove(client_id)
