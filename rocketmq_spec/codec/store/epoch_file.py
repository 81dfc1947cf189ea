"""Reading and writing a controller-mode store's epoch file (``epochFileCheckpoint``).

The reader is strict where Java's is: a count that is not the number of entry lines, or a CRC (other
than 0) that is not the entries', makes the file unreadable, which is when Java turns to the ``.bak``
copy (RMQ-EPOCH-FILE-BACKUP); :func:`read_epochs` does the same. Entry order is a separate rule
(RMQ-EPOCH-FILE-ORDER) that :func:`order_problem` judges, so a tool can show a file it then refuses.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

from rocketmq_spec.spec.epoch_file import (
    BACKUP_SUFFIX,
    ENTRY_SEPARATOR,
    EPOCH_FILE_NAME,
    LINE_SEPARATOR,
    RMQ_EPOCH_FILE,
    RMQ_EPOCH_FILE_ORDER,
    UNCHECKED_CRC,
)
from rocketmq_spec.spec.errors import StoreError
from rocketmq_spec.spec.hashing import masked_crc32

MAX_EPOCH_FILE = 1024 * 1024
"""A file with tens of thousands of failovers is still far below this; more is not an epoch file."""


@dataclass(frozen=True)
class EpochFile:
    entries: tuple[tuple[int, int], ...]
    """``(epoch, start offset)`` in file order."""
    crc: int
    path: Path


def _entry_lines(entries: tuple[tuple[int, int], ...]) -> str:
    return "".join(f"{epoch}{ENTRY_SEPARATOR}{start}{LINE_SEPARATOR}" for epoch, start in entries)


def encode_epoch_file(entries: list[tuple[int, int]]) -> bytes:
    """The file Java writes for these entries (CheckpointFile.write)."""
    lines = _entry_lines(tuple(entries))
    crc = masked_crc32(lines.encode("utf-8"))
    return f"{len(entries)}{LINE_SEPARATOR}{crc}{LINE_SEPARATOR}{lines}".encode()


def _int(text: str, what: str, path: Path) -> int:
    try:
        return int(text)
    except ValueError:
        raise StoreError(f"{path.name}: {what} is not a decimal number", expected="digits", seen=text,
                         clause=RMQ_EPOCH_FILE.id) from None


def read_epoch_file(path: Path) -> EpochFile:
    """One file, checked as CheckpointFile.read checks it."""
    data = path.read_bytes()
    if len(data) > MAX_EPOCH_FILE:
        raise StoreError(f"{path.name} is too large for an epoch file", expected=f"<= {MAX_EPOCH_FILE}",
                         seen=len(data), clause=RMQ_EPOCH_FILE.id)
    lines = data.decode("utf-8", errors="replace").splitlines()
    if len(lines) < 2:
        raise StoreError(f"{path.name} lacks its count and CRC lines", expected="2 lines and entries",
                         seen=len(lines), clause=RMQ_EPOCH_FILE.id)
    count, crc = _int(lines[0], "the count", path), _int(lines[1], "the CRC", path)
    entries = []
    for line in lines[2:]:
        parts = line.split(ENTRY_SEPARATOR)
        if len(parts) == 2:  # Java skips any other line (EpochEntrySerializer.fromLine), CRC included
            entries.append((_int(parts[0], "an epoch", path), _int(parts[1], "a start offset", path)))
    if count != len(entries):
        raise StoreError(f"{path.name} announces another number of entries", expected=count,
                         seen=len(entries), clause=RMQ_EPOCH_FILE.id)
    actual = masked_crc32("".join(line + LINE_SEPARATOR for line in lines[2:]).encode("utf-8"))
    if crc != UNCHECKED_CRC and crc != actual:
        raise StoreError(f"{path.name}: CRC of the entries does not match", expected=crc, seen=actual,
                         clause=RMQ_EPOCH_FILE.id)
    return EpochFile(tuple(entries), crc, path)


def read_epochs(store_root: Path) -> EpochFile | None:
    """The store's epochs as Java loads them: the file, else its ``.bak`` copy when the file is missing,
    holds no entry or is unreadable; None when the store has neither (not a controller-mode store)."""
    path = store_root / EPOCH_FILE_NAME
    backup = path.with_name(path.name + BACKUP_SUFFIX)
    try:
        found = read_epoch_file(path) if path.is_file() else None
    except StoreError:
        if not backup.is_file():
            raise
        found = None
    if found is not None and found.entries:
        return found
    return read_epoch_file(backup) if backup.is_file() else found


def order_problem(entries: tuple[tuple[int, int], ...], max_offset: int) -> StoreError | None:
    """Why the entries break RMQ-EPOCH-FILE-ORDER, or None."""
    for (epoch, start), (next_epoch, next_start) in itertools.pairwise(entries):
        if next_epoch <= epoch or next_start <= start:
            return StoreError("epoch entries do not grow", expected=f"after {epoch}-{start}",
                              seen=f"{next_epoch}-{next_start}", clause=RMQ_EPOCH_FILE_ORDER.id)
    if entries and entries[-1][1] > max_offset:
        return StoreError("the last epoch starts past the CommitLog's end", expected=f"<= {max_offset}",
                          seen=entries[-1][1], clause=RMQ_EPOCH_FILE_ORDER.id)
    return None
