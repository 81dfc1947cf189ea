"""``rmq-spark export DIR --to parquet OUT``: the store's rows as Parquet, partitioned by topic and UTC
date, read back by Spark's own Parquet reader equal to the rows the store source gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from rocketmq_spec.spark.cli import main
from rocketmq_spec.spark.export import DATE_COLUMN
from rocketmq_spec.spark.fixtures import extract_store, spark  # noqa: F401  (session fixture)
from rocketmq_spec.spark.store_source import FORMAT
from rocketmq_spec.spec.golden import STORE_TARBALL

pytestmark = pytest.mark.spark

COMPARED = ("physical_offset", "topic", "queue_id", "queue_offset", "store_timestamp", "tags", "body")


@pytest.fixture(scope="module")
def golden_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return extract_store(STORE_TARBALL, tmp_path_factory.mktemp("spark-export"))


def test_export_writes_every_record_under_its_topic_and_date(spark: SparkSession,  # noqa: F811
                                                            golden_store: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "parquet"
    assert main(["export", str(golden_store), "--to", "parquet", str(out)]) == 0
    summary = json.loads(capsys.readouterr().out)
    store = spark.read.format(FORMAT).load(str(golden_store))
    exported = spark.read.parquet(str(out))
    assert summary["records"] == exported.count() == store.count()
    topics = {row.topic for row in store.select("topic").distinct().collect()}
    assert {p.name for p in out.iterdir() if p.is_dir()} == {f"topic={t}" for t in topics}
    assert summary["partitions"] == len(list(out.glob("topic=*/date=*")))
    assert sorted(map(tuple, exported.select(*COMPARED).collect())) == sorted(
        map(tuple, store.select(*COMPARED).collect()))
    days = exported.select((F.unix_date(DATE_COLUMN) == F.floor(F.col("store_timestamp") / 86_400_000))
                           .alias("same")).distinct().collect()
    assert [row.same for row in days] == [True]


def test_bad_export_requests_exit_2_before_any_work(golden_store: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", str(golden_store), "--to", "csv", str(tmp_path / "out")]) == 2
    assert main(["export", str(golden_store), "--to", "parquet", str(tmp_path)]) == 2
    assert main(["export", str(tmp_path / "nothing"), "--to", "parquet", str(tmp_path / "out")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 3
    assert not (tmp_path / "out").exists()
