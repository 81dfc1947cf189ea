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
    this project (``DATA_SOURCE_NOT_FOUND``, ``No module named 'spark_tests'``). Set in the environment as
    well, so a JVM started afterwards in this process inherits it."""
    return os.environ.setdefault(PYSPARK_PYTHON, sys.executable)


def local_session(cores: int = 2, *, app_name: str = "rmq-spark",
                  shuffle_partitions: int = DEFAULT_SHUFFLE_PARTITIONS) -> SparkSession:
    """A ``local[cores]`` session, UI off, filters pushed to Python data sources that take them, the
    optimizing JIT kept to hot code (:data:`DRIVER_JIT_OPTIONS`), with this project's formats registered
    (``rocketmq-store`` and ``rocketmq``), its Python workers running this interpreter
    (:func:`worker_python`).

    ``getOrCreate`` returns an already running session unchanged apart from the runtime options set here,
    so callers that need a different core count must stop the running session first.
    """
    spark = (
        SparkSession.builder.master(f"local[{cores}]")
        .appName(app_name)
        .config("spark.pyspark.python", worker_python())
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", str(ARROW_BATCH_ROWS))
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.python.filterPushdown.enabled", "true")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.extraJavaOptions", DRIVER_JIT_OPTIONS)
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    register_sources(spark)
    return spark


def register_sources(spark: SparkSession) -> None:
    """Register the formats explicitly. An installed project needs no such call (Spark finds them through
    the ``pyspark_rocketmq*`` packages); an editable install or a bare checkout does, because Spark's
    lookup lists only the packages that sit on ``sys.path`` as directories."""
    for source in (RocketMQStoreDataSource, RocketMQLiveDataSource):
        spark.dataSource.register(source)
