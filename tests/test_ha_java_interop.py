"""Replication between the reference broker and Apache RocketMQ, both ways, and a Java consumer falling back
to a slave. The Java side is a 4.x release provisioned from Maven Central (:data:`JAVA_RELEASE`); skipped
where Java or Maven is missing.

- A reference slave replicates from a Java master (registered with the master's name server).
- A Java slave (brokerId 1, no master yet) replicates from a reference master that registers with the
  slave's name server.
- A Java push consumer (the project's ``Consume`` driver) consumes from a reference slave once its master
  stopped.

Both stores are then compared with ``rmq-conformance store MASTER --replica SLAVE``.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time
from pathlib import Path

from rocketmq_spec.apache import ApacheRocketMQ
from rocketmq_spec.apache.pytest_plugin import running_or_skip
from rocketmq_spec.codec.custom_header import encode_header
from rocketmq_spec.conformance import cli
from rocketmq_spec.reference_broker.broker.server import Broker
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.config import BrokerConfig
from rocketmq_spec.reference_broker.embedded import EmbeddedMasterSlave
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.headers import GET_MAX_OFFSET_REQUEST, QUERY_CONSUMER_OFFSET_REQUEST
from tests.java_clients import FOUR_X, driver
from tests.messaging_support import pull, send

MESSAGES = 200
QUEUES = 4
REPLICATION_WAIT = 60.0
"""A Java slave learns a new master at its next registration (every registerNameServerPeriod), then catches
up."""
JAVA_RELEASE = FOUR_X
"""The line whose HA protocol the reference broker speaks."""
SLAVE_SETTINGS = {"brokerId": 1, "brokerRole": "SLAVE", "registerNameServerPeriod": 10000}
"""10 s, the shortest period 4.x accepts, so the slave finds its master sooner than the default 30 s."""


async def _send_all(addr: str, topic: str) -> None:
    client = await RemotingClient.connect(addr)
    try:
        for i in range(MESSAGES):
            answer = await send(client, topic, bytes([i % 251]) * 300, {"KEYS": f"k{i}", "WAIT": "true"},
                                queue_id=i % QUEUES)
            assert answer.code == ResponseCode.SUCCESS, (answer.code, answer.remark)
    finally:
        await client.close()


async def _queue_total(addr: str, topic: str, code: int = RequestCode.GET_MAX_OFFSET,
                       group: str | None = None) -> int:
    client = await RemotingClient.connect(addr)
    try:
        total = 0
        for queue_id in range(QUEUES):
            if group is None:
                fields = encode_header(GET_MAX_OFFSET_REQUEST, {"topic": topic, "queueId": queue_id})
            else:
                fields = encode_header(QUERY_CONSUMER_OFFSET_REQUEST,
                                       {"consumerGroup": group, "topic": topic, "queueId": queue_id})
            answer = await client.invoke(client.request(code, fields))
            if answer.code == ResponseCode.SUCCESS:
                total += int((answer.ext_fields or {}).get("offset", 0))
        return total
    finally:
        await client.close()


async def _eventually(probe: object, wanted: int, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    seen = -1
    while time.monotonic() < deadline:
        seen = await probe()  # type: ignore[operator]
        if seen >= wanted:
            return seen
        await asyncio.sleep(0.5)
    return seen


def _replica_agrees(master: Path, replica: Path) -> None:
    assert cli.main(["store", str(master), "--replica", str(replica), "-k", "replica", "-n", "0"]) == 0


def test_reference_slave_of_a_java_master(tmp_path: Path) -> None:
    topic = f"HaInterop{int(time.time())}"

    async def scenario(java: ApacheRocketMQ) -> None:
        slave = Broker(BrokerConfig(listen_port=0, broker_name=java.broker_name, broker_id=1,
                                    broker_role="SLAVE", namesrv_addr=java.namesrv_addr,
                                    store_path_root_dir=str(tmp_path / "slave"), slave_sync_interval=1000))
        await slave.start()
        try:
            await _send_all(java.broker_addr, topic)
            assert await _eventually(lambda: _queue_total(slave.addr, topic), MESSAGES, 30) == MESSAGES
            sc = await RemotingClient.connect(slave.addr)
            try:
                assert (await _eventually_topic(slave, topic)) and \
                    (await pull(sc, topic, 0, 0)).code == ResponseCode.SUCCESS
            finally:
                await sc.close()
        finally:
            await slave.stop()

    with running_or_skip(JAVA_RELEASE, tmp_path / "java") as java:
        asyncio.run(asyncio.wait_for(scenario(java), 90))
        master_store = java.store_path
        java.stop_broker()  # flushed and closed, as the store check reads it
        _replica_agrees(master_store, tmp_path / "slave")


async def _eventually_topic(broker: Broker, topic: str) -> bool:
    for _ in range(60):
        if broker.topics.get(topic) is not None:
            return True
        await asyncio.sleep(0.5)
    return False


def test_java_slave_of_a_reference_master(tmp_path: Path) -> None:
    topic = f"HaInterop{int(time.time())}"
    master_store = tmp_path / "master"

    async def scenario(slave: ApacheRocketMQ) -> None:
        master = Broker(BrokerConfig(listen_port=0, broker_name=slave.broker_name,
                                     namesrv_addr=slave.namesrv_addr, store_path_root_dir=str(master_store)))
        await master.start()
        try:
            await _send_all(master.addr, topic)
            replicated = await _eventually(lambda: _queue_total(slave.broker_addr, topic), MESSAGES,
                                           REPLICATION_WAIT)
            assert replicated == MESSAGES
        finally:
            await master.stop()

    with running_or_skip(JAVA_RELEASE, tmp_path / "java", SLAVE_SETTINGS) as java:
        asyncio.run(asyncio.wait_for(scenario(java), REPLICATION_WAIT + 30))
        slave_store = java.store_path
        java.stop_broker()
        _replica_agrees(master_store, slave_store)


def test_java_consumer_falls_back_to_a_reference_slave(tmp_path: Path) -> None:
    topic, group = f"HaFallback{int(time.time())}", f"ha_fallback_{int(time.time())}"
    pair = EmbeddedMasterSlave(tmp_path, master_config={"ha_send_heartbeat_interval": 500,
                                                        "slave_sync_interval": 500})

    async def start() -> None:
        await pair.start()
        await _send_all(pair.master_addr, topic)
        await pair.wait_replicated()
        assert pair.slave is not None
        assert await _eventually_topic(pair.slave, topic)
        await pair.stop_master()

    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(asyncio.wait_for(start(), 60))
        command = driver(JAVA_RELEASE, "Consume", pair.namesrv_addr, topic, group, "120",
                         home=tmp_path / "java")
        consumer = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    start_new_session=True)
        try:
            consumed = loop.run_until_complete(
                _eventually(lambda: _queue_total(pair.slave_addr, topic, RequestCode.QUERY_CONSUMER_OFFSET,
                                                 group), MESSAGES, 60))
        finally:
            os.killpg(consumer.pid, signal.SIGTERM)
            consumer.wait(30)
        assert consumed == MESSAGES
    finally:
        loop.run_until_complete(pair.stop())
        loop.close()
