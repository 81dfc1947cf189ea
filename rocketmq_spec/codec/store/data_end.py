"""Where a CommitLog's data ends, and what lies past it: the one rule every offline reader follows.

A broker that is running, or was killed, leaves more than records. Java pre-allocates the next CommitLog
file before it is needed (AllocateMappedFileService), so wholly zero files follow the data
(RMQ-CL-PREALLOCATED); a crash can leave the last record torn (RMQ-CL-TORN-TAIL). Java's recovery walks
the records from the start and stops at the first position that does not hold a whole, valid record;
what follows is truncated (``CommitLog.recoverNormally/recoverAbnormally``, ``truncateDirtyFiles``). The
readers stop at that same place, and report what they stopped at instead of refusing the store, so
``rmq-store``, ``rmq-conformance store``, the Spark source and ``rmq-spark verify`` agree on it.

The rule, at a position in file ``F`` of the CommitLog:

- zeros (TOTALSIZE 0, MAGICCODE 0): the data ends here if every later file is all zeros (pre-allocated);
  otherwise the files have a hole (RMQ-CL-END-OF-DATA);
- a record that does not decode (or whose body CRC is wrong) with nothing but zeros after it, to the end
  of the last file: a torn record; the data ends at its start;
- anything else is corruption, reported by the clause it breaks.
"""

from __future__ import annotations

import errno
import mmap
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rocketmq_spec.spec.commitlog import RMQ_CL_PREALLOCATED, RMQ_CL_TORN_TAIL
from rocketmq_spec.spec.errors import StoreError

ZERO_CHUNK = 1 << 20
"""Bytes compared at a time when a data region of a file is checked for zeros."""


@dataclass(frozen=True)
class TornRecord:
    offset: int
    """Absolute offset of the torn record: where recovery truncates the CommitLog."""
    error: StoreError
    """Why it is not a whole record."""
    length: int
    """Bytes it spans (its TOTALSIZE, or the rest of its file when that is not a usable size)."""


@dataclass
class DataEnd:
    """What a complete walk of the CommitLog found at its end."""

    offset: int = 0
    """One past the last whole record (the first file's start when there is none)."""
    torn: TornRecord | None = None
    preallocated: list[str] = field(default_factory=list)
    """Files wholly past the data end, all zeros: created ahead of need, holding nothing."""

    def notices(self) -> list[tuple[str, str]]:
        """(clause id, text) of each thing past the data end a reader should tell its user about."""
        found = []
        if self.preallocated:
            names = ", ".join(self.preallocated)
            found.append((RMQ_CL_PREALLOCATED.id, f"{len(self.preallocated)} pre-allocated zero CommitLog "
                                                  f"file(s) past the data end: {names}"))
        if self.torn is not None:
            found.append((RMQ_CL_TORN_TAIL.id, f"torn last record at offset {self.torn.offset} "
                                               f"({self.torn.error.message}); the data ends there"))
        return found

    def covers(self, offset: int) -> bool:
        """Whether a record at ``offset`` (a queue or index entry's target) starts within the data.
        Entries past the end are what a copy of a running store's queues holds when they ran ahead of
        its CommitLog; recovery truncates them."""
        return offset < self.offset

    @property
    def zeros_from(self) -> int:
        """Where the zero bytes begin: the data end, or past the torn record's bytes when there is one."""
        return self.offset if self.torn is None else self.torn.offset + self.torn.length


def zero_from(path: Path, view: mmap.mmap | bytes, start: int) -> bool:
    """Whether every byte of the file from ``start`` on is zero.

    Holes of a sparse file are skipped through SEEK_DATA, so a pre-allocated 1 GiB file costs nothing.
    """
    size = len(view)
    try:
        with path.open("rb") as handle:
            regions = list(_data_regions(handle.fileno(), start, size))
    except OSError:
        regions = [(start, size)]
    for begin, end in regions:
        for chunk in range(begin, end, ZERO_CHUNK):
            if np.frombuffer(view, np.uint8, min(ZERO_CHUNK, end - chunk), chunk).any():
                return False
    return True


def _data_regions(fd: int, start: int, size: int) -> list[tuple[int, int]]:
    """(begin, end) of the parts of ``[start, size)`` that are not holes."""
    regions = []
    position = start
    while position < size:
        try:
            begin = os.lseek(fd, position, os.SEEK_DATA)
        except OSError as exc:
            if exc.errno == errno.ENXIO:
                break
            raise
        end = min(os.lseek(fd, begin, os.SEEK_HOLE), size)
        if begin >= size:
            break
        regions.append((begin, end))
        position = end
    return regions
