"""An asyncio remoting client: requests out, responses matched back by opaque.

The broker needs it to register with name servers; tests and embedding code use it to talk to the
reference broker. Requests the server pushes (NOTIFY_CONSUMER_IDS_CHANGED, CHECK_TRANSACTION_STATE) are
queued in ``pushed`` rather than dropped, so a caller can observe them.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Mapping

from codec.command import RemotingCommand
from reference_broker.stream import FramedStream
from reference_broker.tasks import cancel_and_wait
from spec.frame import SerializeType
from spec.version import CURRENT_VERSION

DEFAULT_TIMEOUT = 6.0
"""Seconds to wait for a response (Java's ``registerBrokerTimeoutMills`` is 6000)."""

MAX_PUSHED = 1024
"""Server-pushed requests kept unread; older ones are dropped so a silent caller cannot grow memory."""

CLIENT_VERSION = int(CURRENT_VERSION)
"""Version this client announces: 4.9.8, so servers pick their 4.9.8-client behaviour."""

_opaques = itertools.count()


def next_opaque() -> int:
    """A process-wide request id, as Java's ``RemotingCommand.requestId``."""
    return next(_opaques) & 0x7FFFFFFF


class RemotingClient:
    def __init__(self, stream: FramedStream, serialize_type: SerializeType = SerializeType.JSON) -> None:
        self._stream = stream
        self.serialize_type = serialize_type
        self._pending: dict[int, asyncio.Future[RemotingCommand]] = {}
        self.pushed: asyncio.Queue[RemotingCommand] = asyncio.Queue(MAX_PUSHED)
        self._reader = asyncio.ensure_future(self._read())

    @classmethod
    async def connect(cls, addr: str, serialize_type: SerializeType = SerializeType.JSON,
                      timeout: float = DEFAULT_TIMEOUT) -> RemotingClient:
        host, _, port = addr.rpartition(":")
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, int(port)), timeout)
        return cls(FramedStream(reader, writer), serialize_type)

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

    async def _read(self) -> None:
        try:
            async for command in self._stream.commands():
                if command.is_response:
                    future = self._pending.get(command.opaque)
                    if future is not None and not future.done():
                        future.set_result(command)
                else:
                    if self.pushed.full():
                        self.pushed.get_nowait()
                    self.pushed.put_nowait(command)
        finally:
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(ConnectionError("connection closed before the response"))

    async def close(self) -> None:
        self._stream.close()
        await cancel_and_wait([self._reader])
