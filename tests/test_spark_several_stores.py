"""One job over several brokers' stores: ``load([dir_a, dir_b])`` or a glob reads them as one DataFrame
with a ``broker`` column, each task reading one broker's range, and equals each store read on its own
(the stores: :mod:`tests.spark_stores`).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from rocketmq_spec.spark.fixtures import spark  # noqa: F401  (session fixture)
from rocketmq_spec.spark.scan import codec_scan_summary, spark_scan_summary
from rocketmq_spec.spark.store_source import FORMAT
from tests.spark_stores import two_broker_stores

pytestmark = pytest.mark.spark

SPLIT = 16 << 10
"""Small splits, so that each store is several partitions."""


@pytest.fixture(scope="module")
def cluster_stores(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return two_broker_stores(tmp_path_factory.mktemp("cluster-stores"), tmp_path_factory.mktemp("golden"))


def load(spark: SparkSession, paths: str | list[str], **options: str) -> DataFrame:  # noqa: F811
    return spark.read.format(FORMAT).option("splitBytes", str(SPLIT)).options(**options).load(paths)


def test_two_stores_read_as_one_with_a_broker_column(spark: SparkSession,  # noqa: F811
                                                     cluster_stores: tuple[Path, Path]) -> None:
    a, b = cluster_stores
    both = load(spark, [str(a), str(b)])
    assert both.columns[0] == "broker"
    counts = {row.broker: row["count"] for row in both.groupBy("broker").count().collect()}
    assert counts == {"broker-a": codec_scan_summary(a).records, "broker-b": codec_scan_summary(b).records}
    for name, root in (("broker-a", a), ("broker-b", b)):
        alone = load(spark, str(root)).select("physical_offset", "topic", "body")
        mine = both.where(F.col("broker") == name).select("physical_offset", "topic", "body")
        assert sorted(map(tuple, mine.collect())) == sorted(map(tuple, alone.collect()))
    summary = spark_scan_summary(spark, [a, b], split_bytes=SPLIT)
    assert summary.records == counts["broker-a"] + counts["broker-b"]


def test_each_task_reads_one_brokers_range(spark: SparkSession,  # noqa: F811
                                           cluster_stores: tuple[Path, Path]) -> None:
    a, b = cluster_stores
    both = load(spark, [str(a), str(b)])
    alone = [load(spark, str(root)).rdd.getNumPartitions() for root in (a, b)]
    assert both.rdd.getNumPartitions() == sum(alone) and min(alone) > 1
    per_task = both.groupBy(F.spark_partition_id().alias("task")).agg(
        F.countDistinct("broker").alias("brokers")).collect()
    assert len(per_task) == sum(alone) and {row.brokers for row in per_task} == {1}


def test_a_glob_names_the_same_stores_and_names_can_be_given(spark: SparkSession,  # noqa: F811
                                                             cluster_stores: tuple[Path, Path]) -> None:
    a, b = cluster_stores
    pattern = str(a.parent.parent / "broker-*" / "store")
    listed = load(spark, [str(a), str(b)]).groupBy("broker").count()
    assert sorted(map(tuple, load(spark, pattern).groupBy("broker").count().collect())) == sorted(
        map(tuple, listed.collect()))
    named = load(spark, pattern, brokerNames="east,west").select("broker").distinct().collect()
    assert sorted(row.broker for row in named) == ["east", "west"]


def test_stores_that_share_a_name_or_match_nothing_are_refused(spark: SparkSession,  # noqa: F811
                                                               cluster_stores: tuple[Path, Path]) -> None:
    a, _ = cluster_stores
    with pytest.raises(Exception, match="share broker names"):
        load(spark, [str(a), str(a)]).count()
    with pytest.raises(Exception, match="brokerNames must name each"):
        load(spark, [str(a), str(a)], brokerNames="only-one").count()
    with pytest.raises(Exception, match="no store directory matches"):
        load(spark, str(a.parent / "nothing-*")).count()


def test_pushed_filters_apply_to_every_store(spark: SparkSession,  # noqa: F811
                                             cluster_stores: tuple[Path, Path]) -> None:
    a, b = cluster_stores
    where = "topic IN ('GoldenTopicA', 'FillTopic') AND queue_id <= 1"
    plain = load(spark, [str(a), str(b)]).where(where)
    pushed = load(spark, [str(a), str(b)], filterPushdown="true").where(where)
    columns = ("broker", "physical_offset", "topic", "queue_id")
    expected = sorted(map(tuple, plain.select(*columns).collect()))
    assert {row[0] for row in expected} == {"broker-a", "broker-b"}
    assert sorted(map(tuple, pushed.select(*columns).collect())) == expected


def test_a_schema_given_by_the_user_reads_only_its_columns(spark: SparkSession,  # noqa: F811
                                                           cluster_stores: tuple[Path, Path]) -> None:
    a, b = cluster_stores
    narrow = spark.read.format(FORMAT).schema("total_size int, broker string").load([str(a), str(b)])
    assert narrow.columns == ["total_size", "broker"]
    full = load(spark, [str(a), str(b)]).select("total_size", "broker")
    assert sorted(map(tuple, narrow.collect())) == sorted(map(tuple, full.collect()))
    with pytest.raises(Exception, match="typed otherwise"):
        spark.read.format(FORMAT).schema("total_size string").load(str(a)).collect()
