"""The admin-triggered clean-up of the store: expired commitlog files, then the consume queues they orphan."""

from __future__ import annotations

import os
import time
from pathlib import Path

from reference_broker.store import MessageStore
from reference_broker.store.cleanup import DEFAULT_FILE_RESERVED_HOURS, delete_expired_commitlog
from spec.store_layout import CONSUMEQUEUE_DIR
from tests.test_store_engine_helpers import message, tiny_config

OLD = time.time() - (DEFAULT_FILE_RESERVED_HOURS + 1) * 3600


def _age(path: Path) -> None:
    os.utime(path, (OLD, OLD))


def test_expired_files_go_and_their_queues_with_them(tmp_path: Path) -> None:
    with MessageStore(tiny_config(tmp_path)) as store:
        for n in range(40):
            store.put_message(message("Old", 0, n))
        for n in range(3):
            store.put_message(message("New", 0, 100 + n))
        files = list(store.commitlog.files.files)
        assert len(files) > 2
        for mapped in files:
            _age(mapped.path)
        newest = files[-1].file_from_offset

        assert store.delete_expired_commitlog() == len(files) - 1
        assert store.min_phy_offset == newest
        assert [f.file_from_offset for f in store.commitlog.files.files] == [newest]

        removed = store.clean_expired_consume_queues()
        assert removed == [("Old", 0)]
        assert store.consume_queue("Old", 0) is None and store.consume_queue("New", 0) is not None
        assert not (tmp_path / CONSUMEQUEUE_DIR / "Old").exists()
        assert store.put_message(message("Old", 0, 200)).queue_offset == 0  # the queue starts again


def test_recent_files_and_the_last_file_stay(tmp_path: Path) -> None:
    with MessageStore(tiny_config(tmp_path)) as store:
        for n in range(40):
            store.put_message(message("T", 0, n))
        count = len(store.commitlog.files.files)
        assert store.delete_expired_commitlog() == 0
        for mapped in store.commitlog.files.files:
            _age(mapped.path)
        assert delete_expired_commitlog(store.commitlog, store._put_lock, reserved_hours=10 ** 6) == 0
        assert store.delete_expired_commitlog() == count - 1
        assert len(store.commitlog.files.files) == 1
        assert store.clean_expired_consume_queues() == []  # the queue's last entry is in the kept file
