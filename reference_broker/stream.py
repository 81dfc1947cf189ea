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


class FramedStream:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._write_lock = asyncio.Lock()
        self.peer = _addr(writer.get_extra_info("peername"))
        self.local = _addr(writer.get_extra_info("sockname"))
        self.closed = asyncio.Event()

    async def commands(self, idle_timeout: float | None = None) -> AsyncIterator[RemotingCommand]:
        """Every command the peer sends, until it closes, goes idle too long or sends garbage."""
        decoder = FrameDecoder()
        try:
            while not self.closed.is_set():
                async with asyncio.timeout(idle_timeout):
                    data = await self._reader.read(READ_CHUNK)
                if not data:
                    return
                for event in decoder.receive_data(data):
                    if isinstance(event, FrameRejected):
                        log.warning("closing %s: undecodable input: %s", self.peer, event.error)
                        return
                    yield event.command
        except TimeoutError:
            log.info("closing %s: idle for %s s", self.peer, idle_timeout)
        except (ConnectionError, asyncio.IncompleteReadError) as exc:
            log.debug("connection %s lost: %s", self.peer, exc)
        finally:
            self.close()

    async def send(self, command: RemotingCommand) -> bool:
        """Write one command; False when the connection is already gone (the peer left, nothing to do)."""
        if self.closed.is_set():
            return False
        data = encode(command)
        async with self._write_lock:
            try:
                self._writer.write(data)
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
