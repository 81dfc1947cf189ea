"""Pre-allocated, memory-mapped store files and the ordered sequence of them that one log is made of.

Java maps every store file at its full size up front; a reader (Java's or ours) finds the end of the
data by its content (zeros), never by the file length. Files are therefore created at full size with
``ftruncate``, which keeps them sparse, instead of writing zeros. Flushing uses ``fdatasync`` on the
file descriptor: on Linux it writes back pages dirtied through a shared mapping exactly as ``msync``
does, and unlike ``mmap.flush`` it releases the GIL, so a flusher thread never stalls the event loop.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterator
from pathlib import Path

from rocketmq_spec.spec.commitlog import is_offset_file_name, offset_file_name
from rocketmq_spec.spec.errors import StoreError

ZERO_CHUNK = 1024 * 1024
"""Bytes zeroed per step when cutting a torn tail, so the zero buffer stays small."""
_ZEROS = bytes(ZERO_CHUNK)


class MappedFile:
    """One store file mapped at its full size; ``wrote`` is where the data ends."""

    def __init__(self, path: Path, size: int, file_from_offset: int = 0) -> None:
        self.path = path
        self.size = size
        self.file_from_offset = file_from_offset
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            actual = os.fstat(self._fd).st_size
            if actual == 0:
                os.ftruncate(self._fd, size)
            elif actual != size:
                raise StoreError(f"{path} does not have the configured file size", expected=size,
                                 seen=actual)
            self.mm = mmap.mmap(self._fd, size)
        except BaseException:
            os.close(self._fd)
            raise
        self.wrote = 0
        self.flushed = 0

    @property
    def remaining(self) -> int:
        return self.size - self.wrote

    @property
    def end_offset(self) -> int:
        """Absolute offset just past the data."""
        return self.file_from_offset + self.wrote

    def append(self, data: bytes) -> int:
        """Write at the end of the data; returns the position in the file."""
        pos = self.wrote
        self.mm[pos:pos + len(data)] = data
        self.wrote = pos + len(data)
        return pos

    def read(self, pos: int, size: int) -> bytes:
        return self.mm[pos:pos + size]

    def flush(self) -> int:
        """Make everything written so far durable; returns the position now flushed."""
        target = self.wrote
        if target > self.flushed:
            try:
                os.fdatasync(self._fd)
            except OSError:
                if not self.mm.closed:
                    raise
                return self.flushed  # retention unmapped it meanwhile: nothing left to make durable
            self.flushed = target
        return self.flushed

    def cut(self, pos: int) -> None:
        """Drop the data from ``pos`` on: zero it so no reader mistakes a torn record for data.

        Only ranges that hold data on disk are zeroed (found with SEEK_DATA/SEEK_HOLE), so cutting a
        1 GiB sparse file does not allocate it; a file another broker allocated whole (rocketmq-rust
        does) is compared with zeros a chunk at a time, not byte by byte.
        """
        for start, end in self._data_extents(pos):
            for chunk in range(start, end, ZERO_CHUNK):
                stop = min(chunk + ZERO_CHUNK, end)
                zeros = _ZEROS[:stop - chunk]
                if self.mm[chunk:stop] != zeros:
                    self.mm[chunk:stop] = zeros
        self.wrote = pos
        self.flushed = min(self.flushed, pos)

    def _data_extents(self, pos: int) -> Iterator[tuple[int, int]]:
        while pos < self.size:
            try:
                start = os.lseek(self._fd, pos, os.SEEK_DATA)
                end = min(os.lseek(self._fd, start, os.SEEK_HOLE), self.size)
            except OSError as exc:
                if exc.errno == 6:  # ENXIO: no data after pos
                    return
                yield pos, self.size  # filesystem without hole reporting: treat all as data
                return
            yield start, end
            pos = end

    def close(self) -> None:
        if not self.mm.closed:
            self.mm.close()
            os.close(self._fd)

    def destroy(self) -> None:
        self.close()
        self.path.unlink(missing_ok=True)

    @property
    def last_modified_ms(self) -> int:
        """When the file was last written (``File.lastModified``): the clock of time-based retention."""
        return int(os.fstat(self._fd).st_mtime * 1000) if not self.mm.closed else 0


def sequence_names(directory: Path, file_size: int) -> list[str]:
    """The offset-named files of a log directory in order, checked without opening them for writing:
    regular files of ``file_size`` bytes, each starting where the one before ends, at a multiple of the
    size. Raises StoreError for the first that is not."""
    names = sorted(p.name for p in directory.iterdir() if is_offset_file_name(p.name))
    expected = int(names[0]) if names else 0
    for name in names:
        path = directory / name
        if int(name) != expected or expected % file_size:
            raise StoreError(f"store file {path} breaks the file sequence",
                             expected=offset_file_name(expected), seen=name)
        if not path.is_file() or path.stat().st_size != file_size:
            raise StoreError(f"{path} does not have the configured file size", expected=file_size,
                             seen=path.stat().st_size if path.is_file() else "not a regular file")
        expected += file_size
    return names


class MappedFileQueue:
    """The files of one log (the commitlog, or one consume queue), named by their 20-digit start offset."""

    def __init__(self, directory: Path, file_size: int) -> None:
        self.directory = directory
        self.file_size = file_size
        self.files: list[MappedFile] = []

    def load(self) -> None:
        """Map the existing files; they must be contiguous and aligned to the file size."""
        if not self.directory.is_dir():
            return
        for name in sequence_names(self.directory, self.file_size):
            start = int(name)
            mapped = MappedFile(self.directory / name, self.file_size, start)
            mapped.wrote = mapped.flushed = self.file_size  # until recovery finds the real end
            self.files.append(mapped)

    @property
    def last(self) -> MappedFile | None:
        return self.files[-1] if self.files else None

    def create(self, start: int) -> MappedFile:
        """Map a new last file starting at ``start`` (a multiple of the file size)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        mapped = MappedFile(self.directory / offset_file_name(start), self.file_size, start)
        self.files.append(mapped)
        return mapped

    def file_for(self, offset: int) -> MappedFile | None:
        if not self.files or offset < self.files[0].file_from_offset:
            return None
        index = (offset - self.files[0].file_from_offset) // self.file_size
        return self.files[index] if index < len(self.files) else None

    @property
    def min_offset(self) -> int:
        return self.files[0].file_from_offset if self.files else 0

    @property
    def max_offset(self) -> int:
        """Absolute offset just past the data of the last file."""
        return self.files[-1].end_offset if self.files else 0

    def read(self, offset: int, size: int) -> bytes | None:
        mapped = self.file_for(offset)
        if mapped is None:
            return None
        pos = offset - mapped.file_from_offset
        if pos + size > mapped.wrote:
            return None
        return mapped.read(pos, size)

    def retire_first(self, count: int) -> list[MappedFile]:
        """Take the first ``count`` files out of the sequence and unlink them; they stay mapped until the
        caller unmaps them, so a reader that found one just before still reads it. The list is replaced,
        not changed in place, so a thread iterating the old one (the flusher) is not disturbed."""
        retired, self.files = self.files[:count], self.files[count:]
        for mapped in retired:
            mapped.path.unlink(missing_ok=True)
        return retired

    def truncate(self, offset: int) -> None:
        """Make ``offset`` the end of the data: later files go, the tail of the file holding it is cut."""
        while self.files and self.files[-1].file_from_offset > offset:
            self.files.pop().destroy()
        last = self.last
        if last is None:
            return
        if offset == last.file_from_offset + last.size:
            last.wrote = last.size
            return
        last.cut(offset - last.file_from_offset)
        for mapped in self.files[:-1]:
            mapped.wrote = mapped.size

    def flush(self) -> None:
        for mapped in self.files:
            if mapped.flushed < mapped.wrote:
                mapped.flush()

    def close(self) -> None:
        for mapped in self.files:
            mapped.close()
