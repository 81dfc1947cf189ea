"""Retention: a broker left running does not fill its disk (``DefaultMessageStore.CleanCommitLogService`` and
``CleanConsumeQueueService`` of 4.9.8).

Every ``cleanResourceInterval`` one round runs. CommitLog files are deleted when it is one of the
``deleteWhen`` hours, when the disk holding the store is fuller than ``diskMaxUsedSpaceRatio`` percent, or
for 20 rounds after an admin asked (DELETE_EXPIRED_COMMITLOG): oldest first, never the file being written,
only those last written more than ``fileReservedTime`` hours ago — unless the disk is past
``diskSpaceCleanForciblyRatio`` and ``cleanFileForciblyEnable`` is set, when they go regardless of age.
Past ``diskSpaceWarningLevelRatio`` the store also refuses puts until the disk is below it again. Once
the commitlog's first offset has moved, consume-queue files and index files that only point below it
are deleted and each queue's minimum offset moves to its first entry still in the commitlog, so a pull
below it is answered OFFSET_TOO_SMALL.

A deleted file is unlinked at once but unmapped only at the next round, so a pull or the flusher that
picked it up just before finishes undisturbed (Java counts references for the same reason).
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import Protocol

from rocketmq_spec.reference_broker.store.commitlog import CommitLog
from rocketmq_spec.reference_broker.store.config import StoreConfig
from rocketmq_spec.reference_broker.store.consume_queue import ConsumeQueue
from rocketmq_spec.reference_broker.store.index import IndexService
from rocketmq_spec.reference_broker.store.worker import ConditionWorker

log = logging.getLogger(__name__)

MAX_MANUAL_DELETE_ROUNDS = 20
"""``MAX_MANUAL_DELETE_FILE_TIMES``: rounds that delete expired files after DELETE_EXPIRED_COMMITLOG."""
MIN_USED_RATIO, MAX_USED_RATIO = 10, 95
"""``getDiskMaxUsedSpaceRatio`` keeps diskMaxUsedSpaceRatio within these percentages."""
DELETE_FILES_BATCH_MAX = 10
"""CommitLog files deleted per round at most (``MappedFileQueue.DELETE_FILES_BATCH_MAX``)."""

class _Closable(Protocol):
    def close(self) -> None: ...


def disk_used_ratio(path: Path) -> float:
    """``UtilAll.getDiskPartitionSpaceUsedPercent``: used / (used + available to users), rounded up to a
    whole percent (as ``df`` shows it, not used / total); -1 when the path does not exist."""
    try:
        stats = os.statvfs(path)
    except OSError:
        return -1.0
    used = (stats.f_blocks - stats.f_bfree) * stats.f_frsize
    entire = used + stats.f_bavail * stats.f_frsize
    if stats.f_blocks <= 0 or entire <= 0:
        return -1.0
    return math.ceil(used * 100 / entire) / 100


def is_delete_hour(delete_when: str, now: datetime) -> bool:
    """``UtilAll.isItTimeToDo``: the current hour is one of the ';'-separated hours."""
    return any(int(hour) == now.hour for hour in delete_when.split(";") if hour.strip())


class RetentionService(ConditionWorker):
    def __init__(self, config: StoreConfig, commitlog: CommitLog,
                 queues: Callable[[], Iterable[ConsumeQueue]], index: IndexService,
                 lock: threading.RLock) -> None:
        super().__init__("store-retention")
        self._config = config
        self._commitlog = commitlog
        self._queues = queues
        self._index = index
        self._lock = lock
        """The store's put lock: file lists change only while no put is appending to them."""
        self._manual_rounds = 0
        self._clean_immediately = False
        self._last_commitlog_min = 0
        self._retired: list[_Closable] = []
        self.disk_usage: Callable[[Path], float] = disk_used_ratio
        """How full the disk holding a path is (0..1); replaceable, so a full disk can be simulated."""
        self.disk_full = False
        """Past diskSpaceWarningLevelRatio: the store refuses puts (SERVICE_NOT_AVAILABLE) until below."""

    def delete_manually(self) -> None:
        """``executeDeleteFilesManually``: the next rounds delete expired files whatever the hour."""
        with self._cond:
            self._manual_rounds = MAX_MANUAL_DELETE_ROUNDS
            self._cond.notify()

    def retire(self, files: Iterable[_Closable]) -> None:
        """Files already unlinked and out of their sequence, to be unmapped at the next round."""
        with self._lock:
            self._retired.extend(files)

    def _run(self) -> None:
        interval = self._config.clean_resource_interval / 1000
        while True:
            with self._cond:
                if self._running:
                    self._cond.wait(interval)
                if not self._running:
                    return
            try:
                self.run_round()
            except Exception:  # a failed round is retried next interval, as Java's run() logs and goes on
                log.exception("retention round failed")

    def run_round(self, now: datetime | None = None) -> None:
        """One round: unmap what the previous round retired, then clean the commitlog and the queues."""
        self._close_retired()
        self._clean_commitlog(now or datetime.now())
        self._clean_consume_queues()

    def stop(self) -> None:
        self._stop_thread()

    def close_retired(self) -> None:
        """At shutdown, once no other store thread runs: unmap everything retired."""
        self._close_retired(force=True)

    def _clean_commitlog(self, now: datetime) -> None:
        time_up = is_delete_hour(self._config.delete_when, now)
        space_full = self._space_to_delete()
        with self._cond:
            manual = self._manual_rounds > 0
            if manual:
                self._manual_rounds -= 1
        if not (time_up or space_full or manual):
            return
        at_once = self._config.clean_file_forcibly_enable and self._clean_immediately
        reserved_ms = self._config.file_reserved_time * 3600 * 1000
        deleted = self._delete_commitlog_files(reserved_ms, at_once)
        if deleted:
            log.info("deleted %d commitlog file(s) (time up %s, disk full %s, manual %s, at once %s)",
                     deleted, time_up, space_full, manual, at_once)

    def _delete_commitlog_files(self, reserved_ms: int, at_once: bool) -> int:
        """``deleteExpiredFileByTime``: oldest first, stop at the first file still to keep."""
        pause = self._config.delete_commit_log_files_interval / 1000
        deleted = 0
        while deleted < DELETE_FILES_BATCH_MAX:
            with self._lock:
                files = self._commitlog.files.files
                if len(files) < 2:
                    break
                expired = at_once or time.time() * 1000 >= files[0].last_modified_ms + reserved_ms
                if not expired:
                    break
                self._retired.extend(self._commitlog.files.retire_first(1))
            deleted += 1
            if pause > 0 and len(self._commitlog.files.files) > 1:
                time.sleep(pause)
        return deleted

    def _space_to_delete(self) -> bool:
        """``isSpaceToDelete``: whether the disk of the commitlog or of the queues is fuller than allowed;
        sets whether files go regardless of age and whether puts are refused."""
        limit = min(max(self._config.disk_max_used_space_ratio, MIN_USED_RATIO), MAX_USED_RATIO) / 100
        ratios = [self.disk_usage(self._config.commit_log_path), self.disk_usage(self._config.root_dir)]
        self._clean_immediately = any(r > self._config.disk_space_clean_forcibly_ratio for r in ratios)
        full = any(r > self._config.disk_space_warning_level_ratio for r in ratios)
        if full != self.disk_full:
            log.warning("disk %s: %s used (warning level %s)", "full, puts refused" if full else "ok again",
                        ", ".join(f"{r:.1%}" for r in ratios), self._config.disk_space_warning_level_ratio)
        self.disk_full = full
        return any(r < 0 or r > limit for r in ratios)

    def _clean_consume_queues(self) -> None:
        """``CleanConsumeQueueService.deleteExpiredFiles``: once the commitlog's first offset moved."""
        commitlog_min = self._commitlog.min_offset
        if commitlog_min <= self._last_commitlog_min:
            return
        self._last_commitlog_min = commitlog_min
        pause = self._config.delete_consume_queue_files_interval / 1000
        for queue in list(self._queues()):
            with self._lock:
                retired = queue.delete_expired(commitlog_min)
                self._retired.extend(retired)
            if retired and pause > 0:
                time.sleep(pause)
        with self._lock:
            self._retired.extend(self._index.delete_expired(commitlog_min))

    def _close_retired(self, force: bool = False) -> None:
        with self._lock:
            retired, self._retired = self._retired, []
        still_used: list[_Closable] = []
        for closable in retired:
            try:
                closable.close()
            except BufferError:  # a reader still holds a view: try again next round
                if not force:
                    still_used.append(closable)
        self.retire(still_used)
