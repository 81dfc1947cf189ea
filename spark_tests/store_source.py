"""``spark.read.format("rocketmq-store").load(DIR)``: a broker's store directory as a DataFrame.

The source is a thin Spark shell around ``codec.store``: partitions are planned on the driver from file
sizes and consume-queue (or index) offsets, and each task walks its byte range with the codec's fast scan
and builds Arrow record batches column by column (``codec.store.columns``); from the first record the
columns cannot vouch for, the codec's record decoder takes over and reports it. Options:

``table``        ``messages`` (default, one row per CommitLog record), ``consumequeue`` or ``index``
``decompress``   ``true`` to return bodies decompressed as the producer sent them (default ``false``)
``splitBytes``   target bytes of CommitLog per partition (default 64 MiB)
``boundaries``   where split points come from: ``consumequeue`` (default) or ``index``
``onError``      ``fail`` (default) or ``row``: end the partition with an error row instead of failing
``batchRows``    rows per Arrow batch
``indexSizes``   ``SLOTS,ENTRIES`` of the index files (default: inferred from their size)
``columns``      comma-separated ``messages`` columns to return, in that order (default: all). Spark's
                 Python sources are told no required columns, and a JVM turning wide rows of maps,
                 lists and bodies into its own rows costs more than reading them; a query that needs
                 a few columns says so here
``filterPushdown`` ``true`` to take Spark's pushed filters on ``topic``, ``queue_id``, ``queue_offset``,
                 ``physical_offset`` and the timestamps (:mod:`spark_tests.pushdown`); Spark hands them
                 over only with ``spark.sql.python.filterPushdown.enabled`` set, and refuses a source
                 that asks for them without it, so the option is off by default
"""

from __future__ import annotations

import mmap
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, Filter, InputPartition
from pyspark.sql.types import StructType

from codec.fast_store import RECORD_PREFIX
from codec.store import IndexFile, StoreDirectory
from codec.store.commitlog import map_file
from codec.store.data_end import zero_from
from spark_tests.message_reads import listed_batches, message_batches
from spark_tests.options import choice, flag, index_sizes, positive, subset
from spark_tests.planning import DEFAULT_SPLIT_BYTES, CommitLogFile, CommitLogSplit, plan_splits
from spark_tests.pushdown import RecordFilter, group_records, queue_plan, record_filter
from spark_tests.tables import (
    ARROW_BATCH_ROWS,
    CONSUME_QUEUE_SCHEMA,
    INDEX_SCHEMA,
    MESSAGE_SCHEMA,
    batches,
    spark_schema,
)
from spec.commitlog import BLANK_MAGIC
from spec.errors import RocketMQSpecError

FORMAT = "rocketmq-store"
TABLES = {"messages": MESSAGE_SCHEMA, "consumequeue": CONSUME_QUEUE_SCHEMA, "index": INDEX_SCHEMA}
BOUNDARY_SOURCES = ("consumequeue", "index")
ERROR_MODES = ("fail", "row")


@dataclass(frozen=True)
class StoreOptions:
    root: str
    table: str
    decompress: bool
    split_bytes: int
    boundaries: str
    on_error: str
    batch_rows: int
    index_sizes: tuple[int, int] | None
    filter_pushdown: bool
    columns: tuple[str, ...] | None

    @property
    def arrow_schema(self) -> pa.Schema:
        schema = TABLES[self.table]
        return schema if self.columns is None else pa.schema([schema.field(name) for name in self.columns])

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> StoreOptions:
        if not options.get("path"):
            raise ValueError(f'format("{FORMAT}") needs a store directory: .load(DIR)')
        table = choice(options, "table", TABLES)
        return cls(
            root=options["path"], table=table,
            decompress=flag(options, "decompress"),
            split_bytes=positive(options, "splitBytes", DEFAULT_SPLIT_BYTES),
            boundaries=choice(options, "boundaries", BOUNDARY_SOURCES),
            on_error=choice(options, "onError", ERROR_MODES),
            batch_rows=positive(options, "batchRows", ARROW_BATCH_ROWS),
            index_sizes=index_sizes(options, "indexSizes"),
            filter_pushdown=flag(options, "filterPushdown"),
            columns=subset(options, "columns", MESSAGE_SCHEMA.names) if table == "messages" else None,
        )


class RocketMQStoreDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> StructType:
        return spark_schema(StoreOptions.parse(self.options).arrow_schema)

    def reader(self, schema: StructType) -> DataSourceReader:
        options = StoreOptions.parse(self.options)
        return FilteringStoreReader(options) if options.filter_pushdown else StoreReader(options)


@dataclass(frozen=True)
class QueuePartition(InputPartition):
    topic: str
    queue_id: int


@dataclass(frozen=True)
class IndexPartition(InputPartition):
    path: str


@dataclass(frozen=True)
class RecordsPartition(InputPartition):
    """Records of one CommitLog file at known offsets (from the consume queues), in offset order."""

    path: str
    base: int
    offsets: bytes
    """Absolute offsets as native int64 (compact to pickle to a worker)."""


class StoreReader(DataSourceReader):
    def __init__(self, options: StoreOptions) -> None:
        self.options = options
        self.filter = RecordFilter()

    def partitions(self) -> list[InputPartition]:
        with StoreDirectory(self.options.root) as store:
            if self.options.table == "consumequeue":
                return [QueuePartition(topic, queue_id) for topic, queue_id in store.queues()]
            if self.options.table == "index":
                return [IndexPartition(str(path)) for path in store.index_files()]
            if not self.filter.empty:
                return filtered_partitions(store, self.filter, self.options.split_bytes)
            return commitlog_splits(store, self.options.split_bytes, self.options.boundaries,
                                    index_sizes=self.options.index_sizes)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        columns = self.options.columns
        for batch in self._batches(partition):
            yield batch if columns is None else batch.select(list(columns))

    def _batches(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        with StoreDirectory(self.options.root) as store:
            if isinstance(partition, QueuePartition):
                yield from queue_batches(store, partition, self.options.batch_rows)
            elif isinstance(partition, IndexPartition):
                rows = index_rows(Path(partition.path), self.options.index_sizes)
                yield from batches(rows, INDEX_SCHEMA, self.options.batch_rows)
            elif isinstance(partition, RecordsPartition):
                yield from listed_batches(partition.path, partition.base,
                                          np.frombuffer(partition.offsets, dtype=np.int64),
                                          decompress=self.options.decompress, size=self.options.batch_rows,
                                          wanted=self.filter, columns=self.options.columns)
            elif isinstance(partition, CommitLogSplit):
                yield from message_batches(store, partition, decompress=self.options.decompress,
                                           errors_as_rows=self.options.on_error == "row",
                                           size=self.options.batch_rows, wanted=self.filter,
                                           columns=self.options.columns)
            # else: Spark's stand-in partition for a plan with none (a query nothing can match)


class FilteringStoreReader(StoreReader):
    """A reader that takes Spark's pushed filters (``filterPushdown``) for the ``messages`` table."""

    def pushFilters(self, filters: list[Filter]) -> Iterable[Filter]:
        if self.options.table == "messages":
            self.filter = record_filter(filters)
        return filters


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
    not involve the queues or they are inconsistent, the full plan. Partitions wholly outside a
    physical-offset range are left out."""
    files = store.commitlog.files
    if not files:
        return []
    low, high = wanted.bounds("physical_offset")
    data_end = files[-1].start + files[-1].path.stat().st_size
    plan = queue_plan(store, wanted, files[0].start, data_end) if wanted.uses_queues else None
    if plan is None:
        return [split for split in commitlog_splits(store, split_bytes, "consumequeue")
                if split.end > low and split.start <= high]
    in_range = (plan.wanted >= low) & (plan.wanted <= high)
    starts = [f.start for f in files]
    groups = group_records(plan.wanted[in_range], plan.sizes[in_range], starts, split_bytes)
    parts: list[InputPartition] = [
        RecordsPartition(str(files[number].path), files[number].start, offsets.astype(np.int64).tobytes())
        for number, offsets in groups]
    for begin, end in plan.gaps:
        if end <= low or begin > high:
            continue
        for segment in files:
            segment_end = segment.start + segment.path.stat().st_size
            start = max(begin, segment.start)
            if segment.start < end and begin < segment_end and not (
                    end >= segment_end and holds_no_record(segment.path, start - segment.start)):
                parts.append(CommitLogSplit(str(segment.path), segment.start, start, min(end, segment_end)))
    return parts


def holds_no_record(path: Path, position: int) -> bool:
    """Whether a file's rest from ``position`` is only its BLANK end marker or unwritten zeros (which the
    data end rule of ``codec.store.data_end`` puts past the data): no task need walk it."""
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


def queue_batches(store: StoreDirectory, partition: QueuePartition, size: int) -> Iterator[pa.RecordBatch]:
    queue = store.queue(partition.topic, partition.queue_id)
    entries = queue.entries
    for start in range(0, len(entries), size):
        chunk = entries[start:start + size]
        count = len(chunk)
        first = queue.first_offset + start
        yield pa.RecordBatch.from_arrays([
            pa.array([partition.topic] * count, pa.string()),
            pa.array(np.full(count, partition.queue_id, dtype=np.int32)),
            pa.array(np.arange(first, first + count, dtype=np.int64)),
            pa.array(chunk["commitlog_offset"].astype(np.int64)),
            pa.array(chunk["size"].astype(np.int32)),
            pa.array(chunk["tags_code"].astype(np.int64)),
        ], schema=CONSUME_QUEUE_SCHEMA)


def index_rows(path: Path, sizes: tuple[int, int] | None) -> Iterator[dict[str, Any]]:
    slots, entries = sizes or (None, None)
    with IndexFile(path, slot_count=slots, index_count=entries) as index:
        begin = index.header.begin_timestamp
        for entry in index.entries():
            yield {"index_file": path.name, "entry": entry.index, "key_hash": entry.key_hash,
                   "physical_offset": entry.phy_offset, "time_diff": entry.time_diff,
                   "prev_index": entry.prev_index, "begin_timestamp": begin}

