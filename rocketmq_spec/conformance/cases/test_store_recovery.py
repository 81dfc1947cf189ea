"""What recovery relies on, read raw: consume-queue entries (and their ext addresses), the checkpoint's
bound, and the abort file's promise.

A broker that restarts trusts three things of the store it finds: each consume-queue entry says where
and how long its record is; everything stored before the checkpoint's minimum timestamp is already in
the consume queues and the index, so recovery may start there; and a store without an abort file was
shut down with every record dispatched. These cases judge each promise against the records as
:mod:`rocketmq_spec.conformance.cases.raw_records` reads them.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from rocketmq_spec.codec.store.commitlog import segment_files
from rocketmq_spec.codec.store.directory import StoreDirectory
from rocketmq_spec.conformance.case import case
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.verdict import Info, NonStrict
from rocketmq_spec.spec.consumequeue import is_ext_address, is_pre_blank
from rocketmq_spec.spec.store_layout import (
    ABORT_FILE,
    CHECKPOINT_FILE,
    CONSUMEQUEUE_DIR,
    CONSUMEQUEUE_EXT_DIR,
)
from rocketmq_spec.spec.system_topics import SCHEDULE_TOPIC

from .raw_records import RawRecord, RawWalk, java_string_hash

CQ_ENTRY = struct.Struct(">qiq")
"""RMQ-CQ-ENTRY: commitlog offset, record size, tags code."""
EXT_UNIT = struct.Struct(">hqqh")
"""A ConsumeQueueExt unit: size, tags code, store time, bitmap size."""
LONG_MIN = -(1 << 63)
CHECKPOINT = struct.Struct(">qqq")
"""physicMsgTimestamp, logicsMsgTimestamp, indexMsgTimestamp."""
RECOVERY_MARGIN_MS = 3000
SHOWN = 10


@dataclass(frozen=True)
class QueueEntry:
    topic: str
    queue_id: int
    number: int
    offset: int
    size: int
    tags_code: int


def _queue_entries(directory: Path) -> Iterator[QueueEntry]:
    """A queue's entries up to the first without offset >= 0 and size > 0 (RMQ-CQ-END)."""
    number = None
    for segment in segment_files(directory):
        data = segment.path.read_bytes()
        number = segment.start // CQ_ENTRY.size if number is None else number
        for at in range(0, len(data) - CQ_ENTRY.size + 1, CQ_ENTRY.size):
            offset, size, code = CQ_ENTRY.unpack_from(data, at)
            if offset < 0 or size <= 0:
                return
            yield QueueEntry(directory.parent.name, int(directory.name), number, offset, size, code)
            number += 1


@pytest.fixture(scope="module")
def queue_entries(store_dir: Path) -> list[QueueEntry]:
    return [entry for directory in sorted((store_dir / CONSUMEQUEUE_DIR).glob("*/*"))
            for entry in _queue_entries(directory)]


def _by_position(raw: RawWalk) -> dict[int, RawRecord]:
    return {r.position: r for r in raw.records}


@case("RMQ-CQ-ENTRY",
      "Each consume-queue entry read as (int64 offset, int32 size, int64 tags code) that points at a record "
      "carries that record's TOTALSIZE (pre-blank entries, which point nowhere, aside).")
def test_queue_entry_fields(queue_entries: list[QueueEntry], raw: RawWalk, check: Check) -> None:
    records = _by_position(raw)
    pointing = [(e, records[e.offset]) for e in queue_entries
                if e.offset in records and not is_pre_blank(e.offset, e.size, e.tags_code)]
    check.note("entries pointing at a record", len(pointing))
    check.equal("entries whose size is not their record's TOTALSIZE", [],
                [(e.topic, e.queue_id, e.number, e.size, r.total_size) for e, r in pointing
                 if e.size != r.total_size][:SHOWN])


def _ext_unit(store_dir: Path, entry: QueueEntry) -> tuple[int, int, int, int] | None:
    """The ext unit a decorated tags code addresses, or None when no ext file holds that address."""
    address = entry.tags_code - LONG_MIN
    for segment in segment_files(store_dir / CONSUMEQUEUE_EXT_DIR / entry.topic / str(entry.queue_id)):
        data = segment.path.read_bytes()
        if segment.start <= address <= segment.start + len(data) - EXT_UNIT.size:
            unit = EXT_UNIT.unpack_from(data, address - segment.start)
            return unit if unit[0] > 0 else None
    return None


def _expected_tags_code(entry: QueueEntry, record: RawRecord) -> int | None:
    """What the unit's tags code must be, when the record tells it (a delayed message's is its time)."""
    if entry.topic == SCHEDULE_TOPIC:
        return None
    tags = record.property_map.get("TAGS")
    return java_string_hash(tags) if tags else 0


@case("RMQ-CQ-EXT-ADDRESS",
      "A tags code <= -2147483649 is no hash (a Java hash is an int) but an address, code - Long.MIN_VALUE, "
      "of a consumequeue_ext unit holding the record's store time and tags code.")
def test_ext_addresses_resolve(queue_entries: list[QueueEntry], raw: RawWalk, store_dir: Path,
                               check: Check) -> None:
    records = _by_position(raw)
    decorated = [e for e in queue_entries if is_ext_address(e.tags_code)]
    check.note("entries with an ext address", len(decorated))
    wrong: list[tuple[str, int, int, object, str]] = []
    for entry in decorated:
        unit = _ext_unit(store_dir, entry)
        record = records.get(entry.offset)
        if unit is None:
            wrong.append((entry.topic, entry.queue_id, entry.number, entry.tags_code, "no ext unit"))
        elif record is not None and (unit[2] != record.store_timestamp
                                     or _expected_tags_code(entry, record) not in (None, unit[1])):
            wrong.append((entry.topic, entry.queue_id, entry.number, unit, "not the record's"))
    check.equal("ext addresses not resolving to their record's unit", [], wrong[:SHOWN])


@dataclass(frozen=True)
class Checkpoint:
    physic: int
    logics: int
    index: int

    @property
    def recovery_start(self) -> int:
        """RMQ-CKPT-MIN-TIMESTAMP: max(0, min(physic, logics) - 3000)."""
        return max(0, min(self.physic, self.logics) - RECOVERY_MARGIN_MS)


@case("RMQ-CKPT-MIN-TIMESTAMP",
      "Every dispatchable record stored at or before max(0, min(physic, logics) - 3000) has its "
      "consume-queue entry, as recovery starting there assumes (an unflushed checkpoint bounds nothing).")
def test_checkpoint_bounds_recovery(store_dir: Path, queue_entries: list[QueueEntry], raw: RawWalk,
                                    check: Check) -> None:
    point = Checkpoint(*CHECKPOINT.unpack_from((store_dir / CHECKPOINT_FILE).read_bytes(), 0))
    check.note("checkpoint", point)
    if point.physic == 0 or point.logics == 0:
        raise Info("the checkpoint was never flushed (RMQ-CKPT-ZERO): it bounds no recovery")
    queued = {e.offset for e in queue_entries}
    covered = [r for r in raw.records if r.dispatched and r.store_timestamp <= point.recovery_start]
    check.note("records before the recovery start", len(covered))
    check.equal("records before the recovery start without a consume-queue entry", [],
                [r.position for r in covered if r.position not in queued][:SHOWN])


@case("RMQ-STORE-ABORT",
      "A store without an abort file was shut down cleanly: its CommitLog ends with a whole record and every "
      "dispatchable record has its consume-queue entry (Java deletes the file only once dispatch is done); "
      "a crash's leftovers without the file are NON-STRICT, as a torn tail there is (RMQ-CL-TORN-TAIL).")
def test_no_abort_file_means_a_finished_store(store: StoreDirectory, store_dir: Path,
                                              queue_entries: list[QueueEntry], raw: RawWalk,
                                              check: Check) -> None:
    if (store_dir / ABORT_FILE).exists():
        raise Info("abort file present: the store was not shut down cleanly (or is in use)")
    torn = store.commitlog.end.torn
    queued = {e.offset for e in queue_entries}
    undispatched = [r.position for r in raw.records if r.dispatched and r.position not in queued]
    check.note("records", len(raw.records))
    if torn is not None or undispatched:
        raise NonStrict("no abort file, yet the store holds a crash's leftovers",
                        expected="a whole last record, every record dispatched",
                        actual={"torn record at": torn and torn.offset, "undispatched": undispatched[:SHOWN]})
