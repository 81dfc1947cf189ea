"""Filters Spark pushes into the ``rocketmq-store`` source, and the reads they let it skip.

The consume queues say where every dispatched record of a topic queue lies (RMQ-CQ-ENTRY), so a query for
some topics, queues or queue offsets needs only those records, plus whatever no consume queue accounts
for (records not dispatched yet, BLANK ends of files), which is read and filtered like a full scan. A
range of physical offsets cuts the plan directly. Time ranges are checked on the fixed fields, before
topics, properties and bodies are cut out, and a store-time range also narrows the physical-offset range
(:mod:`rocketmq_spec.spark.time_range`), since a broker stamps records in the order it appends them.

Spark is told every filter still needs evaluating (the API's "partially pushed"): the source applies them
exactly, Spark checks again, and a filter the source does not understand is simply not used here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import (
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    LessThan,
    LessThanOrEqual,
)

from rocketmq_spec.codec.store import StoreDirectory
from rocketmq_spec.codec.store.columns import RecordColumns

RANGE_COLUMNS = ("queue_id", "queue_offset", "physical_offset", "store_timestamp", "born_timestamp")
"""Integer columns whose comparisons the source applies (all are fixed fields of a record)."""
QUEUE_COLUMNS = ("queue_id", "queue_offset")
"""Range columns a consume queue answers without reading a record."""


@dataclass(frozen=True)
class RecordFilter:
    """The conjunction of the pushed filters the source understands: a set of topics, and a closed
    interval per integer column (``None`` for no bound)."""

    topics: frozenset[str] | None = None
    ranges: dict[str, tuple[int | None, int | None]] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return self.topics is None and not self.ranges

    def bounds(self, column: str) -> tuple[float, float]:
        low, high = self.ranges.get(column, (None, None))
        return (-math.inf if low is None else low), (math.inf if high is None else high)

    @property
    def columns(self) -> frozenset[str]:
        """The columns :func:`rocketmq_spec.spark.message_reads.filtered` reads to apply the filter."""
        if self.empty:
            return frozenset()
        return frozenset({"error_clause", *self.ranges, *(("topic",) if self.topics is not None else ())})

    @property
    def uses_queues(self) -> bool:
        """Whether the consume queues can narrow the plan (a topic set, or queue ids / offsets)."""
        return self.topics is not None or any(c in self.ranges for c in QUEUE_COLUMNS)

    def range_mask(self, values_of: Callable[[str], np.ndarray], count: int) -> np.ndarray:
        """Which of ``count`` records pass the range conditions, given each range column's values."""
        keep = np.ones(count, dtype=bool)
        for column in self.ranges:
            low, high = self.bounds(column)
            values = values_of(column)
            keep &= (values >= low) & (values <= high)
        return keep

    def fixed_mask(self, columns: RecordColumns) -> np.ndarray:
        """Which records of a batch pass the range conditions (every range column is a fixed field)."""
        return self.range_mask(lambda column: getattr(columns, column), len(columns))

    def topic_mask(self, topics: pa.Array) -> np.ndarray:
        if self.topics is None:
            return np.ones(len(topics), dtype=bool)
        return pc.is_in(topics, value_set=pa.array(sorted(self.topics), pa.string())).to_numpy(
            zero_copy_only=False)


def _column(item: Filter) -> str | None:
    attribute: tuple[str, ...] = getattr(item, "attribute", ())
    return attribute[0] if len(attribute) == 1 else None


def narrow_range(ranges: dict[str, tuple[int | None, int | None]], column: str, low: int | None,
                 high: int | None) -> None:
    """Intersect ``column``'s closed interval in ``ranges`` with ``[low, high]`` (``None``: unbounded)."""
    old_low, old_high = ranges.get(column, (None, None))
    new_low = low if old_low is None else old_low if low is None else max(low, old_low)
    new_high = high if old_high is None else old_high if high is None else min(high, old_high)
    ranges[column] = (new_low, new_high)


def _integer(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def record_filter(filters: Iterable[Filter]) -> RecordFilter:
    """What the source can use of ``filters`` (their AND); filters it cannot use are left out."""
    topics: frozenset[str] | None = None
    ranges: dict[str, tuple[int | None, int | None]] = {}
    for item in filters:
        column = _column(item)
        if column == "topic" and isinstance(item, EqualTo | In):
            values = (item.value,) if isinstance(item, EqualTo) else tuple(item.value)
            if all(isinstance(v, str) for v in values):
                given = frozenset(values)
                topics = given if topics is None else topics & given
        elif column in RANGE_COLUMNS:
            if isinstance(item, In):
                numbers = [_integer(v) for v in item.value]
                if numbers and all(n is not None for n in numbers):
                    narrow_range(ranges, column, min(numbers), max(numbers))  # type: ignore[type-var]
                continue
            value = _integer(getattr(item, "value", None))
            if value is None:
                continue
            if isinstance(item, EqualTo):
                narrow_range(ranges, column, value, value)
            elif isinstance(item, GreaterThan):
                narrow_range(ranges, column, value + 1, None)
            elif isinstance(item, GreaterThanOrEqual):
                narrow_range(ranges, column, value, None)
            elif isinstance(item, LessThan):
                narrow_range(ranges, column, None, value - 1)
            elif isinstance(item, LessThanOrEqual):
                narrow_range(ranges, column, None, value)
    return RecordFilter(topics, ranges)


@dataclass(frozen=True)
class QueuePlan:
    """Where the wanted records lie by the consume queues: their commitlog offsets (sorted), and the
    commitlog ranges no consume queue accounts for, which must be walked."""

    wanted: np.ndarray
    sizes: np.ndarray
    """TOTALSIZE of each wanted record, as its consume-queue entry gives it."""
    gaps: list[tuple[int, int]]


def queue_plan(store: StoreDirectory, wanted: RecordFilter, data_start: int,
               data_end: int) -> QueuePlan | None:
    """The plan, or ``None`` when the consume queues cannot be trusted to cover the commitlog (entries
    that overlap or point outside the data): then the whole commitlog is scanned and filtered."""
    low_queue, high_queue = wanted.bounds("queue_id")
    low_offset, high_offset = wanted.bounds("queue_offset")
    starts_of: list[np.ndarray] = []
    sizes_of: list[np.ndarray] = []
    chosen_of: list[np.ndarray] = []
    for topic, queue_id in store.queues():
        queue = store.queue(topic, queue_id)
        entries = queue.entries[queue.min_offset - queue.first_offset:]
        queue_offsets = np.arange(queue.min_offset, queue.max_offset, dtype=np.int64)
        live = entries["commitlog_offset"] >= data_start  # below the first file: deleted data
        starts_of.append(entries["commitlog_offset"][live].astype(np.int64))
        sizes_of.append(entries["size"][live].astype(np.int64))
        chosen = ((wanted.topics is None or topic in wanted.topics) and low_queue <= queue_id <= high_queue)
        chosen_of.append(live[live] & chosen & (queue_offsets[live] >= low_offset)
                         & (queue_offsets[live] <= high_offset))
    if not starts_of:
        return QueuePlan(np.zeros(0, np.int64), np.zeros(0, np.int64), [(data_start, data_end)])
    starts, sizes, chosen_all = np.concatenate(starts_of), np.concatenate(sizes_of), np.concatenate(chosen_of)
    order = np.argsort(starts, kind="stable")
    starts, sizes, chosen_all = starts[order], sizes[order], chosen_all[order]
    ends = starts + sizes
    if len(starts) and (ends[-1] > data_end or (starts[1:] < ends[:-1]).any() or (sizes <= 0).any()):
        return None
    begins, stops = np.concatenate([[data_start], ends]), np.concatenate([starts, [data_end]])
    gap = stops > begins
    gaps = list(zip(begins[gap].tolist(), stops[gap].tolist(), strict=True))
    return QueuePlan(starts[chosen_all], sizes[chosen_all], gaps)


def group_records(offsets: np.ndarray, sizes: np.ndarray, group_bytes: int) -> list[np.ndarray]:
    """``offsets`` (sorted) cut into runs of about ``group_bytes`` of records each (``sizes``), in order.
    A run may span CommitLog files: every task has a fixed cost (the JVM's task set-up, the Python
    worker's unpickling of the reader), so the few records a selective query keeps from each file are
    read by one task rather than one task a file."""
    if not len(offsets):
        return []
    share = np.cumsum(sizes) // max(group_bytes, 1)
    return np.split(offsets, np.flatnonzero(share[1:] != share[:-1]) + 1)
