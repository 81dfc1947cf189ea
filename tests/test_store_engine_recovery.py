"""Recovery at start: clean restarts, torn tails, lost consume-queue and index data, and a real kill -9.

Run as a module (``python -m tests.test_store_engine_recovery ROOT``) this file is also the writer the
kill -9 test starts: it appends under SYNC_FLUSH until it is killed and prints each acknowledged put.
"""

from __future__ import annotations

import dataclasses
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

from rocketmq_spec.codec.store import StoreDirectory, decode_record, index_keys, make_record
from rocketmq_spec.reference_broker.store import FlushDiskType, MessageStore, PutMessageStatus
from rocketmq_spec.reference_broker.store.index import IndexService
from rocketmq_spec.spec.properties import PropertyKey, encode_properties
from rocketmq_spec.spec.store_layout import ABORT_FILE
from tests.golden import PROJECT_ROOT
from tests.test_store_engine_helpers import BORN_HOST, assert_consistent, message, tiny_config

CRASH_COMMITLOG = 64 * 1024
ACKS_BEFORE_KILL = 300
WRITER_DEADLINE_S = 120.0
"""Bound on waiting for the writer's acknowledgements (it normally needs well under a second)."""


def fill(root: Path, count: int, **overrides: object) -> list[tuple[int, int, int]]:
    """(phys offset, queue id, queue offset) of ``count`` messages put into a fresh store, closed cleanly."""
    with MessageStore(tiny_config(root, **overrides)) as store:
        results = [store.put_message(message("TopicR", n % 3, n)) for n in range(count)]
    return [(r.phys_offset, n % 3, r.queue_offset) for n, r in enumerate(results)]


def test_clean_restart_continues_every_queue(tmp_path: Path) -> None:
    fill(tmp_path, 20)
    with MessageStore(tiny_config(tmp_path)) as store:
        assert not store.recovered_abnormally
        assert [store.max_offset("TopicR", q) for q in range(3)] == [7, 7, 6]
        assert store.put_message(message("TopicR", 2, 99)).queue_offset == 6
    assert_consistent(tmp_path)


def test_corrupt_last_record_is_cut_with_its_queue_entry(tmp_path: Path) -> None:
    sent = fill(tmp_path, 20)
    last_phys, last_queue, last_offset = sent[-1]
    path, pos = _locate(tmp_path, last_phys)
    with path.open("r+b") as f:
        f.seek(pos + 100)
        f.write(b"\xff")
    (tmp_path / ABORT_FILE).touch()
    with MessageStore(tiny_config(tmp_path)) as store:
        assert store.recovered_abnormally
        assert store.max_phy_offset == last_phys
        assert store.max_offset("TopicR", last_queue) == last_offset
        assert store.view_by_offset(last_phys) is None
        again = store.put_message(message("TopicR", last_queue, 500))
        assert (again.phys_offset, again.queue_offset) == (last_phys, last_offset)
    assert_consistent(tmp_path)


def test_torn_partial_record_is_zeroed(tmp_path: Path) -> None:
    sent = fill(tmp_path, 5)
    with MessageStore(tiny_config(tmp_path)) as store:
        end = store.max_phy_offset
        record = store.view_by_offset(sent[-1][0])
    assert record is not None
    path, pos = _locate(tmp_path, end)
    with path.open("r+b") as f:
        f.seek(pos)
        f.write(record[:len(record) // 2])
    (tmp_path / ABORT_FILE).touch()
    with MessageStore(tiny_config(tmp_path)) as store:
        assert store.max_phy_offset == end
    assert path.read_bytes()[pos:pos + len(record)] == bytes(len(record))
    assert_consistent(tmp_path)


def test_lost_consume_queues_and_index_are_rebuilt(tmp_path: Path) -> None:
    fill(tmp_path, 30)
    shutil.rmtree(tmp_path / "consumequeue" / "TopicR" / "1")
    shutil.rmtree(tmp_path / "index")
    with MessageStore(tiny_config(tmp_path)) as store:
        assert store.max_offset("TopicR", 1) == 10
        assert store.query_by_key("TopicR", "key-4", 32, 0, 2**62).messages
    assert_consistent(tmp_path)


def test_queue_entries_past_the_commitlog_are_truncated(tmp_path: Path) -> None:
    sent = fill(tmp_path, 12)
    cut_phys = sent[9][0]
    with MessageStore(tiny_config(tmp_path)) as store:
        tail = store.max_phy_offset
    path, pos = _locate(tmp_path, cut_phys)
    with path.open("r+b") as f:
        f.seek(pos)
        f.write(bytes(tail - cut_phys))
    (tmp_path / ABORT_FILE).touch()
    with MessageStore(tiny_config(tmp_path)) as store:
        assert [store.max_offset("TopicR", q) for q in range(3)] == [3, 3, 3]
    assert_consistent(tmp_path)


def test_kill_9_under_sync_flush_loses_no_acknowledged_message(tmp_path: Path) -> None:
    writer = subprocess.Popen([sys.executable, "-m", "tests.test_store_engine_recovery", str(tmp_path)],
                              cwd=PROJECT_ROOT, stdout=subprocess.PIPE, text=True)
    assert writer.stdout is not None
    acked: list[list[int]] = []
    deadline = time.monotonic() + WRITER_DEADLINE_S
    try:
        while len(acked) < ACKS_BEFORE_KILL and time.monotonic() < deadline:
            ready, _, _ = select.select([writer.stdout], [], [], deadline - time.monotonic())
            line = writer.stdout.readline() if ready else ""
            assert line, "writer stopped before enough acknowledgements"
            acked.append([int(v) for v in line.split()])
    finally:
        writer.kill()
        writer.wait(WRITER_DEADLINE_S)
    acked += [[int(v) for v in line.split()] for line in writer.stdout.read().splitlines() if line.strip()]
    assert len(acked) >= ACKS_BEFORE_KILL
    assert (tmp_path / ABORT_FILE).exists()
    with MessageStore(tiny_config(tmp_path, mapped_file_size_commit_log=CRASH_COMMITLOG)) as store:
        assert store.recovered_abnormally
        for n, phys, queue_id, queue_offset in acked:
            raw = store.view_by_offset(phys)
            assert raw is not None
            record = decode_record(raw)
            expected = (b"body-%d" % n, queue_id, queue_offset)
            assert (record.body, record.queue_id, record.queue_offset) == expected
            assert store.query_by_key("TopicK", f"key-{n}", 32, 0, 2**62).messages
        first_new = store.put_message(message("TopicK", 0, 10**6))
        assert first_new.queue_offset == store.max_offset("TopicK", 0) - 1
    assert_consistent(tmp_path)
    with StoreDirectory(tmp_path) as directory:
        assert len(list(directory.messages())) >= len(acked) + 1


def test_a_record_cut_off_between_its_index_keys_gets_the_rest_on_replay(tmp_path: Path) -> None:
    record = make_record(topic="TopicK", body=b"b", queue_id=0, queue_offset=0, physical_offset=4096,
                         properties=encode_properties({PropertyKey.UNIQ_KEY: "U1", PropertyKey.KEYS: "a b"}),
                         born_timestamp=1, born_host=BORN_HOST, store_timestamp=2_000, store_host=BORN_HOST)
    first, *rest = index_keys(record, tags=False)
    crashed = IndexService(tmp_path, 100, 400, False)
    crashed.load()
    crashed.build(dataclasses.replace(record, properties_text=f"{PropertyKey.UNIQ_KEY}\u0001U1"))
    crashed.close()
    replayed = IndexService(tmp_path, 100, 400, False)
    replayed.load()
    assert replayed.last_indexed == record.physical_offset
    replayed.build(record)
    replayed.build(record)
    assert [replayed.files[0].lookup(key) for key in [first, *rest]] == [[4096]] * 3
    replayed.close()


def _locate(root: Path, phys: int) -> tuple[Path, int]:
    files = sorted((root / "commitlog").iterdir())
    holder = [f for f in files if int(f.name) <= phys][-1]
    return holder, phys - int(holder.name)


def _write_until_killed(root: Path) -> None:
    config = tiny_config(root, mapped_file_size_commit_log=CRASH_COMMITLOG,
                         flush_disk_type=FlushDiskType.SYNC_FLUSH)
    store = MessageStore(config).open()
    n = 0
    while True:
        result = store.put_message(message("TopicK", n % 4, n))
        if result.status is PutMessageStatus.PUT_OK:
            print(n, result.phys_offset, n % 4, result.queue_offset, flush=True)
        n += 1


if __name__ == "__main__":
    _write_until_killed(Path(sys.argv[1]))
