"""Two brokers' stores for the tests of jobs over a cluster's data: ``<root>/broker-a/store``, the store
Java 4.9.8 wrote (the golden store), and ``<root>/broker-b/store``, one the reference broker wrote, so
the stores differ in topics, sizes and writers."""

from __future__ import annotations

import shutil
from pathlib import Path

from rocketmq_spec.spark.fixtures import extract_store
from rocketmq_spec.spark.traffic import fill_store
from rocketmq_spec.spec.golden import STORE_TARBALL

REFERENCE_STORE_BYTES = 96 << 10
REFERENCE_FILE_BYTES = 32 << 10
"""Broker B's commitlog spans several files, so its scan crosses BLANK file ends."""


def two_broker_stores(root: Path, scratch: Path) -> tuple[Path, Path]:
    """Both stores under ``root``; ``scratch`` is an empty directory to unpack the golden tarball in."""
    golden = extract_store(STORE_TARBALL, scratch)
    (root / "broker-a").mkdir(parents=True)
    shutil.move(golden, root / "broker-a" / "store")
    fill_store(root / "broker-b" / "store", REFERENCE_STORE_BYTES, commitlog_file_size=REFERENCE_FILE_BYTES,
               mean_body=500)
    return root / "broker-a" / "store", root / "broker-b" / "store"
