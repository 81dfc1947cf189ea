"""Make the reference broker's live-store test data: a copy taken while it runs, and one after kill -9.

``python -m tests.capture_live_store OUT_DIR`` starts ``rmq-broker`` as a child process with small files
(64 KiB CommitLog files, 300-entry consume-queue files, small index files), loads it with the producers
of the crash-recovery test, copies the store while the producers run, kills the broker with SIGKILL
under load and copies the store again. OUT_DIR then holds ``reference-running.tar.gz`` and
``reference-killed.tar.gz``, the form kept in ``tests/data/live-stores``; see the README there for the
Java stores beside them.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tarfile
import tempfile
from pathlib import Path

from tests.broker_process import BrokerProcess, write_broker_conf
from tests.broker_support import run
from tests.test_broker_crash_recovery import PRODUCERS, Ledger, _create_topic, _produce

SMALL_FILES = {
    "brokerClusterName": "DefaultCluster",
    "flushDiskType": "ASYNC_FLUSH",
    "mappedFileSizeCommitLog": str(64 * 1024),
    "mappedFileSizeConsumeQueue": str(300 * 20),
    "maxHashSlotNum": "512",
    "maxIndexNum": "4096",
}
"""The geometry of the Java stores beside these (``mappedFileSizeCommitLog`` apart), so the tarballs stay
small and the index files are read with ``--index-sizes 512,4096``."""
RUNNING_AFTER_ACKS = 150
KILLED_AFTER_ACKS = 300


async def _load_copy_kill(broker: BrokerProcess, store: Path, out: Path) -> None:
    ledger = Ledger()
    producers = [asyncio.ensure_future(_produce(broker.broker_addr, p, ledger)) for p in range(PRODUCERS)]
    try:
        while len(ledger.acks) < RUNNING_AFTER_ACKS:
            await asyncio.sleep(0.01)
        shutil.copytree(store, out / "reference-running")
        while len(ledger.acks) < KILLED_AFTER_ACKS:
            await asyncio.sleep(0.01)
        broker.kill()
        await asyncio.gather(*producers)
    finally:
        for task in producers:
            task.cancel()
    shutil.copytree(store, out / "reference-killed")


def capture(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        store = Path(work) / "store"
        conf = write_broker_conf(Path(work) / "broker.conf", {**SMALL_FILES, "storePathRootDir": str(store)})
        with BrokerProcess(conf, Path(work) / "broker.log") as broker:
            run(_create_topic(broker.broker_addr))
            run(_load_copy_kill(broker, store, Path(work)))
        tarballs = []
        for name in ("reference-running", "reference-killed"):
            tarball = out / f"{name}.tar.gz"
            with tarfile.open(tarball, "w:gz") as archive:
                archive.add(Path(work) / name, arcname=name)
            tarballs.append(tarball)
    return tarballs


if __name__ == "__main__":
    for path in capture(Path(sys.argv[1])):
        print(path)
