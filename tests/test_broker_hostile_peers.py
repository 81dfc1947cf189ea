"""What a hostile or careless peer can do to the reference servers over the wire, and must not achieve.

Each case is a defect found by driving the broker from outside: a string it cannot echo back, a burst of
connects beyond the listen backlog, a half-sent frame whose buffer outlives its connection.
"""

from __future__ import annotations

import asyncio
import gc
import select
import socket
import struct
import tracemalloc
import weakref

import pytest

from rocketmq_spec.codec.command import RemotingCommand, decode
from rocketmq_spec.codec.fast import pack_words
from rocketmq_spec.reference_broker.config import NamesrvConfig
from rocketmq_spec.reference_broker.embedded import EmbeddedRocketMQ
from rocketmq_spec.reference_broker.namesrv.server import NameServer
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.frame import SerializeType
from tests.broker_support import host_port, run

LONE_SURROGATE = "\\udc80"
"""A JSON escape of an unpaired surrogate: valid JSON text, no valid UTF-8 of its own."""


def _raw_json_request(code: int, opaque: int, ext_fields_json: str) -> bytes:
    """A request frame whose JSON header is written by hand, escapes kept as the peer wrote them."""
    header = (f'{{"code":{code},"extFields":{ext_fields_json},"flag":0,"language":"JAVA",'
              f'"opaque":{opaque},"serializeTypeCurrentRPC":"JSON","version":435}}').encode()
    return pack_words(4 + len(header), SerializeType.JSON, len(header)) + header


async def _exchange(addr: str, frame: bytes) -> RemotingCommand:
    host, port = host_port(addr)
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(frame)
        (length,) = struct.unpack(">i", await asyncio.wait_for(reader.readexactly(4), 5))
        return decode(struct.pack(">i", length) + await reader.readexactly(length))
    finally:
        writer.close()


def test_a_lone_surrogate_in_a_topic_is_answered_as_java_writes_it() -> None:
    """Java writes the string and its UTF-8 encoder turns the surrogate into "?"; the request used to stay
    unanswered because encoding the response raised."""
    async def scenario() -> None:
        async with EmbeddedRocketMQ() as mq:
            route = await _exchange(mq.namesrv_addr, _raw_json_request(
                RequestCode.GET_ROUTEINFO_BY_TOPIC, 41, f'{{"topic":"{LONE_SURROGATE}"}}'))
            assert (route.opaque, route.code) == (41, ResponseCode.TOPIC_NOT_EXIST)
            assert "topic: ?" in (route.remark or "")
            pull_fields = (f'{{"consumerGroup":"g","topic":"T{LONE_SURROGATE}","queueId":"0",'
                           '"queueOffset":"0","maxMsgNums":"1","sysFlag":"0","commitOffset":"0",'
                           '"suspendTimeoutMillis":"0","subVersion":"0"}')
            pull = _raw_json_request(RequestCode.PULL_MESSAGE, 42, pull_fields)
            pulled = await _exchange(mq.broker_addr, pull)
            assert pulled.opaque == 42 and pulled.code == ResponseCode.TOPIC_NOT_EXIST
            assert "T?" in (pulled.remark or "")

    run(scenario())


BURST = 300
"""Connects made at once while nothing accepts: more than asyncio's default backlog of 100."""


def _completed_connects(port: int, count: int, wait: float) -> int:
    """Non-blocking connects to ``port``; how many the kernel completed within ``wait`` seconds."""
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket()
            sock.setblocking(False)
            sock.connect_ex(("127.0.0.1", port))
            sockets.append(sock)
        _, writable, _ = select.select([], sockets, [], wait)
        deadline_pass = [s for s in writable if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0]
        return len(deadline_pass)
    finally:
        for sock in sockets:
            sock.close()


@pytest.mark.parametrize("backlog", [None, 64])
def test_the_listen_backlog_is_the_configured_setting(backlog: int | None) -> None:
    """The event loop is held while connecting, so nothing is accepted: only the kernel's accept queue,
    whose length is the listen backlog, completes handshakes. Java's default is 1024."""
    config = NamesrvConfig(listen_port=0) if backlog is None else NamesrvConfig(listen_port=0,
                                                                                 server_socket_backlog=backlog)

    async def scenario() -> int:
        namesrv = NameServer(config)
        await namesrv.start()
        try:
            return _completed_connects(namesrv.server.port, BURST, 0.5)  # blocks the loop on purpose
        finally:
            await namesrv.stop()

    completed = run(scenario())
    if backlog is None:
        assert completed == BURST
    else:
        # Linux queues backlog + 1 connections
        assert backlog <= completed <= backlog + 1


PARTIAL_BYTES = 8 * 1024 * 1024
"""Half of a 16 MiB frame the peer announces and never finishes."""


def test_a_closed_connection_releases_its_partial_frame_without_the_cycle_collector() -> None:
    """With the cycle collector off, the 8 MiB a peer left in a half-sent frame must be freed as soon as
    its connection ends; it used to stay until ``gc.collect()``, each connection being in a cycle with
    its receive callback and idle watchdog."""
    async def scenario() -> tuple[int, int, bool]:
        namesrv = NameServer(NamesrvConfig(listen_port=0))
        await namesrv.start()
        try:
            host, port = host_port(namesrv.addr)
            _, writer = await asyncio.open_connection(host, port)
            while not namesrv.server.connections:
                await asyncio.sleep(0.01)
            (connection,) = namesrv.server.connections
            alive = weakref.ref(connection)
            del connection
            before = tracemalloc.get_traced_memory()[0]
            announced = 2 * PARTIAL_BYTES - 4  # a length word the limit (16 MiB frames) allows
            writer.write(pack_words(announced, SerializeType.JSON, 100) + bytes(PARTIAL_BYTES - 8))
            await writer.drain()
            while (held := tracemalloc.get_traced_memory()[0] - before) < PARTIAL_BYTES // 2:
                await asyncio.sleep(0.01)
            writer.close()
            while namesrv.server.connections:
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.05)  # the transport's own close callbacks
            return held, tracemalloc.get_traced_memory()[0] - before, alive() is None
        finally:
            await namesrv.stop()

    gc.disable()
    tracemalloc.start()
    try:
        held, left, released = run(scenario())
    finally:
        tracemalloc.stop()
        gc.enable()
    assert held >= PARTIAL_BYTES // 2
    assert left < PARTIAL_BYTES // 8, f"{left} bytes still held after the connection closed"
    assert released, "the closed connection is still alive (reference cycle)"


class _GoneTransport(asyncio.Transport):
    """What uvloop hands a server for a peer that reset the connection right after connecting: asked for
    its address, the socket has none any more."""

    def get_extra_info(self, name: str, default: object = None) -> object:
        return None

    def is_closing(self) -> bool:
        return True


def test_a_request_of_a_connection_gone_before_its_address_was_known_is_dropped(
        caplog: pytest.LogCaptureFixture) -> None:
    """A batch send read from such a connection used to reach the send handler, which failed parsing the
    born host out of the address "None" (an untyped ValueError in the broker's log)."""
    from rocketmq_spec.codec.command import encode
    from rocketmq_spec.reference_broker.client_requests import send_fields
    from rocketmq_spec.reference_broker.server import Connection, DispatchTable, RemotingServer

    handled: list[object] = []

    async def handler(request: object) -> None:
        handled.append(request)

    async def scenario() -> None:
        server = RemotingServer("broker", DispatchTable({RequestCode.SEND_BATCH_MESSAGE: handler}))
        connection = Connection(server)
        connection.connection_made(_GoneTransport())
        batch = RemotingCommand.request(RequestCode.SEND_BATCH_MESSAGE, send_fields("T", {}, batch=True),
                                        b"", opaque=1)
        connection.data_received(encode(batch))
        await asyncio.sleep(0)
        assert connection.peer == "" and connection.pending == 0

    with caplog.at_level("DEBUG", logger="rocketmq_spec.reference_broker.server"):
        run(scenario())
    assert handled == []
    assert "dropping request 320 of a connection gone before it was known" in caplog.text
