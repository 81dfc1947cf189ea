"""The index service: keeps appending to the newest IndexFile and rolls to a new one when it is full.

Files are read and written by ``rocketmq_spec.codec.store.IndexFile`` (Java's algorithm); this module only
decides which file gets the next key, names new files by creation time, and says after a crash which files
index records that recovery cut off (those are dropped and rebuilt from the commitlog). """

from __future__ import annotations

import time
from pathlib import Path

from rocketmq_spec.codec.store.indexfile import MAX_TIMESTAMP, IndexFile, index_keys, query_offsets
from rocketmq_spec.codec.store.record import MessageRecord
from rocketmq_spec.spec.indexfile import FIRST_INDEX
from rocketmq_spec.spec.store_layout import INDEX_FILE_NAME_FORMAT


def index_file_name(now_ms: int) -> str:
    """yyyyMMddHHmmssSSS in local time (RMQ-IDX-FILE-NAME)."""
    return time.strftime(INDEX_FILE_NAME_FORMAT, time.localtime(now_ms / 1000)) + f"{now_ms % 1000:03d}"


class IndexService:
    def __init__(self, directory: Path, slot_count: int, index_count: int, tags: bool) -> None:
        self.directory = directory
        self.slot_count = slot_count
        self.index_count = index_count
        self.tags = tags
        """Index TAGS strings too (RMQ-IDX-KEYS from 5.4.0)."""
        self.files: list[IndexFile] = []
        self.last_indexed = -1
        """Commitlog offset of the newest indexed record: replayed records up to it are skipped."""

    def load(self) -> None:
        if not self.directory.is_dir():
            return
        for path in sorted(p for p in self.directory.iterdir() if p.name.isdigit()):
            self.files.append(IndexFile(path, slot_count=self.slot_count, index_count=self.index_count,
                                        writable=True))
        self.last_indexed = max((f.header.end_phy_offset for f in self.files
                                 if f.header.index_count > FIRST_INDEX), default=-1)

    def drop_beyond(self, commitlog_end: int) -> int | None:
        """Remove the newest files that index records at or past ``commitlog_end``; returns the commitlog
        offset from which their records must be indexed again (None when nothing was dropped)."""
        rebuild_from = None
        while self.files and self.files[-1].header.index_count > FIRST_INDEX \
                and self.files[-1].header.end_phy_offset >= commitlog_end:
            dropped = self.files.pop()
            rebuild_from = dropped.header.begin_phy_offset
            dropped.close()
            dropped.path.unlink()
        if rebuild_from is not None:
            self.last_indexed = max((f.header.end_phy_offset for f in self.files
                                     if f.header.index_count > FIRST_INDEX), default=-1)
        return rebuild_from

    def build(self, record: MessageRecord) -> None:
        """Index a record under its UNIQ_KEY, KEYS and tags (RMQ-IDX-KEYS), rolling files as they fill up.

        The newest indexed record may have been cut off between two of its keys by a crash (the header
        moves with every key), so when it is replayed only the keys it lacks are added.
        """
        if record.physical_offset < self.last_indexed:
            return
        keys = index_keys(record, tags=self.tags)
        if record.physical_offset == self.last_indexed:
            keys = [key for key in keys if not self._has(key, record.physical_offset)]
        self.put_keys(keys, record.physical_offset, record.store_timestamp)

    def put_keys(self, keys: list[str], phy_offset: int, store_timestamp: int) -> None:
        """Index a new record (one past every record indexed so far) under ``keys``."""
        if not keys:
            return
        current = self._writable()
        done = current.put_keys(keys, phy_offset, store_timestamp)
        while done < len(keys):
            current.flush()
            current = self._roll()
            taken = current.put_keys(keys[done:], phy_offset, store_timestamp)
            if not taken:  # a file too small for even one key: nothing more can be indexed
                break
            done += taken
        self.last_indexed = phy_offset

    def _has(self, key: str, phy_offset: int) -> bool:
        return any(phy_offset in index.lookup(key) for index in reversed(self.files))

    def _writable(self) -> IndexFile:
        """The newest file, full or not: a full one refuses the first key (``IndexFile.put_keys``, the one
        check of fullness per key), which ``put_keys`` answers by flushing it and rolling."""
        return self.files[-1] if self.files else self._roll()

    def _roll(self) -> IndexFile:
        self.directory.mkdir(parents=True, exist_ok=True)
        now = int(time.time() * 1000)
        path = self.directory / index_file_name(now)
        while path.exists():  # two files within one millisecond: the name must still be unique and later
            now += 1
            path = self.directory / index_file_name(now)
        previous = self.files[-1].header if self.files else None
        created = IndexFile.create(path, slot_count=self.slot_count, index_count=self.index_count,
                                   previous=previous)
        self.files.append(created)
        return created

    def query(self, topic: str, key: str, max_num: int, begin: int = 0, end: int = MAX_TIMESTAMP,
              index_type: str | None = None) -> list[int]:
        """``IndexService.queryOffset`` over the open files (``index_type`` T: by TAGS string)."""
        return query_offsets(reversed(self.files), topic, key, begin=begin, end=end, max_results=max_num,
                             index_type=index_type)

    @property
    def last_update(self) -> tuple[int, int]:
        """(end timestamp, end phy offset) of the newest file, as QUERY_MESSAGE's response header wants."""
        if not self.files:
            return 0, 0
        header = self.files[-1].header
        return header.end_timestamp, header.end_phy_offset

    def delete_expired(self, commitlog_min: int) -> list[IndexFile]:
        """``IndexService.deleteExpiredFile``: take out the leading files (never the last) whose records all
        lie below the commitlog's first offset and unlink them; the caller closes them later."""
        count = 0
        for index in self.files[:-1]:
            if index.header.end_phy_offset >= commitlog_min:
                break
            count += 1
        retired, self.files = self.files[:count], self.files[count:]
        for index in retired:
            index.path.unlink(missing_ok=True)
        return retired

    def flush(self) -> None:
        for index in list(self.files):
            index.flush()

    def close(self) -> None:
        for index in self.files:
            index.close()
        self.files.clear()
