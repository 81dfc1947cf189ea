"""One TCP connection carrying RemotingCommands: the I/O edge around the codec's sans-IO frame decoder.

Both ends of the reference broker use it (accepted connections in ``server``, the broker's own outgoing
connections to name servers in ``client``), so reading, writing and closing are written once. A frame or
header that cannot be decoded ends the connection, as Java's NettyDecoder does; it never raises past
``commands()``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

from codec.command import RemotingCommand, encode
from codec.framing import FrameDecoder, FrameRejected

log = logging.getLogger(__name__)

READ_CHUNK = 64 * 1024
"""Bytes asked of the socket per read; the decoder bounds what one frame may make us buffer."""


def _addr(sockname: object) -> str:
    if isinstance(sockname, tuple) and len(sockname) >= 2:
        return f"{sockname[0]}:{sockname[1]}"
    return str(sockname)


class _IdleWatchdog:
    """Closes a stream that has read nothing for ``timeout`` seconds.

    One timer per connection that only moves when it fires: a read merely stamps the time, so the
    per-read cost of a timeout (a timer scheduled and cancelled for every chunk) is gone.
    """

    def __init__(self, stream: FramedStream, timeout: float) -> None:
        self._stream = stream
        self._timeout = timeout
        self._loop = asyncio.get_running_loop()
        self.last_read = self._loop.time()
        self._handle = self._loop.call_at(self.last_read + timeout, self._check)

    def _check(self) -> None:
        deadline = self.last_read + self._timeout
        if self._loop.time() < deadline:
            self._handle = self._loop.call_at(deadline, self._check)
            return
        log.info("closing %s: idle for %s s", self._stream.peer, self._timeout)
        self._stream.close()

    def cancel(self) -> None:
        self._handle.cancel()


class FramedStream:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._transport = writer.transport
        self.peer = _addr(writer.get_extra_info("peername"))
        self.local = _addr(writer.get_extra_info("sockname"))
        self.closed = asyncio.Event()

    async def commands(self, idle_timeout: float | None = None) -> AsyncIterator[RemotingCommand]:
        """Every command the peer sends, until it closes, goes idle too long or sends garbage."""
        decoder = FrameDecoder()
        watchdog = _IdleWatchdog(self, idle_timeout) if idle_timeout is not None else None
        try:
            while not self.closed.is_set():
                data = await self._reader.read(READ_CHUNK)
                if not data:
                    return
                if watchdog is not None:
                    watchdog.last_read = asyncio.get_running_loop().time()
                for event in decoder.receive_data(data):
                    if isinstance(event, FrameRejected):
                        log.warning("closing %s: undecodable input: %s", self.peer, event.error)
                        return
                    yield event.command
        except (ConnectionError, asyncio.IncompleteReadError) as exc:
            log.debug("connection %s lost: %s", self.peer, exc)
        finally:
            if watchdog is not None:
                watchdog.cancel()
            self.close()

    async def send(self, command: RemotingCommand) -> bool:
        """Write one command; False when the connection is already gone (the peer left, nothing to do).

        The transport keeps writes in order, so concurrent senders need no lock; only a write the
        socket did not take at once waits for the buffer to drain (back-pressure on a slow reader).
        """
        if self.closed.is_set() or self._transport.is_closing():
            return False
        try:
            self._writer.write(encode(command))
            if self._transport.get_write_buffer_size():
                await self._writer.drain()
        except (ConnectionError, RuntimeError) as exc:
            log.debug("write to %s failed: %s", self.peer, exc)
            self.close()
            return False
        return True

    def close(self) -> None:
        if not self.closed.is_set():
            self.closed.set()
            self._writer.close()
