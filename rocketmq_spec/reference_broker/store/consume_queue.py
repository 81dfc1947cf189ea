"""One topic queue's consume queue as the broker writes it: fixed 20-byte entries in mapped files.

Entries are encoded by the codec and read back as rows of ``rocketmq_spec.codec.store.CQ_DTYPE`` straight from
the mapping, so a pull reads a run of entries without decoding them one by one. The queue offset of an entry
is its byte position / 20 across the file sequence; a queue whose first message does not have offset 0 (its
older files were removed) gets pre-blank entries in front, as Java's ``fillPreBlank`` does. """

from __future__ import annotations

from pathlib import Path

import numpy as np

from rocketmq_spec.codec.store.consumequeue import CQ_DTYPE, PRE_BLANK_ENTRY, encode_entry, written_length
from rocketmq_spec.reference_broker.store.mapped_file import MappedFile, MappedFileQueue
from rocketmq_spec.spec.consumequeue import CQ_ENTRY_SIZE, PRE_BLANK_SIZE

Entry = tuple[int, int, int]
"""(commitlog offset, record size, tags code)."""


class ConsumeQueue:
    def __init__(self, directory: Path, topic: str, queue_id: int, file_size: int) -> None:
        self.topic = topic
        self.queue_id = queue_id
        self.files = MappedFileQueue(directory, file_size)
        self.entries_per_file = file_size // CQ_ENTRY_SIZE
        self.last_store_timestamp = 0
        self._min_logic = 0
        """Queue offset of the first entry whose record is still in the commitlog (``minLogicOffset``)."""
        self._fillers: tuple[MappedFile, int] | None = None
        """The first file and how many pre-blank entries lead it, once an entry follows them (every pull
        asks for the minimum, and counting them means reading the whole file)."""

    def recover(self) -> None:
        """Map the files and find the written end: the first entry without offset >= 0 and size > 0."""
        self.files.load()
        for number, mapped in enumerate(self.files.files):
            mapped.wrote = mapped.flushed = written_length(self._rows(mapped)) * CQ_ENTRY_SIZE
            if mapped.wrote < mapped.size:
                for stale in self.files.files[number + 1:]:
                    stale.destroy()
                del self.files.files[number + 1:]
                break

    @staticmethod
    def _rows(mapped: MappedFile, start: int = 0, count: int = -1) -> np.ndarray:
        return np.frombuffer(mapped.mm, dtype=CQ_DTYPE, count=count, offset=start * CQ_ENTRY_SIZE)

    @property
    def max_offset(self) -> int:
        return self.files.max_offset // CQ_ENTRY_SIZE

    @property
    def min_offset(self) -> int:
        """The first entry that is not a pre-blank filler and whose record retention has not deleted."""
        first = self.files.files[0] if self.files.files else None
        if first is None:
            return 0
        return max(first.file_from_offset // CQ_ENTRY_SIZE + self._leading_fillers(first), self._min_logic)

    def _leading_fillers(self, first: MappedFile) -> int:
        if self._fillers is not None and self._fillers[0] is first:
            return self._fillers[1]
        blank = self._rows(first, 0, first.wrote // CQ_ENTRY_SIZE)["size"] == PRE_BLANK_SIZE
        if blank.all():
            return len(blank)  # nothing but fillers so far: more may come
        fillers = int(np.argmin(blank))
        self._fillers = (first, fillers)
        return fillers

    def delete_expired(self, commitlog_min: int) -> list[MappedFile]:
        """``deleteExpiredFile``: retire leading full files whose last entry points below the commitlog's
        first offset (never the last file), then move the minimum to the first entry still pointing into
        the commitlog. Returns the retired files for the caller to unmap."""
        count = 0
        for mapped in self.files.files[:-1]:
            if mapped.wrote < mapped.size or self._last_pointer(mapped) >= commitlog_min:
                break
            count += 1
        retired = self.files.retire_first(count)
        self.correct_min_offset(commitlog_min)
        return retired

    def _last_pointer(self, mapped: MappedFile) -> int:
        return int(self._rows(mapped, self.entries_per_file - 1, 1)["commitlog_offset"][0])

    def correct_min_offset(self, commitlog_min: int) -> None:
        """``correctMinOffset``: the first entry of the first file pointing at or past ``commitlog_min``."""
        first = self.files.files[0] if self.files.files else None
        if first is None:
            return
        live = self._rows(first, 0, first.wrote // CQ_ENTRY_SIZE)["commitlog_offset"] >= commitlog_min
        if live.any():
            self._min_logic = first.file_from_offset // CQ_ENTRY_SIZE + int(np.argmax(live))

    def put(self, queue_offset: int, commitlog_offset: int, size: int, tags_code: int) -> bool:
        """Write the entry of ``queue_offset``; False when it is already there (a replayed record)."""
        if self.next_entry_fits(queue_offset):
            # a send's entry: the next one, and its file has room (checked first, as it is nearly all)
            self.append_next(commitlog_offset, size, tags_code)
            return True
        current = self.max_offset
        if queue_offset < current:
            return False
        if not self.files.files:
            start = queue_offset * CQ_ENTRY_SIZE
            self.files.create(start - start % self.files.file_size)
            current = self.max_offset
        for filler in range(current, queue_offset):
            self._append(filler, PRE_BLANK_ENTRY)
        self._append(queue_offset, encode_entry(commitlog_offset, size, tags_code))
        return True

    def next_entry_fits(self, queue_offset: int) -> bool:
        """``queue_offset`` is the entry just past the last one and the last file has room for it."""
        files = self.files.files  # not the ``last`` and ``remaining`` properties: every put asks this
        if not files:
            return False
        last = files[-1]
        return (last.size - last.wrote >= CQ_ENTRY_SIZE
                and queue_offset * CQ_ENTRY_SIZE == last.file_from_offset + last.wrote)

    def append_next(self, commitlog_offset: int, size: int, tags_code: int) -> None:
        """Write the entry ``next_entry_fits`` accepted."""
        self.files.files[-1].append(encode_entry(commitlog_offset, size, tags_code))

    def _append(self, queue_offset: int, entry: bytes) -> None:
        last = self.files.last
        if last is None or last.remaining < CQ_ENTRY_SIZE:
            last = self.files.create(queue_offset * CQ_ENTRY_SIZE)
        last.append(entry)

    def entries(self, queue_offset: int, max_count: int) -> list[Entry] | None:
        """Up to ``max_count`` entries from ``queue_offset``, never crossing into the next file (as
        ``getIndexBuffer``); None when no file holds ``queue_offset``."""
        rows = self.rows(queue_offset, max_count)
        return None if rows is None else rows.tolist()

    def rows(self, queue_offset: int, max_count: int) -> np.ndarray | None:
        """``entries`` as rows of ``CQ_DTYPE`` read from the mapping, for a reader that may need only a
        few of them."""
        mapped = self.files.file_for(queue_offset * CQ_ENTRY_SIZE)
        if mapped is None:
            return None
        first = queue_offset - mapped.file_from_offset // CQ_ENTRY_SIZE
        count = min(max_count, mapped.wrote // CQ_ENTRY_SIZE - first)
        if count <= 0:
            return None
        return self._rows(mapped, first, count)

    def entry(self, queue_offset: int) -> Entry | None:
        found = self.entries(queue_offset, 1)
        return found[0] if found else None

    def next_file_offset(self, queue_offset: int) -> int:
        """``rollNextFile``: the first queue offset of the file after the one ``queue_offset`` is in."""
        return queue_offset + self.entries_per_file - queue_offset % self.entries_per_file

    def last_entry_end(self) -> int:
        """Commitlog offset just past the record of the last entry (0 for an empty queue)."""
        max_offset = self.max_offset
        last = self.entry(max_offset - 1) if max_offset else None
        return last[0] + last[1] if last and last[1] != PRE_BLANK_SIZE else 0

    def truncate_dirty(self, commitlog_end: int) -> None:
        """Drop trailing entries that point at or past ``commitlog_end`` (records cut by recovery)."""
        offset = self.max_offset
        floor = self.min_offset
        while offset > floor:
            entry = self.entry(offset - 1)
            if entry is None or entry[0] + entry[1] <= commitlog_end:
                break
            offset -= 1
        if offset < self.max_offset:
            self.files.truncate(offset * CQ_ENTRY_SIZE)
            self._fillers = None

    def flush(self) -> None:
        self.files.flush()

    def close(self) -> None:
        self.files.close()
