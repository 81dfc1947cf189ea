"""Removing what the store no longer needs: consume queues left behind by the commitlog, expired files.

These are the two operations an admin can trigger (CLEAN_EXPIRED_CONSUMEQUEUE, DELETE_EXPIRED_COMMITLOG).
They run under the store's put lock, so no put or dispatch sees a queue or file half removed, and they
never touch the newest commitlog file, which is the one being written.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path

from reference_broker.store.commitlog import CommitLog
from reference_broker.store.consume_queue import ConsumeQueue
from reference_broker.store.topics import SCHEDULE_TOPIC

DEFAULT_FILE_RESERVED_HOURS = 72
"""``fileReservedTime``: how long a commitlog file is kept after its last write."""


def clean_expired_consume_queues(queues: dict[tuple[str, int], ConsumeQueue], commitlog: CommitLog,
                                 queue_root: Path, lock: threading.RLock) -> list[tuple[str, int]]:
    """``cleanExpiredConsumerQueue``: destroy every queue (but the schedule topic's) whose last entry
    lies before the commitlog's min offset, i.e. all of whose messages are gone; returns them.

    An empty queue is kept: Java takes it for one created a moment ago."""
    removed = []
    with lock:
        floor = commitlog.min_offset
        for key, queue in list(queues.items()):
            end = queue.last_entry_end()
            if key[0] == SCHEDULE_TOPIC or queue.max_offset == 0 or end >= floor:
                continue
            queue.close()
            shutil.rmtree(queue.files.directory, ignore_errors=True)
            del queues[key]
            removed.append(key)
        for topic in {topic for topic, _ in removed}:
            topic_dir = queue_root / topic
            if topic_dir.is_dir() and not any(topic_dir.iterdir()):
                topic_dir.rmdir()
    return removed


def delete_expired_commitlog(commitlog: CommitLog, lock: threading.RLock,
                             reserved_hours: float = DEFAULT_FILE_RESERVED_HOURS,
                             now: float | None = None) -> int:
    """``executeDeleteFilesManually`` carried out at once: delete, oldest first, the commitlog files
    (never the last) not written for ``reserved_hours``; returns how many went. The min offset then
    moves to the first file kept, and consume queues pointing before it can be cleaned."""
    now = time.time() if now is None else now
    deleted = 0
    with lock:
        files = commitlog.files.files
        while len(files) > 1 and now - os.stat(files[0].path).st_mtime > reserved_hours * 3600:
            files.pop(0).destroy()
            deleted += 1
    return deleted
