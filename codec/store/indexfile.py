"""IndexFile reading and writing with the broker's algorithm, so files are interchangeable with Java's.

The file is used through a memory map: a new file is created sparse at its full size (420 MB by default)
and only the pages of touched slots and entries are ever written.
"""

from __future__ import annotations

import mmap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from codec.store.record import MessageRecord
from spec.errors import SpecViolation, StoreError
from spec.hashing import index_key_hash
from spec.indexfile import (
    DEFAULT_INDEX_COUNT,
    DEFAULT_SLOT_COUNT,
    FIRST_INDEX,
    HEADER_SIZE,
    INVALID_INDEX,
    MAX_QUERY_RESULTS,
    RMQ_IDX_LAYOUT,
    IndexEntry,
    IndexHeader,
    entry_position,
    file_size,
    index_key,
    slot_position,
    time_diff_seconds,
)
from spec.sysflag import TransactionType

MAX_TIMESTAMP = 2**63 - 1


@dataclass
class Header:
    begin_timestamp: int = 0
    end_timestamp: int = 0
    begin_phy_offset: int = 0
    end_phy_offset: int = 0
    hash_slot_count: int = 0
    index_count: int = FIRST_INDEX


@dataclass(frozen=True)
class Entry:
    index: int
    key_hash: int
    phy_offset: int
    time_diff: int
    prev_index: int


def index_keys(record: MessageRecord) -> list[str]:
    """The ``topic#key`` strings the broker indexes a record under, in its order (RMQ-IDX-KEYS)."""
    if record.transaction_type is TransactionType.ROLLBACK:
        return []
    keys = [record.uniq_key] if record.uniq_key else []
    return [index_key(record.topic, k) for k in keys + record.keys]


class IndexFile:
    def __init__(self, path: Path | str, *, slot_count: int = DEFAULT_SLOT_COUNT,
                 index_count: int = DEFAULT_INDEX_COUNT, writable: bool = False) -> None:
        self.path = Path(path)
        self.slot_count = slot_count
        self.capacity = index_count
        self.writable = writable
        expected = file_size(slot_count, index_count)
        if self.path.stat().st_size != expected:
            raise StoreError("IndexFile size does not match its slot and entry counts", expected=expected,
                             seen=self.path.stat().st_size, clause=RMQ_IDX_LAYOUT.id)
        with self.path.open("r+b" if writable else "rb") as handle:
            access = mmap.ACCESS_WRITE if writable else mmap.ACCESS_READ
            self._map = mmap.mmap(handle.fileno(), 0, access=access)
        parsed = IndexHeader.parse(self._map[:HEADER_SIZE])
        self.header = Header(**{k: v for k, v in parsed.items() if not k.startswith("_")})
        if self.header.index_count <= 0:
            self.header.index_count = FIRST_INDEX

    @classmethod
    def create(cls, path: Path | str, *, slot_count: int = DEFAULT_SLOT_COUNT,
               index_count: int = DEFAULT_INDEX_COUNT, previous: Header | None = None) -> IndexFile:
        """A new empty file; after a full one, begin/end values start from ``previous``'s end values."""
        with Path(path).open("xb") as handle:
            handle.truncate(file_size(slot_count, index_count))
        index = cls(path, slot_count=slot_count, index_count=index_count, writable=True)
        if previous is not None:
            index.header.begin_timestamp = index.header.end_timestamp = previous.end_timestamp
            index.header.begin_phy_offset = index.header.end_phy_offset = previous.end_phy_offset
        index._write_header()
        return index

    def close(self) -> None:
        self._map.close()

    def __enter__(self) -> IndexFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _int(self, pos: int) -> int:
        return int.from_bytes(self._map[pos:pos + 4], "big", signed=True)

    def slot(self, key_hash: int) -> int:
        return self._int(slot_position(key_hash, self.slot_count))

    def entry(self, index: int) -> Entry:
        pos = entry_position(index, self.slot_count)
        parsed = IndexEntry.parse(self._map[pos:pos + IndexEntry.sizeof()])
        return Entry(index, parsed.key_hash, parsed.phy_offset, parsed.time_diff, parsed.prev_index)

    def entries(self) -> Iterator[Entry]:
        """Every used entry, oldest first."""
        for index in range(FIRST_INDEX, min(self.header.index_count, self.capacity)):
            yield self.entry(index)

    @property
    def is_full(self) -> bool:
        return self.header.index_count >= self.capacity

    def _write_header(self) -> None:
        self._map[:HEADER_SIZE] = IndexHeader.build(vars(self.header))

    def put(self, key: str, phy_offset: int, store_timestamp: int) -> bool:
        """Index ``key`` (already ``topic#key``); False when full (RMQ-IDX-FULL: start a new file)."""
        if not self.writable:
            raise SpecViolation("IndexFile opened read-only", expected="writable", seen="read-only")
        if self.is_full:
            return False
        h = self.header
        key_hash = index_key_hash(key)
        slot_pos = slot_position(key_hash, self.slot_count)
        old = self._int(slot_pos)
        if old <= INVALID_INDEX or old > h.index_count:
            old = INVALID_INDEX
        pos = entry_position(h.index_count, self.slot_count)
        self._map[pos:pos + IndexEntry.sizeof()] = IndexEntry.build({
            "key_hash": key_hash, "phy_offset": phy_offset, "prev_index": old,
            "time_diff": time_diff_seconds(store_timestamp, h.begin_timestamp)})
        self._map[slot_pos:slot_pos + 4] = h.index_count.to_bytes(4, "big", signed=True)
        if h.index_count <= FIRST_INDEX:
            h.begin_phy_offset, h.begin_timestamp = phy_offset, store_timestamp
        if old == INVALID_INDEX:
            h.hash_slot_count += 1
        h.index_count += 1
        h.end_phy_offset, h.end_timestamp = phy_offset, store_timestamp
        self._write_header()
        return True

    def put_record(self, record: MessageRecord) -> bool:
        """Index a record under all its keys; records already covered by this file are skipped."""
        if record.physical_offset < self.header.end_phy_offset:
            return True
        return all(self.put(key, record.physical_offset, record.store_timestamp)
                   for key in index_keys(record))

    def flush(self) -> None:
        self._map.flush()

    def time_matches(self, begin: int, end: int) -> bool:
        """``isTimeMatched``: the file's time range overlaps [begin, end]."""
        h = self.header
        return (begin < h.begin_timestamp and end > h.end_timestamp) or (
            h.begin_timestamp <= begin <= h.end_timestamp) or (h.begin_timestamp <= end <= h.end_timestamp)

    def lookup(self, key: str, *, begin: int = 0, end: int = MAX_TIMESTAMP,
               max_results: int = MAX_QUERY_RESULTS) -> list[int]:
        """Commitlog offsets whose entries match ``key``'s hash within [begin, end] ms, newest first.

        Hash collisions are returned too: callers confirm the key against the record.
        """
        h = self.header
        key_hash = index_key_hash(key)
        current = self.slot(key_hash)
        found: list[int] = []
        if current <= INVALID_INDEX or current > h.index_count or h.index_count <= FIRST_INDEX:
            return found
        while len(found) < max_results:
            entry = self.entry(current)
            if entry.time_diff < 0:
                break
            time_read = h.begin_timestamp + entry.time_diff * 1000
            if entry.key_hash == key_hash and begin <= time_read <= end:
                found.append(entry.phy_offset)
            prev = entry.prev_index
            if prev <= INVALID_INDEX or prev > h.index_count or prev == current or time_read < begin:
                break
            current = prev
        return found
