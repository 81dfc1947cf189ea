"""The store clauses of the spec checked with Spark SQL, case for case as ``rmq-conformance store``.

The data-sized checks are joins over the three tables of the ``rocketmq-store`` source (records, consume
queue entries, index entries); checks of a handful of files (names, sizes, config JSON, marker files)
run on the driver through ``codec.store``. File sizes are settings, as the suite treats them: all files of
one kind share one size, names and layout agree with it, and a size other than Java's default is INFO.
Like the conformance suite, the CommitLog "scan" ends at the
first malformed record or CRC mismatch in offset order: later checks see only the records before it, and
each scan clause fails only when the scan stopped on that clause, so both tools give the same verdict per
clause on the same store.
"""

from __future__ import annotations

import contextlib
import itertools
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, LongType

from codec.compression import decompress_for_sys_flag
from codec.store import IndexFile, StoreDirectory
from codec.store.commitlog import map_file, segment_files
from codec.store.dispatch import ahead_notice, is_dispatch_lag, lag_notice
from codec.store.indexfile import first_entry_bases
from codec.store.indexfile import index_sizes as inferred_index_sizes
from spark_tests.store_source import FORMAT
from spec.checkpoint import CHECKPOINT_FILE_SIZE, RMQ_CKPT_ZERO
from spec.commitlog import COMMITLOG_FILE_SIZE, RMQ_CL_PREALLOCATED, RMQ_CL_TORN_TAIL, is_offset_file_name
from spec.consumequeue import (
    CQ_ENTRY_SIZE,
    CQ_FILE_SIZE,
    EXT_MAX_ADDRESS,
    PRE_BLANK_SIZE,
    RMQ_CQ_DISPATCH_LAG,
    delay_level_ms,
)
from spec.errors import RocketMQSpecError, StoreError
from spec.indexfile import (
    DEFAULT_INDEX_COUNT,
    DEFAULT_SLOT_COUNT,
    ENTRY_SIZE,
    FIRST_INDEX,
    HEADER_SIZE,
    SLOT_SIZE,
    file_size,
)
from spec.properties import PropertyKey
from spec.store_layout import (
    ABORT_FILE,
    CHECKPOINT_FILE,
    COMMITLOG_DIR,
    CONFIG_DIR,
    CONSUMEQUEUE_DIR,
    INDEX_DIR,
    LOCK_CONTENT,
    LOCK_FILE,
)
from spec.sysflag import TRANSACTION_MASK, TransactionType

PASS, FAIL, INFO, NON_STRICT = "PASS", "FAIL", "INFO", "NON-STRICT"
SEVERITY = {FAIL: 3, "CRASH": 3, NON_STRICT: 2, PASS: 1, INFO: 0}
"""How case verdicts combine into a clause verdict: any failure fails the clause; INFO (nothing to judge)
only stands when no case judged anything."""

SAMPLE = 10
"""Offending rows quoted in a FAIL: enough to find the problem, bounded however broken the store is."""
ZERO_TAIL_CHECKED = 1 << 20
"""Bytes after the last record that must be zero (the conformance suite checks the same window)."""
SCHEDULE_TOPIC = "SCHEDULE_TOPIC_XXXX"
HALF_TOPIC = "RMQ_SYS_TRANS_HALF_TOPIC"
INDEX_NAME = re.compile(r"\d{17}")
CONFIG_FILES = ("topics.json", "subscriptionGroup.json", "consumerOffset.json", "delayOffset.json")
SCAN_CLAUSES = ("RMQ-CL-MAGIC", "RMQ-CL-TOTAL-SIZE", "RMQ-CL-BODY-CRC-CHECK", "RMQ-CL-PHYSICAL-OFFSET",
                "RMQ-CL-BLANK", "RMQ-CL-END-OF-DATA", "RMQ-CL-FILE-NAME")
CRC_CLAUSE = "RMQ-CL-BODY-CRC-CHECK"
DISPATCHED = f"(sys_flag & {TRANSACTION_MASK}) IN ({TransactionType.NOT_TYPE}, {TransactionType.COMMIT})"


@dataclass(frozen=True)
class CaseVerdict:
    case: str
    clause: str
    verdict: str
    detail: str = ""


class Verdict(Exception):
    """Raised by a check to end with a verdict other than PASS."""

    def __init__(self, verdict: str, detail: str) -> None:
        self.verdict = verdict
        self.detail = detail
        super().__init__(detail)


def expect_none(what: str, rows: DataFrame | list[Any]) -> None:
    sample = rows.limit(SAMPLE).collect() if isinstance(rows, DataFrame) else rows[:SAMPLE]
    if sample:
        raise Verdict(FAIL, f"{what}: {[tuple(r) if hasattr(r, '__fields__') else r for r in sample]}")


def clause_verdicts(cases: Iterable[tuple[str, str]]) -> dict[str, str]:
    """(clause, verdict) pairs folded into one verdict per clause by :data:`SEVERITY`."""
    result: dict[str, str] = {}
    for clause, verdict in cases:
        if clause not in result or SEVERITY[verdict] > SEVERITY[result[clause]]:
            result[clause] = verdict
    return dict(sorted(result.items()))


Check = Callable[["StoreVerification"], None]
CHECKS: list[tuple[str, str, Check]] = []


def check(case: str, clause: str) -> Callable[[Check], Check]:
    def register(function: Check) -> Check:
        CHECKS.append((case, clause, function))
        return function
    return register


@F.udf(LongType(), useArrow=False)  # row-at-a-time: the hints are plain values, not batches
def _delay_deliver_time(store_timestamp: int | None, properties: dict[str, str] | None) -> int | None:
    """Null for an entry without a record: Spark evaluates a UDF even where an OR is already decided."""
    if store_timestamp is None or properties is None:
        return None
    return store_timestamp + delay_level_ms(int(properties.get(PropertyKey.DELAY, "0")))


@F.udf(BooleanType(), useArrow=False)
def _decompresses(body: bytes, sys_flag: int) -> bool:
    try:
        decompress_for_sys_flag(body, sys_flag)
    except RocketMQSpecError:
        return False
    return True


class StoreVerification:
    def __init__(self, spark: SparkSession, root: Path | str, *, split_bytes: int | None = None,
                 index_sizes: tuple[int, int] | None = None) -> None:
        self.spark = spark
        self.root = Path(root)
        self.index_sizes = index_sizes
        self.store = StoreDirectory(self.root, index_sizes=index_sizes)
        reader = spark.read.format(FORMAT)
        if split_bytes:
            reader = reader.option("splitBytes", str(split_bytes))
        if index_sizes:
            reader = reader.option("indexSizes", ",".join(map(str, index_sizes)))
        self.scanned = scanned = reader.option("onError", "row").load(str(self.root)).drop("body").cache()
        problems = scanned.where("error IS NOT NULL OR NOT crc_ok").select(
            "physical_offset", F.coalesce("error_clause", F.lit(CRC_CLAUSE)).alias("clause"),
            F.coalesce("error", F.lit("BODYCRC does not match the body")).alias("error"))
        self.first_problem = problems.orderBy("physical_offset").first()
        limit = self.first_problem.physical_offset if self.first_problem else None
        self.records = scanned.where("error IS NULL" + (f" AND physical_offset < {limit}" if limit is not None
                                                        else "")).cache()
        self.queue_entries = reader.option("table", "consumequeue").load(str(self.root)).cache()
        self.index_entries = reader.option("table", "index").load(str(self.root)).cache()
        first_real = (self.queue_entries.where(f"size <> {PRE_BLANK_SIZE} OR physical_offset <> 0")
                      .groupBy("topic", "queue_id").agg(F.min("queue_offset").alias("min_offset")))
        self.entries = (self.queue_entries.join(first_real, ["topic", "queue_id"])
                        .where("queue_offset >= min_offset").drop("min_offset").cache())

    def close(self) -> None:
        for frame in (self.scanned, self.records, self.queue_entries, self.entries, self.index_entries):
            frame.unpersist()
        self.store.close()

    @contextlib.contextmanager
    def index_files(self) -> Iterator[list[IndexFile]]:
        """The index files, oldest first, opened with the store's counts. Files that cannot be read with
        them are judged once, by the index size case; every other index case is INFO instead."""
        slots, entries = self.index_sizes or (None, None)
        with contextlib.ExitStack() as stack:
            try:
                opened = [stack.enter_context(IndexFile(path, slot_count=slots, index_count=entries))
                          for path in self.store.index_files()]
            except StoreError as exc:
                raise Verdict(INFO, f"index files not readable ({exc.message}); their sizes are judged by "
                                    "RMQ-IDX-LAYOUT") from None
            yield opened

    def run(self) -> list[CaseVerdict]:
        results = []
        for case, clause, function in CHECKS:
            try:
                function(self)
                results.append(CaseVerdict(case, clause, PASS))
            except Verdict as outcome:
                results.append(CaseVerdict(case, clause, outcome.verdict, outcome.detail))
        return results


def one_size(kind: str, paths: Iterable[Path]) -> int | None:
    """The single size every file of ``kind`` has (None when there are none); FAIL on several."""
    sizes = sorted({path.stat().st_size for path in paths})
    if len(sizes) > 1:
        raise Verdict(FAIL, f"{kind} files of different sizes: {sizes}")
    return sizes[0] if sizes else None


def report_setting(setting: str, value: object, default: object) -> None:
    """A size the consistency rules accept, judged only against Java's default: INFO when it differs."""
    if value != default:
        raise Verdict(INFO, f"non-default setting: {setting}={value} (Java's default is {default})")


def _scan_check(clause: str) -> Check:
    def scan_stopped_on(v: StoreVerification) -> None:
        problem = v.first_problem
        if problem is not None and problem.clause == clause:
            raise Verdict(FAIL, f"at offset {problem.physical_offset}: {problem.error}")
        if problem is not None:
            raise Verdict(INFO, f"scan stopped at offset {problem.physical_offset} by {problem.clause}")
    return scan_stopped_on


for _clause in SCAN_CLAUSES:
    check(f"scan::{_clause}", _clause)(_scan_check(_clause))


@check("commitlog-file-names", "RMQ-CL-FILE-NAME")
def _file_names(v: StoreVerification) -> None:
    directory = v.root / COMMITLOG_DIR
    expect_none("files not named by a 20-digit offset",
                [p.name for p in directory.iterdir() if p.is_file() and not is_offset_file_name(p.name)])
    segments = segment_files(directory)
    size = one_size("CommitLog", (s.path for s in segments))
    if size is None:
        raise Verdict(INFO, "the store has no CommitLog file")
    if size <= 0:
        raise Verdict(FAIL, f"CommitLog file size is {size}")
    expect_none("files not starting at a multiple of the file size",
                [s.path.name for s in segments if s.start % size])
    report_setting("mappedFileSizeCommitLog", size, COMMITLOG_FILE_SIZE)


@check("commitlog-zero-tail", "RMQ-CL-END-OF-DATA")
def _zero_tail(v: StoreVerification) -> None:
    if v.records.limit(1).count() == 0:
        raise Verdict(INFO, "the CommitLog holds no records")
    if v.first_problem is not None:
        raise Verdict(INFO, f"scan stopped at offset {v.first_problem.physical_offset}")
    first_nonzero = v.store.commitlog.nonzero_after_end(ZERO_TAIL_CHECKED)
    expect_none("non-zero byte after the last record", [] if first_nonzero is None else [first_nonzero])


def _notice_check(clause: str) -> Check:
    def reported(v: StoreVerification) -> None:
        if v.first_problem is not None:
            raise Verdict(INFO, f"scan stopped at offset {v.first_problem.physical_offset}")
        for found, text in v.store.notices():
            if found == clause and found == RMQ_CL_TORN_TAIL.id and not v.store.crashed:
                raise Verdict(NON_STRICT, f"{text} in a store shut down cleanly (no abort file)")
            if found == clause:
                raise Verdict(INFO, text)
    return reported


for _case, _clause in (("preallocated-files", RMQ_CL_PREALLOCATED.id), ("torn-tail", RMQ_CL_TORN_TAIL.id),
                       ("checkpoint-flushed", RMQ_CKPT_ZERO.id)):
    check(_case, _clause)(_notice_check(_clause))


@check("compressed-bodies", "RMQ-FLAG-COMPRESSION")
def _compressed(v: StoreVerification) -> None:
    compressed = v.spark.read.format(FORMAT).load(str(v.root)).where("error IS NULL AND sys_flag & 1 = 1")
    ids = v.records.select("physical_offset")
    expect_none("records whose body does not decompress",
                compressed.join(ids, "physical_offset").where(~_decompresses("body", "sys_flag"))
                .select("physical_offset"))


@check("committed-transactions", "RMQ-CL-TRANSACTION-OFFSETS")
def _transactions(v: StoreVerification) -> None:
    committed = v.records.where(f"(sys_flag & {TRANSACTION_MASK}) = {TransactionType.COMMIT}").alias("c")
    halves = v.records.where(f"topic = '{HALF_TOPIC}'").alias("h")
    joined = committed.join(halves, F.col("c.prepared_transaction_offset") == F.col("h.physical_offset"),
                            "left")
    expect_none("committed records without their half message",
                joined.where("h.physical_offset IS NULL OR NOT (h.uniq_key <=> c.uniq_key)")
                .select("c.physical_offset", "c.prepared_transaction_offset"))


@check("consume-queue-files", "RMQ-CQ-POSITION")
def _queue_files(v: StoreVerification) -> None:
    base = v.root / CONSUMEQUEUE_DIR
    expect_none("files not named by a 20-digit offset", [
        str(p.relative_to(v.root)) for p in sorted(base.glob("*/*/*")) if not is_offset_file_name(p.name)])
    queues = [segment_files(directory) for directory in sorted(base.glob("*/*"))]
    size = one_size("ConsumeQueue", (s.path for segments in queues for s in segments))
    if size is None:
        raise Verdict(INFO, "the store has no ConsumeQueue file")
    if size <= 0 or size % CQ_ENTRY_SIZE:
        raise Verdict(FAIL, f"ConsumeQueue file size {size} is not a positive multiple of {CQ_ENTRY_SIZE}")
    expect_none("files not starting at a multiple of the file size", [
        str(s.path.relative_to(v.root)) for segments in queues for s in segments if s.start % size])
    expect_none("files not starting where the previous file of their queue ends", [
        str(after.path.relative_to(v.root)) for segments in queues
        for before, after in itertools.pairwise(segments) if after.start != before.start + size])
    report_setting("mappedFileSizeConsumeQueue", size, CQ_FILE_SIZE)


def _entries_with_records(v: StoreVerification) -> DataFrame:
    records = v.records.select(*(F.col(c).alias(f"r_{c}") for c in v.records.columns))
    return v.entries.join(records, F.col("physical_offset") == F.col("r_physical_offset"), "left")


def _data_end(v: StoreVerification) -> int | None:
    """Where the CommitLog's data ends (None when its scan stopped on an error)."""
    return None if v.first_problem is not None else v.store.commitlog.end.offset


def _past_end(v: StoreVerification) -> str:
    """SQL: the row's physical_offset lies past the data end (entries copied after the CommitLog)."""
    end = _data_end(v)
    return "FALSE" if end is None else f"physical_offset >= {end}"


def ahead(v: StoreVerification, what: str, entries: DataFrame) -> None:
    """Entries past the data end: INFO in a running or killed broker's store (as in the conformance
    suite), a FAIL in any other."""
    offsets = [r.physical_offset for r in entries.where(_past_end(v)).select("physical_offset").collect()]
    if offsets and v.store.crashed:
        _, text = ahead_notice(what, offsets)
        raise Verdict(INFO, f"{text} [{RMQ_CQ_DISPATCH_LAG.id}]")
    expect_none(f"{what} entries past the CommitLog data end", offsets)


@check("queue-entries-point-at-records", "RMQ-CQ-POINTS-AT-RECORD")
def _points_at_records(v: StoreVerification) -> None:
    expect_none("entries not matching their record", _entries_with_records(v).where(
        f"NOT ({_past_end(v)}) AND (r_physical_offset IS NULL OR r_topic <> topic OR r_queue_id <> queue_id "
        "OR r_queue_offset <> queue_offset OR r_total_size <> size)")
        .select("topic", "queue_id", "queue_offset", "physical_offset"))
    ahead(v, "consume-queue", v.entries)


@check("tags-codes", "RMQ-CQ-TAGS-CODE")
def _tags_codes(v: StoreVerification) -> None:
    expect_none("entries with a wrong tags code", _entries_with_records(v).where(
        f"r_physical_offset IS NOT NULL AND topic <> '{SCHEDULE_TOPIC}' AND tags_code > {EXT_MAX_ADDRESS} "
        "AND tags_code <> r_tags_code")
        .select("topic", "queue_id", "queue_offset", "tags_code", "r_tags_code"))


@check("delay-tags-codes", "RMQ-CQ-DELAY-TAGS")
def _delay_tags(v: StoreVerification) -> None:
    delayed = _entries_with_records(v).where(f"topic = '{SCHEDULE_TOPIC}' AND NOT ({_past_end(v)})")
    deliver_time = _delay_deliver_time("r_store_timestamp", "r_properties")
    expect_none("delayed entries whose tags code is not the deliver time", delayed.where(
        F.col("r_physical_offset").isNull() | ~F.col("tags_code").eqNullSafe(deliver_time))
        .select("queue_id", "queue_offset", "tags_code"))


@check("queue-has-no-holes", "RMQ-CQ-END")
def _no_holes(v: StoreVerification) -> None:
    written = {(r.topic, r.queue_id): r.n for r in
               v.queue_entries.groupBy("topic", "queue_id").agg(F.max("queue_offset").alias("n")).collect()}
    holes = []
    for directory in sorted((v.root / CONSUMEQUEUE_DIR).glob("*/*")):
        segments = segment_files(directory)
        last = written.get((directory.parent.name, int(directory.name)))
        end = 0 if last is None else (last + 1) * CQ_ENTRY_SIZE
        for segment in segments:
            data = map_file(segment.path)
            if bytes(data[max(end - segment.start, 0):]).strip(b"\0"):
                holes.append(str(segment.path.relative_to(v.root)))
    expect_none("queues with data after their first unwritten entry", holes)


@check("pre-blank-entries", "RMQ-CQ-PRE-BLANK")
def _pre_blank(v: StoreVerification) -> None:
    expect_none("pre-blank entries after a real entry", v.entries.where(
        f"physical_offset = 0 AND size = {PRE_BLANK_SIZE} AND tags_code = 0"))


def _scalar(frame: DataFrame) -> Any:
    row = frame.first()
    return None if row is None else row[0]


def lag_or_hole(v: StoreVerification, what: str, failure: str, missing: DataFrame,
                dispatched: DataFrame) -> None:
    """Missing entries of a running or killed broker's last records are a dispatch lag (INFO), as in
    ``rmq-conformance store``; anything else missing FAILs."""
    first_missing = _scalar(missing.agg(F.min("physical_offset")))
    if first_missing is not None and v.store.crashed:
        last_dispatched = _scalar(dispatched.agg(F.max("physical_offset")))
        if is_dispatch_lag([first_missing], [] if last_dispatched is None else [last_dispatched]):
            offsets = [r.physical_offset for r in missing.select("physical_offset").distinct().collect()]
            _, text = lag_notice(what, offsets)
            raise Verdict(INFO, f"{text} [{RMQ_CQ_DISPATCH_LAG.id}]")
    expect_none(failure, missing)


@check("records-are-dispatched", "RMQ-CQ-TRANSACTION")
def _dispatched(v: StoreVerification) -> None:
    queued = v.entries.select("physical_offset").distinct()
    expect_none("half or rolled-back records with an entry",
                v.records.where(f"NOT {DISPATCHED}").join(queued, "physical_offset", "left_semi")
                .select("physical_offset"))
    dispatchable = v.records.where(DISPATCHED).select("physical_offset")
    lag_or_hole(v, "consume queues", "dispatchable records without an entry",
                dispatchable.join(queued, "physical_offset", "left_anti"),
                dispatchable.join(queued, "physical_offset", "left_semi"))


@check("index-file-names", "RMQ-IDX-FILE-NAME")
def _index_names(v: StoreVerification) -> None:
    directory = v.root / INDEX_DIR
    names = [p.name for p in directory.iterdir()] if directory.is_dir() else []
    expect_none("index files with another name", [n for n in names if not INDEX_NAME.fullmatch(n)])


@check("index-file-sizes", "RMQ-IDX-LAYOUT")
def _index_sizes(v: StoreVerification) -> None:
    size = one_size("index", v.store.index_files())
    if size is None:
        raise Verdict(INFO, "the store has no index file")
    if v.index_sizes is not None:
        slots, entries = v.index_sizes
        if size != file_size(slots, entries):
            raise Verdict(FAIL, f"index files are {size} bytes, {file_size(slots, entries)} for "
                                f"{slots} slots and {entries} entries")
    else:
        rest = size - HEADER_SIZE - SLOT_SIZE - ENTRY_SIZE
        if rest < 0 or rest % SLOT_SIZE:
            raise Verdict(FAIL, f"index file size {size} is not {HEADER_SIZE} + {SLOT_SIZE} * slots + "
                                f"{ENTRY_SIZE} * entries")
        try:
            slots, entries = inferred_index_sizes(size)
        except StoreError:
            raise Verdict(INFO, f"index file size {size} fits slot and entry counts, but not in Java's "
                                "default 1:4 ratio: give the counts to read the index files") from None
    report_setting("maxHashSlotNum,maxIndexNum", f"{slots},{entries}",
                   f"{DEFAULT_SLOT_COUNT},{DEFAULT_INDEX_COUNT}")


@check("index-finds-every-key", "RMQ-IDX-KEYS")
def _index_keys(v: StoreVerification) -> None:
    with v.index_files() as files:
        if not files:
            raise Verdict(INFO, "the store has no index file")
    wanted = v.records.select("physical_offset", F.explode("index_key_hashes").alias("key_hash"))
    missing = wanted.join(v.index_entries, ["physical_offset", "key_hash"], "left_anti")
    indexed = wanted.select("physical_offset").distinct().join(missing, "physical_offset", "left_anti")
    expect_none("keys whose slot chain does not reach their entry", _unreachable_entries(v))
    lag_or_hole(v, "index", "keys without an index entry for their record", missing, indexed)


def _unreachable_entries(v: StoreVerification) -> list[tuple[str, int]]:
    """Entries a lookup cannot reach: not on the chain of their slot, walked newest to oldest."""
    lost = []
    with v.index_files() as files:
        for index in files:
            entries = list(index.entries())
            reached: set[int] = set()
            for slot in {e.key_hash % index.slot_count for e in entries}:
                current = index.slot(slot)
                while 0 < current < index.header.index_count and current not in reached:
                    reached.add(current)
                    current = index.entry(current).prev_index
            lost += [(index.path.name, e.index) for e in entries if e.index not in reached]
    return lost


@check("index-entries-point-at-records", "RMQ-IDX-LOOKUP")
def _index_entries(v: StoreVerification) -> None:
    with v.index_files() as files:  # INFO when the files cannot be read with the store's counts
        bases = _first_entry_bases(v, files)
    records = v.records.select("physical_offset", "index_key_hashes", "store_timestamp")
    joined = v.index_entries.join(records, "physical_offset", "left").join(bases, "index_file", "left")
    base = F.when(F.col("entry") == FIRST_INDEX, F.col("first_base")).otherwise(F.col("begin_timestamp"))
    elapsed = F.greatest(F.col("store_timestamp") - base, F.lit(0)) / 1000
    expected_diff = F.when(base <= 0, F.lit(0)).otherwise(
        F.least(elapsed, F.lit(2**31 - 1)).cast("long"))
    expect_none("index entries not matching a record", joined.where(~F.expr(_past_end(v))).where(
        F.col("store_timestamp").isNull() | ~F.array_contains("index_key_hashes", F.col("key_hash"))
        | (F.col("time_diff") != F.coalesce(expected_diff, F.col("time_diff"))))
        .select("index_file", "entry", "physical_offset"))
    ahead(v, "index", v.index_entries)


def _first_entry_bases(v: StoreVerification, files: list[IndexFile]) -> DataFrame:
    """(index_file, first_base): what each file's first entry is timed against (RMQ-IDX-TIME-DIFF), null
    when older index files may have gone with the CommitLog files they indexed."""
    commitlog = v.store.commitlog.files
    complete = not commitlog or commitlog[0].start == 0
    rows = [(index.path.name, base) for index, base in
            zip(files, first_entry_bases(files, history_complete=complete), strict=True)]
    return v.spark.createDataFrame(rows, "index_file string, first_base long")


@check("index-headers", "RMQ-IDX-PUT")
def _index_headers(v: StoreVerification) -> None:
    with v.index_files() as files:
        for index in files:
            entries = list(index.entries())
            header = index.header
            wrong = [("index_count", len(entries) + 1, header.index_count)]
            if entries:
                wrong += [("begin_phy_offset", entries[0].phy_offset, header.begin_phy_offset),
                          ("end_phy_offset", entries[-1].phy_offset, header.end_phy_offset)]
            expect_none(f"{index.path.name}: header fields (expected, seen)",
                        [w for w in wrong if w[1] != w[2]])


@check("checkpoint-size", "RMQ-CKPT-LAYOUT")
def _checkpoint_size(v: StoreVerification) -> None:
    size = (v.root / CHECKPOINT_FILE).stat().st_size
    if size != CHECKPOINT_FILE_SIZE:
        raise Verdict(FAIL, f"checkpoint is {size} bytes, expected {CHECKPOINT_FILE_SIZE}")


@check("checkpoint-not-ahead", "RMQ-BRK-CHECKPOINT")
def _checkpoint_not_ahead(v: StoreVerification) -> None:
    if v.store.crashed:
        raise Verdict(INFO, "the store was not shut down cleanly (abort file present)")
    # every record the CommitLog holds, past a CRC mismatch too: the checkpoint is about what was written
    newest = v.scanned.where("error IS NULL").agg(F.max("store_timestamp")).first()[0]
    if newest is None:
        raise Verdict(INFO, "the store holds no record")
    point = v.store.checkpoint()
    expect_none(f"checkpoint timestamps ahead of the newest record ({newest})", [
        (name, value) for name, value in (("physic", point.physic_msg_timestamp),
                                          ("logics", point.logics_msg_timestamp)) if value > newest])


def _config_check(name: str) -> Check:
    def loads(v: StoreVerification) -> None:
        if not (v.root / CONFIG_DIR / name).exists():
            raise Verdict(INFO, f"config/{name} is absent")
        _load(v, name)
    return loads


def _load(v: StoreVerification, name: str) -> None:
    try:
        v.store.config(name)
    except (RocketMQSpecError, ValueError, OSError) as exc:
        raise Verdict(FAIL, f"config/{name} does not load: {exc}") from None


for _name in CONFIG_FILES:
    check(f"config::{_name}", "RMQ-STORE-CONFIG-JSON")(_config_check(_name))


@check("config-backups", "RMQ-STORE-CONFIG-BAK")
def _backups(v: StoreVerification) -> None:
    for path in sorted((v.root / CONFIG_DIR).glob("*.json.bak")):
        _load(v, path.name)


@check("queues-are-configured", "RMQ-STORE-LAYOUT")
def _configured(v: StoreVerification) -> None:
    topics = v.store.topics()
    expect_none("queues beyond their topic's configured queues", [
        (topic, queue_id) for topic, queue_id in v.store.queues() if topic in topics
        and queue_id >= max(topics[topic]["readQueueNums"], topics[topic]["writeQueueNums"])])


@check("consumer-offsets", "RMQ-STORE-OFFSET-KEY")
def _offsets(v: StoreVerification) -> None:
    maxima = {(r.topic, r.queue_id): r.n + 1 for r in
              v.queue_entries.groupBy("topic", "queue_id").agg(F.max("queue_offset").alias("n")).collect()}
    expect_none("consumer offsets outside their queue", [
        (topic, group, queue_id, offset) for (topic, group), offsets in v.store.consumer_offsets().items()
        for queue_id, offset in offsets.items() if not 0 <= offset <= maxima.get((topic, queue_id), 0)])


@check("lock-file", "RMQ-STORE-LOCK")
def _lock(v: StoreVerification) -> None:
    path = v.root / LOCK_FILE
    if not path.exists():
        raise Verdict(INFO, "the store has no lock file")
    if path.read_bytes()[:len(LOCK_CONTENT)] != LOCK_CONTENT:
        raise Verdict(FAIL, f"lock file holds {path.read_bytes()[:len(LOCK_CONTENT)]!r}")


@check("abort-file", "RMQ-STORE-ABORT")
def _abort(v: StoreVerification) -> None:
    if (v.root / ABORT_FILE).exists():
        raise Verdict(INFO, "abort file present: the store was not shut down cleanly (or is in use)")


def verify_store(spark: SparkSession, root: Path | str, *, split_bytes: int | None = None,
                 index_sizes: tuple[int, int] | None = None) -> list[CaseVerdict]:
    """Every case on the store at ``root``; ``index_sizes`` is (maxHashSlotNum, maxIndexNum) of its index
    files, needed when their counts are not in Java's 1:4 ratio (``rmq-conformance store --index-sizes``)."""
    verification = StoreVerification(spark, root, split_bytes=split_bytes, index_sizes=index_sizes)
    try:
        return verification.run()
    finally:
        verification.close()
