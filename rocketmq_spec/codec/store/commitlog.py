"""Reading a CommitLog directory: records in order across files, or one record by offset.

Files are memory-mapped read-only (they are sparse, pre-allocated 1 GiB files, so only the written part is
ever touched). Iteration follows the writer's rules: a BLANK marker ends a file, zeros end the data
(pre-allocated zero files may follow, and a torn last record ends it too:
``rocketmq_spec.codec.store.data_end``), and anything else that is not a valid record is reported as a
StoreError at its absolute position. After a walk to the end, :attr:`CommitLog.end` says where the data ended
and what lay past it. """

from __future__ import annotations

import mmap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rocketmq_spec.codec.fast_store import FixedFields
from rocketmq_spec.codec.store.data_end import DataEnd, TornRecord, zero_from
from rocketmq_spec.codec.store.record import (
    PREFIX_SIZE,
    MessageRecord,
    decode_record,
    decode_walked,
    read_prefix,
    unpack_bounded_fixed,
)
from rocketmq_spec.spec.commitlog import (
    BLANK_MAGIC,
    RMQ_CL_BLANK,
    RMQ_CL_END_OF_DATA,
    RMQ_CL_FILE_NAME,
    RMQ_CL_PHYSICAL_OFFSET,
    is_offset_file_name,
)
from rocketmq_spec.spec.errors import StoreError


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
        self._end: DataEnd | None = None

    @property
    def end(self) -> DataEnd:
        """Where the data ends and what lies past it, walking the fixed fields once if no walk has yet."""
        if self._end is None:
            for _ in self.scan():
                pass
        assert self._end is not None
        return self._end

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
        for segment, view, pos, fixed in self._walk(start):
            record = decode_walked(view, pos, fixed, verify_crc=verify_crc, base_offset=segment.start)
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
            walk = _FileWalk(self, number, view)
            for pos, fixed in walk.records(first):
                yield segment, view, pos, fixed
            if walk.end is not None:
                self._end = walk.end
                return
        self._end = DataEnd(self.files[-1].start + len(self._map(self.files[-1])) if self.files else 0)

    def nonzero_after_end(self, window: int) -> int | None:
        """Absolute offset of the first non-zero byte among the ``window`` bytes after the data end (after
        a torn record's bytes), within the file the end falls in; None when they are all zero."""
        zeros_from = self.end.zeros_from
        for segment in reversed(self.files):
            if segment.start <= zeros_from:
                view = self._map(segment)
                start = zeros_from - segment.start
                tail = bytes(view[start:start + window])
                stripped = tail.lstrip(b"\0")
                return segment.start + start + len(tail) - len(stripped) if stripped else None
        return None

    def zeros_after(self, number: int) -> list[SegmentFile] | None:
        """The files after file ``number`` when every one of them is all zeros, else None."""
        later = self.files[number + 1:]
        if all(zero_from(f.path, self._map(f), 0) for f in later):
            return later
        return None

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


class _FileWalk:
    """The records of one CommitLog file from a position, and where the data ends if it ends in it."""

    def __init__(self, log: CommitLog, number: int, view: mmap.mmap | bytes) -> None:
        self.log = log
        self.segment = log.files[number]
        self.number = number
        self.view = view
        self.end: DataEnd | None = None

    def records(self, pos: int) -> Iterator[tuple[int, FixedFields]]:
        view, start = self.view, self.segment.start
        while len(view) - pos >= PREFIX_SIZE:
            where = start + pos
            total_size, magic = read_prefix(view, pos)
            if magic == BLANK_MAGIC:
                if total_size != len(view) - pos:
                    raise StoreError("BLANK marker does not cover the rest of the file",
                                     expected=len(view) - pos, seen=total_size, offset=where,
                                     clause=RMQ_CL_BLANK.id)
                return
            if total_size == 0 and magic == 0:
                self._zeros(where)
                return
            try:
                fixed = self._whole_record(pos, where)
            except StoreError as exc:
                extent = self._extent(pos, total_size)
                if not self._rest_is_zero(pos + extent):
                    raise
                self.end = self._data_end(where, TornRecord(where, exc, extent))
                return
            yield pos, fixed
            pos += total_size
        if self.number == len(self.log.files) - 1:
            self.end = DataEnd(start + pos)

    def _whole_record(self, pos: int, where: int) -> FixedFields:
        fixed = unpack_bounded_fixed(self.view, pos, where)
        if fixed.physical_offset != where:
            raise StoreError("PHYSICALOFFSET differs from the record's position", expected=where,
                             seen=fixed.physical_offset, offset=where, clause=RMQ_CL_PHYSICAL_OFFSET.id)
        after = pos + fixed.total_size
        if self._is_last(after):
            decode_record(self.view, pos, verify_crc=True, base_offset=self.segment.start)
        return fixed

    def _is_last(self, after: int) -> bool:
        """Whether nothing but zeros follows ``after``: the record before it is the last one, whose
        body CRC is checked even by walks that skip bodies, since only that tells a torn record."""
        if len(self.view) - after >= PREFIX_SIZE and read_prefix(self.view, after) != (0, 0):
            return False
        return self._rest_is_zero(after)

    def _rest_is_zero(self, pos: int) -> bool:
        return zero_from(self.segment.path, self.view, pos) and self.log.zeros_after(self.number) is not None

    def _extent(self, pos: int, total_size: int) -> int:
        """Bytes a record that failed to decode spans, for judging whether only zeros follow it."""
        return total_size if 0 < total_size <= len(self.view) - pos else len(self.view) - pos

    def _zeros(self, where: int) -> None:
        if self.log.zeros_after(self.number) is None:
            raise StoreError("CommitLog data ends before the last file without a BLANK marker",
                             expected="BLANK marker", seen="zeros", offset=where,
                             clause=RMQ_CL_END_OF_DATA.id)
        self.end = self._data_end(where, None)

    def _data_end(self, where: int, torn: TornRecord | None) -> DataEnd:
        """The end at ``where``; the files past it are pre-allocated, this one too if it holds nothing."""
        later = self.log.zeros_after(self.number) or []
        if where == self.segment.start and torn is None and zero_from(self.segment.path, self.view, 0):
            later = [self.segment, *later]
        return DataEnd(where, torn, [f.path.name for f in later])
