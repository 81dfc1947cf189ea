"""Planning a ``rocketmq-store`` read on the driver: the partitions of one store, each a range a task
reads on its own.

A ``messages`` read is split at record boundaries (:mod:`rocketmq_spec.spark.planning`); with pushed filters
it becomes the records the consume queues name plus the ranges no queue accounts for
(:mod:`rocketmq_spec.spark.pushdown`). The ``consumequeue`` and ``index`` tables are one partition per queue
or index file. Partitions name files by path, so the tasks that read them need only the store's directory. """

from __future__ import annotations

import math
import mmap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pyspark.sql.datasource import InputPartition

from rocketmq_spec.codec.fast_store import RECORD_PREFIX
from rocketmq_spec.codec.store import IndexFile, StoreDirectory
from rocketmq_spec.codec.store.commitlog import map_file
from rocketmq_spec.codec.store.data_end import zero_from
from rocketmq_spec.spark.planning import CommitLogFile, CommitLogSplit, distinct_offsets, plan_splits
from rocketmq_spec.spark.pushdown import RecordFilter, group_records, queue_plan
from rocketmq_spec.spark.time_range import TIME_COLUMN, narrowed_by_time
from rocketmq_spec.spec.commitlog import BLANK_MAGIC
from rocketmq_spec.spec.errors import RocketMQSpecError

UNBOUNDED = (-math.inf, math.inf)


@dataclass(frozen=True)
class QueuePartition(InputPartition):
    topic: str
    queue_id: int


@dataclass(frozen=True)
class IndexPartition(InputPartition):
    path: str


@dataclass(frozen=True)
class RecordsPartition(InputPartition):
    """Records at known offsets (from the consume queues), in offset order, in one or more CommitLog
    files."""

    paths: tuple[str, ...]
    bases: tuple[int, ...]
    """Absolute commitlog offset of each file's first byte, ascending."""
    offsets: bytes
    """Absolute offsets as native int64 (compact to pickle to a worker)."""

    def per_file(self) -> Iterator[tuple[str, int, np.ndarray]]:
        """(path, base, offsets) of each file, the offsets that fall in it."""
        offsets = np.frombuffer(self.offsets, dtype=np.int64)
        cuts = np.searchsorted(offsets, np.asarray(self.bases[1:], dtype=np.int64))
        yield from zip(self.paths, self.bases, np.split(offsets, cuts), strict=True)


def record_boundaries(store: StoreDirectory, source: str, index_sizes: tuple[int, int] | None) -> np.ndarray:
    """Commitlog offsets known to start a record, from every consume queue or every index file."""
    if source == "index":
        slots, entries = index_sizes or (None, None)
        offsets: list[int] = []
        for path in store.index_files():
            with IndexFile(path, slot_count=slots, index_count=entries) as index:
                offsets += (entry.phy_offset for entry in index.entries())
        return np.asarray(offsets, dtype=np.int64)
    parts = [store.queue(topic, queue_id).entries["commitlog_offset"] for topic, queue_id in store.queues()]
    return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, dtype=np.int64)


def starts_record(store: StoreDirectory, offset: int) -> bool:
    """Whether a record whose PHYSICALOFFSET names ``offset`` begins there: the consume queues of a broken
    store may point anywhere, and a split must never begin inside a record."""
    try:
        return store.commitlog.read(offset, verify_crc=False).physical_offset == offset
    except RocketMQSpecError:
        return False


def commitlog_splits(store: StoreDirectory, split_bytes: int, source: str, *,
                     index_sizes: tuple[int, int] | None = None) -> list[CommitLogSplit]:
    files = [CommitLogFile(str(f.path), f.start, f.path.stat().st_size) for f in store.commitlog.files]
    planned = plan_splits(files, record_boundaries(store, source, index_sizes), split_bytes)
    kept: list[CommitLogSplit] = []
    for split in planned:
        if split.start != split.base and not starts_record(store, split.start):
            previous = kept.pop()
            split = CommitLogSplit(previous.path, previous.base, previous.start, split.end)
        kept.append(split)
    return kept


def filtered_partitions(store: StoreDirectory, wanted: RecordFilter,
                        split_bytes: int) -> list[InputPartition]:
    """The partitions a query with ``wanted`` needs: the wanted records the consume queues point at,
    grouped by file, and the commitlog ranges no consume queue accounts for; or, when the filter does
    not involve the queues or they are inconsistent, the full plan. A store-time range becomes a
    physical-offset range (:mod:`rocketmq_spec.spark.time_range`); partitions are cut to that range."""
    files = store.commitlog.files
    if not files:
        return []
    if wanted.bounds(TIME_COLUMN) != UNBOUNDED or wanted.bounds("physical_offset")[0] != -math.inf:
        # only a time range or a lowest physical offset needs every known record start (sorted)
        starts = distinct_offsets(record_boundaries(store, "consumequeue", None))
        wanted = narrowed_by_time(store, wanted, starts)
        first = _start_at_or_before(store, starts, wanted.bounds("physical_offset")[0])
    else:
        first = None
    low, high = wanted.bounds("physical_offset")
    data_end = files[-1].start + files[-1].path.stat().st_size
    plan = queue_plan(store, wanted, files[0].start, data_end) if wanted.uses_queues else None
    if plan is None:
        return [cut for split in commitlog_splits(store, split_bytes, "consumequeue")
                if (cut := _cut(split, low, high, first)) is not None]
    in_range = (plan.wanted >= low) & (plan.wanted <= high)
    file_starts = np.asarray([f.start for f in files], dtype=np.int64)
    parts: list[InputPartition] = []
    for offsets in group_records(plan.wanted[in_range], plan.sizes[in_range], split_bytes):
        owners = np.searchsorted(file_starts, offsets[[0, -1]], side="right") - 1
        used = files[int(owners[0]):int(owners[1]) + 1]
        parts.append(RecordsPartition(tuple(str(f.path) for f in used), tuple(f.start for f in used),
                                      offsets.astype(np.int64).tobytes()))
    for begin, end in plan.gaps:
        for segment in files:
            segment_end = segment.start + segment.path.stat().st_size
            start = max(begin, segment.start)
            if segment.start < end and begin < segment_end and not (
                    end >= segment_end and holds_no_record(segment.path, start - segment.start)):
                cut = _cut(CommitLogSplit(str(segment.path), segment.start, start, min(end, segment_end)),
                           low, high, first)
                parts += [cut] if cut is not None else []
    return parts


def _start_at_or_before(store: StoreDirectory, starts: np.ndarray, low: float) -> int | None:
    """The last known record start at or before ``low`` (checked against the store), if any: no record
    before it can be at or after ``low``."""
    at = int(np.searchsorted(starts, low, side="right")) - 1
    if low == -math.inf or at < 0 or not starts_record(store, int(starts[at])):
        return None
    return int(starts[at])


def _cut(split: CommitLogSplit, low: float, high: float, first: int | None) -> CommitLogSplit | None:
    """``split`` without the records that begin outside ``[low, high]`` as far as record starts allow
    (from ``first``, a record start at or before ``low``); None if that leaves nothing."""
    if split.end <= low or split.start > high:
        return None
    start = split.start if first is None else max(split.start, first)
    end = split.end if high == math.inf else min(split.end, int(high) + 1)
    return CommitLogSplit(split.path, split.base, start, end) if start < end else None


def holds_no_record(path: Path, position: int) -> bool:
    """Whether a file's rest from ``position`` is only its BLANK end marker or unwritten zeros (which the
    data end rule of ``rocketmq_spec.codec.store.data_end`` puts past the data): no task need walk it."""
    with path.open("rb") as handle:
        handle.seek(position)
        prefix = handle.read(RECORD_PREFIX.size)
    if len(prefix) < RECORD_PREFIX.size:
        return True
    total_size, magic = RECORD_PREFIX.unpack(prefix)
    if magic == BLANK_MAGIC and total_size == path.stat().st_size - position:
        return True
    if total_size or magic:
        return False
    view = map_file(path)
    try:
        return zero_from(path, view, position)
    finally:
        if isinstance(view, mmap.mmap):
            view.close()



@dataclass(frozen=True)
class StorePartition(InputPartition):
    """One task's share of a read: ``part`` of the store at ``root``, the store of broker ``broker``."""

    root: str
    broker: str
    part: InputPartition


def store_partitions(store: StoreDirectory, table: str, wanted: RecordFilter, *, split_bytes: int,
                     boundaries: str, index_sizes: tuple[int, int] | None) -> list[InputPartition]:
    """The partitions of one store's ``table``, for a query that keeps only the records ``wanted``."""
    if table == "consumequeue":
        return [QueuePartition(topic, queue_id) for topic, queue_id in store.queues()]
    if table == "index":
        return [IndexPartition(str(path)) for path in store.index_files()]
    if not wanted.empty:
        return filtered_partitions(store, wanted, split_bytes)
    return [*commitlog_splits(store, split_bytes, boundaries, index_sizes=index_sizes)]
