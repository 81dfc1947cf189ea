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
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from codec.store import IndexFile, StoreDirectory
from codec.store.commitlog import map_file
from spark_tests.options import choice, flag, index_sizes, positive
from spark_tests.planning import DEFAULT_SPLIT_BYTES, CommitLogFile, CommitLogSplit, plan_splits
from spark_tests.tables import (
    ARROW_BATCH_ROWS,
    CONSUME_QUEUE_SCHEMA,
    INDEX_SCHEMA,
    MESSAGE_SCHEMA,
    batches,
    body_reader,
    error_row,
    message_batch,
    message_row,
    spark_schema,
)
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

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> StoreOptions:
        if not options.get("path"):
            raise ValueError(f'format("{FORMAT}") needs a store directory: .load(DIR)')
        return cls(
            root=options["path"], table=choice(options, "table", TABLES),
            decompress=flag(options, "decompress"),
            split_bytes=positive(options, "splitBytes", DEFAULT_SPLIT_BYTES),
            boundaries=choice(options, "boundaries", BOUNDARY_SOURCES),
            on_error=choice(options, "onError", ERROR_MODES),
            batch_rows=positive(options, "batchRows", ARROW_BATCH_ROWS),
            index_sizes=index_sizes(options, "indexSizes"),
        )


class RocketMQStoreDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> StructType:
        return spark_schema(TABLES[StoreOptions.parse(self.options).table])

    def reader(self, schema: StructType) -> DataSourceReader:
        return StoreReader(StoreOptions.parse(self.options))


@dataclass(frozen=True)
class QueuePartition(InputPartition):
    topic: str
    queue_id: int


@dataclass(frozen=True)
class IndexPartition(InputPartition):
    path: str


class StoreReader(DataSourceReader):
    def __init__(self, options: StoreOptions) -> None:
        self.options = options

    def partitions(self) -> list[InputPartition]:
        with StoreDirectory(self.options.root) as store:
            if self.options.table == "consumequeue":
                return [QueuePartition(topic, queue_id) for topic, queue_id in store.queues()]
            if self.options.table == "index":
                return [IndexPartition(str(path)) for path in store.index_files()]
            return commitlog_splits(store, self.options.split_bytes, self.options.boundaries,
                                    index_sizes=self.options.index_sizes)

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        with StoreDirectory(self.options.root) as store:
            if isinstance(partition, QueuePartition):
                yield from queue_batches(store, partition, self.options.batch_rows)
            elif isinstance(partition, IndexPartition):
                rows = index_rows(Path(partition.path), self.options.index_sizes)
                yield from batches(rows, INDEX_SCHEMA, self.options.batch_rows)
            else:
                assert isinstance(partition, CommitLogSplit)
                yield from message_batches(store, partition, decompress=self.options.decompress,
                                           errors_as_rows=self.options.on_error == "row",
                                           size=self.options.batch_rows)


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


def record_starts(store: StoreDirectory, split: CommitLogSplit, size: int) -> Iterator[np.ndarray]:
    """Absolute offsets of the records that begin in ``split``, ``size`` at a time, from the codec's fast
    scan. The walk ends quietly at the first record it refuses: the caller reads on from there with the
    record decoder, which raises (or reports) the same error."""
    starts: list[int] = []
    try:
        for fixed in store.commitlog.scan(split.start):
            if fixed.physical_offset >= split.end:
                break
            starts.append(fixed.physical_offset)
            if len(starts) == size:
                yield np.array(starts, dtype=np.int64)
                starts = []
    except RocketMQSpecError:
        pass
    if starts:
        yield np.array(starts, dtype=np.int64)


def message_batches(store: StoreDirectory, split: CommitLogSplit, *, decompress: bool, errors_as_rows: bool,
                    size: int) -> Iterator[pa.RecordBatch]:
    """Record batches of the records that begin in ``split``: column-wise while the walk and the columns
    accept the records, then row by row from where they stopped (the split's end, where the row reader
    only looks at the next record, or a record that is malformed)."""
    view = map_file(Path(split.path))
    resume = split.start
    for starts in record_starts(store, split, size):
        batch, count = message_batch(view, starts - split.base, decompress=decompress)
        if count:
            yield batch
        if count < len(starts):
            resume = int(starts[count])
            break
        resume = int(starts[-1]) + batch.column("total_size")[-1].as_py()
    rest = message_rows(store, CommitLogSplit(split.path, split.base, resume, split.end),
                        decompress=decompress, errors_as_rows=errors_as_rows)
    yield from batches(rest, MESSAGE_SCHEMA, size)


def message_rows(store: StoreDirectory, split: CommitLogSplit, *, decompress: bool,
                 errors_as_rows: bool) -> Iterator[dict[str, Any]]:
    """Rows of the records that begin in ``split``; with ``errors_as_rows`` a malformed record ends the
    split with an error row (the rest of the file cannot be resynchronised without a boundary)."""
    body = body_reader(decompress)
    position = split.start
    try:
        for record in store.commitlog.records(split.start, verify_crc=False):
            if record.physical_offset >= split.end:
                return
            position = record.physical_offset + record.total_size
            yield message_row(record, body)
    except RocketMQSpecError as exc:
        if not errors_as_rows:
            raise
        yield error_row(exc, position)


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

