"""One gRPC port for TLS and plain text, as Apache's proxy serves it in permissive mode (RMQ-TLS-GRPC-PORT).

grpcio serves a port either in plain text or over TLS, never both, and has no hook to look at a
connection's first bytes. So in permissive mode the public port is this front: it reads the first byte of
each connection, connects to one of two loopback listeners of the same grpc server (plain text, or TLS
with grpcio's own credentials) and then copies bytes both ways. TLS stays grpcio's end to end; the front
never decrypts anything. Enforcing and disabled modes need no front: grpcio binds the public port itself,
over TLS or in plain text.

grpc sees the front's loopback address as every caller's; :meth:`GrpcFront.peer` gives back the address
the caller really connected from, by the local port of the front's connection to grpc, so the clients a
consumer group lists and the address an ACL checks are the caller's.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import cast

from rocketmq_spec.reference_broker.config import SOCKET_BACKLOG
from rocketmq_spec.spec.tls import HANDSHAKE_RECORD_TYPE

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 5.0
"""Seconds the front waits for its own loopback connection to grpc."""


def _addr(sockname: object) -> str:
    if isinstance(sockname, tuple) and len(sockname) >= 2:
        return f"{sockname[0]}:{sockname[1]}"
    return ""


class _Half(asyncio.Protocol):
    """One side of a spliced connection: what it reads goes to the other side; each side's back-pressure
    pauses the other's reading, so a slow reader never makes the front buffer without bound."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.other: _Half | None = None
        self.waiting: list[bytes] = []
        """Bytes read before the other side exists (the caller's first bytes)."""
        self.lost = asyncio.Event()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        other = self.other
        if other is None or other.transport is None:
            self.waiting.append(data)
        else:
            other.transport.write(data)

    def eof_received(self) -> bool:
        other = self.other.transport if self.other is not None else None
        if other is not None and other.can_write_eof():
            other.write_eof()
            return True
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost.set()
        if self.other is not None and self.other.transport is not None:
            self.other.transport.close()

    def pause_writing(self) -> None:
        if self.other is not None and self.other.transport is not None:
            self.other.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.other is not None and self.other.transport is not None:
            self.other.transport.resume_reading()

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


class _Caller(_Half):
    """The accepted side: its first byte picks the listener to splice it to."""

    def __init__(self, front: GrpcFront) -> None:
        super().__init__()
        self._front = front
        self._task: asyncio.Task[None] | None = None

    def data_received(self, data: bytes) -> None:
        if self._task is None:
            self._task = asyncio.ensure_future(self._front.splice(self, data[0] == HANDSHAKE_RECORD_TYPE))
            self._front.tasks.add(self._task)
            self._task.add_done_callback(self._front.tasks.discard)
        super().data_received(data)

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if self._task is None:  # gone before its first byte: never spliced
            self._front.forget(self)


class GrpcFront:
    """The public gRPC port of permissive mode, in front of grpc's ``plain_port`` and ``tls_port``."""

    def __init__(self, plain_port: int, tls_port: int) -> None:
        self.plain_port, self.tls_port = plain_port, tls_port
        self.port = 0
        self.tasks: set[asyncio.Task[None]] = set()
        self._server: asyncio.Server | None = None
        self._callers: set[_Caller] = set()
        self._peers: dict[str, str] = {}
        """The front's local ``host:port`` towards grpc -> the caller's ``host:port``."""

    async def start(self, host: str, port: int) -> int:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(self._accepted, host, port, backlog=SOCKET_BACKLOG)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    def _accepted(self) -> _Caller:
        caller = _Caller(self)
        self._callers.add(caller)
        return caller

    async def splice(self, caller: _Caller, tls: bool) -> None:
        """Connect ``caller`` to grpc's TLS or plain listener and copy both ways until either side ends."""
        loop = asyncio.get_running_loop()
        upstream = _Half()
        try:
            async with asyncio.timeout(CONNECT_TIMEOUT_S):
                await loop.create_connection(lambda: upstream, "127.0.0.1",
                                             self.tls_port if tls else self.plain_port)
        except (OSError, TimeoutError) as exc:
            log.warning("gRPC front: cannot reach grpc for a caller: %s", exc)
            caller.close()
            self._callers.discard(caller)
            return
        assert upstream.transport is not None and caller.transport is not None
        local = _addr(upstream.transport.get_extra_info("sockname"))
        self._peers[local] = _addr(caller.transport.get_extra_info("peername"))
        caller.other, upstream.other = upstream, caller
        for half, to in ((caller, upstream.transport), (upstream, caller.transport)):
            for data in half.waiting:  # what each side read before the other was linked
                to.write(data)
            half.waiting.clear()
        if caller.lost.is_set():
            upstream.close()
        try:
            await upstream.lost.wait()
            caller.close()
            await caller.lost.wait()
        finally:
            self._peers.pop(local, None)
            self._callers.discard(caller)

    def forget(self, caller: _Caller) -> None:
        self._callers.discard(caller)

    def peer(self, seen: str) -> str:
        """The caller's ``host:port`` for the address grpc saw (the front's own), unchanged otherwise."""
        return self._peers.get(seen, seen)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for caller in list(self._callers):
            caller.close()
        for task in list(self.tasks):
            task.cancel()
        if self.tasks:
            await asyncio.gather(*self.tasks, return_exceptions=True)
        if self._server is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._server.wait_closed(), 5)
            self._server = None
