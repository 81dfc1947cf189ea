"""A store-time range turned into the CommitLog range that can hold it, so a time query skips the rest.

A broker stamps STORETIMESTAMP inside its put lock, in the order it appends (Java's
``CommitLog.putMessage`` sets it after taking the lock "to ensure an orderly global", and the reference
broker does the same), so store timestamps never decrease along the CommitLog. Java's own
``getOffsetInQueueByTime`` relies on that order; so does this: over the record starts the consume queues
name (sorted), a binary search finds the last start stamped before the range and the first stamped
after it, reading one record's fixed fields per probe. Every record before the first of them or from the
second on is out of the range; the records between are read and filtered exactly as before. The
resulting bounds are a physical-offset range, which the planner already cuts the plan by.
"""

from __future__ import annotations

import bisect
import math

import numpy as np

from rocketmq_spec.codec.store import StoreDirectory
from rocketmq_spec.spark.pushdown import RecordFilter, narrow_range

TIME_COLUMN = "store_timestamp"


def _stamp(store: StoreDirectory, offset: int) -> int:
    return store.commitlog.read(offset, verify_crc=False).store_timestamp


def narrowed_by_time(store: StoreDirectory, wanted: RecordFilter, starts: np.ndarray) -> RecordFilter:
    """``wanted`` with its physical-offset range narrowed to the records its store-time range can
    include, given ``starts``: sorted distinct offsets known to begin records."""
    low, high = wanted.bounds(TIME_COLUMN)
    if (low, high) == (-math.inf, math.inf) or not len(starts):
        return wanted
    probe = starts.tolist()
    first = bisect.bisect_left(probe, low, key=lambda offset: _stamp(store, offset))
    after = bisect.bisect_right(probe, high, key=lambda offset: _stamp(store, offset))
    begin = probe[first - 1] if first > 0 else None  # the records from here on may be stamped >= low
    end = probe[after] - 1 if after < len(probe) else None  # a record from probe[after] on is > high
    ranges = dict(wanted.ranges)
    narrow_range(ranges, "physical_offset", begin, end)
    return RecordFilter(wanted.topics, ranges)
