"""IndexFile checks: names, sizes, headers and every entry against the record it indexes."""

from __future__ import annotations

import re

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from rocketmq_spec.codec.store import IndexFile
from rocketmq_spec.codec.store.indexfile import first_entry_bases
from rocketmq_spec.codec.store.indexfile import index_sizes as inferred_index_sizes
from rocketmq_spec.spark.verify.framework import (
    FAIL,
    INFO,
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
from rocketmq_spec.spec.errors import StoreError
from rocketmq_spec.spec.indexfile import (
    DEFAULT_INDEX_COUNT,
    DEFAULT_SLOT_COUNT,
    ENTRY_SIZE,
    FIRST_INDEX,
    HEADER_SIZE,
    SLOT_SIZE,
    file_size,
)
from rocketmq_spec.spec.store_layout import (
    INDEX_DIR,
)

INDEX_NAME = re.compile(r"\d{17}")


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
    """UNIQ_KEY and KEYS always; the TAGS string where the writer indexes tags (5.4.0+), which the store
    shows by any entry of a record's tag key hash."""
    with v.index_files() as files:
        if not files:
            raise Verdict(INFO, "the store has no index file")
    tagged = v.records.where(F.col("tag_index_key_hash").isNotNull()).select(
        "physical_offset", F.col("tag_index_key_hash").alias("key_hash"))
    wanted = v.records.select("physical_offset", F.explode("index_key_hashes").alias("key_hash"))
    if not tagged.join(v.index_entries, ["physical_offset", "key_hash"], "left_semi").isEmpty():
        wanted = wanted.unionByName(tagged)
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
    records = v.records.select("physical_offset", "index_key_hashes", "tag_index_key_hash", "store_timestamp")
    joined = v.index_entries.join(records, "physical_offset", "left").join(bases, "index_file", "left")
    base = F.when(F.col("entry") == FIRST_INDEX, F.col("first_base")).otherwise(F.col("begin_timestamp"))
    elapsed = F.greatest(F.col("store_timestamp") - base, F.lit(0)) / 1000
    expected_diff = F.when(base <= 0, F.lit(0)).otherwise(
        F.least(elapsed, F.lit(2**31 - 1)).cast("long"))
    expect_none("index entries not matching a record", joined.where(~F.expr(past_end(v))).where(
        F.col("store_timestamp").isNull()
        | ~(F.array_contains("index_key_hashes", F.col("key_hash"))
            | F.coalesce(F.col("tag_index_key_hash") == F.col("key_hash"), F.lit(False)))
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


