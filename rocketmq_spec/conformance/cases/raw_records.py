"""The CommitLog read a second way: straight from the clause's field table with ``struct``, without
``rocketmq_spec.codec.store``.

The store cases over record fields (RMQ-CL-LAYOUT, RMQ-CL-BODY-CRC, the length limits, ...) judge what
this reader finds, so a bug of the codec's decoder, which the reference broker writes through, cannot make
a wrong record look right to both of them. It walks each file from its start: a record, a BLANK marker
(the rest of the file is padding) or zeros (the end of the data).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from rocketmq_spec.codec.store.commitlog import map_file, segment_files
from rocketmq_spec.spec.commitlog import BLANK_MAGIC, MESSAGE_MAGIC_V2, MESSAGE_MAGICS
from rocketmq_spec.spec.store_layout import COMMITLOG_DIR

BORN_HOST_V6_BIT = 0x10
STORE_HOST_V6_BIT = 0x20
"""RMQ-FLAG-HOST-V6: SYSFLAG bits making BORNHOST / STOREHOST a 16-byte address + port."""

HEAD = struct.Struct(">iIiiiqqiq")
"""RMQ-CL-LAYOUT up to BORNHOST: TOTALSIZE, MAGICCODE, BODYCRC, QUEUEID, FLAG, QUEUEOFFSET,
PHYSICALOFFSET, SYSFLAG, BORNTIMESTAMP."""
MIDDLE = struct.Struct(">q")
"""STORETIMESTAMP, between the two hosts."""
TAIL = struct.Struct(">iq")
"""RECONSUMETIMES, PREPARED OFFSET: after STOREHOST, before the body."""
PREFIX = struct.Struct(">iI")
INT32 = 1 << 32
NOT_TRANSACTIONAL, COMMIT_TYPE = 0, 2
"""RMQ-FLAG-TRANSACTION: (SYSFLAG >> 2) & 3 is 0 not transactional, 1 prepared, 2 commit, 3 rollback."""
INT32_MAX = (1 << 31) - 1


def host_width(sys_flag: int, bit: int) -> int:
    """Bytes of a host field (address + int32 port) for the SYSFLAG ``sys_flag``."""
    return (16 if sys_flag & bit else 4) + 4


class Parts(NamedTuple):
    """Where the variable parts lie in a record's bytes, as its host widths place them."""

    store_host: slice
    body: slice
    topic_length: int
    topic: slice
    properties_length: int
    properties: slice

    @property
    def end(self) -> int:
        return self.properties.stop


def parts(data: bytes, sys_flag: int, magic: int) -> Parts | None:
    """The parts of the record ``data`` read with the host widths ``sys_flag`` names (a part may run past
    the record: see ``Parts.end``; properties_length is -1 when its field does); None when the body or
    topic length field lies past the record's bytes."""
    try:
        at = HEAD.size + host_width(sys_flag, BORN_HOST_V6_BIT) + MIDDLE.size
        store_host = slice(at, at + host_width(sys_flag, STORE_HOST_V6_BIT))
        at = store_host.stop + TAIL.size
        (body_length,) = struct.unpack_from(">I", data, at)
        body = slice(at + 4, at + 4 + body_length)
        wide_topic = magic == MESSAGE_MAGIC_V2
        topic_length = struct.unpack_from(">H" if wide_topic else ">B", data, body.stop)[0]
    except struct.error:
        return None
    topic_at = body.stop + (2 if wide_topic else 1)
    topic = slice(topic_at, topic_at + topic_length)
    if topic.stop + 2 > len(data):
        return Parts(store_host, body, topic_length, topic, -1, slice(topic.stop, topic.stop + 2))
    (properties_length,) = struct.unpack_from(">H", data, topic.stop)
    properties = slice(topic.stop + 2, topic.stop + 2 + properties_length)
    return Parts(store_host, body, topic_length, topic, properties_length, properties)


@dataclass(frozen=True)
class RawRecord:
    """One record as its bytes say, every length read unsigned so an over-long field shows as such."""

    position: int
    """Absolute offset: the file's start (its name) plus the position inside it."""
    data: bytes
    """TOTALSIZE bytes from the record's start."""
    magic: int
    body_crc: int
    physical_offset: int
    sys_flag: int
    store_timestamp: int
    parts: Parts | None
    """Read with SYSFLAG's host widths; None when a length field lies past TOTALSIZE."""

    @property
    def total_size(self) -> int:
        return len(self.data)

    def part(self, name: str) -> bytes:
        return b"" if self.parts is None else self.data[getattr(self.parts, name)]

    @property
    def body(self) -> bytes:
        return self.part("body")

    @property
    def topic(self) -> str:
        return self.part("topic").decode("utf-8", "replace")

    @property
    def properties(self) -> bytes:
        return self.part("properties")

    @property
    def store_host(self) -> bytes:
        return self.part("store_host")

    @property
    def property_map(self) -> dict[str, str]:
        """Name to value as a Java reader keeps them: pairs with a name and a value, the last one winning."""
        pairs = (s.partition("\x01") for s in self.properties.decode("utf-8", "replace").split("\x02"))
        return {name: value for name, _, value in pairs if name and value}

    @property
    def dispatched(self) -> bool:
        """Whether a consume-queue entry is due: transaction type (bits 2-3) not prepared nor rolled back."""
        return (self.sys_flag >> 2) & 3 in (NOT_TRANSACTIONAL, COMMIT_TYPE)

    def fits_with(self, sys_flag: int) -> bool:
        """Whether the parts end exactly at TOTALSIZE when read with the host widths of ``sys_flag``."""
        found = parts(self.data, sys_flag, self.magic)
        return found is not None and found.end == len(self.data)


@dataclass(frozen=True)
class Span:
    """A record whose TOTALSIZE runs past the end of the file it starts in."""

    position: int
    total_size: int
    file_end: int


@dataclass
class RawWalk:
    records: list[RawRecord]
    spans: list[Span]
    stopped: str | None = None
    """Why the walk stopped before the end of the data, if it did."""
    stopped_at: int | None = None

    def cut_at(self, offset: int) -> None:
        """Forget the records from ``offset`` on (a crashed broker's torn last record)."""
        self.records = [r for r in self.records if r.position < offset]
        self.spans = [s for s in self.spans if s.position < offset]
        if self.stopped_at is not None and self.stopped_at >= offset:
            self.stopped, self.stopped_at = None, None


def _parse(view: memoryview, pos: int, start: int, total: int) -> RawRecord:
    data = bytes(view[pos:pos + total])
    _, magic, crc, _, _, _, physical, sys_flag, _ = HEAD.unpack_from(data, 0)
    at = HEAD.size + host_width(sys_flag, BORN_HOST_V6_BIT)
    (store_timestamp,) = MIDDLE.unpack_from(data, at) if len(data) >= at + MIDDLE.size else (0,)
    return RawRecord(start + pos, data, magic, crc, physical, sys_flag, store_timestamp,
                     parts(data, sys_flag, magic))


class Unreadable(ValueError):
    def __init__(self, position: int, why: str) -> None:
        super().__init__(f"at {position}: {why}")
        self.position = position


def _walk_file(path: Path, start: int, spans: list[Span]) -> Iterator[RawRecord]:
    data = map_file(path)
    view = memoryview(data)
    size = len(data)
    pos = 0
    while pos + PREFIX.size <= size:
        total, magic = PREFIX.unpack_from(view, pos)
        if (total == 0 and magic == 0) or magic == BLANK_MAGIC:
            return
        if magic not in MESSAGE_MAGICS or total <= 0:
            raise Unreadable(start + pos, f"TOTALSIZE {total}, MAGICCODE {magic:#x}")
        if pos + total > size:
            spans.append(Span(start + pos, total, start + size))
            return
        if total < HEAD.size:
            raise Unreadable(start + pos, f"TOTALSIZE {total} shorter than the fixed fields")
        yield _parse(view, pos, start, total)
        pos += total


def walk(store_dir: Path) -> RawWalk:
    """Every record of every CommitLog file, oldest first, or those before the first unreadable one."""
    found = RawWalk([], [])
    try:
        for segment in segment_files(store_dir / COMMITLOG_DIR):
            found.records.extend(_walk_file(segment.path, segment.start, found.spans))
    except Unreadable as exc:
        found.stopped, found.stopped_at = str(exc), exc.position
    return found


def java_string_hash(text: str) -> int:
    """String.hashCode by its definition, s[0]*31^(n-1) + ... + s[n-1] over UTF-16 units, as an int."""
    encoded = text.encode("utf-16-be", "surrogatepass")
    units = struct.unpack(f">{len(encoded) // 2}H", encoded)
    value = sum(unit * pow(31, len(units) - 1 - i, INT32) for i, unit in enumerate(units)) % INT32
    return value - INT32 if value > INT32_MAX else value
