"""``format("rocketmq-store")`` on the store a Java 4.9.8 broker wrote, against the broker's own record
of what it delivered (the golden manifest) and against the single-process codec scan."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import PythonException
from pyspark.sql import DataFrame, SparkSession

from rocketmq_spec.codec.store import IndexFile, StoreDirectory
from rocketmq_spec.spark.fixtures import extract_store, spark  # noqa: F401  (session fixture)
from rocketmq_spec.spark.store_plan import commitlog_splits, starts_record
from rocketmq_spec.spark.store_source import FORMAT
from rocketmq_spec.spec.commitlog import MAGIC_POSITION, RMQ_CL_MAGIC
from rocketmq_spec.spec.golden import STORE_MANIFEST, STORE_TARBALL

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def golden_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return extract_store(STORE_TARBALL, tmp_path_factory.mktemp("spark-golden"))


@pytest.fixture(scope="module")
def consumed() -> list[dict[str, Any]]:
    manifest = json.loads(STORE_MANIFEST.read_text())
    return [m for group in manifest["consumed"].values() for m in group]


def read(spark: SparkSession, root: Path, **options: str) -> DataFrame:  # noqa: F811
    return spark.read.format(FORMAT).options(**options).load(str(root))


def test_rows_carry_what_the_java_broker_delivered(spark: SparkSession, golden_store: Path,  # noqa: F811
                                                   consumed: list[dict[str, Any]]) -> None:
    rows = {r.physical_offset: r for r in read(spark, golden_store, decompress="true").collect()}
    assert consumed
    for message in consumed:
        row = rows[message["commitLogOffset"]]
        assert (row.topic, row.queue_id, row.queue_offset) == (
            message["topic"], message["queueId"], message["queueOffset"])
        assert (row.total_size, row.sys_flag, row.body_crc, row.flag, row.reconsume_times) == (
            message["storeSize"], message["sysFlag"], message["bodyCRC"], message["flag"],
            message["reconsumeTimes"])
        assert (row.born_timestamp, row.store_timestamp) == (
            message["bornTimestamp"], message["storeTimestamp"])
        assert (row.born_host, row.store_host) == (message["bornHost"][1:], message["storeHost"][1:])
        assert row.prepared_transaction_offset == message["preparedTransactionOffset"]
        assert row.offset_msg_id == message["offsetMsgId"]
        assert row.uniq_key == message["properties"].get("UNIQ_KEY")
        assert (row.tags, row.keys) == (message.get("tags"), message.get("keys"))
        assert dict(row.properties) == message["properties"]
        assert row.body == base64.b64decode(message["body_b64"])
        assert row.crc_ok and row.error is None


def test_scan_equals_the_codec_scan_whatever_the_split_size(spark: SparkSession,  # noqa: F811
                                                            golden_store: Path) -> None:
    with StoreDirectory(golden_store) as store:
        expected = [(r.physical_offset, r.total_size, r.topic, r.body)
                    for r in store.messages(verify_crc=False)]
    whole = read(spark, golden_store)
    split = read(spark, golden_store, splitBytes="1024")
    assert split.rdd.getNumPartitions() > whole.rdd.getNumPartitions() == 1
    for frame in (whole, split):
        columns = frame.select("physical_offset", "total_size", "topic", "body")
        got = columns.orderBy("physical_offset").collect()
        assert [tuple(r) for r in got] == expected


def test_bodies_are_stored_bytes_unless_decompression_is_asked(spark: SparkSession,  # noqa: F811
                                                               golden_store: Path) -> None:
    stored = read(spark, golden_store).where("sys_flag & 1 = 1")
    rows = stored.select("physical_offset", "body", "body_size").collect()
    assert len(rows) == 5  # 3 ZLIB, 1 LZ4, 1 ZSTD in the golden data
    with StoreDirectory(golden_store) as store:
        for row in rows:
            record = store.read(row.physical_offset)
            assert row.body == record.body and row.body_size == len(record.body)
            assert record.application_body != record.body


def test_consume_queue_table_equals_the_queue_files(spark: SparkSession, golden_store: Path) -> None:  # noqa: F811
    got = read(spark, golden_store, table="consumequeue").collect()
    with StoreDirectory(golden_store) as store:
        expected = sorted(
            (topic, queue_id, queue.first_offset + n, int(e["commitlog_offset"]), int(e["size"]),
             int(e["tags_code"]))
            for topic, queue_id in store.queues() for queue in [store.queue(topic, queue_id)]
            for n, e in enumerate(queue.entries))
    assert sorted(tuple(r) for r in got) == expected
    assert len(expected) > 40


def test_index_table_equals_the_index_entries(spark: SparkSession, golden_store: Path) -> None:  # noqa: F811
    got = read(spark, golden_store, table="index").collect()
    with StoreDirectory(golden_store) as store:
        (path,) = store.index_files()
    with IndexFile(path) as index:
        expected = [(path.name, e.index, e.key_hash, e.phy_offset, e.time_diff, e.prev_index,
                     index.header.begin_timestamp) for e in index.entries()]
    assert sorted(tuple(r) for r in got) == expected


def test_splits_begin_only_where_a_record_begins(golden_store: Path) -> None:
    with StoreDirectory(golden_store) as store:
        first, second = list(store.messages())[:2]
        assert starts_record(store, second.physical_offset)
        assert not starts_record(store, second.physical_offset + 1)
        assert not starts_record(store, first.physical_offset + first.total_size // 2)
        for source in ("consumequeue", "index"):
            splits = commitlog_splits(store, 2048, source)
            assert len(splits) > 3
            assert all(starts_record(store, s.start) for s in splits)


@pytest.fixture
def broken_store(golden_store: Path, tmp_path: Path) -> tuple[Path, int]:
    """A sparse copy of the golden store with the magic of its tenth record overwritten."""
    target = tmp_path / "broken"
    subprocess.run(["cp", "-r", "--sparse=always", str(golden_store), str(target)], check=True)
    with StoreDirectory(target) as store:
        victim = list(store.messages())[9]
    (segment,) = sorted((target / "commitlog").iterdir())
    with segment.open("r+b") as handle:
        handle.seek(victim.physical_offset + MAGIC_POSITION)
        handle.write(b"\x00\x00\x00\x01")
    return target, victim.physical_offset


def test_malformed_record_ends_the_split_with_an_error_row(spark: SparkSession,  # noqa: F811
                                                           broken_store: tuple[Path, int]) -> None:
    root, offset = broken_store
    rows = read(spark, root, onError="row").collect()
    errors = [r for r in rows if r.error is not None]
    assert [(r.physical_offset, r.error_clause) for r in errors] == [(offset, RMQ_CL_MAGIC.id)]
    assert "0x1" in errors[0].error
    assert len(rows) == 10
    with pytest.raises(PythonException, match=RMQ_CL_MAGIC.id):
        read(spark, root).collect()
    shutil.rmtree(root)


def test_unknown_option_values_are_refused(spark: SparkSession, golden_store: Path) -> None:  # noqa: F811
    for options in ({"table": "commitlog"}, {"decompress": "yes"}, {"splitBytes": "0"}):
        with pytest.raises(Exception, match="must be"):
            read(spark, golden_store, **options).collect()
