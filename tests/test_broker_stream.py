"""Connections of the reference servers: idle close, undecodable input, overload answers, back-pressure."""

from __future__ import annotations

import asyncio

import pytest

from rocketmq_spec.codec.command import RemotingCommand, encode
from rocketmq_spec.reference_broker import server as server_module
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.server import OVERLOAD_REMARK, DispatchTable, RemotingServer, Request
from rocketmq_spec.reference_broker.stream import FramedConnection
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from tests.broker_support import run

BOUND = 5.0
"""Seconds any single wait of these tests may take before the test fails instead of hanging."""


async def _listen(protocol: FramedConnection) -> tuple[asyncio.Server, int]:
    server = await asyncio.get_running_loop().create_server(lambda: protocol, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


def test_idle_connection_is_closed() -> None:
    async def scenario() -> bytes:
        received: list[RemotingCommand] = []
        server, port = await _listen(FramedConnection(received.append, idle_timeout=0.2))
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            async with asyncio.timeout(BOUND):
                return await reader.read()
        finally:
            writer.close()
            server.close()

    assert run(scenario()) == b""


def test_commands_before_garbage_are_delivered_then_the_connection_closes() -> None:
    async def scenario() -> tuple[list[int], bytes]:
        received: list[RemotingCommand] = []
        protocol = FramedConnection(received.append)
        server, port = await _listen(protocol)
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            request = RemotingCommand.request(RequestCode.HEART_BEAT, opaque=7)
            writer.write(encode(request) + b"\x00\x00\x00\x08\xff\xff\xff\xff\x00\x00\x00\x00")
            async with asyncio.timeout(BOUND):
                rest = await reader.read()
                await protocol.ended.wait()
            return [command.opaque for command in received], rest
        finally:
            writer.close()
            server.close()

    assert run(scenario()) == ([7], b"")


def test_requests_beyond_the_pending_bound_get_system_busy(monkeypatch: pytest.MonkeyPatch) -> None:
    """With one request parked, the next is answered SYSTEM_BUSY; once it ends, requests run again."""
    monkeypatch.setattr(server_module, "MAX_PENDING_REQUESTS_PER_CONNECTION", 1)

    async def scenario() -> tuple[int, str | None, int]:
        release = asyncio.Event()

        async def parked(request: Request) -> RemotingCommand:
            if request.command.opaque == 1:
                await release.wait()
            return request.reply()

        server = RemotingServer("test", DispatchTable({RequestCode.HEART_BEAT: parked}))
        port = await server.start("127.0.0.1", 0)
        client = await RemotingClient.connect(f"127.0.0.1:{port}")
        try:
            first = asyncio.ensure_future(client.invoke(RemotingCommand.request(RequestCode.HEART_BEAT,
                                                                                opaque=1), BOUND))
            await asyncio.sleep(0.1)
            busy = await client.invoke(RemotingCommand.request(RequestCode.HEART_BEAT, opaque=2), BOUND)
            release.set()
            await first
            after = await client.invoke(RemotingCommand.request(RequestCode.HEART_BEAT, opaque=3), BOUND)
            return busy.code, busy.remark, after.code
        finally:
            await client.close()
            await server.stop()

    assert run(scenario()) == (ResponseCode.SYSTEM_BUSY, OVERLOAD_REMARK, ResponseCode.SUCCESS)


def test_a_peer_that_does_not_read_stops_being_read() -> None:
    """Responses pile up in the transport only to its high-water mark: then reading pauses, so a peer
    that floods requests without taking answers cannot grow the server's memory without bound."""

    async def scenario() -> bool:
        served = asyncio.Event()

        async def large(request: Request) -> RemotingCommand:
            served.set()
            return request.reply(body=b"x" * 65536)

        server = RemotingServer("test", DispatchTable({RequestCode.HEART_BEAT: large}))
        port = await server.start("127.0.0.1", 0)
        _reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            frame = encode(RemotingCommand.request(RequestCode.HEART_BEAT, opaque=1))
            writer.write(frame * 256)
            async with asyncio.timeout(BOUND):
                await served.wait()
                while not any(connection.paused for connection in server.connections):
                    await asyncio.sleep(0.01)
            return True
        finally:
            writer.close()
            await server.stop()

    assert run(scenario())
