"""Replication between the reference broker and Apache RocketMQ 4.9.8, both ways, and a Java consumer
falling back to a slave. Each test runs only when environment variables point at a Java install or
peers (the project never starts or builds Java itself):

- ``RMQ_JAVA_NAMESRV``, ``RMQ_JAVA_BROKER``, ``RMQ_JAVA_STORE``: a Java master, its name server and its
  store root; a reference slave replicates from it.
- ``RMQ_JAVA_SLAVE``, ``RMQ_JAVA_SLAVE_NAMESRV``, ``RMQ_JAVA_SLAVE_BROKER_NAME``, ``RMQ_JAVA_SLAVE_STORE``: a
  Java slave (brokerId 1) registered with that name server under that brokerName and no master yet; a
  reference master registers there, the slave replicates from it.
- ``RMQ_JAVA_RUN_CLASS``: a command that runs a Java class on the 4.9.8 client classpath (its benchmark
  Consumer consumes from a slave once the master is stopped).

Both stores are then compared with ``rmq-conformance store MASTER --replica SLAVE``.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
import subprocess
import time
from pathlib import Path

import pytest

from codec.custom_header import encode_header
from conformance import cli
from reference_broker.broker.server import Broker
from reference_broker.client import RemotingClient
from reference_broker.config import BrokerConfig
from reference_broker.embedded import EmbeddedMasterSlave
from spec.codes import RequestCode, ResponseCode
from spec.headers import GET_MAX_OFFSET_REQUEST, QUERY_CONSUMER_OFFSET_REQUEST
from tests.messaging_support import pull, send

MESSAGES = 200
QUEUES = 4
REPLICATION_WAIT = 60.0
"""A Java slave learns a new master at its next registration (every 30 s by default), then catches up."""


def _env(*names: str) -> list[str]:
    values = [os.environ.get(name, "") for name in names]
    if not all(values):
        pytest.skip(f"needs {', '.join(names)} (a Java 4.9.8 peer)")
    return values


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
    namesrv, master, master_store = _env("RMQ_JAVA_NAMESRV", "RMQ_JAVA_BROKER", "RMQ_JAVA_STORE")
    topic = f"HaInterop{int(time.time())}"

    async def scenario() -> None:
        cluster_name = await _broker_name(namesrv, master)
        slave = Broker(BrokerConfig(listen_port=0, broker_name=cluster_name, broker_id=1, broker_role="SLAVE",
                                    namesrv_addr=namesrv, store_path_root_dir=str(tmp_path / "slave"),
                                    slave_sync_interval=1000))
        await slave.start()
        try:
            await _send_all(master, topic)
            assert await _eventually(lambda: _queue_total(slave.addr, topic), MESSAGES, 30) == MESSAGES
            sc = await RemotingClient.connect(slave.addr)
            try:
                assert (await _eventually_topic(slave, topic)) and \
                    (await pull(sc, topic, 0, 0)).code == ResponseCode.SUCCESS
            finally:
                await sc.close()
        finally:
            await slave.stop()

    asyncio.run(asyncio.wait_for(scenario(), 90))
    _replica_agrees(Path(master_store), tmp_path / "slave")


async def _eventually_topic(broker: Broker, topic: str) -> bool:
    for _ in range(60):
        if broker.topics.get(topic) is not None:
            return True
        await asyncio.sleep(0.5)
    return False


async def _broker_name(namesrv: str, addr: str) -> str:
    """The brokerName the name server lists ``addr`` under."""
    from codec.bodies import decode_body
    from spec.bodies import CLUSTER_INFO

    client = await RemotingClient.connect(namesrv)
    try:
        answer = await client.invoke(client.request(RequestCode.GET_BROKER_CLUSTER_INFO))
    finally:
        await client.close()
    info = decode_body(CLUSTER_INFO, answer.body or b"{}")
    for name, data in (info.get("brokerAddrTable") or {}).items():
        if addr in (data.get("brokerAddrs") or {}).values():
            return str(name)
    raise AssertionError(f"{addr} is not registered with {namesrv}")


def test_java_slave_of_a_reference_master(tmp_path: Path) -> None:
    slave, namesrv, broker_name, slave_store = _env("RMQ_JAVA_SLAVE", "RMQ_JAVA_SLAVE_NAMESRV",
                                                    "RMQ_JAVA_SLAVE_BROKER_NAME", "RMQ_JAVA_SLAVE_STORE")
    topic = f"HaInterop{int(time.time())}"
    master_store = tmp_path / "master"

    async def scenario() -> None:
        master = Broker(BrokerConfig(listen_port=0, broker_name=broker_name, namesrv_addr=namesrv,
                                     store_path_root_dir=str(master_store)))
        await master.start()
        try:
            await _send_all(master.addr, topic)
            replicated = await _eventually(lambda: _queue_total(slave, topic), MESSAGES, REPLICATION_WAIT)
            assert replicated == MESSAGES
        finally:
            await master.stop()

    asyncio.run(asyncio.wait_for(scenario(), REPLICATION_WAIT + 30))
    _replica_agrees(master_store, Path(slave_store))


def test_java_consumer_falls_back_to_a_reference_slave(tmp_path: Path) -> None:
    (run_class,) = _env("RMQ_JAVA_RUN_CLASS")
    topic, group = f"HaFallback{int(time.time())}", f"ha_fallback_{int(time.time())}"
    pair = EmbeddedMasterSlave(tmp_path, master_config={"ha_send_heartbeat_interval": 500,
                                                        "slave_sync_interval": 500})

    async def start() -> None:
        await pair.start()
        await _send_all(pair.master_addr, topic)
        await pair.wait_replicated()
        assert await _eventually_topic(pair.slave, topic)
        await pair.stop_master()

    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(asyncio.wait_for(start(), 60))
        command = [*shlex.split(run_class), "org.apache.rocketmq.example.benchmark.Consumer",
                   "-n", pair.namesrv_addr, "-t", topic, "-g", group, "-w", "2"]
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
