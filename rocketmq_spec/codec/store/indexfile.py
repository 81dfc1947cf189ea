"""IndexFile reading and writing with the broker's algorithm, so files are interchangeable with Java's.

The file is used through a memory map: a new file is created sparse at its full size (420 MB by default)
and only the pages of touched slots and entries are ever written. A writable file keeps its descriptor
open so that a flush is an ``fdatasync``: on Linux it writes back the pages dirtied through the shared
mapping exactly as ``msync`` does, and unlike ``mmap.flush`` it releases the GIL, so a flushing thread
never stalls the thread that indexes.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import astuple, dataclass
from pathlib import Path

from rocketmq_spec.codec.fast_store import (
    INDEX_ENTRY,
    INDEX_HEADER,
    INDEX_SLOT,
    index_key_hash,
    put_index_keys,
)
from rocketmq_spec.codec.store.record import MessageRecord
from rocketmq_spec.spec.errors import SpecViolation, StoreError
from rocketmq_spec.spec.indexfile import (
    DEFAULT_INDEX_COUNT,
    DEFAULT_SLOT_COUNT,
    ENTRY_SIZE,
    FIRST_INDEX,
    HEADER_SIZE,
    INVALID_INDEX,
    MAX_QUERY_RESULTS,
    RMQ_IDX_LAYOUT,
    SLOT_SIZE,
    entry_position,
    file_size,
    index_key,
    query_key,
    slot_position,
    tag_index_key,
)
from rocketmq_spec.spec.properties import PropertyKey, split_keys
from rocketmq_spec.spec.sysflag import TRANSACTION_MASK, TransactionType

MAX_TIMESTAMP = 2**63 - 1
INDEX_PER_SLOT = DEFAULT_INDEX_COUNT // DEFAULT_SLOT_COUNT
"""Java's default ``maxIndexNum`` is four times ``maxHashSlotNum``; a file of another size is read as
keeping that ratio unless its counts are given."""


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


def index_keys(record: MessageRecord, *, tags: bool) -> list[str]:
    """The strings a broker indexes a record under, in its order (RMQ-IDX-KEYS); ``tags``: the writer's
    release indexes the TAGS string too (release rule index-tag-key, 5.4.0+)."""
    if record.sys_flag & TRANSACTION_MASK == TransactionType.ROLLBACK:
        return []
    return message_index_keys(record.topic, record.properties, tags=tags)


def message_index_keys(topic: str, properties: Mapping[str, str], *, tags: bool) -> list[str]:
    """The index keys of a record that is not a rollback, from its topic and property map: UNIQ_KEY
    first, then each of KEYS, then (``tags``) the TAGS string."""
    uniq_key = properties.get(PropertyKey.UNIQ_KEY)
    found = [index_key(topic, uniq_key)] if uniq_key else []
    if PropertyKey.KEYS in properties:  # most sends have none: no split, no comprehension
        found += [index_key(topic, k) for k in split_keys(properties[PropertyKey.KEYS])]
    if tags and (tag := properties.get(PropertyKey.TAGS)):
        found.append(tag_index_key(topic, tag))
    return found


def record_tag_key(record: MessageRecord) -> str | None:
    """The tag key a 5.4.0+ broker indexes a record under (None: untagged or a rollback), for readers
    that judge a store without knowing which release wrote it."""
    tag = record.properties.get(PropertyKey.TAGS)
    if not tag or record.sys_flag & TRANSACTION_MASK == TransactionType.ROLLBACK:
        return None
    return tag_index_key(record.topic, tag)


def index_sizes(size: int) -> tuple[int, int]:
    """(slot count, entry capacity) of an index file of ``size`` bytes whose counts are not given.

    The header does not record either count, and one file size fits many pairs, so this takes the
    defaults when the size is theirs and otherwise the pair with Java's default 1:4 ratio.
    """
    if size == file_size():
        return DEFAULT_SLOT_COUNT, DEFAULT_INDEX_COUNT
    slots, rest = divmod(size - HEADER_SIZE, SLOT_SIZE + INDEX_PER_SLOT * ENTRY_SIZE)
    if rest or slots <= 0:
        raise StoreError("IndexFile size fits no slot count with the default 1:4 entry ratio",
                         expected=f"{HEADER_SIZE} + k * {SLOT_SIZE + INDEX_PER_SLOT * ENTRY_SIZE}", seen=size,
                         clause=RMQ_IDX_LAYOUT.id)
    return slots, slots * INDEX_PER_SLOT


class IndexFile:
    def __init__(self, path: Path | str, *, slot_count: int | None = None, index_count: int | None = None,
                 writable: bool = False) -> None:
        """Open an existing file; without counts they are inferred from its size (:func:`index_sizes`)."""
        self.path = Path(path)
        actual = self.path.stat().st_size
        if slot_count is None or index_count is None:
            slot_count, index_count = index_sizes(actual)
        self.slot_count = slot_count
        self.capacity = index_count
        self.writable = writable
        expected = file_size(slot_count, index_count)
        if actual != expected:
            raise StoreError("IndexFile size does not match its slot and entry counts", expected=expected,
                             seen=actual, clause=RMQ_IDX_LAYOUT.id)
        with self.path.open("r+b" if writable else "rb") as handle:
            access = mmap.ACCESS_WRITE if writable else mmap.ACCESS_READ
            self._map = mmap.mmap(handle.fileno(), 0, access=access)
            self._fd = os.dup(handle.fileno()) if writable else None
        self._header_at_close: Header | None = None
        self._entries_at = entry_position(0, slot_count)

    @classmethod
    def create(cls, path: Path | str, *, slot_count: int = DEFAULT_SLOT_COUNT,
               index_count: int = DEFAULT_INDEX_COUNT, previous: Header | None = None) -> IndexFile:
        """A new empty file; after a full one, begin/end values start from ``previous``'s end values."""
        with Path(path).open("xb") as handle:
            handle.truncate(file_size(slot_count, index_count))
        index = cls(path, slot_count=slot_count, index_count=index_count, writable=True)
        header = Header() if previous is None else Header(
            begin_timestamp=previous.end_timestamp, end_timestamp=previous.end_timestamp,
            begin_phy_offset=previous.end_phy_offset, end_phy_offset=previous.end_phy_offset)
        INDEX_HEADER.pack_into(index._map, 0, *astuple(header))
        return index

    @property
    def header(self) -> Header:
        """The header as the map holds it now (the writes of ``put_keys`` land there), with Java's in-memory
        start: a count of 0 (no key written yet) reads as FIRST_INDEX. After ``close``, the last one."""
        if self._header_at_close is not None:
            return self._header_at_close
        header = Header(*INDEX_HEADER.unpack_from(self._map, 0))
        if header.index_count <= 0:
            header.index_count = FIRST_INDEX
        return header

    def close(self) -> None:
        if self._header_at_close is None:
            self._header_at_close = self.header
        self._map.close()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> IndexFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def slot(self, key_hash: int) -> int:
        return INDEX_SLOT.unpack_from(self._map, slot_position(key_hash, self.slot_count))[0]

    def entry(self, index: int) -> Entry:
        return Entry(index, *INDEX_ENTRY.unpack_from(self._map, self._entries_at + index * ENTRY_SIZE))

    def entries(self) -> Iterator[Entry]:
        """Every used entry, oldest first."""
        for index in range(FIRST_INDEX, min(self.header.index_count, self.capacity)):
            yield self.entry(index)

    @property
    def is_full(self) -> bool:
        return self.header.index_count >= self.capacity

    def put(self, key: str, phy_offset: int, store_timestamp: int) -> bool:
        """Index ``key`` (already ``topic#key``); False when full (RMQ-IDX-FULL: start a new file)."""
        return self.put_keys((key,), phy_offset, store_timestamp) == 1

    def put_keys(self, keys: Sequence[str], phy_offset: int, store_timestamp: int) -> int:
        """Index one record under ``keys``, in order; returns how many went in before the file was full
        (RMQ-IDX-FULL: the rest go to a new file)."""
        if not self.writable:
            raise SpecViolation("IndexFile opened read-only", expected="writable", seen="read-only")
        return put_index_keys(self._map, keys, phy_offset, store_timestamp, self.slot_count, self.capacity)

    def put_record(self, record: MessageRecord, *, tags: bool) -> bool:
        """Index a record under all its keys; records already covered by this file are skipped."""
        if record.physical_offset < self.header.end_phy_offset:
            return True
        return all(self.put(key, record.physical_offset, record.store_timestamp)
                   for key in index_keys(record, tags=tags))

    def flush(self) -> None:
        """Make what was written durable (a read-only file has nothing to write back)."""
        fd = self._fd
        if fd is None:
            return
        try:
            os.fdatasync(fd)
        except OSError:
            if not self._map.closed:
                raise
            # closed meanwhile (retention retired the file): nothing is left to make durable

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
            if current >= self.capacity:
                raise StoreError("IndexFile slot chain points past the entry area",
                                 expected=f"< {self.capacity}", seen=current, clause=RMQ_IDX_LAYOUT.id)
            entry_hash, phy_offset, time_diff, prev = INDEX_ENTRY.unpack_from(
                self._map, self._entries_at + current * ENTRY_SIZE)
            if time_diff < 0:
                break
            time_read = h.begin_timestamp + time_diff * 1000
            if entry_hash == key_hash and begin <= time_read <= end:
                found.append(phy_offset)
            if prev <= INVALID_INDEX or prev > h.index_count or prev == current or time_read < begin:
                break
            current = prev
        return found


def first_entry_bases(files: Sequence[IndexFile], *, history_complete: bool) -> list[int | None]:
    """The timestamp each file's first entry was timed against (RMQ-IDX-TIME-DIFF), files oldest first: the
    previous file's end timestamp; for the oldest, 0 when it is the store's first file and None (unknown)
    when older files may have gone with the CommitLog files they indexed (``history_complete`` false)."""
    oldest: int | None = 0 if history_complete else None
    return [oldest, *(index.header.end_timestamp for index in files)][:len(files)]


def query_offsets(newest_first: Iterable[IndexFile], topic: str, key: str, *, begin: int = 0,
                  end: int = MAX_TIMESTAMP, max_results: int = MAX_QUERY_RESULTS,
                  index_type: str | None = None) -> list[int]:
    """``IndexService.queryOffset`` over files given newest first (``index_type`` T: ``key`` is a TAGS
    string, 5.4.0+): files whose time range overlaps the query are searched, and the walk stops after a
    file that starts before ``begin`` or once
    ``max_results`` offsets are found. ``newest_first`` is consumed lazily, so a reader can open each
    file only when it is reached."""
    found: list[int] = []
    for index in newest_first:
        if index.time_matches(begin, end):
            found += index.lookup(query_key(topic, key, index_type), begin=begin, end=end,
                                  max_results=max_results - len(found))
        if index.header.begin_timestamp < begin or len(found) >= max_results:
            break
    return found
