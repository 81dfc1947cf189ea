"""One way to build a local SparkSession with this project's data sources registered.

Jobs, tests and benchmarks all go through here so that they measure and check the same configuration.
"""

from __future__ import annotations

import os
import sys

from pyspark.sql import SparkSession

from rocketmq_spec.spark.live_source import RocketMQLiveDataSource
from rocketmq_spec.spark.store_source import RocketMQStoreDataSource
from rocketmq_spec.spark.tables import ARROW_BATCH_ROWS

DEFAULT_SHUFFLE_PARTITIONS = 4
"""Spark's default of 200 shuffle partitions turns every small join into hundreds of empty tasks; the
jobs here run on a laptop-sized ``local[n]``, where a handful per core keeps joins balanced."""

PYSPARK_PYTHON = "PYSPARK_PYTHON"
LOOPBACK = "127.0.0.1"

DRIVER_JIT_OPTIONS = ("-XX:Tier4InvocationThreshold=50000 -XX:Tier4MinInvocationThreshold=6000 "
                      "-XX:Tier4CompileThreshold=150000 -XX:Tier4BackEdgeThreshold=400000")
"""The driver JVM's optimizing compiler (C2) takes a method only once it has run ten times as often as
HotSpot's defaults ask. Every query runs thousands of Spark's analyzer, optimizer and planner methods a
few thousand times each, just over the default thresholds, so C2 kept compiling them query after query:
on a one-core session its threads used 0.4-0.5 s of CPU per query after six warm-up queries, five times
the task's own JVM time on a 256 MiB store scan (``benchmarks/spark_scan.py``). With the higher thresholds
those methods stay in C1's code (compiled at once, cheaply) and C2 still takes the per-row loops of long
scans, which run far past them; measured: 0.8 s of JVM CPU per query down to 0.35 s."""


def worker_python() -> str:
    """The interpreter Spark's Python workers are to run: ``PYSPARK_PYTHON`` when the user chose one, else
    this one. Unset, Spark starts the ``python3`` on ``PATH`` for the workers that look the formats up by
    name and read the data; outside an activated environment that is another interpreter, which lacks
    this project (``DATA_SOURCE_NOT_FOUND``, ``No module named 'rocketmq_spec'``). Set in the environment as
    well, so a JVM started afterwards in this process inherits it."""
    return os.environ.setdefault(PYSPARK_PYTHON, sys.executable)


def session_settings() -> dict[str, str]:
    """What every session of this project runs with, local or on a cluster: the UI off, the driver on
    loopback with the optimizing JIT kept to hot code (:data:`DRIVER_JIT_OPTIONS`), filters pushed to
    Python data sources that take them, UTC, the data sources' Arrow batch size, and Python workers
    running this interpreter (:func:`worker_python`)."""
    return {
        "spark.pyspark.python": worker_python(),
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.driver.bindAddress": LOOPBACK,
        "spark.driver.host": LOOPBACK,
        "spark.driver.extraJavaOptions": DRIVER_JIT_OPTIONS,
        "spark.sql.execution.arrow.maxRecordsPerBatch": str(ARROW_BATCH_ROWS),
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.python.filterPushdown.enabled": "true",
    }


def local_session(cores: int = 2, *, app_name: str = "rmq-spark",
                  shuffle_partitions: int = DEFAULT_SHUFFLE_PARTITIONS) -> SparkSession:
    """A ``local[cores]`` session with :func:`session_settings` and this project's formats registered
    (``rocketmq-store`` and ``rocketmq``).

    ``getOrCreate`` returns an already running session unchanged apart from the runtime options set here,
    so callers that need a different core count must stop the running session first.
    """
    builder = SparkSession.builder.master(f"local[{cores}]").appName(app_name)
    for key, value in {**session_settings(), "spark.sql.shuffle.partitions": str(shuffle_partitions)}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    register_sources(spark)
    return spark


def register_sources(spark: SparkSession) -> None:
    """Register the formats explicitly. An installed project needs no such call (Spark finds them through
    the ``pyspark_rocketmq*`` packages); an editable install or a bare checkout does, because Spark's
    lookup lists only the packages that sit on ``sys.path`` as directories."""
    for source in (RocketMQStoreDataSource, RocketMQLiveDataSource):
        spark.dataSource.register(source)
