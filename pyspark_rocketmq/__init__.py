"""The ``rocketmq`` Spark format (a live broker, read over the wire), found by name once this project is
installed.

PySpark 4 looks through the top-level packages on ``sys.path`` whose names start with ``pyspark_`` and
registers the ``DefaultSource`` each exposes, so ``spark.read.format("rocketmq")`` works on any
SparkSession with no registration call.
"""

from rocketmq_spec.spark.live_source import RocketMQLiveDataSource as DefaultSource

__all__ = ["DefaultSource"]
