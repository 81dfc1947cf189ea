"""Filters pushed into ``format("rocketmq-store")``: the same rows as without them, from fewer reads.

The golden Java store has seven topics, delayed and transactional records among them; each query is
compared with the same query on a reader that takes no filters (Spark filters every row itself), and the
plan is checked to read only the wanted records where the consume queues name them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.datasource import (
    EqualTo,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    LessThan,
    LessThanOrEqual,
    StringStartsWith,
)

from rocketmq_spec.codec.store import StoreDirectory
from rocketmq_spec.spark.fixtures import extract_store, spark  # noqa: F401  (session fixture)
from rocketmq_spec.spark.planning import CommitLogSplit
from rocketmq_spec.spark.pushdown import RecordFilter, group_records, queue_plan, record_filter
from rocketmq_spec.spark.store_plan import RecordsPartition, filtered_partitions
from rocketmq_spec.spark.store_source import FORMAT
from rocketmq_spec.spec.golden import STORE_TARBALL

pytestmark = pytest.mark.spark

QUERIES = [
    "topic = 'GoldenTopicB'",
    "topic IN ('GoldenTopicA', 'GoldenTopicC') AND queue_id >= 2",
    "topic = 'GoldenTopicA' AND queue_offset BETWEEN 1 AND 3",
    "queue_id = 1",
    "topic = 'SCHEDULE_TOPIC_XXXX'",
    "topic = 'NoSuchTopic'",
    "store_timestamp > 0 AND topic LIKE 'Golden%'",
    "physical_offset >= 8000 AND physical_offset < 20000",
    "topic = 'GoldenTopicB' OR queue_id = 0",
]


@pytest.fixture(scope="module")
def golden_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return extract_store(STORE_TARBALL, tmp_path_factory.mktemp("spark-pushdown"))


def rows(frame: DataFrame) -> list[tuple[object, ...]]:
    return [tuple(r) for r in frame.select("physical_offset", "topic", "queue_id", "queue_offset", "body")
            .orderBy("physical_offset").collect()]


def query(spark: SparkSession, root: Path, where: str, *, pushdown: bool) -> DataFrame:  # noqa: F811
    reader = spark.read.format(FORMAT).option("filterPushdown", str(pushdown).lower())
    return reader.load(str(root)).where(where)


@pytest.mark.parametrize("where", QUERIES)
def test_pushed_filters_give_the_rows_spark_filters_give(spark: SparkSession, golden_store: Path,  # noqa: F811
                                                         where: str) -> None:
    expected = rows(query(spark, golden_store, where, pushdown=False))
    assert rows(query(spark, golden_store, where, pushdown=True)) == expected


def test_a_topic_query_reads_only_that_topics_records(golden_store: Path) -> None:
    with StoreDirectory(golden_store) as store:
        records = list(store.messages(verify_crc=False))
        queued = {int(o) for topic, queue_id in store.queues()
                  for o in store.queue(topic, queue_id).entries["commitlog_offset"]}
        parts = filtered_partitions(store, record_filter([EqualTo(("topic",), "GoldenTopicB")]), 1 << 20)
    listed = {int(o) for p in parts if isinstance(p, RecordsPartition)
              for o in np.frombuffer(p.offsets, dtype=np.int64)}
    assert listed == {r.physical_offset for r in records if r.topic == "GoldenTopicB"}
    walked = [p for p in parts if isinstance(p, CommitLogSplit)]
    in_walked = {r.physical_offset for r in records
                 if any(p.start <= r.physical_offset < p.end for p in walked)}
    assert in_walked == {r.physical_offset for r in records} - queued, "only what no queue names is walked"


def test_listed_records_are_grouped_by_bytes_across_files() -> None:
    offsets = np.array([10, 20, 30, 105, 110, 230], dtype=np.int64)
    groups = group_records(offsets, np.full(6, 10, dtype=np.int64), 30)
    assert [g.tolist() for g in groups] == [[10, 20], [30, 105, 110], [230]]
    assert group_records(offsets[:0], offsets[:0], 30) == []
    part = RecordsPartition(("a", "b", "c"), (0, 100, 200), groups[1].tobytes())
    assert [(path, base, o.tolist()) for path, base, o in part.per_file()] == [
        ("a", 0, [30]), ("b", 100, [105, 110]), ("c", 200, [])]


def test_filters_the_source_cannot_use_are_left_to_spark() -> None:
    wanted = record_filter([StringStartsWith(("topic",), "Golden"), GreaterThan(("queue_id",), 1),
                            LessThan(("queue_id",), 3), In(("topic",), ("A", "B")), EqualTo(("topic",), "B"),
                            GreaterThanOrEqual(("body_size",), 10), EqualTo(("queue_offset",), "7")])
    assert wanted == RecordFilter(frozenset({"B"}), {"queue_id": (2, 2)})


def test_inconsistent_queues_fall_back_to_the_full_scan(spark: SparkSession, golden_store: Path,  # noqa: F811
                                                        tmp_path: Path) -> None:
    broken = tmp_path / "store"
    shutil.copytree(golden_store, broken)
    queue_file = next((broken / "consumequeue" / "GoldenTopicA" / "0").iterdir())
    data = bytearray(queue_file.read_bytes())
    data[20:28] = data[0:8]  # the second entry names the first's record: entries overlap
    queue_file.write_bytes(bytes(data))
    with StoreDirectory(broken) as store:
        files = store.commitlog.files
        end = files[-1].start + files[-1].path.stat().st_size
        assert queue_plan(store, record_filter([EqualTo(("topic",), "GoldenTopicB")]), 0, end) is None
    where = "topic = 'GoldenTopicB'"
    expected = rows(query(spark, broken, where, pushdown=False))
    assert rows(query(spark, broken, where, pushdown=True)) == expected


def test_columns_option_returns_those_columns_in_order(spark: SparkSession, golden_store: Path) -> None:  # noqa: F811
    chosen = ["total_size", "topic", "physical_offset"]
    frame = spark.read.format(FORMAT).option("columns", ",".join(chosen)).load(str(golden_store))
    assert frame.columns == chosen
    full = spark.read.format(FORMAT).load(str(golden_store)).select(*chosen)
    assert sorted(map(tuple, frame.collect())) == sorted(map(tuple, full.collect()))


def test_columns_option_refuses_unknown_or_repeated_names(spark: SparkSession,  # noqa: F811
                                                          golden_store: Path) -> None:
    for bad in ("topic,nonsense", "topic,topic", ""):
        with pytest.raises(Exception, match="option columns must name distinct columns"):
            spark.read.format(FORMAT).option("columns", bad).load(str(golden_store)).collect()


def test_a_time_range_reads_only_the_commitlog_range_that_can_hold_it(spark: SparkSession,  # noqa: F811
                                                                      golden_store: Path) -> None:
    with StoreDirectory(golden_store) as store:
        records = list(store.messages(verify_crc=False))
        stamps = [r.store_timestamp for r in records]
        assert stamps == sorted(stamps), "the broker stamped records in the order it appended them"
        low, high = stamps[len(stamps) // 3], stamps[2 * len(stamps) // 3]
        window = [GreaterThanOrEqual(("store_timestamp",), low), LessThanOrEqual(("store_timestamp",), high)]
        parts = filtered_partitions(store, record_filter(window), 1 << 20)
    inside = [r for r in records if low <= r.store_timestamp <= high]
    read = [r for r in records if any(isinstance(p, CommitLogSplit) and p.start <= r.physical_offset < p.end
                                      for p in parts)]
    assert set(map(id, inside)) <= set(map(id, read)) and len(read) < len(records) * 2 // 3
    where = f"store_timestamp BETWEEN {low} AND {high}"
    expected = rows(query(spark, golden_store, where, pushdown=False))
    assert len(expected) == len(inside)
    assert rows(query(spark, golden_store, where, pushdown=True)) == expected
