"""Index files read raw (header, slot table, entries with ``struct``) and judged by the clauses' own
definitions: the key hash as Java's String.hashCode written out as a polynomial, the slot as hash modulo
the slot count, the time difference from the header as it stood, the keys split on single spaces.

``test_store``'s index cases go through ``rocketmq_spec.codec.store.indexfile``, which the reference broker
writes with; these do not, so a bug shared by writer and reader cannot pass for a right file. """

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from rocketmq_spec.codec.store.directory import StoreDirectory
from rocketmq_spec.conformance.case import case
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.verdict import Info
from rocketmq_spec.spec.hashing import INT32_MIN

from .raw_records import RawRecord, RawWalk, java_string_hash
from .store_support import IndexFiles

HEADER = struct.Struct(">qqqqii")
"""begin_timestamp, end_timestamp, begin_phy_offset, end_phy_offset, hash_slot_count, index_count."""
SLOT = struct.Struct(">i")
ENTRY = struct.Struct(">iqii")
"""key hash, commitlog offset, time difference (s), previous entry of the slot's chain."""
INT32_MAX = (1 << 31) - 1
TOPIC_KEY_SEPARATOR = "#"
KEYS_SEPARATOR = " "
TAG_KEY_PREFIX = "T#"
"""5.4.0+ indexes a tagged record under topic#T#TAGS (RMQ-IDX-KEYS): the key written after topic#."""
SHOWN = 10


def key_hash(topic: str, key: str) -> int:
    """RMQ-IDX-KEY-HASH: abs of the hash of topic#key; Integer.MIN_VALUE, which abs leaves negative, is 0."""
    value = java_string_hash(f"{topic}{TOPIC_KEY_SEPARATOR}{key}")
    return 0 if value == INT32_MIN else abs(value)


@dataclass(frozen=True)
class RawEntry:
    number: int
    key_hash: int
    phy_offset: int
    time_diff: int
    previous: int


@dataclass(frozen=True)
class RawIndex:
    name: str
    capacity: int
    slots: list[int]
    begin_timestamp: int
    end_timestamp: int
    index_count: int
    entries: list[RawEntry]


def _read_index(path: Path, slot_count: int, capacity: int) -> RawIndex:
    data = path.read_bytes()
    begin, end, _, _, _, count = HEADER.unpack_from(data, 0)
    slots = [SLOT.unpack_from(data, HEADER.size + i * SLOT.size)[0] for i in range(slot_count)]
    base = HEADER.size + slot_count * SLOT.size
    entries = [RawEntry(n, *ENTRY.unpack_from(data, base + n * ENTRY.size)) for n in range(1, max(count, 1))
               if n < capacity]
    return RawIndex(path.name, capacity, slots, begin, end, count, entries)


@dataclass(frozen=True)
class RawIndexes:
    files: list[RawIndex]
    opened: IndexFiles

    def readable(self) -> list[RawIndex]:
        """The files, or INFO: unreadable sizes are RMQ-IDX-LAYOUT's, a store without index has nothing."""
        self.opened.readable()
        if not self.files:
            raise Info("the store has no index file")
        return self.files


@pytest.fixture(scope="module")
def raw_indexes(index_files: IndexFiles) -> RawIndexes:
    """Every index file oldest first, read with the store's slot and entry counts."""
    return RawIndexes([_read_index(f.path, f.slot_count, f.capacity) for f in index_files.files], index_files)


def _keys(record: RawRecord) -> list[str]:
    """RMQ-PROP-KEYS: the KEYS value split on single spaces, empty tokens dropped; then UNIQ_KEY."""
    properties = record.property_map
    keys = [k for k in properties.get("KEYS", "").split(KEYS_SEPARATOR) if k]
    return keys + ([properties["UNIQ_KEY"]] if "UNIQ_KEY" in properties else [])


def _tag_key(record: RawRecord) -> list[str]:
    """The TAGS string as 5.4.0+ keys it (a store of an older release simply has no entry of that hash)."""
    tags = record.property_map.get("TAGS")
    return [TAG_KEY_PREFIX + tags] if tags else []


def _targets(indexes: list[RawIndex], raw: RawWalk) -> Iterator[tuple[RawIndex, RawEntry, RawRecord]]:
    """Each entry with the record it points at (entries past the data or below it are other cases')."""
    records = {r.position: r for r in raw.records}
    for index in indexes:
        for entry in index.entries:
            if entry.phy_offset in records:
                yield index, entry, records[entry.phy_offset]


@case("RMQ-IDX-FULL",
      "Every index file but the newest is full (index_count equals maxIndexNum), and none holds more.")
def test_index_files_fill_before_the_next(raw_indexes: RawIndexes, check: Check) -> None:
    indexes = raw_indexes.readable()
    check.note("index_count per file", [(i.name, i.index_count, i.capacity) for i in indexes])
    check.equal("files holding more than maxIndexNum", [],
                [i.name for i in indexes if i.index_count > i.capacity])
    check.equal("files followed by a newer one before they were full", [],
                [i.name for i in indexes[:-1] if i.index_count != i.capacity])


@case("RMQ-IDX-KEY-HASH",
      "Every index entry's hash is abs(String.hashCode(topic#key)) (0 for MIN_VALUE) of a key of its record "
      "(its TAGS string as T#TAGS included: 5.4.0+).")
def test_index_key_hashes(raw_indexes: RawIndexes, raw: RawWalk, check: Check) -> None:
    wrong = [(index.name, entry.number, entry.key_hash)
             for index, entry, record in _targets(raw_indexes.readable(), raw)
             if entry.key_hash not in {key_hash(record.topic, k) for k in _keys(record) + _tag_key(record)}]
    check.equal("entries whose hash is no key's of their record", [], wrong[:SHOWN])


@case("RMQ-IDX-SLOT",
      "Every entry lies on the chain of slot keyHash % slots, and each chain holds only its slot's hashes.")
def test_index_slots(raw_indexes: RawIndexes, check: Check) -> None:
    for index in raw_indexes.readable():
        by_number = {e.number: e for e in index.entries}
        reached, wrong = set(), []
        for slot, head in enumerate(index.slots):
            number = head
            while number in by_number and number not in reached:
                entry = by_number[number]
                reached.add(number)
                if entry.key_hash % len(index.slots) != slot:
                    wrong.append((slot, number, entry.key_hash))
                number = entry.previous
        check.equal(f"{index.name}: entries chained from another slot", [], wrong[:SHOWN])
        check.equal(f"{index.name}: entries no slot reaches", [], sorted(set(by_number) - reached)[:SHOWN])


def _first_entry_base(position: int, indexes: list[RawIndex], store: StoreDirectory) -> int | None:
    """What a file's first entry was timed against: the previous file's end; 0 for the store's first file
    (the CommitLog starting at 0), unknown when older index files went with older CommitLog files."""
    if position > 0:
        return indexes[position - 1].end_timestamp
    return 0 if not store.commitlog.files or store.commitlog.files[0].start == 0 else None


def _time_diff(store_timestamp: int, begin: int) -> int:
    if begin <= 0:
        return 0
    return min(max(store_timestamp - begin, 0) // 1000, INT32_MAX)


@case("RMQ-IDX-TIME-DIFF",
      "Every entry's time difference is (store time - begin_timestamp) / 1000 clamped to [0, 2^31-1], 0 when "
      "begin <= 0; a file's first entry against the previous file's end (0 for the store's first file).")
def test_index_time_differences(raw_indexes: RawIndexes, raw: RawWalk, store: StoreDirectory,
                                check: Check) -> None:
    records = {r.position: r for r in raw.records}
    indexes = raw_indexes.readable()
    wrong, checked = [], 0
    for position, index in enumerate(indexes):
        for entry in index.entries:
            record = records.get(entry.phy_offset)
            begin = (index.begin_timestamp if entry.number > 1
                     else _first_entry_base(position, indexes, store))
            if record is None or begin is None:
                continue
            checked += 1
            if entry.time_diff != _time_diff(record.store_timestamp, begin):
                wrong.append((index.name, entry.number, entry.time_diff,
                              _time_diff(record.store_timestamp, begin)))
    check.note("entries checked", checked)
    check.equal("entries with another time difference", [], wrong[:SHOWN])


@case("RMQ-PROP-KEYS",
      "An indexed record has an entry for each token of KEYS split on single spaces, and none for an empty "
      "token or for the unsplit value.")
def test_keys_are_split_on_spaces(raw_indexes: RawIndexes, raw: RawWalk, store: StoreDirectory,
                                  check: Check) -> None:
    hashes: dict[int, list[int]] = {}
    records: dict[int, RawRecord] = {}
    for _, entry, record in _targets(raw_indexes.readable(), raw):
        hashes.setdefault(record.position, []).append(entry.key_hash)
        records[record.position] = record
    missing, extra = [], []
    for position, found in hashes.items():
        record = records[position]
        value = record.property_map.get("KEYS", "")
        own = {key_hash(record.topic, k) for k in _keys(record) + _tag_key(record)}
        missing += [(position, k) for k in _keys(record) if key_hash(record.topic, k) not in found]
        not_keys = [""] + ([value] if KEYS_SEPARATOR in value else [])
        extra += [(position, k) for k in not_keys if key_hash(record.topic, k) in set(found) - own]
    check.note("indexed records", len(hashes))
    check.equal("entries for an empty token or the unsplit KEYS", [], extra[:SHOWN])
    newest = max(hashes, default=None)
    if store.crashed:  # a killed broker may have stopped between the keys of its last indexed record
        missing = [m for m in missing if m[0] != newest]
    check.equal("tokens of an indexed record without an entry", [], missing[:SHOWN])
