"""The IndexFile's struct put/lookup equal the spec: bytes as ``IndexHeader``/``IndexEntry`` build them,
lookups as a reference walk over schema-parsed entries, hashes as ``rocketmq_spec.spec.hashing``."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rocketmq_spec.codec.fast_store import INDEX_ENTRY, INDEX_HEADER, index_key_hash, java_string_hash
from rocketmq_spec.codec.store import IndexFile, StoreDirectory
from rocketmq_spec.codec.store.indexfile import index_sizes
from rocketmq_spec.fuzz.profiles import SLOW_DATA
from rocketmq_spec.spec import hashing
from rocketmq_spec.spec.errors import StoreError
from rocketmq_spec.spec.indexfile import (
    FIRST_INDEX,
    INVALID_INDEX,
    IndexEntry,
    IndexHeader,
    entry_position,
    file_size,
    slot_position,
    time_diff_seconds,
)

SLOTS = 7
"""A few slots, so generated keys collide and chains get long."""
ENTRIES = 40
BEGIN = 1_700_000_000_000


@given(st.text(max_size=200))
def test_string_hash_equals_the_spec(text: str) -> None:
    assert java_string_hash(text) == hashing.java_string_hash(text)
    assert index_key_hash(text) == hashing.index_key_hash(text)


def test_the_min_value_hash_maps_to_zero() -> None:
    """"polygenelubricants" hashes to Integer.MIN_VALUE in Java."""
    assert java_string_hash("polygenelubricants") == -(2**31)
    assert index_key_hash("polygenelubricants") == hashing.index_key_hash("polygenelubricants") == 0


def _reference_put(raw: bytearray, header: dict[str, int], key: str, phy: int, ts: int) -> None:
    """RMQ-IDX-PUT written with the construct schemas."""
    key_hash = hashing.index_key_hash(key)
    slot = slot_position(key_hash, SLOTS)
    old = int.from_bytes(raw[slot:slot + 4], "big", signed=True)
    if old <= INVALID_INDEX or old > header["index_count"]:
        old = INVALID_INDEX
    pos = entry_position(header["index_count"], SLOTS)
    raw[pos:pos + 20] = IndexEntry.build({"key_hash": key_hash, "phy_offset": phy, "prev_index": old,
                                          "time_diff": time_diff_seconds(ts, header["begin_timestamp"])})
    raw[slot:slot + 4] = header["index_count"].to_bytes(4, "big", signed=True)
    if header["index_count"] <= FIRST_INDEX:
        header["begin_phy_offset"], header["begin_timestamp"] = phy, ts
    header["hash_slot_count"] += old == INVALID_INDEX
    header["index_count"] += 1
    header["end_phy_offset"], header["end_timestamp"] = phy, ts
    raw[:40] = IndexHeader.build(header)


def _reference_lookup(raw: bytes, key: str, begin: int, end: int, limit: int) -> list[int]:
    """RMQ-IDX-LOOKUP over schema-parsed header and entries."""
    header = IndexHeader.parse(raw[:40])
    key_hash = hashing.index_key_hash(key)
    slot = slot_position(key_hash, SLOTS)
    current = int.from_bytes(raw[slot:slot + 4], "big", signed=True)
    found: list[int] = []
    if current <= INVALID_INDEX or current > header.index_count or header.index_count <= FIRST_INDEX:
        return found
    while len(found) < limit:
        pos = entry_position(current, SLOTS)
        entry = IndexEntry.parse(raw[pos:pos + 20])
        if entry.time_diff < 0:
            break
        time_read = header.begin_timestamp + entry.time_diff * 1000
        if entry.key_hash == key_hash and begin <= time_read <= end:
            found.append(entry.phy_offset)
        prev = entry.prev_index
        if prev <= INVALID_INDEX or prev > header.index_count or prev == current or time_read < begin:
            break
        current = prev
    return found


puts = st.lists(st.tuples(st.sampled_from(["T#a", "T#b", "T#c", "T#ü", "U#a", "T#key-1"]),
                          st.integers(0, 2**40), st.integers(0, 100_000)), max_size=ENTRIES + 3)


@settings(suppress_health_check=[*SLOW_DATA, HealthCheck.function_scoped_fixture], max_examples=60)
@given(puts, st.integers(0, 120_000), st.integers(0, 120_000), st.integers(1, 10))
def test_put_and_lookup_equal_the_schema_walk(tmp_path: Path, steps: list[tuple[str, int, int]],
                                              begin_ms: int, span_ms: int, limit: int) -> None:
    path = tmp_path / "index"
    path.unlink(missing_ok=True)
    raw = bytearray(file_size(SLOTS, ENTRIES))
    header = {"begin_timestamp": 0, "end_timestamp": 0, "begin_phy_offset": 0, "end_phy_offset": 0,
              "hash_slot_count": 0, "index_count": FIRST_INDEX}
    raw[:40] = IndexHeader.build(header)
    with IndexFile.create(path, slot_count=SLOTS, index_count=ENTRIES) as index:
        for key, phy, ts_ms in steps:
            if index.put(key, phy, BEGIN + ts_ms):
                _reference_put(raw, header, key, phy, BEGIN + ts_ms)
            else:
                assert header["index_count"] >= ENTRIES
        index.flush()
        begin, end = BEGIN + begin_ms, BEGIN + begin_ms + span_ms * 10_000
        for key in ("T#a", "T#b", "T#c", "T#ü", "U#a", "T#key-1", "T#none"):
            assert index.lookup(key, begin=begin, end=end, max_results=limit) == _reference_lookup(
                bytes(raw), key, begin, end, limit)
    assert path.read_bytes() == bytes(raw)


@given(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=4, max_size=4),
       st.lists(st.integers(-(2**31), 2**31 - 1), min_size=2, max_size=2),
       st.integers(-(2**31), 2**31 - 1), st.integers(-(2**63), 2**63 - 1))
def test_header_and_entry_structs_equal_the_schema(longs: list[int], ints: list[int], small: int,
                                                   big: int) -> None:
    header = dict(zip(["begin_timestamp", "end_timestamp", "begin_phy_offset", "end_phy_offset",
                       "hash_slot_count", "index_count"], longs + ints, strict=True))
    assert INDEX_HEADER.pack(*header.values()) == IndexHeader.build(header)
    entry = {"key_hash": small, "phy_offset": big, "time_diff": ints[0], "prev_index": ints[1]}
    assert INDEX_ENTRY.pack(*entry.values()) == IndexEntry.build(entry)


def test_sizes_are_read_from_the_file(tmp_path: Path) -> None:
    assert index_sizes(file_size()) == (5_000_000, 20_000_000)
    assert index_sizes(file_size(100, 400)) == (100, 400)
    with pytest.raises(StoreError):
        index_sizes(file_size(100, 401))
    with IndexFile.create(tmp_path / "index", slot_count=100, index_count=400) as index:
        index.put("T#k", 42, BEGIN)
    with IndexFile(tmp_path / "index") as reopened:
        assert (reopened.slot_count, reopened.capacity) == (100, 400)
        assert reopened.lookup("T#k") == [42]


def test_store_directory_reads_index_files_of_given_sizes(tmp_path: Path) -> None:
    (tmp_path / "commitlog").mkdir()
    (tmp_path / "index").mkdir()
    with IndexFile.create(tmp_path / "index" / "20240101000000000", slot_count=10, index_count=3) as index:
        index.put("T#k", 7, BEGIN)
    with pytest.raises(StoreError):
        StoreDirectory(tmp_path).lookup_offsets("T", "k")
    with StoreDirectory(tmp_path, index_sizes=(10, 3)) as store:
        assert store.lookup_offsets("T", "k") == [7]
