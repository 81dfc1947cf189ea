"""An asyncio remoting client: requests out, responses matched back by opaque.

The broker needs it to register with name servers; tests and embedding code use it to talk to the
reference broker. Requests the server pushes (NOTIFY_CONSUMER_IDS_CHANGED, CHECK_TRANSACTION_STATE) are
queued in ``pushed`` rather than dropped, so a caller can observe them.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Mapping

from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.reference_broker.stream import FramedConnection
from rocketmq_spec.reference_broker.tls import client_context
from rocketmq_spec.spec.frame import SerializeType
from rocketmq_spec.spec.version import CURRENT_VERSION

DEFAULT_TIMEOUT = 6.0
"""Seconds to wait for a response (Java's ``registerBrokerTimeoutMills`` is 6000)."""

CLOSE_TIMEOUT = 5.0
"""Seconds ``close`` waits for the connection to end (the peer taking our last bytes)."""

MAX_PUSHED = 1024
"""Server-pushed requests kept unread; older ones are dropped so a silent caller cannot grow memory."""

CLIENT_VERSION = int(CURRENT_VERSION)
"""Version this client announces: 4.9.8, so servers pick their 4.9.8-client behaviour."""

_opaques = itertools.count()


def next_opaque() -> int:
    """A process-wide request id, as Java's ``RemotingCommand.requestId``."""
    return next(_opaques) & 0x7FFFFFFF


class RemotingClient:
    def __init__(self, serialize_type: SerializeType = SerializeType.JSON) -> None:
        """Unconnected; :meth:`connect` makes connected ones."""
        self._stream = FramedConnection(self._received, self._lost)
        self.serialize_type = serialize_type
        self._pending: dict[int, asyncio.Future[RemotingCommand]] = {}
        self.pushed: asyncio.Queue[RemotingCommand] = asyncio.Queue(MAX_PUSHED)

    @classmethod
    async def connect(cls, addr: str, serialize_type: SerializeType = SerializeType.JSON,
                      timeout: float = DEFAULT_TIMEOUT, *, tls: bool = False) -> RemotingClient:
        """``tls``: over TLS, trusting any server certificate, as Java's remoting client with
        ``tls.enable`` (or in enforcing mode) does unless told to check it."""
        host, _, port = addr.rpartition(":")
        client = cls(serialize_type)
        loop = asyncio.get_running_loop()
        async with asyncio.timeout(timeout):
            if tls:
                await loop.create_connection(lambda: client._stream, host, int(port), ssl=client_context(),
                                             server_hostname="")
            else:
                await loop.create_connection(lambda: client._stream, host, int(port))
        return client

    @property
    def closed(self) -> bool:
        return self._stream.closed.is_set()

    def request(self, code: int, ext_fields: Mapping[str, str] | None = None, body: bytes | None = None,
                *, oneway: bool = False) -> RemotingCommand:
        return RemotingCommand.request(code, ext_fields, body, opaque=next_opaque(), oneway=oneway,
                                       version=CLIENT_VERSION, serialize_type=self.serialize_type)

    async def invoke(self, command: RemotingCommand, timeout: float = DEFAULT_TIMEOUT) -> RemotingCommand:
        """Send a request and wait for its response; TimeoutError or ConnectionError otherwise."""
        future: asyncio.Future[RemotingCommand] = asyncio.get_running_loop().create_future()
        self._pending[command.opaque] = future
        try:
            if not await self._stream.send(command):
                raise ConnectionError(f"connection to {self._stream.peer} is closed")
            async with asyncio.timeout(timeout):
                return await future
        finally:
            self._pending.pop(command.opaque, None)

    async def send(self, command: RemotingCommand) -> None:
        """Send without waiting for anything (oneway requests, or raw frames in tests)."""
        if not await self._stream.send(command):
            raise ConnectionError(f"connection to {self._stream.peer} is closed")

    def _received(self, command: RemotingCommand) -> None:
        if command.is_response:
            future = self._pending.get(command.opaque)
            if future is not None and not future.done():
                future.set_result(command)
        else:
            if self.pushed.full():
                self.pushed.get_nowait()
            self.pushed.put_nowait(command)

    def _lost(self) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionError("connection closed before the response"))

    async def close(self) -> None:
        """Close and wait (bounded) until the connection has ended."""
        self._stream.close()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(CLOSE_TIMEOUT):
                await self._stream.ended.wait()
