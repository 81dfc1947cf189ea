"""Splitting a CommitLog into Spark partitions at record boundaries.

Records are self-delimiting but not self-synchronising: a reader cannot start at an arbitrary byte and
find the next record. Every partition therefore starts at a file start or at an offset known to begin a
record, which the consume queues (and the index) supply for free: each of their entries is the commitlog
offset of a record. A partition reads records from its start while they begin before its end, so the
partitions of a file cover every record exactly once, including records no consume queue points at
(transaction halves and rollbacks), which simply belong to the partition whose range they fall in.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from pyspark.sql.datasource import InputPartition

DEFAULT_SPLIT_BYTES = 64 * 1024 * 1024
"""Target bytes per partition: a 1 GiB CommitLog file becomes 16 tasks, enough to keep two to eight
cores busy while each task's Arrow batches and decoder state stay a few MiB."""


def distinct_offsets(values: np.ndarray) -> np.ndarray:
    """The distinct values of ``values`` as sorted int64, by sorting and dropping repeats. ``np.unique``
    (numpy 2.3 on) finds distinct integers with a hash table first, which is fast for few distinct values
    but about fifteen times slower than a sort on record offsets, nearly all distinct: 0.8 s of CPU for the
    1.1 million consume-queue entries of a 4.4 GB store, more than the rest of a pushed query's
    planning and reading together."""
    ordered = np.sort(np.asarray(values, dtype=np.int64))
    if not len(ordered):
        return ordered
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]


@dataclass(frozen=True)
class CommitLogFile:
    path: str
    base: int
    """Absolute commitlog offset of the file's first byte (its name)."""
    size: int


@dataclass(frozen=True)
class CommitLogSplit(InputPartition):
    path: str
    base: int
    start: int
    """Absolute offset of the first record to read: the file start or a known record boundary."""
    end: int
    """Absolute offset before which a record must begin to belong to this split."""

    @property
    def length(self) -> int:
        return self.end - self.start


def plan_splits(files: Sequence[CommitLogFile], boundaries: np.ndarray,
                split_bytes: int = DEFAULT_SPLIT_BYTES) -> list[CommitLogSplit]:
    """Split each file every ``split_bytes`` at the first known boundary at or after the cut.

    ``boundaries`` are absolute record offsets in any order and may repeat (several consume queues and
    index entries point at the same record). A cut with no boundary after it inside the file is dropped,
    which also drops cuts in a file's unwritten zero tail.
    """
    if split_bytes <= 0:
        raise ValueError(f"split size must be positive, got {split_bytes}")
    known = distinct_offsets(boundaries)
    splits: list[CommitLogSplit] = []
    for file in sorted(files, key=lambda f: f.base):
        file_end = file.base + file.size
        cuts = np.arange(file.base + split_bytes, file_end, split_bytes, dtype=np.int64)
        found = np.searchsorted(known, cuts)
        starts = known[found[found < len(known)]]
        starts = distinct_offsets(starts[(starts > file.base) & (starts < file_end)])
        edges = [file.base, *(int(s) for s in starts), file_end]
        splits += [CommitLogSplit(file.path, file.base, a, b) for a, b in itertools.pairwise(edges)]
    return splits
