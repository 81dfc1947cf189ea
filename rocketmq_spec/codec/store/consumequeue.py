"""ConsumeQueue files as numpy arrays: one structured row per 20-byte entry, read without a Python loop.

A queue is scanned far more often than it is written (every pull, every lag report, every Spark job), so
the reader maps each file as a big-endian structured array and finds the written part with one vector
comparison. Entries are written one at a time by the broker through :func:`encode_entry`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rocketmq_spec.codec.fast_store import CQ_DTYPE, pack_cq_entry
from rocketmq_spec.codec.store.commitlog import segment_files
from rocketmq_spec.spec.commitlog import offset_file_name
from rocketmq_spec.spec.consumequeue import (
    CQ_ENTRY_SIZE,
    CQ_FILE_SIZE,
    PRE_BLANK_OFFSET,
    PRE_BLANK_SIZE,
    PRE_BLANK_TAGS_CODE,
    RMQ_CQ_POSITION,
)
from rocketmq_spec.spec.errors import StoreError

encode_entry = pack_cq_entry
"""One entry's bytes; the broker writes every entry through it."""


PRE_BLANK_ENTRY = encode_entry(PRE_BLANK_OFFSET, PRE_BLANK_SIZE, PRE_BLANK_TAGS_CODE)


_FIRST_CHUNK = 4096
"""Entries :func:`written_length` looks at first; each further chunk is twice the last."""


def written_length(entries: np.ndarray) -> int:
    """Number of leading entries that are written: up to the first with offset < 0 or size <= 0.

    A queue file is pre-allocated (300,000 entries) and mostly unwritten while its queue is young, so the
    entries are looked at in growing chunks from the start: the cost follows the written entries, not
    the file's size, and a planner that opens every queue of a store pays for what they hold."""
    start, chunk = 0, _FIRST_CHUNK
    while start < len(entries):
        part = entries[start:start + chunk]
        invalid = (part["commitlog_offset"] < 0) | (part["size"] <= 0)
        if invalid.any():
            return start + int(np.argmax(invalid))
        start, chunk = start + len(part), 2 * chunk
    return len(entries)


def read_entries(path: Path) -> np.ndarray:
    """The written entries of one file (a read-only memory map; copy it to keep it past the file)."""
    if path.stat().st_size < CQ_ENTRY_SIZE:
        return np.zeros(0, dtype=CQ_DTYPE)
    if path.stat().st_size % CQ_ENTRY_SIZE:
        raise StoreError("ConsumeQueue file size is not a multiple of the entry size",
                         expected=f"k * {CQ_ENTRY_SIZE}", seen=path.stat().st_size, clause=RMQ_CQ_POSITION.id)
    entries = np.memmap(path, dtype=CQ_DTYPE, mode="r")
    return entries[:written_length(entries)]


def entry_location(queue_offset: int, file_size: int = CQ_FILE_SIZE) -> tuple[str, int]:
    """File name and byte position of a queue offset's entry."""
    byte = queue_offset * CQ_ENTRY_SIZE
    return offset_file_name(byte - byte % file_size), byte % file_size


@dataclass
class ConsumeQueue:
    """The entries of one topic queue, concatenated across its files, starting at ``first_offset``."""

    topic: str
    queue_id: int
    first_offset: int
    """Queue offset of ``entries[0]`` (the first file's start / 20)."""
    entries: np.ndarray

    @classmethod
    def open(cls, directory: Path | str, topic: str, queue_id: int) -> ConsumeQueue:
        """Read ``directory`` (``consumequeue/<topic>/<queueId>``); a missing directory is an empty queue."""
        files = segment_files(Path(directory))
        parts: list[np.ndarray] = []
        first = files[0].start // CQ_ENTRY_SIZE if files else 0
        for number, segment in enumerate(files):
            part = read_entries(segment.path)
            parts.append(np.array(part))
            full = len(part) * CQ_ENTRY_SIZE == segment.path.stat().st_size
            if not full and number < len(files) - 1:
                break
        entries = np.concatenate(parts) if parts else np.zeros(0, dtype=CQ_DTYPE)
        return cls(topic, queue_id, first, entries)

    @property
    def max_offset(self) -> int:
        """One past the last written entry (the broker's ``getMaxOffsetInQueue``)."""
        return self.first_offset + len(self.entries)

    @property
    def min_offset(self) -> int:
        """First entry that is not a pre-blank filler."""
        e = self.entries
        blank = ((e["commitlog_offset"] == PRE_BLANK_OFFSET) & (e["size"] == PRE_BLANK_SIZE)
                 & (e["tags_code"] == PRE_BLANK_TAGS_CODE))
        return self.first_offset + (int(np.argmin(blank)) if not blank.all() else len(blank))

    def entry(self, queue_offset: int) -> tuple[int, int, int]:
        if not self.first_offset <= queue_offset < self.max_offset:
            raise StoreError("queue offset outside the written entries",
                             expected=f"[{self.first_offset}, {self.max_offset})", seen=queue_offset,
                             clause=RMQ_CQ_POSITION.id)
        row = self.entries[queue_offset - self.first_offset]
        return int(row["commitlog_offset"]), int(row["size"]), int(row["tags_code"])
