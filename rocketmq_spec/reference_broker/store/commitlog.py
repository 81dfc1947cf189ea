"""The broker's CommitLog: records appended through the codec into pre-allocated mapped files.

Appending follows RMQ-CL-BLANK / RMQ-CL-NO-SPAN: when the next record (or a whole batch) plus the 8-byte
marker does not fit, the rest of the file gets a BLANK marker and the records go to the next file, whose
name is its start offset. Finding the end after a restart reuses the codec's validating iterator: the
first record it refuses (bad magic, length, CRC) is where the valid data ends.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from rocketmq_spec.codec.store.commitlog import CommitLog as CommitLogReader
from rocketmq_spec.codec.store.record import (
    PREFIX_SIZE,
    MessageRecord,
    decode_record,
    encode_blank,
    is_blank,
    read_prefix,
)
from rocketmq_spec.reference_broker.store.mapped_file import MappedFileQueue
from rocketmq_spec.spec.commitlog import END_FILE_MIN_BLANK_LENGTH, MESSAGE_MAGICS
from rocketmq_spec.spec.errors import StoreError

RECOVERY_FILES = 3
"""Like Java's normal recovery, the last three files are always re-verified record by record."""


class RecoveredEnd(NamedTuple):
    offset: int
    """Just past the last valid record: where appending resumes."""
    newest_store_timestamp: int
    """The newest store time among the records verified, which the checkpoint must cover once they are
    dispatched (0 when there are none)."""


class CommitLog:
    def __init__(self, directory: Path, file_size: int) -> None:
        self.directory = directory
        self.files = MappedFileQueue(directory, file_size)

    @property
    def min_offset(self) -> int:
        return self.files.min_offset

    @property
    def max_offset(self) -> int:
        return self.files.max_offset

    def append(self, records: list[MessageRecord]) -> list[MessageRecord]:
        """Write records back to back in one file; they were built for ``max_offset`` and are moved to the
        next file's start when they do not fit. Returns the records as written."""
        total = sum(r.total_size for r in records)
        if total + END_FILE_MIN_BLANK_LENGTH > self.files.file_size:
            raise StoreError("records larger than a CommitLog file", expected=f"<= {self.files.file_size}",
                             seen=total)
        last = self.files.last
        if last is None or total + END_FILE_MIN_BLANK_LENGTH > last.remaining:
            if last is not None and last.remaining:
                last.append(encode_blank(last.remaining))
            start = last.file_from_offset + last.size if last is not None else 0
            last = self.files.create(start)
            records = _placed(records, start)
        last.append(b"".join(r.encode() for r in records))
        return records

    def append_raw(self, offset: int, data: bytes) -> None:
        """A replica's append of master bytes at its end (RMQ-HA-REPLICA). An empty log starts at the file
        holding ``offset``, which must be a file start (a master starts an empty slave at one); a block never
        crosses a file on the master, so it must fit the current file or start the next one."""
        last = self.files.last
        if last is None:
            if offset % self.files.file_size:
                raise StoreError("an empty replica must start at a CommitLog file start",
                                 expected=f"a multiple of {self.files.file_size}", seen=offset)
            last = self.files.create(offset)
        elif offset != last.end_offset:
            raise StoreError("replica data not at the CommitLog end", expected=last.end_offset, seen=offset)
        if not last.remaining and data:
            last = self.files.create(last.file_from_offset + last.size)
        if len(data) > last.remaining:
            raise StoreError("replica data crosses a CommitLog file", expected=f"<= {last.remaining} bytes",
                             seen=len(data), offset=offset)
        last.append(data)

    def data_from(self, offset: int, limit: int) -> bytes | None:
        """What a master transfers from ``offset``: the data of the file holding it from there, at most
        ``limit`` bytes (``getCommitLogData``); None when there is none yet. A file followed by another is
        read to its end, BLANK marker and zeros included, as Java's write position covers them."""
        mapped = self.files.file_for(offset)
        if mapped is None:
            return None
        pos = offset - mapped.file_from_offset
        end = mapped.wrote if mapped is self.files.last else mapped.size
        size = min(end - pos, limit)
        return mapped.read(pos, size) if size > 0 else None

    def next_record_end(self, offset: int) -> tuple[int, bool] | None:
        """Where the record (or BLANK tail) at ``offset`` ends and whether it is a record, once all of it
        is in the log; None while it is incomplete."""
        mapped = self.files.file_for(offset)
        if mapped is None:
            return None
        pos = offset - mapped.file_from_offset
        if mapped.wrote - pos < PREFIX_SIZE:
            return None
        total_size, magic = read_prefix(mapped.mm, pos)
        if is_blank(magic):
            return (mapped.file_from_offset + mapped.size, False) if mapped.wrote == mapped.size else None
        if magic not in MESSAGE_MAGICS or total_size < PREFIX_SIZE:
            raise StoreError("replica data holds no record here", expected="a message magic", seen=magic,
                             offset=offset)
        return (offset + total_size, True) if pos + total_size <= mapped.wrote else None

    def read(self, offset: int, size: int) -> bytes | None:
        return self.files.read(offset, size)

    def read_raw(self, offset: int) -> bytes | None:
        """The whole record at ``offset``, or None if no record starts there."""
        prefix = self.files.read(offset, PREFIX_SIZE)
        if prefix is None:
            return None
        total_size, magic = read_prefix(prefix, 0)
        if magic not in MESSAGE_MAGICS or total_size < PREFIX_SIZE:
            return None
        return self.files.read(offset, total_size)

    def read_record(self, offset: int) -> MessageRecord | None:
        raw = self.read_raw(offset)
        if raw is None:
            return None
        try:
            return decode_record(raw, base_offset=offset)
        except StoreError:
            return None

    def load(self) -> None:
        self.files.load()

    def find_end(self, scan_from: int, verify_crc: bool) -> RecoveredEnd:
        """The offset just past the last valid record, scanning from a file start at or before ``scan_from``
        (and at least the last RECOVERY_FILES files), and the newest store time among the records kept."""
        files = self.files.files
        if not files:
            return RecoveredEnd(0, 0)
        holder = self.files.file_for(scan_from) or files[0]
        start = min(holder.file_from_offset, files[max(0, len(files) - RECOVERY_FILES)].file_from_offset)
        end = start
        newest = 0
        with CommitLogReader(self.directory) as reader:
            try:
                for record in reader.records(start, verify_crc=verify_crc):
                    end = record.physical_offset + record.total_size
                    newest = max(newest, record.store_timestamp)
            except StoreError as exc:
                return RecoveredEnd(exc.offset if exc.offset is not None else end, newest)
        return RecoveredEnd(self._past_blank(end), newest)

    def _past_blank(self, end: int) -> int:
        """A BLANK marker at the end means the data continues at the next file."""
        mapped = self.files.file_for(end)
        if mapped is None or end - mapped.file_from_offset + PREFIX_SIZE > mapped.size:
            return end
        _, magic = read_prefix(mapped.mm, end - mapped.file_from_offset)
        return mapped.file_from_offset + mapped.size if is_blank(magic) else end

    def truncate(self, end: int) -> None:
        self.files.truncate(end)

    def records(self, start: int) -> Iterator[MessageRecord]:
        """Valid records from ``start`` (a record boundary) to the end of the data."""
        with CommitLogReader(self.directory) as reader:
            yield from reader.records(start, verify_crc=False)

    def flush(self) -> int:
        """Make everything written durable; returns the offset that is now durable."""
        target = self.max_offset
        self.files.flush()
        return target

    def close(self) -> None:
        self.files.close()


def _placed(records: list[MessageRecord], start: int) -> list[MessageRecord]:
    placed = []
    for record in records:
        moved = dataclasses.replace(record, physical_offset=start)
        if "properties" in vars(record):  # a property map the record already holds moves with it
            vars(moved)["properties"] = record.properties
        placed.append(moved)
        start += record.total_size
    return placed
