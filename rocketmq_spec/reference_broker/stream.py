"""One TCP connection carrying RemotingCommands: the I/O edge around the codec's sans-IO frame decoder.

Both ends of the reference broker use ``FramedConnection`` (accepted connections in ``server``, outgoing
ones in ``client``): an asyncio protocol that decodes each chunk as the socket delivers it and hands
every command to a callback, so a request costs no reader task wake-up, no per-read future and no extra
turn of the event loop. ``FramedStream`` is the same over a caller's ``(reader, writer)`` pair, for code
that opened the socket itself. A frame or header that cannot be decoded ends the connection, as Java's
NettyDecoder does, after the commands decoded before it; it never raises.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Protocol, cast

from rocketmq_spec.codec.command import RemotingCommand, encode
from rocketmq_spec.codec.framing import FrameDecoder, FrameRejected
from rocketmq_spec.codec.proxy_protocol import PreambleReader
from rocketmq_spec.reference_broker.tls import Opening, TlsPolicy, TlsSession
from rocketmq_spec.spec.errors import SpecViolation

if TYPE_CHECKING:
    from rocketmq_spec.reference_broker.sender import AnswerSender

log = logging.getLogger(__name__)

READ_CHUNK = 64 * 1024
"""Bytes asked of the socket per read; the decoder bounds what one frame may make us buffer."""


def _addr(sockname: object) -> str:
    """``host:port`` of a socket address; "" when there is none (uvloop asks the socket only when asked,
    and a peer that reset the connection right after connecting has no address any more)."""
    if isinstance(sockname, tuple) and len(sockname) >= 2:
        return f"{sockname[0]}:{sockname[1]}"
    return ""


def _ignore(command: RemotingCommand) -> None:
    """What a connection does with a command once it has ended: nothing."""


class _Closable(Protocol):
    peer: str

    def close(self) -> None: ...


def _decoded(decoder: FrameDecoder, data: bytes, connection: _Closable) -> tuple[list[RemotingCommand], bool]:
    """The commands ``data`` completes, and False when the input was undecodable (the caller closes)."""
    commands: list[RemotingCommand] = []
    for event in decoder.receive_data(data):
        if isinstance(event, FrameRejected):
            log.warning("closing %s: undecodable input: %s", connection.peer, event.error)
            return commands, False
        commands.append(event.command)
    return commands, True


class _IdleWatchdog:
    """Closes a connection that has read nothing for ``timeout`` seconds.

    One timer per connection that only moves when it fires: a read merely stamps the time, so the
    per-read cost of a timeout (a timer scheduled and cancelled for every chunk) is gone.
    """

    def __init__(self, connection: _Closable, timeout: float) -> None:
        self._connection = connection
        self._timeout = timeout
        self._loop = asyncio.get_running_loop()
        self.last_read = self._loop.time()
        self._handle = self._loop.call_at(self.last_read + timeout, self._check)

    def stamp(self) -> None:
        self.last_read = self._loop.time()

    def _check(self) -> None:
        deadline = self.last_read + self._timeout
        if self._loop.time() < deadline:
            self._handle = self._loop.call_at(deadline, self._check)
            return
        log.info("closing %s: idle for %s s", self._connection.peer, self._timeout)
        self._connection.close()

    def cancel(self) -> None:
        self._handle.cancel()


class FramedConnection(asyncio.Protocol):
    """A connection that pushes each decoded command to ``on_command`` and reports its end to ``on_lost``.

    Writes go straight to the transport, which keeps them in order; when the peer stops reading and the
    transport's buffer passes its high-water mark, senders wait and reading pauses too, so a peer that
    does not take its answers cannot make us hold unbounded requests or responses.
    """

    def __init__(self, on_command: Callable[[RemotingCommand], object],
                 on_lost: Callable[[], object] | None = None, idle_timeout: float | None = None,
                 claim: Callable[[bytes], bool] | None = None, preamble: bool = False,
                 tls: TlsPolicy | None = None, sender: AnswerSender | None = None) -> None:
        """``claim``: a frame the send lane takes whole, before any decoding
        (``rocketmq_spec.reference_broker.lanes``). ``preamble``: read a PROXY protocol preamble first, as
        5.1.4+ server ports do (RMQ-FRAME-PROXY-PREAMBLE); its source address becomes ``peer``. ``tls``:
        the first byte after it decides between TLS and plain text, or closes (RMQ-TLS-SNIFF). ``sender``:
        the thread that writes this connection's frames while its transport holds nothing
        (``rocketmq_spec.reference_broker.sender``); not once the connection turns out to be TLS, whose
        records the transport's side encrypts."""
        self._preamble = PreambleReader() if preamble else None
        self._tls_policy = tls
        self._tls: TlsSession | None = None
        self._on_command = on_command
        self._on_lost = on_lost
        self._idle_timeout = idle_timeout
        self._watchdog: _IdleWatchdog | None = None
        self._decoder = FrameDecoder(claim)
        self._transport: asyncio.Transport | None = None
        self._writable = asyncio.Event()
        self._writable.set()
        self.closed = asyncio.Event()
        self.ended = asyncio.Event()
        """Set once the transport is gone and ``on_lost`` has run (``closed`` is set as soon as we close)."""
        self.peer = self.local = ""
        self._sender = sender
        self._sender_fd: int | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)
        self.peer = _addr(transport.get_extra_info("peername"))
        self.local = _addr(transport.get_extra_info("sockname"))
        sock = transport.get_extra_info("socket")
        if self._sender is not None and sock is not None:
            self._sender_fd = self._sender.attach(sock, self._write_leftover)
        if self._idle_timeout is not None:
            self._watchdog = _IdleWatchdog(self, self._idle_timeout)

    def data_received(self, data: bytes) -> None:
        if self.closed.is_set():
            return
        if self._watchdog is not None:
            self._watchdog.stamp()
        if self._preamble is not None:
            rest = self._after_preamble(self._preamble, data)
            if rest is None:
                return
            data = rest
        if self._tls_policy is not None or self._tls is not None:
            plain = self._through_tls(data)
            if not plain:
                return
            data = plain
        commands, decodable = _decoded(self._decoder, data, self)
        for command in commands:
            self._on_command(command)
        if not decodable:
            self.close()

    def _through_tls(self, data: bytes) -> bytes:
        """The plain text of ``data``: itself on a plain-text connection, what it decrypts to on a TLS one
        (whose handshake answers are written here). The first byte decides which, or closes the
        connection as the TLS mode says (RMQ-TLS-PERMISSIVE, RMQ-TLS-ENFORCING, RMQ-TLS-DISABLED)."""
        if data and self._tls_policy is not None:
            policy, self._tls_policy = self._tls_policy, None
            opening = policy.decide(data[0])
            if opening is Opening.CLOSE:
                log.info("closing %s: its first byte 0x%02x is refused in TLS mode %s", self.peer, data[0],
                         policy.mode.value)
                self.close()
                return b""
            if opening is Opening.TLS:
                self._tls = policy.session()
        if self._tls is None:
            return data
        try:
            plain, answer = self._tls.receive(data)
        except ssl.SSLError as exc:
            log.info("closing %s: TLS failed: %s", self.peer, exc)
            self.abort()
            return b""
        if answer and self._transport is not None:
            self._transport.write(answer)
        if self._tls.closed_by_peer:
            self.close()
        return plain

    def _after_preamble(self, reader: PreambleReader, data: bytes) -> bytes | None:
        """The bytes after the preamble once it is decided, None while undecided (or broken: closed)."""
        try:
            detected = reader.feed(data)
        except SpecViolation as exc:
            log.warning("closing %s: %s", self.peer, exc)
            self.close()
            return None
        if detected is None:
            return None
        self._preamble = None
        if detected.source is not None:
            self.peer = detected.source
        return detected.rest

    def connection_lost(self, exc: Exception | None) -> None:
        if exc is not None:
            log.debug("connection %s lost: %s", self.peer, exc)
        self._mark_closed()
        self._detach_sender()
        on_lost, self._on_command, self._on_lost = self._on_lost, _ignore, None
        # The callbacks usually close over this connection (the server's over itself and us, a
        # client's over the client holding us): dropping them breaks the cycle, so the connection and
        # whatever it still holds go as soon as the last outside reference does, not at the next
        # run of the cycle collector.
        if on_lost is not None:
            on_lost()
        self.ended.set()

    @property
    def paused(self) -> bool:
        """True while the peer is not taking our writes; reading from it is paused meanwhile."""
        return not self._writable.is_set()

    def pause_writing(self) -> None:
        self._writable.clear()
        if self._transport is not None:
            self._transport.pause_reading()

    def resume_writing(self) -> None:
        self._writable.set()
        if self._transport is not None and not self._transport.is_closing():
            self._transport.resume_reading()

    def write(self, command: RemotingCommand) -> bool:
        """Write one command without waiting; False when the connection is already gone. Reading pauses
        while the peer is not taking our writes, so callers that cannot wait still add only boundedly."""
        return self.write_frame(encode(command))

    def write_frame(self, frame: bytes) -> bool:
        """``write`` of a command already encoded."""
        transport = self._transport
        if transport is None or self.closed.is_set() or transport.is_closing():
            return False
        fd = self._sender_fd
        if fd is not None and self._sender is not None and self._tls is None:
            if not transport.get_write_buffer_size():
                self._sender.submit(fd, frame)
                return True
            self._write_leftover(self._sender.drain(fd))
        transport.write(self._tls.send(frame) if self._tls is not None else frame)
        return True

    def _write_leftover(self, rest: bytes) -> None:
        """What the sender's socket write did not take goes through the transport, which then holds the
        connection's writes, in order, until its buffer is empty again."""
        if rest and self._transport is not None and not self._transport.is_closing():
            self._transport.write(rest)

    def _detach_sender(self, flush: bool = False) -> None:
        """Stop writing through the sender: its last leftover written first when ``flush``."""
        fd, self._sender_fd = self._sender_fd, None
        if fd is not None and self._sender is not None:
            rest = self._sender.detach(fd)
            if flush:
                self._write_leftover(rest)

    async def send(self, command: RemotingCommand) -> bool:
        """Write one command, then wait while the peer is not taking our writes; False when the
        connection is already gone (the peer left, nothing to do)."""
        if not self.write(command):
            return False
        if not self._writable.is_set():
            await self._writable.wait()
        return not self.closed.is_set()

    def close(self) -> None:
        self._detach_sender(flush=True)
        if self._transport is not None:
            self._transport.close()
        else:
            self.ended.set()  # never connected: there is nothing to wait for
        self._mark_closed()

    def abort(self) -> None:
        """Close without flushing what the peer has not read."""
        self._detach_sender()
        if self._transport is not None:
            self._transport.abort()
        self._mark_closed()

    def _mark_closed(self) -> None:
        if not self.closed.is_set():
            self.closed.set()
            self._writable.set()
            # nothing is read after a close: the partial frame buffered so far (up to the frame limit)
            # is dropped now, and so is the watchdog, which refers back to us
            self._decoder = FrameDecoder()
            if self._watchdog is not None:
                self._watchdog.cancel()
                self._watchdog = None


class FramedStream:
    """The same over an already opened ``(reader, writer)`` pair, read by iterating ``commands()``."""

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
                    watchdog.stamp()
                commands, decodable = _decoded(decoder, data, self)
                for command in commands:
                    yield command
                if not decodable:
                    return
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
