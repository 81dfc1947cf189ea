"""Counts and checksums of a store, computed by the Spark source and by the single-process codec scan.

The two must agree exactly: equal record and byte counts and equal order-independent checksums over the
bodies and the identifying fields of every record. The checksums are sums of CRC-32s, which Spark
computes natively (``crc32``) and Python with ``zlib``, so neither side shares code with the other beyond
the record decoder.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from rocketmq_spec.codec.store import MessageRecord, StoreDirectory
from rocketmq_spec.spark.store_source import FORMAT

IDENTITY_FIELDS = ("physical_offset", "topic", "queue_id", "queue_offset", "store_timestamp")
"""Fields folded into the identity checksum, joined by ``|`` in this order."""


@dataclass(frozen=True)
class ScanSummary:
    records: int
    bytes: int
    """Sum of TOTALSIZE: the CommitLog bytes holding records."""
    body_checksum: int
    """Sum of CRC-32 of every stored body."""
    identity_checksum: int
    """Sum of CRC-32 of every record's identity fields."""


def _identity(record: MessageRecord) -> bytes:
    return "|".join(str(getattr(record, name)) for name in IDENTITY_FIELDS).encode()


def codec_scan_summary(root: Path | str) -> ScanSummary:
    records = size = bodies = identities = 0
    with StoreDirectory(root) as store:
        for record in store.messages(verify_crc=False):
            records += 1
            size += record.total_size
            bodies += zlib.crc32(record.body)
            identities += zlib.crc32(_identity(record))
    return ScanSummary(records, size, bodies, identities)


def _crc_sum(column: Column) -> Column:
    return F.coalesce(F.sum(F.crc32(column)), F.lit(0))


def _store_frame(spark: SparkSession, root: Path | str | Sequence[Path | str],
                 split_bytes: int | None) -> DataFrame:
    reader = spark.read.format(FORMAT)
    if split_bytes:
        reader = reader.option("splitBytes", str(split_bytes))
    return reader.load(str(root) if isinstance(root, Path | str) else [str(r) for r in root])


def _summary_columns() -> list[Column]:
    identity = F.concat_ws("|", *(F.col(name).cast("string") for name in IDENTITY_FIELDS)).cast("binary")
    return [F.count(F.lit(1)), F.coalesce(F.sum("total_size"), F.lit(0)), _crc_sum(F.col("body")),
            _crc_sum(identity)]


def spark_scan_summary(spark: SparkSession, root: Path | str | Sequence[Path | str], *,
                       split_bytes: int | None = None) -> ScanSummary:
    """The summary of one store, or of several loaded as one (``root`` a list of directories)."""
    row = _store_frame(spark, root, split_bytes).agg(*_summary_columns()).first()
    assert row is not None
    return ScanSummary(*(int(value) for value in row))


def spark_broker_summaries(spark: SparkSession, roots: Sequence[Path | str], *,
                           split_bytes: int | None = None) -> dict[str, ScanSummary]:
    """The summary of each of several stores read as one, by broker name."""
    rows = _store_frame(spark, roots, split_bytes).groupBy("broker").agg(*_summary_columns()).collect()
    return {row[0]: ScanSummary(*(int(value) for value in row[1:])) for row in rows}
