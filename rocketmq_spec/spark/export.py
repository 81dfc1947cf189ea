"""A store (or several brokers' stores) written out as Parquet, partitioned by topic and store date.

Reading a store decodes every record in Python and has the JVM copy each value into its rows; a table
queried more than once pays that once here, and every later query is Spark's native Parquet reader:
columnar, only the columns a query uses, whole topic and date directories skipped by partition
filters, row groups skipped by their min/max statistics (``store_timestamp`` ranges included). Rows are
the ``messages`` table as the store source gives it (with ``broker`` for several stores) plus ``date``,
the UTC day of ``store_timestamp``; ``topic`` and ``date`` become directory names
(``topic=T/date=YYYY-MM-DD``), as Spark's ``partitionBy`` writes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from rocketmq_spec.spark.store_source import FORMAT

EXPORT_FORMATS = ("parquet",)
PARTITION_COLUMNS = ("topic", "date")
DATE_COLUMN = "date"
MILLIS_PER_DAY = 86_400_000
"""The date is computed from the epoch day, so it is the UTC date whatever the session's time zone."""


@dataclass(frozen=True)
class ExportSummary:
    records: int
    files: int
    partitions: int
    """Topic and date directories written."""


def export_store(spark: SparkSession, stores: Sequence[Path | str], out: Path, *,
                 split_bytes: int | None = None) -> ExportSummary:
    """Write the records of ``stores`` (one directory, several, or globs) under ``out``, which must not
    exist yet; the summary is read back from the written files' footers."""
    reader = spark.read.format(FORMAT)
    if split_bytes:
        reader = reader.option("splitBytes", str(split_bytes))
    paths = [str(store) for store in stores]
    frame = reader.load(paths[0] if len(paths) == 1 else paths)
    day = F.floor(F.col("store_timestamp") / MILLIS_PER_DAY).cast("int")
    dated = frame.withColumn(DATE_COLUMN, F.date_from_unix_date(day))
    dated.write.partitionBy(*PARTITION_COLUMNS).mode("errorifexists").parquet(str(out))
    files = sorted(out.rglob("*.parquet"))
    return ExportSummary(records=sum(pq.read_metadata(path).num_rows for path in files), files=len(files),
                         partitions=len({path.parent for path in files}))
