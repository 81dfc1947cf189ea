"""End to end: messages produced to the reference broker, copied topic to topic by a Spark streaming job
over the wire, then drained and audited for lost, duplicated and reordered messages."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest
from pyspark.errors import StreamingQueryException
from pyspark.sql import SparkSession

from rocketmq_spec.reference_broker.embedded import SyncEmbeddedRocketMQ
from rocketmq_spec.spark import broker_api as api
from rocketmq_spec.spark.audit import audit
from rocketmq_spec.spark.copy_job import SOURCE_OFFSET_PROPERTY, copy_topic, transform_body
from rocketmq_spec.spark.fixtures import spark  # noqa: F401  (session fixture)
from rocketmq_spec.spark.traffic import drain, prepare_topic, produce
from rocketmq_spec.spark.wire import WireClient
from tests.spark_chaos import FORMAT as CRASH_FORMAT
from tests.spark_chaos import CrashOnceDataSource

pytestmark = pytest.mark.spark

QUEUES = 4
GROUP = "copy-job"
FIRST, SECOND = 40, 10
"""Messages of the first run and of the resumed one: two micro-batches of at most PER_TRIGGER, then one
more after the restart, every queue holding several messages."""
PER_TRIGGER = 25
CRASH_MESSAGES, CRASH_PER_TRIGGER = 30, 12
"""The crash run: the second batch of 12 is sent and then the query crashes, so a restart replays it."""


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SyncEmbeddedRocketMQ]:
    with SyncEmbeddedRocketMQ(tmp_path_factory.mktemp("copy-broker") / "store") as running:
        yield running


def body(n: int) -> bytes:
    return f"message number {n}".encode()


def topics(broker: SyncEmbeddedRocketMQ, *names: str) -> None:
    for name in names:
        prepare_topic(broker.namesrv_addr, broker.broker_addr, name, QUEUES)


def committed(broker: SyncEmbeddedRocketMQ, topic: str) -> list[int | None]:
    with WireClient(broker.broker_addr) as client:
        return [api.committed_offset(client, GROUP, topic, q) for q in range(QUEUES)]


def test_copy_loses_nothing_keeps_queue_order_and_resumes(spark: SparkSession,  # noqa: F811
                                                          broker: SyncEmbeddedRocketMQ,
                                                          tmp_path: Path) -> None:
    topics(broker, "CopySourceA", "CopyTargetA")
    sent = produce(broker.namesrv_addr, "CopySourceA", FIRST, body)
    run = partial(copy_topic, spark, namesrv=broker.namesrv_addr, source="CopySourceA", target="CopyTargetA",
                  group=GROUP, checkpoint=tmp_path / "checkpoint", max_per_trigger=PER_TRIGGER)
    run()
    sent += produce(broker.namesrv_addr, "CopySourceA", SECOND, body, first=FIRST)
    run()

    drained = drain(broker.namesrv_addr, "CopyTargetA", "auditor")
    report = audit(sent, [arrived for arrived, _ in drained])
    assert report.ok, report.summary()
    total = FIRST + SECOND
    assert (report.sent, report.arrived, report.duplicates) == (total, total, 0)
    originals = {s.key: int(s.key.rsplit("-", 1)[1]) for s in sent}
    for arrived, record in drained:
        assert record.body == transform_body(body(originals[arrived.key]))
        assert record.queue_id == int(arrived.queue.rsplit("/", 1)[1])
    assert committed(broker, "CopySourceA") == [total // QUEUES + (q < total % QUEUES) for q in range(QUEUES)]


def test_crash_after_a_sent_batch_duplicates_exactly_that_batch(spark: SparkSession,  # noqa: F811
                                                                broker: SyncEmbeddedRocketMQ,
                                                                tmp_path: Path) -> None:
    topics(broker, "CopySourceB", "CopyTargetB")
    sent = produce(broker.namesrv_addr, "CopySourceB", CRASH_MESSAGES, body)
    marker = tmp_path / "crashed"
    spark.dataSource.register(CrashOnceDataSource)
    run = partial(copy_topic, spark, namesrv=broker.namesrv_addr, source="CopySourceB", target="CopyTargetB",
                  group=GROUP, checkpoint=tmp_path / "checkpoint", max_per_trigger=CRASH_PER_TRIGGER,
                  sink_format=CRASH_FORMAT, sink_options={"crashMarker": str(marker), "crashBatch": "1"})
    with pytest.raises(StreamingQueryException, match="injected crash after batch 1"):
        run()
    replayed = int(marker.read_text())
    run()

    drained = drain(broker.namesrv_addr, "CopyTargetB", "auditor")
    report = audit(sent, [arrived for arrived, _ in drained])
    assert report.ok, report.summary()
    assert replayed == CRASH_PER_TRIGGER and report.duplicates == replayed
    assert report.arrived == CRASH_MESSAGES + replayed
    copies = [(arrived.key, record.properties[SOURCE_OFFSET_PROPERTY]) for arrived, record in drained
              if arrived.key in report.duplicated]
    assert len(copies) == 2 * replayed and len(set(copies)) == replayed, "a replay copies the same messages"


def test_batch_sink_sends_rows_with_their_columns(spark: SparkSession,  # noqa: F811
                                                  broker: SyncEmbeddedRocketMQ) -> None:
    topics(broker, "SinkTarget")
    rows = [(f"body {n}", f"sink-{n}", "TagS", n % 2, {"origin": "batch"}) for n in range(10)]
    frame = spark.createDataFrame(rows, "body string, keys string, tags string, queue_id int, "
                                        "properties map<string,string>")
    frame.write.format("rocketmq").option("namesrv", broker.namesrv_addr).option("topic", "SinkTarget") \
        .mode("append").save()
    drained = {arrived.key: (arrived.queue, record) for arrived, record in
               drain(broker.namesrv_addr, "SinkTarget", "auditor")}
    assert sorted(drained) == sorted(f"sink-{n}" for n in range(10))
    for n in range(10):
        queue, record = drained[f"sink-{n}"]
        assert (record.body, record.tags, record.queue_id) == (f"body {n}".encode(), "TagS", n % 2)
        assert record.properties["origin"] == "batch" and record.uniq_key
        assert queue.endswith(f"/{n % 2}")
