"""Properties of small IndexFiles written through the codec: lookups against a model of Java's
algorithm (collisions included), header counters, and the construct schemas against the codec reader."""

from __future__ import annotations

import contextlib
import random
import struct
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketmq_spec.codec.store.indexfile import IndexFile
from rocketmq_spec.fuzz.mutators import bit_flip
from rocketmq_spec.fuzz.profiles import fuzz_settings
from rocketmq_spec.fuzz.strategies.indexfile import IndexPlan, Put, index_plans, write_index
from rocketmq_spec.spec.errors import RocketMQSpecError, StoreError
from rocketmq_spec.spec.hashing import index_key_hash
from rocketmq_spec.spec.indexfile import (
    ENTRY_SIZE,
    HEADER_SIZE,
    SLOT_SIZE,
    IndexEntry,
    IndexHeader,
    IndexSlot,
    entry_position,
    slot_position,
    time_diff_seconds,
)


@contextlib.contextmanager
def _written(plan: IndexPlan) -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "index"
        assert write_index(path, plan) == [n < len(plan.accepted) for n in range(len(plan.puts))]
        yield path


def _reader(path: Path, plan: IndexPlan) -> IndexFile:
    return IndexFile(path, slot_count=plan.slot_count, index_count=plan.capacity)


def _time_read(plan: IndexPlan, store_timestamp: int) -> int:
    """The store time a lookup sees for an entry: whole seconds after the file's first entry."""
    begin = plan.accepted[0].store_timestamp
    return begin + time_diff_seconds(store_timestamp, begin) * 1000


def _expected(plan: IndexPlan, key: str, begin: int, end: int) -> list[int]:
    """Java's selectPhyOffset on forward-moving store times: every entry of the key's hash in range,
    newest first (the chain holds all of them, and stops only below the range)."""
    return [put.phy_offset for put in reversed(plan.accepted)
            if index_key_hash(put.key) == index_key_hash(key)
            and begin <= _time_read(plan, put.store_timestamp) <= end]


@fuzz_settings()
@given(index_plans(), st.data())
def test_every_key_put_is_found_within_its_time_range(plan: IndexPlan, data: st.DataObject) -> None:
    with _written(plan) as path, _reader(path, plan) as index:
        for put in plan.accepted:
            seen = _time_read(plan, put.store_timestamp)
            assert put.phy_offset in index.lookup(put.key, begin=seen, end=seen)
            assert index.lookup(put.key) == _expected(plan, put.key, 0, 2**63 - 1)
        if plan.accepted:
            times = sorted({_time_read(plan, put.store_timestamp) for put in plan.accepted})
            begin, end = sorted(data.draw(st.lists(st.sampled_from(times), min_size=2, max_size=2)))
            key = data.draw(st.sampled_from([put.key for put in plan.puts]))
            assert index.lookup(key, begin=begin, end=end) == _expected(plan, key, begin, end)


@fuzz_settings()
@given(index_plans())
def test_header_counters_follow_the_puts(plan: IndexPlan) -> None:
    with _written(plan) as path, _reader(path, plan) as index:
        header, accepted = index.header, plan.accepted
        assert header.index_count == 1 + len(accepted)
        assert header.hash_slot_count == len({index_key_hash(p.key) % plan.slot_count for p in accepted})
        assert index.is_full == (len(plan.puts) >= plan.capacity - 1)
        if accepted:
            assert (header.begin_timestamp, header.begin_phy_offset) == (
                accepted[0].store_timestamp, accepted[0].phy_offset)
            assert (header.end_timestamp, header.end_phy_offset) == (
                accepted[-1].store_timestamp, accepted[-1].phy_offset)


@fuzz_settings()
@given(index_plans())
def test_schemas_agree_with_the_codec_reader(plan: IndexPlan) -> None:
    """The header, every slot and every entry parsed with the construct schemas equal what the codec
    reads, and entries chain as putKey links them."""
    with _written(plan) as path:
        data = path.read_bytes()
        with _reader(path, plan) as index:
            header = IndexHeader.parse(data[:HEADER_SIZE])
            assert {k: v for k, v in header.items() if k != "_io"} == vars(index.header)
            for slot in range(plan.slot_count):
                at = slot_position(slot, plan.slot_count)
                assert IndexSlot.parse(data[at:at + SLOT_SIZE]).index == index.slot(slot)
            newest: dict[int, int] = {}
            for number, (entry, put) in enumerate(zip(index.entries(), plan.accepted, strict=True), start=1):
                at = entry_position(number, plan.slot_count)
                parsed = IndexEntry.parse(data[at:at + ENTRY_SIZE])
                slot = index_key_hash(put.key) % plan.slot_count
                assert (parsed.key_hash, parsed.phy_offset, parsed.time_diff, parsed.prev_index) == (
                    entry.key_hash, entry.phy_offset, entry.time_diff, entry.prev_index) == (
                    index_key_hash(put.key), put.phy_offset,
                    time_diff_seconds(put.store_timestamp, plan.accepted[0].store_timestamp),
                    newest.get(slot, 0))
                newest[slot] = number
            assert {slot: index.slot(slot) for slot in newest} == newest


@fuzz_settings()
@given(index_plans(default_ratio=True))
def test_counts_are_inferred_from_the_size_at_the_default_ratio(plan: IndexPlan) -> None:
    with _written(plan) as path, IndexFile(path) as index:
        assert (index.slot_count, index.capacity) == (plan.slot_count, plan.capacity)


CORRUPTIONS = ("truncate", "flip", "word")


def _corrupted(rng: random.Random, data: bytes, how: str) -> bytes:
    """Truncated, bit-flipped, or one aligned int32 word (header field, slot, entry field) overwritten."""
    if how == "truncate":
        return data[:rng.randrange(len(data) + 1)]
    if how == "flip" or len(data) < 4:
        return bit_flip(rng, data)
    at = rng.randrange(len(data) // 4) * 4
    return data[:at] + struct.pack(">i", rng.randint(-(1 << 31), (1 << 31) - 1)) + data[at + 4:]


@fuzz_settings()
@given(index_plans(), st.randoms(use_true_random=False),
       st.lists(st.sampled_from(CORRUPTIONS), min_size=1, max_size=3))
def test_corrupted_index_files_raise_only_typed_errors(plan: IndexPlan, rng: random.Random,
                                                       corruptions: list[str]) -> None:
    with _written(plan) as path:
        data = path.read_bytes()
        for how in corruptions:
            data = _corrupted(rng, data, how) if data else data
        path.write_bytes(data)
        with contextlib.suppress(RocketMQSpecError), _reader(path, plan) as index:
            list(index.entries())
            for put in plan.puts:
                index.lookup(put.key)


def test_regression_lookup_through_a_corrupt_slot_raises_a_typed_error() -> None:
    """Found by the corruption property: lookup read the entry a slot named without checking that it lies
    in the file, so a corrupt header and slot escaped as struct.error."""
    plan = IndexPlan(slot_count=1, capacity=4, puts=(Put("T#a", 0, 1000),))
    with _written(plan) as path:
        data = bytearray(path.read_bytes())
        data[36:40] = struct.pack(">i", (1 << 31) - 1)  # index_count
        data[40:44] = struct.pack(">i", 1000)  # slot 0 names entry 1000 of a 4-entry file
        path.write_bytes(bytes(data))
        with _reader(path, plan) as index, pytest.raises(StoreError, match="past the entry area"):
            index.lookup("T#a")
