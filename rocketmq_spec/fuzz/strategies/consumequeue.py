"""ConsumeQueue entries in their three forms: plain, pre-blank filler and ConsumeQueueExt address.

A plain entry points at a record (offset >= 0, size > 0) with a tags hash above the ext-address range; a
pre-blank entry is the fixed (0, MAX_INT, 0); an ext entry carries a decorated ext-file offset instead of
a hash. Entries are (commitlog_offset, size, tags_code) triples, the codec's own shape.
"""

from __future__ import annotations

from hypothesis import strategies as st

from rocketmq_spec.fuzz.strategies.primitives import INT32, INT64
from rocketmq_spec.spec.consumequeue import (
    EXT_ADDRESS_BASE,
    EXT_MAX_ADDRESS,
    PRE_BLANK_OFFSET,
    PRE_BLANK_SIZE,
    PRE_BLANK_TAGS_CODE,
    ext_address,
    is_pre_blank,
)

Entry = tuple[int, int, int]


def plain_entries() -> st.SearchStrategy[Entry]:
    hashes = st.integers(EXT_MAX_ADDRESS + 1, INT64[1])
    # the pre-blank entry's three values are each valid in a plain entry, but not together
    return st.tuples(st.integers(0, INT64[1]), st.integers(1, INT32[1]), hashes).filter(
        lambda entry: not is_pre_blank(*entry))


def pre_blank_entries() -> st.SearchStrategy[Entry]:
    return st.just((PRE_BLANK_OFFSET, PRE_BLANK_SIZE, PRE_BLANK_TAGS_CODE))


def ext_offsets() -> st.SearchStrategy[int]:
    """Offsets in the ext file whose decorated address lies in the ext range."""
    return st.integers(0, EXT_MAX_ADDRESS - EXT_ADDRESS_BASE)


def ext_entries() -> st.SearchStrategy[Entry]:
    return st.tuples(st.integers(0, INT64[1]), st.integers(1, INT32[1]), ext_offsets().map(ext_address))


def entries() -> st.SearchStrategy[Entry]:
    return st.one_of(plain_entries(), pre_blank_entries(), ext_entries())


def any_entries() -> st.SearchStrategy[Entry]:
    """Any triple of the field widths, unwritten and corrupt ones included (what a reader meets)."""
    return st.tuples(st.integers(*INT64), st.integers(*INT32), st.integers(*INT64))


def queue_files(max_entries: int = 8) -> st.SearchStrategy[list[Entry]]:
    """The entries of one queue file: written ones, then maybe a zeroed or corrupt one and more after it."""
    return st.lists(st.one_of(entries(), any_entries(), st.just((0, 0, 0))), max_size=max_entries)
