"""The HAProxy PROXY protocol preamble a 5.x server port accepts before the first frame (5.1.4+).

A 5.x server looks at the first 12 bytes of every connection before decoding frames (Netty's
``HAProxyMessageDecoder.detectProtocol``): a version 1 text line (``PROXY TCP4 <src> <dst> <sport>
<dport>\\r\\n``) or a version 2 binary header names the client behind a proxy, and is taken off before the
frames; anything else is the first frame. Until 12 bytes have arrived nothing is decoded, so a malformed
frame shorter than that is only noticed once more bytes come. A 4.x server has no such stage: a preamble
is a malformed frame to it.
"""

from __future__ import annotations

from rocketmq_spec.spec.clauses import Level, clause

_SERVER = "remoting/src/main/java/org/apache/rocketmq/remoting/netty/NettyRemotingServer.java"

DETECTION_BYTES = 12
"""Bytes ``detectProtocol`` needs before it decides (the length of the version 2 signature)."""
V1_PREFIX = b"PROXY "
V1_MAX_LENGTH = 107
"""The longest version 1 line, CRLF included."""
V2_SIGNATURE = b"\r\n\r\n\x00\r\nQUIT\n"
V2_FIXED_LENGTH = 16
"""Signature, version/command byte, family/protocol byte and the 2-byte length of the addresses."""

PROXY_DETECTION = clause(
    "RMQ-FRAME-PROXY-DETECTION", Level.MUST,
    "A 5.1.4+ server decodes no frame before a connection's first 12 bytes have arrived: a malformed frame "
    "shorter than that leaves the connection open until more bytes come (a 4.x server closes it at once).",
    source=_SERVER + " (HandshakeHandler)")
PROXY_PREAMBLE = clause(
    "RMQ-FRAME-PROXY-PREAMBLE", Level.MUST,
    "A 5.1.4+ server takes a PROXY protocol version 1 line or version 2 header off the start of a connection "
    "and serves the frames after it; a 4.x server treats it as a malformed frame and closes the connection.",
    source=_SERVER + " (HandshakeHandler, HAProxyMessageHandler)")
