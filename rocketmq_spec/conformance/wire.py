"""A small blocking client for the remoting protocol, recording every byte in the case's exchange.

The suite needs things a production client hides: raw bytes on the socket, frames split at chosen
points, watching for the peer to close, and waiting for a response that must *not* come. So it is a thin
layer over ``rocketmq_spec.codec.framing`` with explicit, bounded timeouts on every wait.
"""

from __future__ import annotations

import itertools
import socket
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rocketmq_spec.codec.command import RemotingCommand, encode
from rocketmq_spec.codec.framing import FrameDecoder, FrameRejected
from rocketmq_spec.conformance.recorder import Direction, Exchange
from rocketmq_spec.conformance.tls import ClientTls
from rocketmq_spec.spec.language import LanguageCode

CONNECT_TIMEOUT = 3.0
"""Seconds to open a TCP connection: loopback targets answer in microseconds, a dead one never."""

RESPONSE_TIMEOUT = 30.0
"""Seconds to wait for an ordinary response before calling it none. Targets answer core requests in
milliseconds, but a loaded machine (a JVM collecting garbage, a 2-core box running other work) has been
seen to take over 5 s, and a verdict must not depend on that: the suite judges what a target answers, not
how fast. A conforming target never makes a run wait this long; only one that stays silent does."""

SILENCE_WAIT = 1.5
"""Seconds of silence taken as "no response": how long a case waits for a response that must not come."""

CLOSE_WAIT = 3.0
"""Seconds to wait for the peer to close a connection after a malformed frame."""

READ_CHUNK = 65536

SUITE_VERSION = 409
"""MQVersion ordinal the suite announces (V4_9_8): new enough for every 4.9.x behaviour it checks."""


class WireError(Exception):
    """The target did not behave as a network peer should (silence, reset): a reason to probe liveness."""


class NoResponse(WireError):
    pass


class ConnectionLost(WireError):
    pass


@dataclass(frozen=True)
class Endpoint:
    host: str
    port: int

    @classmethod
    def parse(cls, text: str) -> Endpoint:
        host, sep, port = text.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise ValueError(f"expected HOST:PORT, got {text!r}")
        return cls(host.strip("[]"), int(port))

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


class Connection:
    def __init__(self, endpoint: Endpoint, exchange: Exchange, tls: ClientTls | None = None) -> None:
        """``tls``: connect over TLS (the exchange records the plain text it carries)."""
        self.endpoint = endpoint
        self._exchange = exchange
        self.number = exchange.new_connection()
        self._decoder = FrameDecoder()
        self._ready: deque[RemotingCommand] = deque()
        self._opaques = itertools.count(1)
        self.peer_closed = False
        self.hook: Callable[[RemotingCommand], object] | None = None
        """Applied to every request just before it is written, like a Java client's RPCHook (signing)."""
        self.raw = bytearray()  # every byte received, decoded or not
        try:
            self._sock = socket.create_connection((endpoint.host, endpoint.port), timeout=CONNECT_TIMEOUT)
        except OSError as exc:
            exchange.event(self.number, f"connect to {endpoint} failed: {exc}")
            raise ConnectionLost(f"cannot connect to {endpoint}: {exc}") from exc
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if tls is not None:
            try:
                self._sock = tls.wrap(self._sock, endpoint.host)
            except OSError as exc:  # ssl.SSLError included
                self._sock.close()
                exchange.event(self.number, f"TLS handshake with {endpoint} failed: {exc}")
                raise ConnectionLost(f"TLS handshake with {endpoint} failed: {exc}") from exc
        exchange.event(self.number, f"connected to {endpoint}" + (" over TLS" if tls else ""))

    @property
    def local_address(self) -> tuple[str, int]:
        """Where the connection leaves from: what the target records as this client's address."""
        host, port = self._sock.getsockname()[:2]
        return host, port

    # -- sending ---------------------------------------------------------------------------------------

    def send_bytes(self, data: bytes) -> None:
        self._exchange.bytes(self.number, Direction.SENT, data)
        try:
            self._sock.sendall(data)
        except OSError as exc:
            self._exchange.event(self.number, f"send failed: {exc}")
            raise ConnectionLost(f"send to {self.endpoint} failed: {exc}") from exc

    def command(self, code: int, ext_fields: dict[str, str] | None = None, body: bytes | None = None,
                **fields: Any) -> RemotingCommand:
        """A request with a fresh opaque and the suite's language and version unless given."""
        fields.setdefault("language", LanguageCode.JAVA.name)
        fields.setdefault("version", SUITE_VERSION)
        fields.setdefault("opaque", next(self._opaques))
        return RemotingCommand.request(code, ext_fields, body, **fields)

    def send(self, cmd: RemotingCommand) -> None:
        if self.hook is not None and not cmd.is_response:
            self.hook(cmd)
        self.send_bytes(encode(cmd))

    def call(self, code: int, ext_fields: dict[str, str] | None = None, body: bytes | None = None,
             *, timeout: float = RESPONSE_TIMEOUT, **fields: Any) -> RemotingCommand:
        return self.exchange(self.command(code, ext_fields, body, **fields), timeout=timeout)

    def exchange(self, cmd: RemotingCommand, *, timeout: float = RESPONSE_TIMEOUT) -> RemotingCommand:
        """Send a request and wait for the response with its opaque; other frames are kept for later."""
        self.send(cmd)
        response = self.response_to(cmd.opaque, timeout)
        if response is None:
            raise NoResponse(f"no response to code {cmd.code} (opaque {cmd.opaque}) within {timeout} s")
        return response

    # -- receiving -------------------------------------------------------------------------------------

    def response_to(self, opaque: int, timeout: float) -> RemotingCommand | None:
        deadline = time.monotonic() + timeout
        while True:
            for cmd in self._ready:
                if cmd.is_response and cmd.opaque == opaque:
                    self._ready.remove(cmd)
                    return cmd
            if not self._read(deadline):
                return None

    def next_command(self, timeout: float) -> RemotingCommand | None:
        """The next frame the peer sends, or None after ``timeout`` seconds of silence."""
        deadline = time.monotonic() + timeout
        while not self._ready:
            if not self._read(deadline):
                return None
        return self._ready.popleft()

    def drain(self) -> list[RemotingCommand]:
        """Frames received but not yet consumed by a case."""
        frames = list(self._ready)
        self._ready.clear()
        return frames

    def wait_closed(self, timeout: float = CLOSE_WAIT, *, decode: bool = True) -> bool:
        """Whether the peer closes the connection within ``timeout``; frames it sends meanwhile are kept.

        With ``decode`` false what the peer sends is only logged (and kept in ``raw``): a server that
        speaks TLS or HTTP back must not be judged by the frame decoder.
        """
        deadline = time.monotonic() + timeout
        try:
            while self._read(deadline, decode=decode):
                pass
        except ConnectionLost:
            return True
        return self.peer_closed

    def _read(self, deadline: float, *, decode: bool = True) -> bool:
        """Read one chunk into the decoder; False on timeout. Raises ConnectionLost on close or reset."""
        if self.peer_closed:
            raise ConnectionLost(f"{self.endpoint} closed the connection")
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        self._sock.settimeout(remaining)
        try:
            data = self._sock.recv(READ_CHUNK)
        except TimeoutError:
            return False
        except OSError as exc:
            data = b""
            self._exchange.event(self.number, f"reset: {exc}")
        if not data:
            self.peer_closed = True
            self._exchange.event(self.number, "closed by peer")
            raise ConnectionLost(f"{self.endpoint} closed the connection")
        self._exchange.bytes(self.number, Direction.RECEIVED, data)
        self.raw += data
        if decode:
            for event in self._decoder.receive_data(data):
                if isinstance(event, FrameRejected):
                    raise event.error
                self._ready.append(event.command)
        return True

    def close(self) -> None:
        self._sock.close()

    def log_to(self, exchange: Exchange, number: int) -> None:
        """Record from now on in ``exchange``, as its connection ``number``."""
        self._exchange, self.number = exchange, number


class Wire:
    """The connections of one case; closed together when the case ends."""

    def __init__(self, exchange: Exchange, tls: ClientTls | None = None) -> None:
        self.exchange = exchange
        self.connections: list[Connection] = []
        self.tls = tls
        """How the run reaches its target (``--tls``): every connection of the case over TLS, or none."""

    def connect(self, endpoint: Endpoint, *, tls: ClientTls | bool | None = True) -> Connection:
        """A connection to ``endpoint``: over TLS when the run is (``tls=False``: plain text whatever the
        run; a ClientTls: over TLS with it, for the cases that judge TLS itself)."""
        chosen = tls if isinstance(tls, ClientTls) else (self.tls if tls else None)
        connection = Connection(endpoint, self.exchange, chosen)
        self.connections.append(connection)
        return connection

    def adopt(self, earlier: Wire) -> None:
        """Take over the connections and log of a wire opened before this case, so they are reported,
        judged and closed with it."""
        numbers = self.exchange.take_over(earlier.exchange)
        for connection in earlier.connections:
            connection.log_to(self.exchange, numbers[connection.number])
        self.connections += earlier.connections
        earlier.connections = []

    @property
    def endpoints(self) -> set[Endpoint]:
        return {c.endpoint for c in self.connections}

    def close(self) -> None:
        for connection in self.connections:
            connection.close()
