"""A sans-IO reader of the PROXY protocol preamble at the start of a connection
(``rocketmq_spec.spec.proxy_protocol``).

Fed the connection's first bytes, it answers when it has decided: the preamble's source address (or None
when there was no preamble) and the bytes that follow it, which are the first frame's; until then it
buffers. A preamble that starts right but is malformed is an error, as Netty's decoder raises one.
"""

from __future__ import annotations

from dataclasses import dataclass

from rocketmq_spec.spec.errors import SpecViolation
from rocketmq_spec.spec.proxy_protocol import (
    DETECTION_BYTES,
    PROXY_PREAMBLE,
    V1_MAX_LENGTH,
    V1_PREFIX,
    V2_FIXED_LENGTH,
    V2_SIGNATURE,
)


@dataclass(frozen=True)
class Detected:
    source: str | None
    """``host:port`` the preamble names as the client, None without a preamble (or for LOCAL/UNKNOWN)."""
    rest: bytes
    """What followed the preamble: the start of the frames."""


class PreambleReader:
    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, data: bytes) -> Detected | None:
        """The decision once enough bytes have come, else None. Raises SpecViolation on a broken preamble."""
        self._buffer += data
        buffer = self._buffer
        if len(buffer) < DETECTION_BYTES:
            return None
        if buffer.startswith(V2_SIGNATURE):
            return self._v2(buffer)
        if buffer.startswith(V1_PREFIX):
            return self._v1(buffer)
        return Detected(None, buffer)

    @staticmethod
    def _v1(buffer: bytes) -> Detected | None:
        end = buffer.find(b"\r\n")
        if end < 0:
            if len(buffer) >= V1_MAX_LENGTH:
                raise SpecViolation("PROXY v1 line too long", expected=f"<= {V1_MAX_LENGTH} bytes",
                                    seen=len(buffer), clause=PROXY_PREAMBLE.id)
            return None
        parts = buffer[:end].decode("ascii", "replace").split(" ")
        if len(parts) == 6 and parts[1] in ("TCP4", "TCP6"):
            return Detected(f"{parts[2]}:{parts[4]}", buffer[end + 2:])
        if len(parts) >= 2 and parts[1] == "UNKNOWN":
            return Detected(None, buffer[end + 2:])
        raise SpecViolation("malformed PROXY v1 line", expected="PROXY TCP4|TCP6 src dst sport dport",
                            seen=buffer[:end], clause=PROXY_PREAMBLE.id)

    @staticmethod
    def _v2(buffer: bytes) -> Detected | None:
        if len(buffer) < V2_FIXED_LENGTH:
            return None
        length = int.from_bytes(buffer[14:16], "big")
        end = V2_FIXED_LENGTH + length
        if len(buffer) < end:
            return None
        family, addresses = buffer[13] >> 4, buffer[V2_FIXED_LENGTH:end]
        source = None
        if family == 1 and len(addresses) >= 12:  # AF_INET: src, dst, sport, dport
            source = ".".join(str(b) for b in addresses[:4]) + f":{int.from_bytes(addresses[8:10], 'big')}"
        return Detected(source, buffer[end:])
