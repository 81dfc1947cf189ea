"""The struct consume-queue entry encoder equals ``ConsumeQueueEntry.build``, refusals included."""

from __future__ import annotations

import construct
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketmq_spec.codec.fast_store import CQ_DTYPE, pack_cq_entry
from rocketmq_spec.codec.store import encode_entry
from rocketmq_spec.codec.store.consumequeue import written_length
from rocketmq_spec.spec.consumequeue import ConsumeQueueEntry
from rocketmq_spec.spec.errors import SpecViolation

int32 = st.integers(-(2**31), 2**31 - 1)
int64 = st.integers(-(2**63), 2**63 - 1)
anything = st.integers(-(2**70), 2**70)


@given(int64, int32, int64)
def test_entries_equal_the_schema(offset: int, size: int, tags_code: int) -> None:
    fields = {"commitlog_offset": offset, "size": size, "tags_code": tags_code}
    assert encode_entry(offset, size, tags_code) == pack_cq_entry(offset, size, tags_code) == (
        ConsumeQueueEntry.build(fields))


@given(anything, anything, anything)
def test_out_of_range_values_are_refused_by_both(offset: int, size: int, tags_code: int) -> None:
    try:
        ConsumeQueueEntry.build({"commitlog_offset": offset, "size": size, "tags_code": tags_code})
        schema_ok = True
    except construct.ConstructError:
        schema_ok = False
    if schema_ok:
        pack_cq_entry(offset, size, tags_code)
    else:
        with pytest.raises(SpecViolation):
            pack_cq_entry(offset, size, tags_code)


def test_the_dtype_mirrors_the_schema() -> None:
    assert CQ_DTYPE.itemsize == ConsumeQueueEntry.sizeof()
    assert list(CQ_DTYPE.names or ()) == [sc.name for sc in ConsumeQueueEntry.subcons]


@given(st.integers(0, 20_000), st.integers(0, 20_000), st.sampled_from(["offset", "size", "none"]))
def test_written_length_stops_at_the_first_unwritten_entry(length: int, first_bad: int, how: str) -> None:
    """The chunked scan finds the entry a whole-array scan finds, on either side of a chunk's edge."""
    entries = np.zeros(length, dtype=CQ_DTYPE)
    entries["commitlog_offset"], entries["size"] = np.arange(length), 100
    if how != "none" and first_bad < length:
        entries[how if how == "size" else "commitlog_offset"][first_bad:] = -1
    invalid = (entries["commitlog_offset"] < 0) | (entries["size"] <= 0)
    expected = int(np.argmax(invalid)) if invalid.any() else length
    assert written_length(entries) == expected
