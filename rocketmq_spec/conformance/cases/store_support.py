"""What the store cases share: the store opened once per module, its records scanned once (fully decoded,
or only their fixed fields), and its index files opened with the store's slot and entry counts."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

import pytest

from rocketmq_spec.codec.fast_store import FixedFields
from rocketmq_spec.codec.store.directory import StoreDirectory
from rocketmq_spec.codec.store.indexfile import IndexFile
from rocketmq_spec.codec.store.record import MessageRecord
from rocketmq_spec.conformance.verdict import Info
from rocketmq_spec.spec.errors import RocketMQSpecError, StoreError
from rocketmq_spec.spec.indexfile import RMQ_IDX_LAYOUT

from .raw_records import RawWalk, walk

R = TypeVar("R", MessageRecord, FixedFields)


@dataclass
class Scan(Generic[R]):
    """The records read before the end of the data, or before the error that stopped the reader."""

    records: list[R]
    error: RocketMQSpecError | None


def _collect(reader: Iterator[R]) -> Scan[R]:
    records: list[R] = []
    try:
        records.extend(reader)
    except RocketMQSpecError as exc:
        return Scan(records, exc)
    return Scan(records, None)


@pytest.fixture(scope="module")
def store(store_dir: Path, index_counts: tuple[int, int] | None) -> Iterator[StoreDirectory]:
    with StoreDirectory(store_dir, index_sizes=index_counts) as directory:
        yield directory


@pytest.fixture(scope="module")
def scan(store: StoreDirectory) -> Scan[MessageRecord]:
    """Every record fully decoded, CRCs verified: for cases that need bodies, topics or properties."""
    return _collect(store.messages(verify_crc=True))


@pytest.fixture(scope="module")
def fixed(store: StoreDirectory) -> Scan[FixedFields]:
    """The fixed fields of every record (offsets, sizes, flags, timestamps), without decoding the rest."""
    return _collect(store.commitlog.scan())


@pytest.fixture(scope="module")
def by_offset(scan: Scan[MessageRecord]) -> dict[int, MessageRecord]:
    return {r.physical_offset: r for r in scan.records}


@dataclass
class IndexFiles:
    """The store's index files oldest first, or why they cannot be read with its slot and entry counts."""

    files: list[IndexFile]
    unreadable: StoreError | None

    def readable(self) -> list[IndexFile]:
        """The files, for a case that reads their content; unreadable files are judged once, by
        ``test_index_file_sizes``, and every other index case reports INFO instead of repeating it."""
        if self.unreadable is not None:
            raise Info(f"index files not readable ({self.unreadable.message}); their sizes are judged by "
                       f"{RMQ_IDX_LAYOUT.id}", expected=self.unreadable.expected, actual=self.unreadable.seen)
        return self.files


@pytest.fixture(scope="module")
def index_files(store: StoreDirectory, index_counts: tuple[int, int] | None) -> Iterator[IndexFiles]:
    """Each index file opened once for the whole module."""
    slots, entries = index_counts or (None, None)
    with contextlib.ExitStack() as stack:
        try:
            opened = [stack.enter_context(IndexFile(path, slot_count=slots, index_count=entries))
                      for path in store.index_files()]
            found = IndexFiles(opened, None)
        except StoreError as exc:
            found = IndexFiles([], exc)
        yield found


@pytest.fixture(scope="module")
def raw(store_dir: Path, store: StoreDirectory) -> RawWalk:
    """The records as read raw; a torn last record is judged by RMQ-CL-TORN-TAIL (INFO after a crash,
    NON-STRICT without an abort file), not by the record cases."""
    found = walk(store_dir)
    torn = store.commitlog.end.torn
    if torn is not None:
        found.cut_at(torn.offset)
    return found
