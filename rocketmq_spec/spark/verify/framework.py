"""What every store check shares: the verdicts, the registry the checks join with ``@check``, and the
store as Spark tables (:class:`StoreVerification`), read once and cached for all of them."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from rocketmq_spec.codec.store import IndexFile, StoreDirectory
from rocketmq_spec.codec.store.dispatch import ahead_notice, is_dispatch_lag, lag_notice
from rocketmq_spec.spark.store_source import FORMAT
from rocketmq_spec.spec.consumequeue import (
    PRE_BLANK_SIZE,
    RMQ_CQ_DISPATCH_LAG,
)
from rocketmq_spec.spec.errors import StoreError

PASS, FAIL, INFO, NON_STRICT = "PASS", "FAIL", "INFO", "NON-STRICT"
SEVERITY = {FAIL: 3, "CRASH": 3, NON_STRICT: 2, PASS: 1, INFO: 0}
"""How case verdicts combine into a clause verdict: any failure fails the clause; INFO (nothing to judge)
only stands when no case judged anything."""

SAMPLE = 10
"""Offending rows quoted in a FAIL: enough to find the problem, bounded however broken the store is."""
CRC_CLAUSE = "RMQ-CL-BODY-CRC-CHECK"




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


MIRRORED_AREA = "store"
"""The conformance area the checks here mirror clause for clause (the codec's reading of a store). The areas
that read the files a second way, with ``struct`` (store_records, store_index_entries, store_recovery),
are the suite's own cross-check and have no twin here."""


def mirrored_verdicts(report_cases: Iterable[Mapping[str, str]], judged: Iterable[str]) -> dict[str, str]:
    """A conformance store report's verdict per clause, over the mirrored area's clauses and those the
    checks here ``judged``: equal to the checks' own verdicts exactly when they mirror the suite."""
    cases = list(report_cases)
    clauses = {c["clause"] for c in cases if c["area"] == MIRRORED_AREA} | set(judged)
    return clause_verdicts((c["clause"], c["verdict"]) for c in cases if c["clause"] in clauses)


Check = Callable[["StoreVerification"], None]
CHECKS: list[tuple[str, str, Check]] = []


def check(case: str, clause: str) -> Callable[[Check], Check]:
    def register(function: Check) -> Check:
        CHECKS.append((case, clause, function))
        return function
    return register



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

    def run(self, modules: Sequence[ModuleType]) -> list[CaseVerdict]:
        """Every registered check, those of ``modules[0]`` first and so on (the report's order), each in
        the order its module declares it."""
        rank = {module.__name__: place for place, module in enumerate(modules)}
        results = []
        for case, clause, function in sorted(CHECKS, key=lambda row: rank[row[2].__module__]):
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


def data_end(v: StoreVerification) -> int | None:
    """Where the CommitLog's data ends (None when its scan stopped on an error)."""
    return None if v.first_problem is not None else v.store.commitlog.end.offset


def past_end(v: StoreVerification) -> str:
    """SQL: the row's physical_offset lies past the data end (entries copied after the CommitLog)."""
    end = data_end(v)
    return "FALSE" if end is None else f"physical_offset >= {end}"


def ahead(v: StoreVerification, what: str, entries: DataFrame) -> None:
    """Entries past the data end: INFO in a running or killed broker's store (as in the conformance
    suite), a FAIL in any other."""
    offsets = [r.physical_offset for r in entries.where(past_end(v)).select("physical_offset").collect()]
    if offsets and v.store.crashed:
        _, text = ahead_notice(what, offsets)
        raise Verdict(INFO, f"{text} [{RMQ_CQ_DISPATCH_LAG.id}]")
    expect_none(f"{what} entries past the CommitLog data end", offsets)


def scalar(frame: DataFrame) -> Any:
    row = frame.first()
    return None if row is None else row[0]


def lag_or_hole(v: StoreVerification, what: str, failure: str, missing: DataFrame,
                dispatched: DataFrame) -> None:
    """Missing entries of a running or killed broker's last records are a dispatch lag (INFO), as in
    ``rmq-conformance store``; anything else missing FAILs."""
    first_missing = scalar(missing.agg(F.min("physical_offset")))
    if first_missing is not None and v.store.crashed:
        last_dispatched = scalar(dispatched.agg(F.max("physical_offset")))
        if is_dispatch_lag([first_missing], [] if last_dispatched is None else [last_dispatched]):
            offsets = [r.physical_offset for r in missing.select("physical_offset").distinct().collect()]
            _, text = lag_notice(what, offsets)
            raise Verdict(INFO, f"{text} [{RMQ_CQ_DISPATCH_LAG.id}]")
    expect_none(failure, missing)
