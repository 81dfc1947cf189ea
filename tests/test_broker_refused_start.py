"""A store ``rmq-broker`` refuses is left exactly as it was: every reason is found before a port is bound
or a file written, and answered with one line on stderr and exit status 2.

Each case spoils a copy of a real store (written by the reference broker and stopped cleanly) in one way,
hashes every file of it, runs ``rmq-broker`` on it and hashes it again.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from rocketmq_spec.reference_broker.broker.server import Broker
from rocketmq_spec.reference_broker.config import BrokerConfig
from rocketmq_spec.reference_broker.embedded import SyncEmbeddedRocketMQ
from rocketmq_spec.reference_broker.preflight import StoreRefused
from rocketmq_spec.reference_broker.store import MessageStore, StoreConfig
from rocketmq_spec.spec.store_layout import (
    ABORT_FILE,
    COMMITLOG_DIR,
    CONFIG_DIR,
    CONSUMEQUEUE_DIR,
    INDEX_DIR,
    LOCK_FILE,
)
from tests import process_tree
from tests.broker_process import write_broker_conf
from tests.golden import PROJECT_ROOT
from tests.test_store_engine_helpers import message

SIZES = {"mappedFileSizeCommitLog": 64 * 1024, "mappedFileSizeConsumeQueue": 300 * 20,
         "maxHashSlotNum": 8, "maxIndexNum": 32}
TIMEOUT_S = 60.0


def store_hash(root: Path) -> dict[str, str]:
    """Every path under ``root`` with a digest of its content (a directory's is its kind)."""
    if root.is_file():
        return {".": hashlib.sha256(root.read_bytes()).hexdigest()}
    return {str(p.relative_to(root)): "dir" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*"))}


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with records, queues, index and config files, after a clean stop."""
    root = tmp_path_factory.mktemp("written") / "store"
    config = BrokerConfig(listen_port=0, store_path_root_dir=str(root),
                          mapped_file_size_commit_log=SIZES["mappedFileSizeCommitLog"],
                          mapped_file_size_consume_queue=SIZES["mappedFileSizeConsumeQueue"],
                          max_hash_slot_num=SIZES["maxHashSlotNum"], max_index_num=SIZES["maxIndexNum"])
    with SyncEmbeddedRocketMQ(broker_config=config):
        pass
    with MessageStore(StoreConfig(root, mapped_file_size_commit_log=SIZES["mappedFileSizeCommitLog"],
                                  mapped_file_size_consume_queue=SIZES["mappedFileSizeConsumeQueue"],
                                  max_hash_slot_num=SIZES["maxHashSlotNum"],
                                  max_index_num=SIZES["maxIndexNum"])) as store:
        for n in range(5):
            store.put_message(message("RefusedTopic", n % 2, n))
    assert not (root / ABORT_FILE).exists()
    return root


def _garbage(*paths: Path) -> None:
    for path in paths:
        path.write_text("{not json", encoding="utf-8")


def _only_file(directory: Path) -> Path:
    (path,) = [p for p in directory.rglob("*") if p.is_file()]
    return path


def _first_queue_file(root: Path) -> Path:
    return sorted(p for p in (root / CONSUMEQUEUE_DIR).rglob("*") if p.is_file())[0]


SPOILERS: dict[str, tuple[Callable[[Path], object], dict[str, int]]] = {
    # name: (what is done to the store, settings that differ from the store's own)
    "commitlog-file-size": (lambda root: None, {"mappedFileSizeCommitLog": 128 * 1024}),
    "consume-queue-file-size": (lambda root: None, {"mappedFileSizeConsumeQueue": 600 * 20}),
    "index-file-size": (lambda root: None, {"maxIndexNum": 64}),
    "commitlog-truncated": (lambda root: os.truncate(_only_file(root / COMMITLOG_DIR), 1000), {}),
    "commitlog-misnamed": (lambda root: _only_file(root / COMMITLOG_DIR).rename(
        root / COMMITLOG_DIR / f"{1000:020d}"), {}),
    "queue-file-truncated": (lambda root: os.truncate(_first_queue_file(root), 20), {}),
    "checkpoint-size": (lambda root: os.truncate(root / "checkpoint", 100), {}),
    "config-and-backup-unparsable": (lambda root: _garbage(root / CONFIG_DIR / "topics.json",
                                                   root / CONFIG_DIR / "topics.json.bak"), {}),
    "config-is-a-directory": (lambda root: _replace_with_directory(root / CONFIG_DIR / "consumerOffset.json"),
                              {}),
    "commitlog-is-a-file": (lambda root: _replace_with_file(root / COMMITLOG_DIR), {}),
    "index-is-a-file": (lambda root: _replace_with_file(root / INDEX_DIR), {}),
    "root-is-a-file": (lambda root: _replace_with_file(root), {}),
}


def _replace_with_directory(path: Path) -> None:
    path.unlink()
    path.mkdir()


def _replace_with_file(path: Path) -> None:
    shutil.rmtree(path)
    path.write_text("not a directory", encoding="utf-8")


def run_broker(root: Path, conf: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "rocketmq_spec.reference_broker.cli",
               "-c", str(conf), "--store", str(root),
               "--namesrv-port", "0", "--broker-port", "0"]
    return process_tree.run(command, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=TIMEOUT_S,
                            stdin=subprocess.DEVNULL)


def assert_refused(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == ""  # nothing started: no "name server ..., broker ..." line
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("rmq-broker: not starting: "), done.stderr
    for word in words:
        assert word in lines[0]


@pytest.fixture
def spoilt(written: Path, tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "store"
    shutil.copytree(written, root)
    yield root


@pytest.mark.parametrize("name", sorted(SPOILERS))
def test_a_refused_start_touches_nothing(spoilt: Path, tmp_path: Path, name: str) -> None:
    spoil, settings = SPOILERS[name]
    spoil(spoilt)
    conf = write_broker_conf(tmp_path / "broker.conf", {k: str(v) for k, v in {**SIZES, **settings}.items()})
    before = store_hash(spoilt)
    assert_refused(run_broker(spoilt, conf))
    assert store_hash(spoilt) == before


def test_a_store_locked_by_another_process_is_refused_untouched(spoilt: Path, tmp_path: Path) -> None:
    conf = write_broker_conf(tmp_path / "broker.conf", {k: str(v) for k, v in SIZES.items()})
    before = store_hash(spoilt)
    fd = os.open(spoilt / LOCK_FILE, os.O_RDWR)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 0)
        assert_refused(run_broker(spoilt, conf), "Lock failed")
    finally:
        os.close(fd)
    assert store_hash(spoilt) == before


def test_the_same_store_starts_when_nothing_is_spoilt(spoilt: Path, tmp_path: Path) -> None:
    """The checks refuse what they should only: the unspoilt copy passes them (the broker then starts)."""
    from rocketmq_spec.reference_broker.preflight import check_store

    config = BrokerConfig(store_path_root_dir=str(spoilt),
                          mapped_file_size_commit_log=SIZES["mappedFileSizeCommitLog"],
                          mapped_file_size_consume_queue=SIZES["mappedFileSizeConsumeQueue"],
                          max_hash_slot_num=SIZES["maxHashSlotNum"], max_index_num=SIZES["maxIndexNum"])
    check_store(config)


def test_an_embedded_broker_refuses_before_writing(spoilt: Path) -> None:
    before = store_hash(spoilt)
    with pytest.raises(StoreRefused, match="configured file size"):
        Broker(BrokerConfig(listen_port=0, store_path_root_dir=str(spoilt)))
    assert store_hash(spoilt) == before


def test_a_store_that_fails_to_open_is_not_left_marked_as_crashed(spoilt: Path) -> None:
    """Opened without the broker's checks (the store engine alone), a store of other file sizes fails to
    open and keeps no ``abort`` file and no lock."""
    with pytest.raises(Exception, match="configured file size"):
        MessageStore(StoreConfig(spoilt)).open()
    assert not (spoilt / ABORT_FILE).exists()
    fd = os.open(spoilt / LOCK_FILE, os.O_RDWR)
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 0)
    finally:
        os.close(fd)


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc, where no directory can be made")
def test_a_store_that_cannot_be_created_is_refused_before_any_port(tmp_path: Path) -> None:
    """Its parent exists, but nothing can be made in it: one line and exit 2, no port bound first."""
    conf = write_broker_conf(tmp_path / "broker.conf", {})
    assert_refused(run_broker(Path("/proc") / f"rmq-spec-store-{tmp_path.name}", conf), "cannot be created")



def test_brokers_starting_side_by_side_under_one_new_parent_pass_the_check(tmp_path: Path) -> None:
    """Each broker's probe is a directory of its own name: one broker's probe never meets another's, nor the
    parent that another broker is making at that moment (a master and its slave started together under
    ``wire/``)."""
    from rocketmq_spec.reference_broker.preflight import check_store

    def check(run: int, member: int) -> None:
        root = tmp_path / f"run-{run}" / f"broker-{member}" / "store"
        check_store(BrokerConfig(store_path_root_dir=str(root)), probe_lock=False)

    for run in range(20):
        with ThreadPoolExecutor(max_workers=4) as pool:
            list(pool.map(lambda member, run=run: check(run, member), range(4)))
    assert not list(tmp_path.iterdir())  # every probe removed, nothing of the stores made yet
