"""CommitLog and consume queue checks: the scan, file names and tails, then every queue entry against the
records it points at, as joins of the ``records`` and ``consumequeue`` tables."""

from __future__ import annotations

import itertools

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, LongType

from rocketmq_spec.codec.compression import decompress_for_sys_flag
from rocketmq_spec.codec.store.commitlog import map_file, segment_files
from rocketmq_spec.spark.store_source import FORMAT
from rocketmq_spec.spark.verify.framework import (
    FAIL,
    INFO,
    NON_STRICT,
    Check,
    StoreVerification,
    Verdict,
    ahead,
    check,
    expect_none,
    lag_or_hole,
    one_size,
    past_end,
    report_setting,
)
from rocketmq_spec.spec.checkpoint import RMQ_CKPT_ZERO
from rocketmq_spec.spec.commitlog import (
    COMMITLOG_FILE_SIZE,
    RMQ_CL_PREALLOCATED,
    RMQ_CL_TORN_TAIL,
    is_offset_file_name,
)
from rocketmq_spec.spec.consumequeue import (
    CQ_ENTRY_SIZE,
    CQ_FILE_SIZE,
    EXT_MAX_ADDRESS,
    PRE_BLANK_SIZE,
    delay_level_ms,
)
from rocketmq_spec.spec.errors import RocketMQSpecError
from rocketmq_spec.spec.properties import PropertyKey
from rocketmq_spec.spec.store_layout import (
    ABORT_FILE,
    COMMITLOG_DIR,
    CONSUMEQUEUE_DIR,
)
from rocketmq_spec.spec.sysflag import TRANSACTION_MASK, TransactionType
from rocketmq_spec.spec.system_topics import SCHEDULE_TOPIC, TRANS_HALF_TOPIC

ZERO_TAIL_CHECKED = 1 << 20
"""Bytes after the last record that must be zero (the conformance suite checks the same window)."""
SCAN_CLAUSES = ("RMQ-CL-MAGIC", "RMQ-CL-TOTAL-SIZE", "RMQ-CL-BODY-CRC-CHECK", "RMQ-CL-PHYSICAL-OFFSET",
                "RMQ-CL-BLANK", "RMQ-CL-END-OF-DATA", "RMQ-CL-FILE-NAME")
DISPATCHED = f"(sys_flag & {TRANSACTION_MASK}) IN ({TransactionType.NOT_TYPE}, {TransactionType.COMMIT})"


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
    halves = v.records.where(f"topic = '{TRANS_HALF_TOPIC}'").alias("h")
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


@check("queue-entries-point-at-records", "RMQ-CQ-POINTS-AT-RECORD")
def _points_at_records(v: StoreVerification) -> None:
    expect_none("entries not matching their record", _entries_with_records(v).where(
        f"NOT ({past_end(v)}) AND (r_physical_offset IS NULL OR r_topic <> topic OR r_queue_id <> queue_id "
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
    delayed = _entries_with_records(v).where(f"topic = '{SCHEDULE_TOPIC}' AND NOT ({past_end(v)})")
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


@check("no-abort-file-means-a-finished-store", "RMQ-STORE-ABORT")
def _no_abort_file(v: StoreVerification) -> None:
    """Java deletes the abort file only once every record is dispatched: without it, a torn tail or an
    undispatched record is a crash's leftover in a store that claims a clean shutdown."""
    if (v.root / ABORT_FILE).exists():
        raise Verdict(INFO, "abort file present: the store was not shut down cleanly (or is in use)")
    queued = v.entries.select("physical_offset").distinct()
    undispatched = (v.records.where(DISPATCHED).select("physical_offset")
                    .join(queued, "physical_offset", "left_anti").count())
    if v.store.commitlog.end.torn is not None or undispatched:
        raise Verdict(NON_STRICT, f"no abort file, yet a torn tail or {undispatched} undispatched records")


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


