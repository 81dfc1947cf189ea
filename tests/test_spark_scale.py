"""A store written by the reference broker, scanned by Spark and by the codec: equal counts and
checksums. The default run uses a small store spread over many small CommitLog files (the verify job's
agreement with the conformance suite on a broker-written store of small files is in
``test_spark_verify``); the 1 GiB form is marked slow (``tox -e spark-scale``, size from
RMQ_SPARK_SCALE_BYTES)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from rocketmq_spec.codec.store import StoreDirectory
from rocketmq_spec.spark.fixtures import spark  # noqa: F401  (session fixture)
from rocketmq_spec.spark.scan import codec_scan_summary, spark_scan_summary
from rocketmq_spec.spark.store_source import FORMAT
from rocketmq_spec.spark.traffic import fill_store

pytestmark = pytest.mark.spark

SMALL_STORE = 3 << 20
SMALL_FILES = 384 << 10
"""384 KiB CommitLog files: the small store spans nine files and so has BLANK markers to skip."""
LARGE_STORE = int(os.environ.get("RMQ_SPARK_SCALE_BYTES", 1 << 30))
LARGE_FILES = 256 << 20


def assert_scans_agree(spark: SparkSession, root: Path, split_bytes: int) -> None:  # noqa: F811
    with StoreDirectory(root) as store:
        files = len(store.commitlog.files)
    frame = spark.read.format(FORMAT).option("splitBytes", str(split_bytes)).load(str(root))
    assert frame.rdd.getNumPartitions() > files > 1
    expected = codec_scan_summary(root)
    assert spark_scan_summary(spark, root, split_bytes=split_bytes) == expected


def test_small_store_scans_like_the_codec(spark: SparkSession, tmp_path: Path) -> None:  # noqa: F811
    root = tmp_path / "store"
    sent = fill_store(root, SMALL_STORE, commitlog_file_size=SMALL_FILES)
    assert_scans_agree(spark, root, split_bytes=SMALL_FILES // 4)
    assert codec_scan_summary(root).records == len(sent)


@pytest.mark.slow
def test_one_gib_store_scans_like_the_codec(spark: SparkSession, tmp_path: Path) -> None:  # noqa: F811
    root = tmp_path / "store"
    fill_store(root, LARGE_STORE, commitlog_file_size=LARGE_FILES)
    assert codec_scan_summary(root).bytes >= LARGE_STORE
    assert_scans_agree(spark, root, split_bytes=64 << 20)
