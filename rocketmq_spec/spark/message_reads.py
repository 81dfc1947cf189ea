"""Reading the ``messages`` table of a store: the record batches of a commitlog split or of records at
known offsets, column-wise where the codec vouches for the records and record by record where it does not.

Column-wise means: the record starts come from :func:`rocketmq_spec.codec.store.starts.message_starts`, the
batch from
:func:`rocketmq_spec.spark.tables.message_batch`; from the first record either of them cannot vouch for, the
codec's record decoder takes over and raises (or, with ``errors_as_rows``, reports) exactly what is wrong.
A :class:`~spark_tests.pushdown.RecordFilter` drops records by their fixed fields before the costly
columns are built, and every batch is filtered exactly before it is yielded (error rows are kept).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from rocketmq_spec.codec.fast_store import ReadableBuffer
from rocketmq_spec.codec.store import StoreDirectory
from rocketmq_spec.codec.store.columns import record_columns
from rocketmq_spec.codec.store.commitlog import map_file
from rocketmq_spec.codec.store.record import decode_record
from rocketmq_spec.codec.store.starts import Starts, accepted, message_starts
from rocketmq_spec.spark.planning import CommitLogSplit
from rocketmq_spec.spark.pushdown import RecordFilter
from rocketmq_spec.spark.tables import (
    MESSAGE_SCHEMA,
    batches,
    body_reader,
    error_row,
    message_batch,
    message_row,
    message_schema,
)
from rocketmq_spec.spec.commitlog import RMQ_CL_PHYSICAL_OFFSET
from rocketmq_spec.spec.errors import RocketMQSpecError, StoreError


def record_starts(view: ReadableBuffer, split: CommitLogSplit, size: int) -> Iterator[Starts]:
    """The records that begin in ``split`` (positions in ``view``, the split's file), ``size`` at a time.
    The walk ends quietly before the first record it cannot vouch for: the caller reads on from there
    with the record decoder, which raises (or reports) what is wrong."""
    pos, stop = split.start - split.base, split.end - split.base
    while pos < stop:
        found = message_starts(view, pos, stop, base=split.base, limit=size)
        if len(found.starts) < size:
            # the walk ended: its last record goes to the record decoder, which alone can tell a store's
            # torn last record (RMQ-CL-TORN-TAIL: a bad body CRC with only zeros after it) from a record
            if len(found.starts):
                yield Starts(found.starts[:-1], int(found.starts[-1]))
            return
        yield found
        pos = found.resume


def _wanted_first(view: ReadableBuffer, starts: np.ndarray, wanted: RecordFilter) -> np.ndarray:
    """``starts`` less the sound records whose fixed fields fail ``wanted``: an unsound record stays,
    so that the batch stops at it and the record decoder reports it."""
    if not wanted.ranges:
        return starts
    columns = record_columns(view, starts)
    return starts[wanted.fixed_mask(columns) | ~columns.sound]


def filtered(batch: pa.RecordBatch, wanted: RecordFilter) -> pa.RecordBatch:
    """The rows of ``batch`` that pass ``wanted``, and its error rows."""
    if wanted.empty or not batch.num_rows:
        return batch
    keep = wanted.range_mask(lambda column: batch.column(column).to_numpy(zero_copy_only=False),
                             batch.num_rows)
    if wanted.topics is not None:  # else the batch may have no topic column
        keep &= wanted.topic_mask(batch.column("topic"))
    keep |= pc.is_valid(batch.column("error_clause")).to_numpy(zero_copy_only=False)
    return batch.filter(pa.array(keep))


def _needed(columns: Collection[str] | None, wanted: RecordFilter) -> frozenset[str] | None:
    """What must be built: the columns asked for and those the filter reads (``None``: all)."""
    return None if columns is None else frozenset(columns) | wanted.columns


def message_batches(store: StoreDirectory, split: CommitLogSplit, *, decompress: bool, errors_as_rows: bool,
                    size: int, wanted: RecordFilter | None = None,
                    columns: Collection[str] | None = None) -> Iterator[pa.RecordBatch]:
    """Record batches of the records that begin in ``split`` (those passing ``wanted``), with at least
    ``columns`` (all when ``None``)."""
    wanted = wanted or RecordFilter()
    needed = _needed(columns, wanted)
    view = map_file(Path(split.path))
    resume = split.start
    for found in record_starts(view, split, size):
        starts = _wanted_first(view, found.starts, wanted)
        batch, count = message_batch(view, starts, decompress=decompress, columns=needed)
        if count:
            yield filtered(batch, wanted)
        if count < len(starts):
            resume = split.base + int(starts[count])
            break
        resume = split.base + found.resume
    rest = message_rows(store, CommitLogSplit(split.path, split.base, resume, split.end),
                        decompress=decompress, errors_as_rows=errors_as_rows)
    for batch in batches(rest, MESSAGE_SCHEMA, size):
        yield filtered(batch, wanted).select(message_schema(needed).names)


def listed_batches(path: str, base: int, offsets: np.ndarray, *, decompress: bool, size: int,
                   wanted: RecordFilter, columns: Collection[str] | None = None) -> Iterator[pa.RecordBatch]:
    """Record batches of the records at ``offsets`` (absolute, sorted, in the file at ``path``), which
    a consume queue named: each must be a record the walk accepts, or the store is inconsistent."""
    view = map_file(Path(path))
    starts = offsets - base
    good = accepted(view, starts, base=base)
    if not good.all():
        where = int(offsets[np.argmin(good)])
        raise StoreError("a consume-queue entry does not point at a record",
                         expected="a record starting there", seen=where, offset=where,
                         clause=RMQ_CL_PHYSICAL_OFFSET.id)
    needed = _needed(columns, wanted)
    for at in range(0, len(starts), size):
        chunk = _wanted_first(view, starts[at:at + size], wanted)
        batch, count = message_batch(view, chunk, decompress=decompress, columns=needed)
        if count < len(chunk):
            rest = _rows_at(view, base, chunk[count:], decompress)
            batch = pa.concat_batches([batch, *(b.select(batch.schema.names) for b in rest)])
        yield filtered(batch, wanted)


def _rows_at(view: ReadableBuffer, base: int, starts: np.ndarray,
             decompress: bool) -> Iterator[pa.RecordBatch]:
    """The records at ``starts`` that the columns could not vouch for, decoded one by one (raising what is
    wrong with them)."""
    body = body_reader(decompress)
    rows = [message_row(decode_record(view, int(start), verify_crc=False, base_offset=base), body)
            for start in starts.tolist()]
    yield pa.RecordBatch.from_pylist(rows, schema=MESSAGE_SCHEMA)


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
