"""Scan throughput of the ``rocketmq-store`` Spark source with 1 and 2 cores against the single-process
codec scan, and a one-topic query with and without filter pushdown, on a store written by the reference
broker.

Every scan decodes every record (the Python Data Source API passes no required columns, so counting
rows builds them all). Spark timings are of a second run, after one warm-up that starts the Python
workers; the codec scan is a plain loop over ``StoreDirectory.messages``. Records are ~4 KB bodies over
64 MiB CommitLog files; a tenth of them belong to a second topic, which the pushdown query selects.
Besides wall-clock rates, each row notes the CPU a record cost (the codec's process; for Spark the JVM
and every Python worker it forked), which moves far less than the rates on a shared machine.
Targets: local[1] at least 0.7x the codec scan, local[2] at least 1.7x local[1], the one-topic query
with pushdown at least 5x faster than without.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from a checkout
    sys.path.insert(0, str(ROOT))

from pyspark.sql import DataFrame, SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

from benchmarks.common import Result, tree_cpu_seconds  # noqa: E402
from codec.store import StoreDirectory  # noqa: E402
from spark_tests.session import local_session  # noqa: E402
from spark_tests.store_source import FORMAT  # noqa: E402
from spark_tests.traffic import fill_store  # noqa: E402

STORE_BYTES = 256 << 20
QUICK_STORE_BYTES = 32 << 20
FILE_BYTES = 64 << 20
SPLIT_BYTES = 16 << 20
"""Partitions of 16 MiB: four per file, enough for two cores to balance."""
CORES = (1, 2)
LEAN_COLUMNS = "topic,queue_id,queue_offset,physical_offset,total_size,store_timestamp"
"""What a query over positions and times needs (the ``columns`` option): no maps, lists or bodies."""
NEEDLE = "NeedleTopic"
NEEDLE_SHARE = 10
"""The second topic holds one record in ``NEEDLE_SHARE``."""


@dataclass(frozen=True)
class Scan:
    seconds: float
    cpu_seconds: float
    records: int
    size: int


def _codec_scan(root: Path) -> Scan:
    start, cpu = time.perf_counter(), time.process_time()
    records = size = 0
    with StoreDirectory(root) as store:
        for record in store.messages(verify_crc=False):
            records += 1
            size += record.total_size
    return Scan(time.perf_counter() - start, time.process_time() - cpu, records, size)


def _timed(spark: SparkSession, frame: DataFrame) -> Scan:
    """The second run of ``count, sum(total_size)`` over ``frame``, with the CPU of the JVM (this
    session's gateway process) and everything it forked."""
    totals = frame.agg(F.count(F.lit(1)), F.sum("total_size"))
    totals.first()
    jvm = spark.sparkContext._gateway.proc.pid  # type: ignore[union-attr]
    start, cpu = time.perf_counter(), tree_cpu_seconds(jvm)
    row = totals.first()
    elapsed, used = time.perf_counter() - start, tree_cpu_seconds(jvm) - cpu
    assert row is not None
    return Scan(elapsed, used, int(row[0]), int(row[1] or 0))


def _result(name: str, scan: Scan, target: str = "", note: str = "") -> Result:
    cost = f"{scan.cpu_seconds / max(scan.records, 1) * 1e6:.0f} us CPU/record"
    what = f"{scan.records:,} records, {scan.size / 1e6:,.0f} MB in {scan.seconds:.1f} s"
    return Result("spark scan", name, scan.records / scan.seconds, scan.size / scan.seconds / 1e6, target,
                  f"{note}{what}, {cost}")


def _checked(scan: Scan, codec: Scan, what: str) -> Scan:
    if (scan.records, scan.size) != (codec.records, codec.size):
        raise AssertionError(f"{what} scanned {scan.records} records / {scan.size} bytes, "
                             f"the codec {codec.records} / {codec.size}")
    return scan


def build_store(root: Path, total: int, file_bytes: int = FILE_BYTES) -> int:
    """Fill a store of ``total`` bytes, one record in ``NEEDLE_SHARE`` in the needle topic (spread
    through the whole store); returns how many records the needle topic got. A store built once is
    kept: ``root/BUILT`` records the needle count, and a store without it is built again from scratch."""
    marker = root / "BUILT"
    if marker.exists():
        return int(marker.read_text())
    shutil.rmtree(root, ignore_errors=True)
    sent = fill_store(root, total, commitlog_file_size=file_bytes, spread=(NEEDLE, NEEDLE_SHARE))
    needles = sum(1 for message in sent if message.key.startswith(NEEDLE))
    marker.write_text(str(needles))
    return needles


def _store(root: Path, quick: bool) -> int:
    """Fill the store; returns how many records the needle topic got."""
    return build_store(root, QUICK_STORE_BYTES if quick else STORE_BYTES)


def run(quick: bool = False) -> list[Result]:
    with tempfile.TemporaryDirectory(prefix="rmq-spark-bench-") as work:
        root = Path(work) / "store"
        needles = _store(root, quick)
        codec = _codec_scan(root)
        results = [_result("codec, single process", codec)]
        scans: dict[int, Scan] = {}
        for cores in CORES:
            spark = local_session(cores, app_name="rmq-spark-bench")
            try:
                frame = spark.read.format(FORMAT).option("splitBytes", str(SPLIT_BYTES)).load(str(root))
                scans[cores] = _checked(_timed(spark, frame), codec, f"Spark local[{cores}]")
                if cores == 1:
                    lean = (spark.read.format(FORMAT).option("splitBytes", str(SPLIT_BYTES))
                            .option("columns", LEAN_COLUMNS).load(str(root)))
                    narrow = _checked(_timed(spark, lean), codec, "Spark local[1], lean columns")
                    topic = frame.where(F.col("topic") == NEEDLE)
                    pushed = (spark.read.format(FORMAT).option("splitBytes", str(SPLIT_BYTES))
                              .option("filterPushdown", "true").load(str(root))
                              .where(F.col("topic") == NEEDLE))
                    plain, fast = _timed(spark, topic), _timed(spark, pushed)
            finally:
                spark.stop()
        one, two = scans[1], scans[2]
        results.append(_result("Spark local[1]", one, ">= 0.7x codec",
                               f"{codec.seconds / one.seconds:.2f}x codec; "))
        results.append(_result("Spark local[2]", two, ">= 1.7x local[1]",
                               f"{one.seconds / two.seconds:.2f}x local[1]; "))
        results.append(_result(f"Spark local[1], columns={LEAN_COLUMNS}", narrow, "",
                               f"{codec.seconds / narrow.seconds:.2f}x codec; "))
        if not plain.records == fast.records == needles:
            raise AssertionError(f"one-topic query found {plain.records} / {fast.records} records, "
                                 f"{needles} were sent")
        results.append(_result("one topic of ten, local[1], no pushdown", plain))
        results.append(_result("one topic of ten, local[1], filterPushdown", fast, ">= 5x no pushdown",
                               f"{plain.seconds / fast.seconds:.1f}x no pushdown; "))
    return results


if __name__ == "__main__":
    from benchmarks.run import table

    print(table(run(quick="--quick" in sys.argv)))
