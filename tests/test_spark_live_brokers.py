"""The live source over a cluster of brokers: every broker of a topic's route in one stream (a
reference master-slave set and a second reference broker; in the long form an Apache RocketMQ 5.5.0
broker joined to the same name server), the slave read while its master is gone, and a copy job whose
driver is killed with ``kill -9`` and restarted from its checkpoint.

Delivery of the copy is at-least-once, and each copy keeps its source message's UNIQ_KEY: the audit
finds nothing lost, nothing reordered within a queue, at most the killed batch sent twice, and every
message once when repeated UNIQ_KEYs are dropped, as a RocketMQ consumer is told to.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import Row, SparkSession

from rocketmq_spec.apache import ApacheRocketMQ
from rocketmq_spec.reference_broker.config import BrokerConfig
from rocketmq_spec.reference_broker.embedded import SyncEmbeddedMasterSlave, SyncEmbeddedRocketMQ
from rocketmq_spec.spark import broker_api as api
from rocketmq_spec.spark.audit import audit
from rocketmq_spec.spark.fixtures import spark  # noqa: F401  (session fixture)
from rocketmq_spec.spark.live_source import FORMAT
from rocketmq_spec.spark.traffic import drain, produce
from rocketmq_spec.spark.wire import WireClient

pytestmark = pytest.mark.spark

QUEUES = 4
MESSAGES = 48
PER_TRIGGER = 12
APACHE_VERSION = "5.5.0"
DRIVER_TIMEOUT = 900.0
ROUTE_WAIT = 60.0

COPY_DRIVER = """
import sys
from rocketmq_spec.spark.copy_job import copy_topic
from rocketmq_spec.spark.session import local_session

namesrv, source, target, checkpoint, per_trigger = sys.argv[1:]
spark = local_session(1, app_name="copy-driver")
copy_topic(spark, namesrv=namesrv, source=source, target=target, group="copy-driver", checkpoint=checkpoint,
           max_per_trigger=int(per_trigger))
spark.stop()
"""
"""A copy job's driver, run as a process of its own so that it can be killed."""


def body(n: int) -> bytes:
    return f"live message {n}".encode()


def create_topic(namesrv: str, brokers: list[str], topic: str) -> None:
    for addr in brokers:
        with WireClient(addr) as client:
            api.create_topic(client, topic, QUEUES)
    with WireClient(namesrv) as ns:
        api.await_route(ns, topic, QUEUES * len(brokers))


def read_topic(spark: SparkSession, namesrv: str, topic: str, checkpoint: Path,  # noqa: F811
               name: str) -> list[Row]:
    query = (spark.readStream.format(FORMAT).option("namesrv", namesrv).option("topic", topic)
             .option("group", name).load().writeStream.format("memory").queryName(name)
             .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start())
    query.awaitTermination()
    return spark.table(name).collect()


def routed_to(namesrv: str, topic: str, broker: str, addr: str) -> None:
    """Wait until the name server routes ``broker``'s queues of ``topic`` to ``addr``."""
    deadline = time.monotonic() + ROUTE_WAIT
    with WireClient(namesrv) as ns:
        while {r.broker_addr for r in api.topic_route(ns, topic) if r.broker_name == broker} != {addr}:
            assert time.monotonic() < deadline, f"{broker} of {topic} is not routed to {addr}"
            time.sleep(0.2)


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[SyncEmbeddedMasterSlave]:
    with SyncEmbeddedMasterSlave(tmp_path / "pair") as running:
        yield running


def joined(pair: SyncEmbeddedMasterSlave, root: Path, name: str) -> SyncEmbeddedRocketMQ:
    return SyncEmbeddedRocketMQ(broker_config=BrokerConfig(
        listen_port=0, broker_name=name, namesrv_addr=pair.namesrv_addr, store_path_root_dir=str(root)))


def test_one_stream_reads_every_broker_and_a_slave_whose_master_is_gone(
        spark: SparkSession, pair: SyncEmbeddedMasterSlave, tmp_path: Path) -> None:  # noqa: F811
    with joined(pair, tmp_path / "broker-b", "broker-b") as other:
        create_topic(pair.namesrv_addr, [pair.master_addr, other.broker_addr], "LiveAll")
        sent = produce(pair.namesrv_addr, "LiveAll", MESSAGES, body)
        pair.wait_replicated()
        rows = read_topic(spark, pair.namesrv_addr, "LiveAll", tmp_path / "first", "live_first")
        assert sorted(row.keys for row in rows) == sorted(message.key for message in sent)
        assert Counter(row.broker for row in rows) == {"broker-a": MESSAGES // 2, "broker-b": MESSAGES // 2}

        slave = pair.slave_addr
        pair.stop_master()
        routed_to(pair.namesrv_addr, "LiveAll", "broker-a", slave)
        again = read_topic(spark, pair.namesrv_addr, "LiveAll", tmp_path / "second", "live_second")
        assert sorted((row.broker, row.keys, row.body) for row in again) == sorted(
            (row.broker, row.keys, row.body) for row in rows)


def run_driver(namesrv: str, checkpoint: Path, log: Path) -> subprocess.Popen[bytes]:
    """The copy of KilledSource to KilledTarget, in a process group of its own (its JVM included)."""
    command = [sys.executable, "-c", COPY_DRIVER, namesrv, "KilledSource", "KilledTarget", str(checkpoint),
               str(PER_TRIGGER)]
    with log.open("ab") as out:
        return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


@pytest.mark.slow
def test_a_copy_over_reference_and_apache_brokers_survives_a_killed_driver(
        pair: SyncEmbeddedMasterSlave, tmp_path: Path) -> None:
    apache_broker = ApacheRocketMQ(APACHE_VERSION, namesrv=pair.namesrv_addr,
                                   broker_config={"brokerName": "broker-apache"})
    with joined(pair, tmp_path / "broker-b", "broker-b") as other, apache_broker as apache:
        brokers = [pair.master_addr, other.broker_addr, apache.broker_addr]
        for topic in ("KilledSource", "KilledTarget"):
            create_topic(pair.namesrv_addr, brokers, topic)
        sent = produce(pair.namesrv_addr, "KilledSource", MESSAGES, body)
        assert {message.queue.split("/")[0] for message in sent} == {"broker-a", "broker-b", "broker-apache"}
        source = {record.keys[0]: record.uniq_key
                  for _, record in drain(pair.namesrv_addr, "KilledSource", "auditor")}
        assert len(source) == MESSAGES

        checkpoint, log = tmp_path / "checkpoint", tmp_path / "driver.log"
        first = run_driver(pair.namesrv_addr, checkpoint, log)
        deadline = time.monotonic() + DRIVER_TIMEOUT
        while not (checkpoint / "commits" / "0").exists():
            assert first.poll() is None, log.read_text()[-3000:]
            assert time.monotonic() < deadline, "the first batch was never committed"
            time.sleep(0.1)
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
        second = run_driver(pair.namesrv_addr, checkpoint, log)
        assert second.wait(DRIVER_TIMEOUT) == 0, log.read_text()[-3000:]

        drained = drain(pair.namesrv_addr, "KilledTarget", "auditor")
    report = audit(sent, [arrived for arrived, _ in drained])
    assert report.ok and report.duplicates <= PER_TRIGGER, report.summary()
    ids = {record.uniq_key for _, record in drained}
    assert ids == set(source.values()), "every copy keeps its source message's UNIQ_KEY"
    assert all(record.uniq_key == source[arrived.key] for arrived, record in drained)
