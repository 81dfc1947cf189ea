"""Properties of ConsumeQueue entries: the fast paths against the construct schema, the three entry forms,
and the reader's end-of-data rule on arbitrary queue files."""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path

import pytest
from construct import ConstructError
from hypothesis import given
from hypothesis import strategies as st

from rocketmq_spec.codec.fast_store import cq_entries
from rocketmq_spec.codec.store.consumequeue import ConsumeQueue, encode_entry
from rocketmq_spec.fuzz.profiles import fuzz_settings
from rocketmq_spec.fuzz.strategies.consumequeue import (
    Entry,
    any_entries,
    entries,
    ext_entries,
    ext_offsets,
    plain_entries,
    pre_blank_entries,
    queue_files,
)
from rocketmq_spec.spec.commitlog import offset_file_name
from rocketmq_spec.spec.consumequeue import (
    CQ_ENTRY_SIZE,
    ConsumeQueueEntry,
    ext_address,
    ext_offset,
    is_ext_address,
    is_pre_blank,
)
from rocketmq_spec.spec.errors import SpecViolation, StoreError

_NAMES = ("commitlog_offset", "size", "tags_code")


def _build(entry: Entry) -> bytes:
    return ConsumeQueueEntry.build(dict(zip(_NAMES, entry, strict=True)))


@fuzz_settings()
@given(st.one_of(entries(), any_entries()))
def test_encode_entry_equals_the_schema(entry: Entry) -> None:
    assert encode_entry(*entry) == _build(entry)


@fuzz_settings()
@given(st.lists(st.one_of(entries(), any_entries()), max_size=8), st.binary(max_size=CQ_ENTRY_SIZE - 1))
def test_cq_entries_fast_path_equals_the_schema(queue: list[Entry], tail: bytes) -> None:
    """Whole entries are read as the schema parses them; a partial tail is ignored."""
    data = b"".join(_build(entry) for entry in queue) + tail
    fast = [tuple(int(row[name]) for name in _NAMES) for row in cq_entries(data)]
    parsed = [tuple(ConsumeQueueEntry.parse(data[i:i + CQ_ENTRY_SIZE])[name] for name in _NAMES)
              for i in range(0, len(data) - len(tail), CQ_ENTRY_SIZE)]
    assert fast == parsed == queue


@fuzz_settings()
@given(st.tuples(st.integers(-(1 << 70), 1 << 70), st.integers(-(1 << 40), 1 << 40),
                 st.integers(-(1 << 70), 1 << 70)))
def test_out_of_range_fields_are_refused_like_the_schema(entry: Entry) -> None:
    try:
        expected = _build(entry)
    except ConstructError:
        with pytest.raises(SpecViolation):
            encode_entry(*entry)
    else:
        assert encode_entry(*entry) == expected


@fuzz_settings()
@given(st.one_of(plain_entries().map(lambda e: ("plain", e)), pre_blank_entries().map(lambda e: ("blank", e)),
                 ext_entries().map(lambda e: ("ext", e))))
def test_each_form_is_told_apart(form_entry: tuple[str, Entry]) -> None:
    form, entry = form_entry
    assert is_pre_blank(*entry) == (form == "blank")
    assert is_ext_address(entry[2]) == (form == "ext")


@fuzz_settings()
@given(ext_offsets())
def test_ext_addresses_round_trip(offset: int) -> None:
    assert is_ext_address(ext_address(offset))
    assert ext_offset(ext_address(offset)) == offset


def _written(queue: list[Entry]) -> list[Entry]:
    """RMQ-CQ-END: the entries before the first one without offset >= 0 and size > 0."""
    end = next((n for n, (offset, size, _) in enumerate(queue) if offset < 0 or size <= 0), len(queue))
    return queue[:end]


@fuzz_settings()
@given(queue_files(), st.integers(0, 3))
def test_reader_finds_the_written_entries_of_a_queue_file(queue: list[Entry], file_number: int) -> None:
    data = b"".join(_build(entry) for entry in queue)
    start = file_number * len(data)
    with tempfile.TemporaryDirectory() as work:
        (Path(work) / offset_file_name(start)).write_bytes(data)
        read = ConsumeQueue.open(work, "T", 0)
    written = _written(queue)
    assert [tuple(int(row[name]) for name in _NAMES) for row in read.entries] == written
    assert read.first_offset == start // CQ_ENTRY_SIZE
    assert read.max_offset == read.first_offset + len(written)
    blanks = next((n for n, entry in enumerate(written) if not is_pre_blank(*entry)), len(written))
    assert read.min_offset == read.first_offset + blanks


@fuzz_settings()
@given(queue_files(), st.integers(0, CQ_ENTRY_SIZE * 8))
def test_truncated_queue_files_raise_only_store_errors(queue: list[Entry], cut: int) -> None:
    data = b"".join(_build(entry) for entry in queue)
    with tempfile.TemporaryDirectory() as work:
        (Path(work) / offset_file_name(0)).write_bytes(data[:cut])
        with contextlib.suppress(StoreError):
            ConsumeQueue.open(work, "T", 0)
