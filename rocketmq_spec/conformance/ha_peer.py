"""The suite's side of an HA connection: a slave of a target master, or the master of a target slave.

Blocking sockets with deadlines (cases are synchronous), and the codec's sans-IO decoders for what the
target sends, so the suite reads the stream with exactly the rules the spec states. Each peer records
what it saw, which a case puts in its observations when a check fails.
"""

from __future__ import annotations

import contextlib
import socket
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from filelock import FileLock, Timeout

from rocketmq_spec.codec.ha import (
    BlockDecoder,
    BlockReceived,
    OffsetReported,
    ReportDecoder,
    StreamRejected,
    encode_block,
    encode_report,
)
from rocketmq_spec.codec.ha_autoswitch import (
    MasterHandshakeReceived,
    MasterStreamDecoder,
    TransferReceived,
    encode_slave_handshake,
    encode_slave_report,
)
from rocketmq_spec.conformance.verdict import SuiteError
from rocketmq_spec.conformance.wire import Endpoint

READ_SIZE = 64 * 1024


_Event = OffsetReported | BlockReceived | MasterHandshakeReceived | TransferReceived


class PeerClosed(Exception):
    """The target closed the HA connection."""


@dataclass
class _Socket:
    sock: socket.socket
    decoder: ReportDecoder | BlockDecoder | MasterStreamDecoder
    closed: bool = False
    log: list[str] = field(default_factory=list)
    pending: list[_Event] = field(default_factory=list)

    def _next_event(self, timeout: float) -> _Event | None:
        """The next unit the target sent, decoded by the codec; None if none comes in time."""
        deadline = time.monotonic() + timeout
        while not self.pending:
            data = self._recv(deadline)
            if data is None:
                return None
            for event in self.decoder.receive_data(data):
                if isinstance(event, StreamRejected):
                    raise event.error
                self.log.append(repr(event)[:80])
                self.pending.append(event)
        return self.pending.pop(0)

    def _recv(self, deadline: float) -> bytes | None:
        """Bytes before the deadline; None on timeout; raises PeerClosed at end of stream."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        self.sock.settimeout(remaining)
        try:
            data = self.sock.recv(READ_SIZE)
        except TimeoutError:
            return None
        except OSError as exc:
            self.closed = True
            raise PeerClosed(str(exc)) from exc
        if not data:
            self.closed = True
            raise PeerClosed("end of stream")
        return data

    def wait_closed(self, timeout: float) -> bool:
        """Whether the target closes the connection within ``timeout`` (what it sends is dropped)."""
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                self._recv(deadline)
        except PeerClosed:
            return True
        return False

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()


class SlavePeer(_Socket):
    """The suite as a slave: it reports offsets and decodes the master's blocks."""

    def __init__(self, master: Endpoint, timeout: float = 5.0) -> None:
        super().__init__(socket.create_connection((master.host, master.port), timeout), BlockDecoder(None))

    def report(self, offset: int) -> None:
        self.log.append(f"report {offset}")
        self.sock.sendall(encode_report(offset))

    def block(self, timeout: float) -> BlockReceived | None:
        """The next transfer block (heartbeats included), None if none comes in time."""
        event = self._next_event(timeout)
        assert event is None or isinstance(event, BlockReceived)
        return event

    @property
    def expected_offset(self) -> int | None:
        """Where the master's next block must start."""
        assert isinstance(self.decoder, BlockDecoder)
        return self.decoder.expected_offset


class AutoSwitchSlavePeer(_Socket):
    """The suite as a slave of a master in controller mode: handshake first, then reports (12-byte units)
    and the master's epoch-tagged blocks, decoded by ``codec.ha_autoswitch``."""

    def __init__(self, master: Endpoint, timeout: float = 5.0) -> None:
        super().__init__(socket.create_connection((master.host, master.port), timeout), MasterStreamDecoder())

    def handshake(self, broker_id: int) -> None:
        self.log.append(f"handshake as {broker_id}")
        self.sock.sendall(encode_slave_handshake(broker_id))

    def report(self, offset: int) -> None:
        self.log.append(f"report {offset}")
        self.sock.sendall(encode_slave_report(offset))

    def send_raw(self, data: bytes) -> None:
        self.log.append(f"raw {data.hex()}")
        self.sock.sendall(data)

    def answer(self, timeout: float) -> MasterHandshakeReceived | None:
        event = self._next_event(timeout)
        assert event is None or isinstance(event, MasterHandshakeReceived), "the decoder refuses other units"
        return event

    def block(self, timeout: float) -> TransferReceived | None:
        event = self._next_event(timeout)
        assert event is None or isinstance(event, TransferReceived), "the decoder refuses other units"
        return event


class MasterPeer(_Socket):
    """The suite as a master: it reads the slave's reports and sends blocks of its choosing."""

    def __init__(self, sock: socket.socket) -> None:
        super().__init__(sock, ReportDecoder())

    def next_report(self, timeout: float) -> int | None:
        event = self._next_event(timeout)
        assert event is None or isinstance(event, OffsetReported)
        return None if event is None else event.offset

    def report_reaching(self, offset: int, timeout: float) -> int | None:
        """The first report at or past ``offset``, None if none comes in time."""
        deadline = time.monotonic() + timeout
        while (report := self.next_report(deadline - time.monotonic())) is not None:
            if report >= offset:
                return report
        return None

    def send_block(self, offset: int, data: bytes) -> None:
        self.log.append(f"block {offset} +{len(data)}")
        self.sock.sendall(encode_block(offset, data))


class FeedListener:
    """Where a target slave connects, its haMasterAddress pointing here, for the length of one case.

    The slave's configuration fixes the address, so the cases playing its master take turns, whichever
    process runs them: a listener is bound only while its holder has the lock named after the address.
    """

    def __init__(self, feed: Endpoint, turn_wait: float) -> None:
        lock = Path(tempfile.gettempdir()) / f"rmq-conformance-feed-{feed.host}-{feed.port}.lock"
        self._turn = FileLock(lock)
        try:
            self._turn.acquire(timeout=turn_wait)
        except Timeout:
            raise SuiteError(f"another case held the HA feed {feed} for over {turn_wait:.0f} s") from None
        try:
            self.sock = socket.create_server((feed.host, feed.port), reuse_port=False)
        except OSError as exc:
            self._turn.release()
            raise SuiteError(f"cannot listen at the HA feed {feed}: {exc}") from exc

    def accept(self, timeout: float) -> MasterPeer | None:
        self.sock.settimeout(timeout)
        try:
            conn, _ = self.sock.accept()
        except TimeoutError:
            return None
        return MasterPeer(conn)

    def close(self) -> None:
        try:
            self.sock.close()
        finally:
            self._turn.release()
