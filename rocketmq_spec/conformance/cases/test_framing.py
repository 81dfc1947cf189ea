"""Framing: how a server delimits frames, and what it does with frames it cannot accept.

Every violation is sent on its own connection; the server must close that connection without answering
and keep serving others (Java's NettyDecoder closes the channel on any decode exception). Each row runs
against the name server and the broker alike.
"""

from __future__ import annotations

import contextlib
import ssl
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass

from rocketmq_spec.codec.command import RemotingCommand, encode
from rocketmq_spec.conformance.case import Row, case, table
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.target import Server
from rocketmq_spec.conformance.verdict import Unsupported
from rocketmq_spec.conformance.wire import RESPONSE_TIMEOUT, Connection, Wire
from rocketmq_spec.spec.binary_header import FIXED_PART_SIZE
from rocketmq_spec.spec.frame import LENGTH_FIELD_SIZE, MAX_LENGTH_VALUE, TYPE_WORD_SIZE, SerializeType
from rocketmq_spec.spec.proxy_protocol import DETECTION_BYTES, V2_SIGNATURE
from rocketmq_spec.spec.release_rules import Rule, holds
from rocketmq_spec.spec.tls import TlsMode

from .support import expect_closed_and_serving, expect_success

LARGE_FRAME_TIMEOUT = 30.0
"""Seconds for a 16 MiB request to be read and answered: the transfer alone takes a while on a slow host."""

SPLIT_PAUSE = 0.002
"""Seconds between the parts of a split frame, so that they reach the server as separate reads."""

_REMARK_LENGTH_AT = 13
_EXT_LENGTH_AT = 17
"""Positions of the remark length and (with no remark) extFields length in the ROCKETMQ fixed part."""


def _words(length: int, serialize_type: int, header_length: int) -> bytes:
    return struct.pack(">iI", length, (serialize_type << 24) | header_length)


def _ping_frame(server: Server, connection: Connection, serialize_type: SerializeType = SerializeType.JSON
                ) -> RemotingCommand:
    return server.ping_command(connection, serialize_type=serialize_type)


def _with_header(frame: bytes, patch: Callable[[bytearray], None]) -> bytes:
    """A ROCKETMQ frame with its header bytes patched in place (lengths unchanged)."""
    data = bytearray(frame)
    header = data[LENGTH_FIELD_SIZE + TYPE_WORD_SIZE:]
    patch(header)
    data[LENGTH_FIELD_SIZE + TYPE_WORD_SIZE:] = header
    return bytes(data)


def _put_int(at: int, value: int) -> Callable[[bytearray], None]:
    def patch(header: bytearray) -> None:
        header[at:at + 4] = struct.pack(">i", value)
    return patch

DETECTION_WAIT = 2.0
"""Seconds a short malformed frame is given to close the connection: a 4.x server closes at once."""


def _tls_client_hello() -> bytes:
    """The first flight of a real TLS client, made by Python's ssl module without a socket."""
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ssl.create_default_context().wrap_bio(incoming, outgoing, server_hostname="localhost")
    with contextlib.suppress(ssl.SSLWantReadError):
        tls.do_handshake()
    return outgoing.read()


Violation = Callable[[Server, Connection], bytes]


@dataclass(frozen=True)
class Garbage:
    payload: Violation
    decode_reply: bool = True
    """False when the server may legitimately answer in another protocol (TLS)."""


def _typed_frame(serialize_type: int) -> Violation:
    """A frame whose serialize-type byte is ``serialize_type``, with a two-byte JSON header."""
    return lambda s, c: _words(TYPE_WORD_SIZE + 2, serialize_type, 2) + b"{}"


def _rocketmq_ping(server: Server, connection: Connection) -> bytes:
    return encode(_ping_frame(server, connection, SerializeType.ROCKETMQ))


def _rocketmq_ping_with_ext(server: Server, connection: Connection) -> bytes:
    """A ping whose only extFields entry is k=v, so the first map entry's layout is known."""
    cmd = _ping_frame(server, connection, SerializeType.ROCKETMQ)
    cmd.ext_fields = {"k": "v"}
    return encode(cmd)


VIOLATIONS = [
    Row("length-over-max", "RMQ-FRAME-MAX-LENGTH",
        "A length word one above 16777212 is refused: the connection is closed before the frame is read.",
        Garbage(lambda s, c: _words(MAX_LENGTH_VALUE + 1, SerializeType.JSON, 2) + b"{}")),
    Row("length-int-max", "RMQ-FRAME-MAX-LENGTH",
        "A length word of 2^31-1 is refused at once.",
        Garbage(lambda s, c: _words(2**31 - 1, SerializeType.JSON, 2) + b"{}")),
    Row("length-zero", "RMQ-FRAME-MIN-LENGTH", "A length word of 0 (no type word) closes the connection.",
        Garbage(lambda s, c: struct.pack(">i", 0))),
    Row("length-one", "RMQ-FRAME-MIN-LENGTH", "A length word of 1 with its one byte closes the connection.",
        Garbage(lambda s, c: struct.pack(">i", 1) + b"\x00")),
    Row("length-three", "RMQ-FRAME-MIN-LENGTH",
        "A length word of 3 with its three bytes closes the connection.",
        Garbage(lambda s, c: struct.pack(">i", 3) + b"\x00\x00\x00")),
    Row("length-minus-one", "RMQ-FRAME-MIN-LENGTH", "A length word of -1 closes the connection.",
        Garbage(lambda s, c: struct.pack(">i", -1) + b"\x00" * 8)),
    Row("length-int-min", "RMQ-FRAME-MIN-LENGTH", "A length word of -2^31 closes the connection.",
        Garbage(lambda s, c: struct.pack(">i", -(2**31)) + b"\x00" * 8)),
    Row("header-beyond-frame", "RMQ-FRAME-HEADER-BOUNDS",
        "A header length larger than the length word minus 4 closes the connection.",
        Garbage(lambda s, c: _words(TYPE_WORD_SIZE + 2, SerializeType.JSON, 3) + b"{}")),
    Row("header-length-max", "RMQ-FRAME-HEADER-BOUNDS",
        "A header length of 0xFFFFFF in a small frame closes the connection.",
        Garbage(lambda s, c: _words(TYPE_WORD_SIZE + 2, SerializeType.JSON, 0xFFFFFF) + b"{}")),
    *(Row(f"serialize-type-{t}", "RMQ-FRAME-SERIALIZE-TYPE",
          f"A frame with serialize type {t} (neither JSON nor ROCKETMQ) closes the connection.",
          Garbage(_typed_frame(t)))
      for t in (2, 0x7F, 0xFF)),
    Row("json-not-json", "RMQ-HDR-JSON-KEYS", "A JSON header that is not JSON closes the connection.",
        Garbage(lambda s, c: _words(TYPE_WORD_SIZE + 9, SerializeType.JSON, 9) + b"{not json")),
    Row("rocketmq-short-fixed-part", "RMQ-HDR-BIN-FIXED",
        "A ROCKETMQ header shorter than its 21-byte fixed part closes the connection.",
        Garbage(lambda s, c: _words(TYPE_WORD_SIZE + 10, SerializeType.ROCKETMQ, 10) + b"\x00" * 10)),
    Row("rocketmq-remark-beyond", "RMQ-HDR-BIN-LENGTH-BOUND",
        "A ROCKETMQ remark length beyond the header closes the connection.",
        Garbage(lambda s, c: _with_header(_rocketmq_ping(s, c), _put_int(_REMARK_LENGTH_AT, 1 << 20)))),
    Row("rocketmq-remark-negative", "RMQ-HDR-BIN-LENGTH-BOUND",
        "A negative ROCKETMQ remark length closes the connection.",
        Garbage(lambda s, c: _with_header(_rocketmq_ping(s, c), _put_int(_REMARK_LENGTH_AT, -5)))),
    Row("rocketmq-ext-beyond", "RMQ-HDR-BIN-LENGTH-BOUND",
        "A ROCKETMQ extFields length beyond the header closes the connection.",
        Garbage(lambda s, c: _with_header(_rocketmq_ping_with_ext(s, c), _put_int(_EXT_LENGTH_AT, 1 << 20)))),
    Row("rocketmq-value-beyond", "RMQ-HDR-BIN-LENGTH-BOUND",
        "A ROCKETMQ map value length beyond the header closes the connection.",
        Garbage(lambda s, c: _with_header(_rocketmq_ping_with_ext(s, c),
                                          _put_int(FIXED_PART_SIZE + 2 + 1, 1 << 20)))),
    Row("http-request", "RMQ-FRAME-MAX-LENGTH",
        "An HTTP request line ('GET ' reads as a length word far over the limit) closes the connection.",
        Garbage(lambda s, c: b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")),
    Row("http2-preface", "RMQ-FRAME-MAX-LENGTH",
        "The HTTP/2 connection preface closes the connection.",
        Garbage(lambda s, c: b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")),
]


@table("garbage", VIOLATIONS)
def test_violation_closes_connection(garbage: Garbage, server: Server, wire: Wire, check: Check) -> None:
    """Padded with zeros to 12 bytes: a 5.1.4+ server decodes nothing before (RMQ-FRAME-PROXY-DETECTION),
    and the bytes after a bad frame cannot matter to a server that closes on it."""
    connection = wire.connect(server.endpoint)
    connection.send_bytes(garbage.payload(server, connection).ljust(DETECTION_BYTES, b"\0"))
    expect_closed_and_serving(check, wire, server, connection, decode=garbage.decode_reply)


def _before_tls(wire: Wire, server: Server) -> Connection:
    """A plain-text connection, for what a server reads before any TLS (the PROXY preamble, the first bytes
    of a connection): UNSUPPORTED on a run against a target that refuses plain text."""
    if wire.tls is not None and wire.tls.mode is TlsMode.ENFORCING:
        raise Unsupported("the case is about the first bytes of a connection, and the target "
                          "(tls.server.mode=enforcing) serves no plain-text connection to show what it does")
    return wire.connect(server.endpoint, tls=False)


def _version(server: Server, wire: Wire) -> int:
    return server.ping(wire.connect(server.endpoint)).version


@case("RMQ-FRAME-PROXY-DETECTION", "A malformed frame of fewer than 12 bytes closes the connection at once "
      "on a 4.x server and only once 12 bytes have come on a 5.1.4+ server.")
def test_short_violation_waits_for_detection(server: Server, wire: Wire, check: Check) -> None:
    detecting = holds(Rule.PROXY_PROTOCOL, _version(server, wire))
    connection = _before_tls(wire, server)
    connection.send_bytes(struct.pack(">i", 0))
    closed = connection.wait_closed(DETECTION_WAIT)
    check.equal("closed before more bytes", not detecting, closed)
    if detecting and not closed:
        connection.send_bytes(bytes(DETECTION_BYTES))
        expect_closed_and_serving(check, wire, server, connection)


@table("preamble", [
    Row("v1", "RMQ-FRAME-PROXY-PREAMBLE", "A PROXY protocol v1 line before the first frame is taken off by a "
        "5.1.4+ server, which answers the frame; a 4.x server closes the connection.",
        b"PROXY TCP4 192.0.2.7 127.0.0.1 40000 9876\r\n"),
    Row("v2", "RMQ-FRAME-PROXY-PREAMBLE", "A PROXY protocol v2 header before the first frame is taken off by "
        "a 5.1.4+ server, which answers the frame; a 4.x server closes the connection.",
        V2_SIGNATURE + bytes([0x21, 0x11]) + (12).to_bytes(2, "big") + bytes([192, 0, 2, 7, 127, 0, 0, 1])
        + (40000).to_bytes(2, "big") + (9876).to_bytes(2, "big")),
])
def test_proxy_preamble(preamble: bytes, server: Server, wire: Wire, check: Check) -> None:
    accepted = holds(Rule.PROXY_PROTOCOL, _version(server, wire))
    connection = _before_tls(wire, server)
    ping = server.ping_command(connection)
    connection.send_bytes(preamble + encode(ping))
    if accepted:
        answer = connection.response_to(ping.opaque, RESPONSE_TIMEOUT)
        check.that("the frame after the preamble is answered", answer is not None, expected="an answer",
                   actual=answer)
        if answer is not None:
            expect_success(check, "ping after the preamble", answer)
    else:
        expect_closed_and_serving(check, wire, server, connection, decode=False)


@case("RMQ-FRAME-CLOSE-ON-ERROR",
      "A TLS ClientHello is either refused (connection closed) or answered with TLS records; the server "
      "keeps serving plain connections.",
      java_note="4.9.8 servers default to tls.server.mode=permissive and answer a first byte 0x16 with a TLS "
                "handshake (remoting/src/main/java/org/apache/rocketmq/remoting/netty/"
                "NettyRemotingServer.java, HandshakeHandler).")
def test_tls_client_hello(server: Server, wire: Wire, check: Check) -> None:
    connection = _before_tls(wire, server)  # the first bytes of a connection: not inside a TLS session
    connection.send_bytes(_tls_client_hello())
    closed = connection.wait_closed(decode=False)
    tls_reply = bytes(connection.raw[:1]) in (b"\x15", b"\x16")
    check.that("closed, or answered with a TLS record", closed or tls_reply, expected="closed or TLS",
               actual={"closed": closed, "first bytes": bytes(connection.raw[:5])})
    expect_success(check, "a fresh connection is still served", server.ping(wire.connect(server.endpoint)))


@case("RMQ-FRAME-MAX-LENGTH", "A frame whose length word is exactly 16777212 is accepted and answered.")
def test_largest_length_accepted(server: Server, wire: Wire, check: Check) -> None:
    connection = wire.connect(server.endpoint)
    cmd = _ping_frame(server, connection)
    header_only = encode(cmd)
    cmd.body = bytes(MAX_LENGTH_VALUE - (len(header_only) - LENGTH_FIELD_SIZE))
    frame = encode(cmd)
    check.equal("length word of the frame sent", MAX_LENGTH_VALUE, struct.unpack_from(">i", frame)[0])
    connection.send_bytes(frame)
    response = connection.response_to(cmd.opaque, LARGE_FRAME_TIMEOUT)
    check.that("answered", response is not None, expected="a response", actual=response)
    assert response is not None
    expect_success(check, "largest frame", response)


def _split_points(frame: bytes) -> list[list[bytes]]:
    """The frame cut once at every byte boundary."""
    return [[frame[:k], frame[k:]] for k in range(1, len(frame))]


def _dribble(frame: bytes) -> list[list[bytes]]:
    """The frame sent one byte per write."""
    return [[frame[k:k + 1] for k in range(len(frame))]]


SPLITS = [
    Row("every-split-point-json", "RMQ-FRAME-LENGTH",
        "A JSON request cut in two at any byte is reassembled and answered.",
        (_split_points, SerializeType.JSON)),
    Row("every-split-point-rocketmq", "RMQ-FRAME-LENGTH",
        "A ROCKETMQ request cut in two at any byte is reassembled and answered.",
        (_split_points, SerializeType.ROCKETMQ)),
    Row("byte-by-byte", "RMQ-FRAME-LENGTH", "A request sent one byte per write is reassembled and answered.",
        (_dribble, SerializeType.JSON)),
]


@table("split", SPLITS)
def test_split_frames(split: tuple[Callable[[bytes], list[list[bytes]]], SerializeType], server: Server,
                      wire: Wire, check: Check) -> None:
    cut, serialize_type = split
    connection = wire.connect(server.endpoint)
    # One request, re-sent after each answer: reusing its opaque is safe as only one is in flight.
    cmd = _ping_frame(server, connection, serialize_type)
    plans = cut(encode(cmd))
    for plan in plans:
        for part in plan:
            connection.send_bytes(part)
            time.sleep(SPLIT_PAUSE)
        response = connection.response_to(cmd.opaque, RESPONSE_TIMEOUT)
        what = f"answer to the frame cut after {len(plan[0])} bytes"
        check.that(what, response is not None, expected="a response", actual=response)
        assert response is not None
        expect_success(check, what, response)


COALESCED = [
    Row("three-in-one-write", "RMQ-FRAME-LENGTH",
        "Three requests written at once are all answered, each with its own opaque.", (3, 0)),
    Row("two-and-a-half", "RMQ-FRAME-LENGTH",
        "Two whole requests and the first half of a third in one write, the rest later: all three answered.",
        (3, 1)),
    Row("thirty-two-in-one-write", "RMQ-FRAME-LENGTH",
        "Thirty-two requests written at once are all answered.", (32, 0)),
]


@table("shape", COALESCED)
def test_coalesced_frames(shape: tuple[int, int], server: Server, wire: Wire, check: Check) -> None:
    count, split_last = shape
    connection = wire.connect(server.endpoint)
    commands = [_ping_frame(server, connection) for _ in range(count)]
    data = b"".join(encode(c) for c in commands)
    cut = len(data) - len(encode(commands[-1])) // 2 if split_last else len(data)
    connection.send_bytes(data[:cut])
    if cut < len(data):
        time.sleep(SPLIT_PAUSE)
        connection.send_bytes(data[cut:])
    answers = {c.opaque: connection.response_to(c.opaque, RESPONSE_TIMEOUT) for c in commands}
    missing = [opaque for opaque, response in answers.items() if response is None]
    check.equal("requests without an answer (by opaque)", [], missing)
