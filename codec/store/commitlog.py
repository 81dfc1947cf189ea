"""Reading a CommitLog directory: records in order across files, or one record by offset.

Files are memory-mapped read-only (they are sparse, pre-allocated 1 GiB files, so only the written part
is ever touched). Iteration follows the writer's rules: a BLANK marker ends a file, zeros end the data,
and anything else that is not a valid record is reported as a StoreError at its absolute position.
"""

from __future__ import annotations

import mmap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from codec.fast_store import FixedFields
from codec.store.record import PREFIX_SIZE, MessageRecord, decode_record, read_prefix, unpack_bounded_fixed
from spec.commitlog import (
    BLANK_MAGIC,
    RMQ_CL_BLANK,
    RMQ_CL_END_OF_DATA,
    RMQ_CL_FILE_NAME,
    RMQ_CL_PHYSICAL_OFFSET,
    is_offset_file_name,
)
from spec.errors import StoreError


@dataclass(frozen=True)
class SegmentFile:
    """One file of an offset-named file sequence (CommitLog or ConsumeQueue)."""

    path: Path
    start: int
    """Absolute offset of the file's first byte (its name)."""


def segment_files(directory: Path) -> list[SegmentFile]:
    """The 20-digit offset-named files of ``directory``, in offset order; other names are ignored."""
    if not directory.is_dir():
        return []
    files = [SegmentFile(p, int(p.name)) for p in directory.iterdir() if is_offset_file_name(p.name)]
    return sorted(files, key=lambda f: f.start)


def map_file(path: Path) -> mmap.mmap | bytes:
    """A read-only view of a file; empty files (which mmap refuses) read as ``b""``."""
    with path.open("rb") as handle:
        if path.stat().st_size == 0:
            return b""
        return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)


class CommitLog:
    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)
        self.files = segment_files(self.directory)
        self._maps: dict[Path, mmap.mmap | bytes] = {}

    def _map(self, segment: SegmentFile) -> mmap.mmap | bytes:
        if segment.path not in self._maps:
            self._maps[segment.path] = map_file(segment.path)
        return self._maps[segment.path]

    def close(self) -> None:
        for view in self._maps.values():
            if isinstance(view, mmap.mmap):
                view.close()
        self._maps.clear()

    def __enter__(self) -> CommitLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_names(self) -> None:
        for before, after in zip(self.files, self.files[1:], strict=False):
            size = len(self._map(before))
            if after.start != before.start + size:
                raise StoreError("CommitLog files are not contiguous", expected=before.start + size,
                                 seen=after.start, offset=after.start, clause=RMQ_CL_FILE_NAME.id)

    def records(self, start: int | None = None, *, verify_crc: bool = True,
                decompress: bool = False) -> Iterator[MessageRecord]:
        """Every record from ``start`` (default: the first file) to the end of the data, fully decoded.

        With ``decompress`` the body of each compressed record is decompressed during iteration, so a
        broken body raises its BodyError at that record (``record.application_body`` holds the result).
        """
        for segment, view, pos, _ in self._walk(start):
            record = decode_record(view, pos, verify_crc=verify_crc, base_offset=segment.start)
            if decompress:
                _ = record.application_body
            yield record

    def scan(self, start: int | None = None) -> Iterator[FixedFields]:
        """The fixed fields of every record from ``start``, without decoding bodies, topics or properties.

        Record boundaries, magic, TOTALSIZE bounds and PHYSICALOFFSET are checked as :meth:`records` checks
        them; the variable parts and BODYCRC are not (use :meth:`records` or :meth:`read` for those).
        """
        for _, _, _, fixed in self._walk(start):
            yield fixed

    def _walk(self, start: int | None) -> Iterator[tuple[SegmentFile, mmap.mmap | bytes, int, FixedFields]]:
        self._check_names()
        for number, segment in enumerate(self.files):
            view = self._map(segment)
            end = segment.start + len(view)
            if start is not None and start >= end:
                continue
            first = 0 if start is None or start < segment.start else start - segment.start
            last = number == len(self.files) - 1
            for pos, fixed in self._file_walk(segment, view, first, last):
                yield segment, view, pos, fixed

    def _file_walk(self, segment: SegmentFile, view: mmap.mmap | bytes, pos: int,
                   last: bool) -> Iterator[tuple[int, FixedFields]]:
        while len(view) - pos >= PREFIX_SIZE:
            where = segment.start + pos
            total_size, magic = read_prefix(view, pos)
            if magic == BLANK_MAGIC:
                if total_size != len(view) - pos:
                    raise StoreError("BLANK marker does not cover the rest of the file",
                                     expected=len(view) - pos, seen=total_size, offset=where,
                                     clause=RMQ_CL_BLANK.id)
                return
            if total_size == 0 and magic == 0:
                if not last:
                    raise StoreError("CommitLog data ends before the last file without a BLANK marker",
                                     expected="BLANK marker", seen="zeros", offset=where,
                                     clause=RMQ_CL_END_OF_DATA.id)
                return
            fixed = unpack_bounded_fixed(view, pos, where)
            if fixed.physical_offset != where:
                raise StoreError("PHYSICALOFFSET differs from the record's position", expected=where,
                                 seen=fixed.physical_offset, offset=where, clause=RMQ_CL_PHYSICAL_OFFSET.id)
            yield pos, fixed
            pos += total_size

    def read(self, offset: int, *, verify_crc: bool = True) -> MessageRecord:
        """The record at absolute ``offset`` (as a ConsumeQueue entry or an offsetMsgId gives it)."""
        for segment in reversed(self.files):
            if segment.start <= offset:
                view = self._map(segment)
                if offset - segment.start < len(view):
                    return decode_record(view, offset - segment.start, verify_crc=verify_crc,
                                         base_offset=segment.start)
                break
        raise StoreError("offset is outside every CommitLog file", expected="an offset inside a file",
                         seen=offset, offset=offset, clause=RMQ_CL_FILE_NAME.id)
