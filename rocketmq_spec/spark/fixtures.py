"""pytest fixtures shared by the Spark tests: one SparkSession for the whole test session.

Starting a JVM costs seconds, so every Spark test module imports :func:`spark` from here and they all
get the same ``local[2]`` session (``getOrCreate`` also hands it to code under test that asks for one).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from rocketmq_spec.spark.session import local_session

TEST_CORES = 2
TEST_SHUFFLE_PARTITIONS = 2
"""Test stores are small: two shuffle partitions keep joins to a few tasks."""


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    session = local_session(TEST_CORES, app_name="rmq-spark-tests",
                            shuffle_partitions=TEST_SHUFFLE_PARTITIONS)
    yield session
    session.stop()


def extract_store(tarball: Path, target: Path) -> Path:
    """Extract a store tarball with GNU tar, which keeps its 1 GiB CommitLog sparse; returns its root."""
    subprocess.run(["tar", "-xzf", str(tarball), "-C", str(target)], check=True)
    (root,) = [p for p in target.iterdir() if p.is_dir()]
    return root
