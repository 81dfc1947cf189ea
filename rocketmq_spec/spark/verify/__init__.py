"""The store clauses of the spec checked with Spark SQL, case for case as ``rmq-conformance store``.

The data-sized checks are joins over the three tables of the ``rocketmq-store`` source (records, consume queue
entries, index entries); checks of a handful of files (names, sizes, config JSON, marker files) run on the
driver through ``rocketmq_spec.codec.store``. File sizes are settings, as the suite treats them: all files of
one kind share one size, names and layout agree with it, and a size other than Java's default is INFO. Like
the conformance suite, the CommitLog "scan" ends at the first malformed record or CRC mismatch in offset
order: later checks see only the records before it, and each scan clause fails only when the scan stopped on
that clause, so both tools give the same verdict per clause on the same store.

The checks live by the files they read (:mod:`.records`, :mod:`.index`, :mod:`.files`) and join the
registry of :mod:`.framework` as they are imported; the report lists them in that order.
"""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import SparkSession

from rocketmq_spec.spark.verify import files, index, records
from rocketmq_spec.spark.verify.framework import (
    FAIL,
    INFO,
    NON_STRICT,
    PASS,
    CaseVerdict,
    StoreVerification,
    clause_verdicts,
    mirrored_verdicts,
)

__all__ = ["FAIL", "INFO", "NON_STRICT", "PASS", "CaseVerdict", "clause_verdicts", "mirrored_verdicts",
           "verify_store"]
CHECK_MODULES = (records, index, files)
"""The modules whose ``@check`` functions make the report, in its order."""


def verify_store(spark: SparkSession, root: Path | str, *, split_bytes: int | None = None,
                 index_sizes: tuple[int, int] | None = None) -> list[CaseVerdict]:
    """Every case on the store at ``root``; ``index_sizes`` is (maxHashSlotNum, maxIndexNum) of its index
    files, needed when their counts are not in Java's 1:4 ratio (``rmq-conformance store --index-sizes``)."""
    verification = StoreVerification(spark, root, split_bytes=split_bytes, index_sizes=index_sizes)
    try:
        return verification.run(CHECK_MODULES)
    finally:
        verification.close()
