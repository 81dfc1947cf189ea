"""A blocking, bounded TCP connection to a target: raw bytes out, events in, every wait with a deadline.

The fuzzers need to see exactly what a target does with bytes that may not be frames at all (answer,
close, or nothing), so this talks through the sans-IO ``FrameDecoder`` over a plain socket instead of a
client that would hide a close or a malformed answer. Only loopback targets are accepted: the live
fuzzer sends frames that change a broker's state and must never be pointed at a shared deployment.
"""

from __future__ import annotations

import ipaddress
import itertools
import socket
import time
from dataclasses import dataclass, field

from rocketmq_spec.codec.command import RemotingCommand, encode
from rocketmq_spec.codec.framing import FrameDecoder, FrameReceived, FrameRejected
from rocketmq_spec.spec.errors import SpecViolation

CONNECT_TIMEOUT = 3.0
"""Seconds to wait for a loopback connect: a target that cannot accept in that time is not answering."""

RECV_CHUNK = 64 * 1024

_opaques = itertools.count(1 << 20)


def next_opaque() -> int:
    """Request ids of their own range, so they are told apart from the seed frames' small opaques."""
    return next(_opaques) & 0x7FFFFFFF


def parse_loopback(addr: str) -> tuple[str, int]:
    """``HOST:PORT`` of a loopback target; anything else is refused."""
    host, sep, port = addr.rpartition(":")
    if not sep or not port.isdigit():
        raise SpecViolation("target address is not HOST:PORT", expected="HOST:PORT", seen=addr)
    resolved = socket.gethostbyname(host.strip("[]"))
    if not ipaddress.ip_address(resolved).is_loopback:
        raise SpecViolation("target is not on loopback", expected="a 127.0.0.0/8 or ::1 address",
                            seen=f"{host} ({resolved})")
    return resolved, int(port)


@dataclass
class Observed:
    """What a target did on one connection while we listened."""

    responses: list[RemotingCommand] = field(default_factory=list)
    closed: bool = False
    """The target closed (or reset) the connection."""
    rejected: str | None = None
    """The target's own bytes broke the framing rules (a finding in itself)."""
    received_bytes: int = 0
    closed_at: float | None = None
    """Monotonic time at which the close was seen."""


class WireConnection:
    def __init__(self, addr: str) -> None:
        self._sock = socket.create_connection(parse_loopback(addr), timeout=CONNECT_TIMEOUT)
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._decoder = FrameDecoder()
        self.observed = Observed()

    def send(self, data: bytes, timeout: float) -> bool:
        """Send everything; False when the target closed the connection or stopped reading in time."""
        if self.observed.closed:
            return False
        self._sock.settimeout(timeout)
        try:
            self._sock.sendall(data)
        except TimeoutError:
            return False
        except OSError:
            self.observed.closed = True
            self.observed.closed_at = time.monotonic()
            return False
        return True

    def listen(self, seconds: float, *, until_response: int | None = None) -> Observed:
        """Collect responses until the target closes, ``seconds`` pass, or the awaited opaque arrives."""
        deadline = time.monotonic() + seconds
        while not self.observed.closed and self.observed.rejected is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            self._sock.settimeout(remaining)
            try:
                chunk = self._sock.recv(RECV_CHUNK)
            except TimeoutError:
                break
            except OSError:
                chunk = b""
            if not chunk:
                self.observed.closed = True
                self.observed.closed_at = time.monotonic()
                break
            self._absorb(chunk)
            if any(r.opaque == until_response for r in self.observed.responses):
                break
        return self.observed

    def _absorb(self, chunk: bytes) -> None:
        self.observed.received_bytes += len(chunk)
        for event in self._decoder.receive_data(chunk):
            if isinstance(event, FrameRejected):
                self.observed.rejected = str(event.error)
            elif isinstance(event, FrameReceived) and event.command.is_response:
                self.observed.responses.append(event.command)

    def request(self, cmd: RemotingCommand, timeout: float) -> RemotingCommand | None:
        """Send one request and wait for the response with its opaque; None on close or timeout."""
        if not self.send(encode(cmd), timeout):
            return None
        self.listen(timeout, until_response=cmd.opaque)
        matches = [r for r in self.observed.responses if r.opaque == cmd.opaque]
        for match in matches:
            self.observed.responses.remove(match)
        return matches[0] if matches else None

    def close(self) -> None:
        self._sock.close()

    def __enter__(self) -> WireConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

