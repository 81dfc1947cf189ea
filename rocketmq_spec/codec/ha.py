"""Sans-IO decoders for the two directions of the HA stream, and the encoders of its two units.

Like :mod:`rocketmq_spec.codec.framing`, the caller owns the socket and feeds whatever chunks it reads; the
decoders never block and judge a header as soon as its bytes are in, so a master announcing a block at the
wrong offset is refused before its body is waited for (Java's slave checks the header the same way). A
rejected stream ends with a :class:`StreamRejected` event and refuses further data: the connection is to be
closed, as both Java sides close it.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from rocketmq_spec.spec.errors import HAStreamError
from rocketmq_spec.spec.ha import HEADER_SIZE, REPORT_SIZE, RMQ_HA_BLOCK, RMQ_HA_CONTIGUOUS, RMQ_HA_REPORT

_REPORT = struct.Struct(">q")
_HEADER = struct.Struct(">qi")

SLAVE_READ_BUFFER = 4 * 1024 * 1024
"""Java's slave reads into a 4 MiB buffer and can never complete a block larger than it (it would wait
for ever), so a bigger announced body is refused here instead."""


def encode_report(offset: int) -> bytes:
    """One slave offset report (``SlaveOffsetReport``)."""
    return _REPORT.pack(offset)


def encode_block(offset: int, data: bytes = b"") -> bytes:
    """One transfer block: header and body; an empty body is a heartbeat."""
    return _HEADER.pack(offset, len(data)) + data


@dataclass(frozen=True)
class OffsetReported:
    offset: int


@dataclass(frozen=True)
class BlockReceived:
    offset: int
    """Master CommitLog offset of the first byte of ``data``."""
    data: bytes

    @property
    def is_heartbeat(self) -> bool:
        return not self.data

    @property
    def end(self) -> int:
        return self.offset + len(self.data)


@dataclass(frozen=True)
class StreamRejected:
    error: HAStreamError


class ClosableDecoder:
    """What every HA decoder shares: a buffer, and the error that closed it (it then refuses data)."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._error: HAStreamError | None = None

    @property
    def error(self) -> HAStreamError | None:
        return self._error

    @property
    def buffered(self) -> int:
        return len(self._buffer)

    def _accept(self, data: bytes) -> None:
        if self._error is not None:
            raise HAStreamError("decoder closed by an earlier error", expected="no data after the error",
                                seen=len(data), clause=self._error.clause) from self._error
        self._buffer += data

    def _reject(self, error: HAStreamError) -> StreamRejected:
        self._error = error
        self._buffer.clear()
        return StreamRejected(error)


class ReportDecoder(ClosableDecoder):
    """Master side: slave bytes in, one :class:`OffsetReported` per complete 8-byte unit out.

    Java's master only keeps the last complete unit of each read; every unit is reported here and the
    caller keeps the last. A report is never malformed by itself (any int64 is an offset), so this
    decoder only rejects a negative offset, which no CommitLog can have.
    """

    def receive_data(self, data: bytes) -> list[OffsetReported | StreamRejected]:
        self._accept(data)
        whole = len(self._buffer) - len(self._buffer) % REPORT_SIZE
        events: list[OffsetReported | StreamRejected] = []
        for (offset,) in _REPORT.iter_unpack(self._buffer[:whole]):
            if offset < 0:
                events.append(self._reject(HAStreamError(
                    "negative slave offset report", expected=">= 0", seen=offset, clause=RMQ_HA_REPORT.id)))
                return events
            events.append(OffsetReported(offset))
        del self._buffer[:whole]
        return events


class BlockDecoder(ClosableDecoder):
    """Slave side: master bytes in, :class:`BlockReceived` per complete block out.

    ``expected_offset`` is the slave's CommitLog end, or None for an empty slave, which takes the first
    block's offset as its start (RMQ-HA-CONTIGUOUS). Every later block must start where the previous one
    ended; a heartbeat carries the offset of the next data, so it is held to the same rule.
    """

    def __init__(self, expected_offset: int | None = None, max_body: int = SLAVE_READ_BUFFER - HEADER_SIZE):
        super().__init__()
        self.expected_offset = expected_offset
        self.max_body = max_body

    def receive_data(self, data: bytes) -> list[BlockReceived | StreamRejected]:
        self._accept(data)
        buffer = self._buffer
        events: list[BlockReceived | StreamRejected] = []
        start = 0
        while len(buffer) - start >= HEADER_SIZE:
            offset, size = _HEADER.unpack_from(buffer, start)
            problem = self._judge(offset, size)
            if problem is not None:
                events.append(self._reject(problem))
                return events
            end = start + HEADER_SIZE + size
            if len(buffer) < end:
                break
            events.append(BlockReceived(offset, bytes(buffer[start + HEADER_SIZE:end])))
            self.expected_offset = offset + size
            start = end
        del buffer[:start]
        return events

    def _judge(self, offset: int, size: int) -> HAStreamError | None:
        if size < 0 or size > self.max_body:
            return HAStreamError("transfer block body size out of range", expected=f"0..{self.max_body}",
                                 seen=size, clause=RMQ_HA_BLOCK.id)
        if offset < 0:
            return HAStreamError("negative transfer block offset", expected=">= 0", seen=offset,
                                 clause=RMQ_HA_BLOCK.id)
        if self.expected_offset is not None and offset != self.expected_offset:
            return HAStreamError("transfer block not contiguous with the slave's CommitLog",
                                 expected=self.expected_offset, seen=offset, clause=RMQ_HA_CONTIGUOUS.id)
        return None


__all__ = [
    "BlockDecoder",
    "BlockReceived",
    "ClosableDecoder",
    "OffsetReported",
    "ReportDecoder",
    "StreamRejected",
    "encode_block",
    "encode_report",
]
