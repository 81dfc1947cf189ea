"""The jobs a cluster test submits (``spark-submit --py-files ARCHIVE cluster_job.py SPEC``), run by
the driver ``spark-submit`` starts: one application doing every step ``SPEC`` (JSON) names and printing
one JSON line of what each step found.

Steps: ``origins`` (where the executors' Python workers import the project from, and which executor each task
ran on), ``scan`` (counts and checksums of several stores loaded as one, by broker), ``copy`` (the streaming
copy job, :func:`rocketmq_spec.spark.copy_job.copy_topic`) and ``verify`` (the clause verdicts of one store,
:func:`rocketmq_spec.spark.verify.verify_store`). """

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from pyspark.sql import SparkSession

from rocketmq_spec import spark as spark_package
from rocketmq_spec.spark.copy_job import copy_topic
from rocketmq_spec.spark.scan import spark_broker_summaries
from rocketmq_spec.spark.session import register_sources
from rocketmq_spec.spark.verify import verify_store

TASK_SECONDS = 0.5
"""How long each ``origins`` task holds its core, so that the tasks spread over every executor."""


def _origin(_: int) -> tuple[int, str]:
    time.sleep(TASK_SECONDS)
    return os.getppid(), os.path.abspath(spark_package.__file__)


def origins(spark: SparkSession, tasks: int) -> dict[str, Any]:
    """The executors' Python daemons (the parents of the workers that ran the tasks) and the file the
    project was imported from there."""
    found = spark.sparkContext.parallelize(range(tasks), tasks).map(_origin).collect()
    return {"daemons": sorted({pid for pid, _ in found}), "files": sorted({path for _, path in found})}


def scan(spark: SparkSession, roots: list[str], split_bytes: int | None = None) -> dict[str, Any]:
    return {broker: dataclasses.asdict(summary)
            for broker, summary in spark_broker_summaries(spark, roots, split_bytes=split_bytes).items()}


def copy(spark: SparkSession, **run: Any) -> dict[str, Any]:
    copy_topic(spark, **run)
    return {"done": True}


def verify(spark: SparkSession, root: str) -> dict[str, Any]:
    return {"cases": [dataclasses.asdict(case) for case in verify_store(spark, root)]}


STEPS: dict[str, Callable[..., dict[str, Any]]] = {
    "origins": origins, "scan": scan, "copy": copy, "verify": verify}


def main(spec: dict[str, dict[str, Any]]) -> dict[str, Any]:
    spark = SparkSession.builder.appName("rmq-spark-cluster-job").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    register_sources(spark)
    try:
        return {name: STEPS[name](spark, **arguments) for name, arguments in spec.items()}
    finally:
        spark.stop()


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.argv[1]))))
