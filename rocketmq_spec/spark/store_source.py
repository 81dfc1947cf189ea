"""``spark.read.format("rocketmq-store").load(DIR)``: a broker's store directory as a DataFrame, and
``load([DIR, ...])`` or ``load(GLOB)`` the stores of several brokers as one, with a ``broker`` column
(:mod:`rocketmq_spec.spark.store_paths`), each task reading one broker's range.

The source is a thin Spark shell around ``rocketmq_spec.codec.store``: partitions are planned on the driver
from file sizes and consume-queue (or index) offsets, and each task walks its byte range with the codec's fast
scan and builds Arrow record batches column by column (``rocketmq_spec.codec.store.columns``); from the first
record the columns cannot vouch for, the codec's record decoder takes over and reports it. Options:

``table``        ``messages`` (default, one row per CommitLog record), ``consumequeue`` or ``index``
``decompress``   ``true`` to return bodies decompressed as the producer sent them (default ``false``)
``splitBytes``   target bytes of CommitLog per partition (default 64 MiB)
``boundaries``   where split points come from: ``consumequeue`` (default) or ``index``
``onError``      ``fail`` (default) or ``row``: end the partition with an error row instead of failing
``batchRows``    rows per Arrow batch
``indexSizes``   ``SLOTS,ENTRIES`` of the index files (default: inferred from their size)
``columns``      comma-separated columns to return, in that order (default: all). Spark's Python
                 sources are told no required columns, and a JVM turning wide rows of maps, lists and
                 bodies into its own rows costs more than reading them; a query that needs a few
                 columns says so here, or gives them as ``.schema(...)``, or lets
                 :mod:`rocketmq_spec.spark.required_columns` read them off its plan
``brokerNames``  comma-separated broker names of the loaded stores, in order (default: from the paths)
``filterPushdown`` ``true`` to take Spark's pushed filters on ``topic``, ``queue_id``, ``queue_offset``,
                 ``physical_offset`` and the timestamps (:mod:`rocketmq_spec.spark.pushdown`); Spark hands
                 them over only with ``spark.sql.python.filterPushdown.enabled`` set, and refuses a source
                 that asks for them without it, so the option is off by default
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, Filter, InputPartition
from pyspark.sql.types import StructType

from rocketmq_spec.codec.store import IndexFile, StoreDirectory
from rocketmq_spec.spark import worker_heap
from rocketmq_spec.spark.message_reads import listed_batches, message_batches
from rocketmq_spec.spark.options import choice, flag, index_sizes, positive, subset
from rocketmq_spec.spark.planning import DEFAULT_SPLIT_BYTES, CommitLogSplit
from rocketmq_spec.spark.pushdown import RecordFilter, record_filter
from rocketmq_spec.spark.store_paths import StoreSet, resolve_stores
from rocketmq_spec.spark.store_plan import (
    IndexPartition,
    QueuePartition,
    RecordsPartition,
    StorePartition,
    store_partitions,
)
from rocketmq_spec.spark.tables import (
    ARROW_BATCH_ROWS,
    BROKER_FIELD,
    CONSUME_QUEUE_SCHEMA,
    INDEX_SCHEMA,
    MESSAGE_SCHEMA,
    batches,
    spark_schema,
)

FORMAT = "rocketmq-store"
TABLES = {"messages": MESSAGE_SCHEMA, "consumequeue": CONSUME_QUEUE_SCHEMA, "index": INDEX_SCHEMA}
BOUNDARY_SOURCES = ("consumequeue", "index")
ERROR_MODES = ("fail", "row")


@dataclass(frozen=True)
class StoreOptions:
    stores: StoreSet
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
    def table_schema(self) -> pa.Schema:
        """Every column of the table: the broker's name first when the load named several stores."""
        schema = TABLES[self.table]
        return pa.schema([BROKER_FIELD, *schema]) if self.stores.labelled else schema

    @property
    def arrow_schema(self) -> pa.Schema:
        schema = self.table_schema
        return schema if self.columns is None else pa.schema([schema.field(name) for name in self.columns])

    @classmethod
    def parse(cls, options: Mapping[str, str]) -> StoreOptions:
        stores = resolve_stores(options, FORMAT)
        table = choice(options, "table", TABLES)
        names = (["broker"] if stores.labelled else []) + TABLES[table].names
        return cls(
            stores=stores, table=table,
            decompress=flag(options, "decompress"),
            split_bytes=positive(options, "splitBytes", DEFAULT_SPLIT_BYTES),
            boundaries=choice(options, "boundaries", BOUNDARY_SOURCES),
            on_error=choice(options, "onError", ERROR_MODES),
            batch_rows=positive(options, "batchRows", ARROW_BATCH_ROWS),
            index_sizes=index_sizes(options, "indexSizes"),
            filter_pushdown=flag(options, "filterPushdown"),
            columns=subset(options, "columns", names),
        )

    def with_schema(self, schema: StructType) -> StoreOptions:
        """These options reading the columns of ``schema``: Spark's own (from :meth:`arrow_schema`), or
        one the user gave with ``.schema(...)``, which may leave columns out (and so need not build them)
        but may not add or retype any."""
        if schema == spark_schema(self.arrow_schema):
            return self
        table = self.table_schema
        given = {field.name: field for field in schema.fields}
        ours = spark_schema(table)
        unknown = [name for name in given if name not in table.names]
        retyped = [name for name in given if name not in unknown
                   and given[name].dataType != ours[name].dataType]
        if unknown or retyped:
            raise ValueError(f"a {FORMAT} schema may only leave columns out of {table.names}: "
                             f"unknown {unknown}, typed otherwise {retyped}")
        return StoreOptions(**{**vars(self), "columns": tuple(given)})


class RocketMQStoreDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> StructType:
        return spark_schema(StoreOptions.parse(self.options).arrow_schema)

    def reader(self, schema: StructType) -> DataSourceReader:
        options = StoreOptions.parse(self.options).with_schema(schema)
        return FilteringStoreReader(options) if options.filter_pushdown else StoreReader(options)


class StoreReader(DataSourceReader):
    def __init__(self, options: StoreOptions) -> None:
        self.options = options
        self.filter = RecordFilter()

    def partitions(self) -> list[InputPartition]:
        """Each store's partitions, so that a task reads one broker's range."""
        options = self.options
        parts: list[InputPartition] = []
        for one in options.stores.stores:
            with StoreDirectory(one.root) as store:
                parts += (StorePartition(one.root, one.broker, part) for part in store_partitions(
                    store, options.table, self.filter, split_bytes=options.split_bytes,
                    boundaries=options.boundaries, index_sizes=options.index_sizes))
        return parts

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        worker_heap.settle()
        if not isinstance(partition, StorePartition):
            return  # Spark's stand-in partition for a plan with none (a query nothing can match)
        names = self.options.arrow_schema.names
        table_columns = [name for name in names if name != "broker"]
        with StoreDirectory(partition.root) as store:
            for batch in self._batches(store, partition.part, table_columns):
                if "broker" in names:
                    broker = pa.array([partition.broker] * batch.num_rows, pa.string())
                    batch = batch.add_column(0, BROKER_FIELD, broker)
                yield batch.select(names)

    def _batches(self, store: StoreDirectory, partition: InputPartition,
                 columns: list[str]) -> Iterator[pa.RecordBatch]:
        options = self.options
        if isinstance(partition, QueuePartition):
            yield from queue_batches(store, partition, options.batch_rows)
        elif isinstance(partition, IndexPartition):
            rows = index_rows(Path(partition.path), options.index_sizes)
            yield from batches(rows, INDEX_SCHEMA, options.batch_rows)
        elif isinstance(partition, RecordsPartition):
            for path, base, offsets in partition.per_file():
                yield from listed_batches(path, base, offsets, decompress=options.decompress,
                                          size=options.batch_rows, wanted=self.filter, columns=columns)
        elif isinstance(partition, CommitLogSplit):
            yield from message_batches(store, partition, decompress=options.decompress,
                                       errors_as_rows=options.on_error == "row",
                                       size=options.batch_rows, wanted=self.filter, columns=columns)


class FilteringStoreReader(StoreReader):
    """A reader that takes Spark's pushed filters (``filterPushdown``) for the ``messages`` table."""

    def pushFilters(self, filters: list[Filter]) -> Iterable[Filter]:
        if self.options.table == "messages":
            self.filter = record_filter(filters)
        return filters


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

