"""A controller-mode store's epochs (``EpochFileCache``): which master epoch wrote which part of the log.

Kept in memory as ``(epoch, start offset)`` pairs and written through to ``epochFileCheckpoint`` on every
change, the previous content first copied to the ``.bak`` file as Java's ``MixAll.string2File`` does
(RMQ-EPOCH-FILE-BACKUP). The file's bytes come from :mod:`rocketmq_spec.codec.store.epoch_file`.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from rocketmq_spec.codec.store.epoch_file import encode_epoch_file, read_epochs
from rocketmq_spec.spec.epoch_file import BACKUP_SUFFIX, EPOCH_FILE_NAME
from rocketmq_spec.spec.ha_autoswitch import EpochEntry, with_ends


class EpochCache:
    def __init__(self, store_root: Path) -> None:
        self.path = store_root / EPOCH_FILE_NAME
        found = read_epochs(store_root)
        self._entries: list[tuple[int, int]] = list(found.entries) if found is not None else []
        self._lock = threading.Lock()

    @property
    def entries(self) -> list[tuple[int, int]]:
        with self._lock:
            return list(self._entries)

    @property
    def last_epoch(self) -> int:
        """-1 without entries (EpochFileCache.lastEpoch)."""
        with self._lock:
            return self._entries[-1][0] if self._entries else -1

    def with_ends(self, max_offset: int) -> list[EpochEntry]:
        return with_ends(self.entries, max_offset)

    def append(self, epoch: int, start_offset: int) -> bool:
        """RMQ-HA2-EPOCH-ORDER: an entry not beyond the last one in both epoch and start offset is not
        kept (False)."""
        with self._lock:
            if self._entries:
                last_epoch, last_start = self._entries[-1]
                if epoch <= last_epoch or start_offset <= last_start:
                    return False
            self._entries.append((epoch, start_offset))
            self._write()
            return True

    def truncate_from_offset(self, offset: int) -> None:
        """Drop the entries starting at or after ``offset`` (EpochFileCache.truncateSuffixByOffset)."""
        with self._lock:
            self._entries = [entry for entry in self._entries if entry[1] < offset]
            self._write()

    def truncate_from_epoch(self, epoch: int) -> None:
        """Drop the entries of ``epoch`` and later (EpochFileCache.truncateSuffixByEpoch)."""
        with self._lock:
            self._entries = [entry for entry in self._entries if entry[0] < epoch]
            self._write()

    def _write(self) -> None:
        if self.path.is_file():
            backup = self.path.with_name(self.path.name + BACKUP_SUFFIX)
            backup.write_bytes(self.path.read_bytes())
        temporary = self.path.with_name(self.path.name + ".tmp")
        temporary.write_bytes(encode_epoch_file(self._entries))
        os.replace(temporary, self.path)
