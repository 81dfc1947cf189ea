"""What a ``rocketmq-store`` Spark query costs against the single-process codec scan, on stores written by
the reference broker: one of 256 MiB (32 MiB with ``--quick``) and, when ``RMQ_SPARK_BIG_STORE`` names a
directory, a big one (``RMQ_SPARK_BIG_BYTES``, default 4.4 GB; built there once and kept).

Records are ~4 KB bodies; one in ten belongs to a second topic, spread through the whole store in runs,
which the one-topic queries select. Every figure is measured in CPU time as well as wall-clock time:
the codec's process, and for Spark the driver's JVM and everything it forks (Python workers, planners),
plus on a standalone cluster the worker daemons and their executors, sampled while the query runs
(``benchmarks.common.TreeCpu``). The machine this runs on may be
shared, so the ratios (``x codec``, ``x no pushdown``) are taken on CPU per record, and each row notes
the 1-minute load average when it was measured. On the small store each Spark query first runs
``WARM_RUNS`` times unmeasured, then ``MEASURED_RUNS`` times, and the figure is the run of median CPU (with
the spread of the runs' CPU beside it); the codec's scan is measured the same way. The JVM keeps compiling
Spark's code paths for several queries: on a one-core session its JIT threads used three times the CPU
of the query's tasks on the second run and still over a quarter of that on the ninth, so a figure taken
after one warm-up measures the compiler more than the scan. On the big store a query runs once.

Queries and targets: ``count(*)`` and ``sum(total_size)`` with the columns read off the plan
(:mod:`rocketmq_spec.spark.required_columns`) on ``local[1]`` at least 0.9x the codec's CPU per record,
and the codec itself at least 100,000 records per CPU-second (issue 35); the same on ``local[2]`` and on
a standalone cluster of two one-core workers at the CPU per record of ``local[1]`` (scaling linearly: the
wall-clock time divides by the cores where they are free); a query for one topic of ten with
``filterPushdown`` at least 5x cheaper than without; a tenth of the store's time span, which pushdown
turns into a tenth of the CommitLog; and the one-topic query again over the store exported to Parquet
(``rmq-spark export``), which is Spark's native reader.

``python -m benchmarks.spark_scan --core [--quick]`` measures only the three figures quoted most (the
codec's records per CPU-second, ``local[1]`` with the plan's columns against it, pushdown of one topic of
ten) on the small store, each beside the other processes' cores (:mod:`benchmarks.machine`), and warns when
the machine was not quiet; ``RMQ_SPARK_SMALL_STORE=/path`` keeps that store for the next run. With
``RMQ_SPARK_BIG_STORE`` it also runs the one-topic pair on the big store, once each, after the small store's
queries have warmed the JVM: a query's fixed cost (planning, tasks, Spark's JIT) is a fraction of a second
of CPU, which on the small store is of the order of the pushed query itself, so the small store cannot show
what pushdown saves on data the size Spark is for.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from a checkout
    sys.path.insert(0, str(ROOT))

from pyspark.sql import DataFrame, SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

from benchmarks.common import Result, TreeCpu  # noqa: E402
from benchmarks.machine import QUIET_OTHERS_PER_CORE, MachineWatch  # noqa: E402
from benchmarks.machine import cores as machine_cores  # noqa: E402
from rocketmq_spec.codec.store import StoreDirectory  # noqa: E402
from rocketmq_spec.spark.cluster import StandaloneCluster, project_archive  # noqa: E402
from rocketmq_spec.spark.export import export_store  # noqa: E402
from rocketmq_spec.spark.planning import DEFAULT_SPLIT_BYTES  # noqa: E402
from rocketmq_spec.spark.required_columns import store_query  # noqa: E402
from rocketmq_spec.spark.session import local_session  # noqa: E402
from rocketmq_spec.spark.store_source import FORMAT  # noqa: E402
from rocketmq_spec.spark.traffic import fill_store  # noqa: E402

STORE_BYTES = 256 << 20
QUICK_STORE_BYTES = 32 << 20
BIG_STORE = "RMQ_SPARK_BIG_STORE"
SMALL_STORE = "RMQ_SPARK_SMALL_STORE"
"""Where ``--core`` keeps its small store (built once), so that a later run only measures."""
BIG_BYTES = "RMQ_SPARK_BIG_BYTES"
DEFAULT_BIG_BYTES = 4400 << 20
FILE_BYTES = 64 << 20
BIG_FILE_BYTES = 1 << 30
"""Apache RocketMQ's default CommitLog file size, for the big store."""
SPLIT_BYTES = DEFAULT_SPLIT_BYTES
"""The source's default partitions (64 MiB, one per small-store file), as a query that names no
``splitBytes`` gets. Every task has a fixed cost on top of its records: the JVM's task set-up and the
Python worker's unpickling of the reader, and until the reused worker's heap was frozen
(:mod:`rocketmq_spec.spark.worker_heap`) a full garbage collection of 20-35 ms; 16 MiB splits made 17 tasks
of the small store instead of 5, about 12 tasks' worth of that fixed cost on a query of some 0.7 s CPU.
Five partitions still keep two cores busy for most of a query."""
NEEDLE = "NeedleTopic"
NEEDLE_SHARE = 10
"""The second topic holds one record in ``NEEDLE_SHARE``."""
TIME_SHARE = 10
"""The time-range query asks for one ``TIME_SHARE``-th of the store's time span, in its middle."""
CLUSTER_WORKERS = 2
CODEC_SHARE_TARGET = ">= 0.9x codec"
"""Issue 35's target for ``local[1]`` with the plan's columns, by CPU per record."""
WARM_RUNS = 6
"""Unmeasured runs of each query on the small store before it is measured: the JVM's JIT work per query
falls for about this many runs (a one-core local session, 2026-11-29)."""
MEASURED_RUNS = 5
"""Measured runs of each query on the small store; the figure is the one of median CPU."""

Query = Callable[[DataFrame], DataFrame]


def _totals(frame: DataFrame) -> DataFrame:
    return frame.agg(F.count(F.lit(1)), F.coalesce(F.sum("total_size"), F.lit(0)))


def _needle(frame: DataFrame) -> DataFrame:
    return _totals(frame.where(F.col("topic") == NEEDLE))


@dataclass(frozen=True)
class Scan:
    seconds: float
    cpu_seconds: float
    records: int
    size: int
    load: float
    """1-minute load average of the machine at the end of the measurement."""
    jvm_share: float | None = None
    """The share of the CPU the JVMs used (the rest: Python workers and planners)."""
    spread: tuple[float, float] | None = None
    """The least and most CPU seconds of the measured runs, when there were several."""

    @property
    def cpu_per_record(self) -> float:
        return self.cpu_seconds / max(self.records, 1)


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


def _codec_scan(root: Path) -> Scan:
    """The codec's scan, measured as the Spark queries are: after a run that maps the files, the run of
    median CPU among :data:`MEASURED_RUNS`."""
    _codec_scan_once(root)
    runs = sorted((_codec_scan_once(root) for _ in range(MEASURED_RUNS)), key=lambda scan: scan.cpu_seconds)
    return replace(runs[len(runs) // 2], spread=(runs[0].cpu_seconds, runs[-1].cpu_seconds))


def _codec_scan_once(root: Path) -> Scan:
    start, cpu = time.perf_counter(), time.process_time()
    records = size = 0
    with StoreDirectory(root) as store:
        for record in store.messages(verify_crc=False):
            records += 1
            size += record.total_size
    return Scan(time.perf_counter() - start, time.process_time() - cpu, records, size, os.getloadavg()[0])


def _time_span(root: Path) -> tuple[int, int]:
    """A tenth of the store's time span, in its middle (first and last record's store timestamps)."""
    with StoreDirectory(root) as store:
        records = store.messages(verify_crc=False)
        first = last = next(records).store_timestamp
        for last_file in store.commitlog.files[-1:]:
            for record in store.commitlog.records(last_file.start, verify_crc=False):
                last = record.store_timestamp
    middle, width = (first + last) // 2, (last - first) // TIME_SHARE
    return middle - width // 2, middle + width // 2


class Timer:
    """Runs Spark queries and measures them, with the CPU of the processes ``pids`` and their trees."""

    def __init__(self, spark: SparkSession, pids: list[int], warm: bool) -> None:
        self.spark, self.pids, self.warm = spark, pids, warm
        self.queries = 0

    def __call__(self, frame: DataFrame) -> Scan:
        self.queries += 1
        print(f"  {time.strftime('%H:%M:%S')} query {self.queries} (load {os.getloadavg()[0]:.1f})",
              file=sys.stderr, flush=True)
        for _ in range(WARM_RUNS if self.warm else 0):
            frame.first()
        runs = sorted((self._once(frame) for _ in range(MEASURED_RUNS if self.warm else 1)),
                      key=lambda scan: scan.cpu_seconds)
        median = runs[len(runs) // 2]
        if len(runs) == 1:
            return median
        return replace(median, spread=(runs[0].cpu_seconds, runs[-1].cpu_seconds))

    def _once(self, frame: DataFrame) -> Scan:
        with self.cpu() as cpu:
            start = time.perf_counter()
            row = frame.first()
            elapsed = time.perf_counter() - start
        assert row is not None
        return Scan(elapsed, cpu.seconds, int(row[0]), int(row[1] or 0), os.getloadavg()[0],
                    cpu.by_command().get("java", 0.0) / max(cpu.seconds, 1e-9))

    def cpu(self) -> TreeCpu:
        """The CPU of the JVMs (and all they fork) while a query runs; the driver's Python only waits."""
        return TreeCpu(self.pids)


def _jvm(spark: SparkSession) -> int:
    return int(spark.sparkContext._gateway.proc.pid)  # type: ignore[union-attr]


@contextmanager
def _local(cores: int, warm: bool) -> Iterator[Timer]:
    spark = local_session(cores, app_name="rmq-spark-bench")
    try:
        yield Timer(spark, [_jvm(spark)], warm)
    finally:
        spark.stop()


@contextmanager
def _cluster(work: Path, warm: bool) -> Iterator[Timer]:
    with StandaloneCluster(work / "cluster", workers=CLUSTER_WORKERS) as cluster:
        spark = cluster.session(project_archive(work), app_name="rmq-spark-bench")
        try:
            yield Timer(spark, [_jvm(spark), *(d.process.pid for d in cluster.daemons)], warm)
        finally:
            spark.stop()


def _read(spark: SparkSession, root: Path, query: Query, **options: str) -> DataFrame:
    return store_query(spark, root, query, splitBytes=str(SPLIT_BYTES), **options)


def _checked(scan: Scan, expected: tuple[int, int], what: str) -> Scan:
    if (scan.records, scan.size) != expected:
        raise AssertionError(f"{what} counted {scan.records} records / {scan.size} bytes, "
                             f"expected {expected}")
    return scan


def _row(label: str, name: str, scan: Scan, target: str = "", against: Scan | None = None,
         ratio_of: str = "") -> Result:
    ratio = ""
    if against:
        wall = (against.seconds / max(against.records, 1)) / (scan.seconds / max(scan.records, 1))
        cpu = against.cpu_per_record / scan.cpu_per_record
        ratio = f"{cpu:.2f}x {ratio_of} by CPU ({wall:.2f}x by wall); "
    jvm = f" ({scan.jvm_share:.0%} JVM)" if scan.jvm_share is not None else ""
    spread = (f", median of {MEASURED_RUNS} runs of {scan.spread[0]:.2f}-{scan.spread[1]:.2f} s CPU"
              if scan.spread else "")
    note = (f"{ratio}{scan.records:,} records, {scan.size / 1e6:,.0f} MB in {scan.seconds:.1f} s, "
            f"{scan.cpu_per_record * 1e6:.1f} us CPU/record{jvm}{spread}, load {scan.load:.1f}")
    return Result("spark scan", f"{label}: {name}", scan.records / scan.seconds,
                  scan.size / scan.seconds / 1e6, target, note)


def measure(root: Path, needles: int, label: str, work: Path, warm: bool) -> list[Result]:
    work.mkdir(parents=True)
    codec = _codec_scan(root)
    whole = (codec.records, codec.size)
    results = [_row(label, "codec, single process", codec)]
    low, high = _time_span(root)
    scans: dict[str, Scan] = {}
    with _local(1, warm) as timed:
        spark = timed.spark
        window = F.col("store_timestamp").between(low, high)
        scans["local1"] = _checked(timed(_read(spark, root, _totals)), whole, "local[1]")
        every_column = spark.read.format(FORMAT).option("splitBytes", str(SPLIT_BYTES)).load(str(root))
        scans["wide"] = _checked(timed(_totals(every_column)), whole, "local[1], every column")
        for pushdown in ("false", "true"):
            scans[f"needle-{pushdown}"] = timed(_read(spark, root, _needle, filterPushdown=pushdown))
            scans[f"time-{pushdown}"] = timed(_read(spark, root, lambda m: _totals(m.where(window)),
                                                    filterPushdown=pushdown))
        export = work / "parquet"
        with timed.cpu() as cpu:
            start = time.perf_counter()
            export_store(spark, [root], export, split_bytes=SPLIT_BYTES)
            elapsed = time.perf_counter() - start
        exported = Scan(elapsed, cpu.seconds, codec.records, codec.size, os.getloadavg()[0])
        scans["parquet"] = timed(_needle(spark.read.parquet(str(export))))
    with _local(2, warm) as timed:
        scans["local2"] = _checked(timed(_read(timed.spark, root, _totals)), whole, "local[2]")
    with _cluster(work, warm) as timed:
        scans["cluster"] = _checked(timed(_read(timed.spark, root, _totals)), whole, "cluster")
    for name in ("needle-false", "needle-true", "parquet"):
        if scans[name].records != needles:
            raise AssertionError(f"{name} found {scans[name].records} needle records, {needles} were sent")
    if scans["time-false"].records != scans["time-true"].records:
        raise AssertionError("the time-range query counts differently with pushdown")
    one = scans["local1"]
    results += [
        _row(label, "local[1], count + sum(total_size), columns from the plan", one, CODEC_SHARE_TARGET,
             codec, "codec"),
        _row(label, "local[2], same query", scans["local2"], "CPU/record = local[1]", one, "local[1]"),
        _row(label, f"standalone cluster, {CLUSTER_WORKERS} workers x 1 core, same query", scans["cluster"],
             "CPU/record = local[1]", one, "local[1]"),
        _row(label, "local[1], same query, all 27 columns built", scans["wide"], "", codec, "codec"),
        _row(label, "one topic of ten, no pushdown", scans["needle-false"]),
        _row(label, "one topic of ten, filterPushdown", scans["needle-true"], ">= 5x no pushdown",
             scans["needle-false"], "no pushdown"),
        _row(label, "a tenth of the time span, no pushdown", scans["time-false"]),
        _row(label, "a tenth of the time span, filterPushdown", scans["time-true"], "",
             scans["time-false"], "no pushdown"),
        _row(label, "export to Parquet (rmq-spark export), once", exported),
        _row(label, "one topic of ten, over the Parquet export", scans["parquet"], "",
             scans["needle-true"], "store with pushdown"),
    ]
    return results


def run(quick: bool = False) -> list[Result]:
    with tempfile.TemporaryDirectory(prefix="rmq-spark-bench-") as scratch:
        work = Path(scratch)
        small = work / "store"
        needles = build_store(small, QUICK_STORE_BYTES if quick else STORE_BYTES)
        results = measure(small, needles, "small store", work / "small", warm=True)
        big = os.environ.get(BIG_STORE)
        if big:
            total = int(os.environ.get(BIG_BYTES, DEFAULT_BIG_BYTES))
            needles = build_store(Path(big), total, BIG_FILE_BYTES)
            results += measure(Path(big), needles, "big store", work / "big", warm=False)
    return results


def _pushdown_pair(timed: Timer, root: Path, needles: int, watched: Callable[[str, Callable[[], Scan]], Scan],
                   where: str) -> tuple[Scan, Scan]:
    """The one-topic query without and with ``filterPushdown``; each must find every needle sent."""
    def query(pushdown: str) -> Scan:
        return timed(_read(timed.spark, root, _needle, filterPushdown=pushdown))

    plain = watched(f"{where}no pushdown", lambda: query("false"))
    pushed = watched(f"{where}pushdown", lambda: query("true"))
    if not plain.records == pushed.records == needles:
        raise AssertionError(f"the one-topic query found {plain.records} and {pushed.records}, "
                             f"{needles} were sent")
    return plain, pushed


def core(quick: bool, store: Path | None) -> tuple[list[Result], list[str]]:
    """The three figures the project quotes, each beside the machine's state: the codec's scan in records
    per CPU-second (per core), ``local[1]`` with the plan's columns against it by CPU, and one topic of ten
    with ``filterPushdown`` against without. Returns the rows and why they may not be published (the
    quiet rule of :mod:`benchmarks.machine`: a phase whose other processes used too many cores)."""
    busy: list[str] = []
    with tempfile.TemporaryDirectory(prefix="rmq-spark-bench-") as scratch, MachineWatch() as watch:
        root = store or Path(scratch) / "store"
        needles = build_store(root, QUICK_STORE_BYTES if quick else STORE_BYTES)

        def watched(what: str, measure: Callable[[], Scan]) -> Scan:
            before = watch.read()
            scan = measure()
            others = watch.read().others_cores(before)
            print(f"  {what}: other processes {others:.2f} cores, load {scan.load:.2f}", file=sys.stderr)
            if others >= QUIET_OTHERS_PER_CORE * machine_cores():
                busy.append(f"{what}: other processes used {others:.2f} cores")
            return scan

        codec = watched("codec", lambda: _codec_scan(root))
        with _local(1, warm=True) as timed:
            spark, whole = timed.spark, (codec.records, codec.size)
            one = watched("local[1]", lambda: _checked(timed(_read(spark, root, _totals)), whole, "local[1]"))
            plain, pushed = _pushdown_pair(timed, root, needles, watched, "")
            big, big_pair = os.environ.get(BIG_STORE), None
            if big:
                big_root = Path(big)
                big_needles = build_store(big_root, int(os.environ.get(BIG_BYTES, DEFAULT_BIG_BYTES)),
                                          BIG_FILE_BYTES)
                once = Timer(spark, timed.pids, warm=False)
                big_pair = _pushdown_pair(once, big_root, big_needles, watched, "big store, ")
    per_core = Result("spark scan", "codec scan, records per CPU-second (one core)",
                      codec.records / codec.cpu_seconds, codec.size / codec.cpu_seconds / 1e6, ">= 100,000/s",
                      f"{codec.cpu_per_record * 1e6:.1f} us CPU/record, {codec.records:,} records, "
                      f"median of {MEASURED_RUNS} runs, load {codec.load:.2f}")
    rows = [per_core,
            _row("core", "local[1], count + sum(total_size), columns from the plan", one, CODEC_SHARE_TARGET,
                 codec, "codec"),
            _row("core", "one topic of ten, no pushdown", plain),
            _row("core", "one topic of ten, filterPushdown", pushed, ">= 5x no pushdown", plain,
                 "no pushdown")]
    if big_pair is not None:
        rows += [_row("big store", "one topic of ten, no pushdown", big_pair[0]),
                 _row("big store", "one topic of ten, filterPushdown", big_pair[1], ">= 5x no pushdown",
                      big_pair[0], "no pushdown")]
    return rows, busy


def main(argv: list[str]) -> int:
    from benchmarks.run import QUICK_LABEL, table

    quick, store = "--quick" in argv, os.environ.get(SMALL_STORE)
    if "--core" not in argv:
        print(table(run(quick)))
        return 0
    results, busy = core(quick, Path(store) if store else None)
    print(table(results))
    if quick:
        print(f"\n{QUICK_LABEL}")
    if busy:
        print("\nWARNING: NOT FOR PUBLICATION: the machine was not quiet: " + "; ".join(busy))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
