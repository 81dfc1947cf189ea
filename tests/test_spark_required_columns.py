"""Required columns read off the optimized plan: a query over ``store_query`` reads only the columns it
uses and gives the rows the same query gives over a full-width read."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from rocketmq_spec.spark.fixtures import extract_store, spark  # noqa: F401  (session fixture)
from rocketmq_spec.spark.required_columns import FALLBACK_COLUMN, required_columns, store_query
from rocketmq_spec.spark.store_source import FORMAT
from rocketmq_spec.spec.golden import STORE_TARBALL

pytestmark = pytest.mark.spark

QUERIES: dict[str, tuple[Callable[[DataFrame], DataFrame], tuple[str, ...]]] = {
    "count": (lambda m: m.groupBy().count(), (FALLBACK_COLUMN,)),
    "per queue": (lambda m: m.where(F.col("topic") == "GoldenTopicA").groupBy("queue_id")
                  .agg(F.sum("body_size").alias("bytes")), ("topic", "queue_id", "body_size")),
    "bodies": (lambda m: m.select(F.upper(F.col("body").cast("string")).alias("text"), "physical_offset"),
               ("physical_offset", "body")),
    "tags": (lambda m: m.where("tags IS NOT NULL").select("tags", "properties"),
             ("tags", "properties")),
}


@pytest.fixture(scope="module")
def golden_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return extract_store(STORE_TARBALL, tmp_path_factory.mktemp("spark-required"))


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_the_plan_names_the_columns_a_query_uses(spark: SparkSession, golden_store: Path,  # noqa: F811
                                                 name: str) -> None:
    query, expected = QUERIES[name]
    full = query(spark.read.format(FORMAT).load(str(golden_store)))
    assert required_columns(full) == expected
    pruned = store_query(spark, golden_store, query)
    assert sorted(map(repr, pruned.collect())) == sorted(map(repr, full.collect()))


@pytest.mark.parametrize("where", ["store_timestamp >= 0", "topic = 'GoldenTopicA' AND queue_id < 2"])
def test_pushed_filters_work_on_the_columns_a_query_uses(spark: SparkSession, golden_store: Path,  # noqa: F811
                                                         where: str) -> None:
    def query(messages: DataFrame) -> DataFrame:
        return messages.where(where).groupBy().agg(F.sum("total_size"))

    pushed = store_query(spark, golden_store, query, filterPushdown="true").collect()
    assert pushed == query(spark.read.format(FORMAT).load(str(golden_store))).collect()


def test_a_plan_without_a_store_read_names_nothing(spark: SparkSession) -> None:  # noqa: F811
    assert required_columns(spark.range(3)) is None
