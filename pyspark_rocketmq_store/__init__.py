"""The ``rocketmq-store`` Spark format, found by name once this project is installed.

PySpark 4 looks through the top-level packages on ``sys.path`` whose names start with ``pyspark_`` and
registers the ``DefaultSource`` each exposes, so ``spark.read.format("rocketmq-store")`` works on any
SparkSession with no registration call.
"""

from rocketmq_spec.spark.store_source import RocketMQStoreDataSource as DefaultSource

__all__ = ["DefaultSource"]
