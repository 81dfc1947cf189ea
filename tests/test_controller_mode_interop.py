"""The reference broker in controller mode beside Apache RocketMQ 5.5.0 brokers, under Apache's controller
(in its name server): it registers, takes the role the controller gives it and replicates through the
auto-switch HA stream. Skipped where Java or Maven is missing; slow (starts JVMs)."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest

from rocketmq_spec.apache import ApacheRocketMQ
from rocketmq_spec.apache.pytest_plugin import running_or_skip
from rocketmq_spec.codec.bodies import decode_body
from rocketmq_spec.codec.custom_header import decode_header, encode_header
from rocketmq_spec.codec.store.epoch_file import read_epochs
from rocketmq_spec.reference_broker.broker.server import Broker
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.config import BrokerConfig
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.controller import GET_REPLICA_INFO_REQUEST, GET_REPLICA_INFO_RESPONSE, SYNC_STATE_SET
from rocketmq_spec.spec.epoch_file import EPOCH_FILE_NAME
from rocketmq_spec.spec.ha import BrokerRole
from rocketmq_spec.spec.store_layout import COMMITLOG_DIR
from rocketmq_spec.targets.reference import ReferenceServers
from tests.messaging_support import send
from tests.test_ha_java_interop import _eventually, _queue_total, _replica_agrees, _send_all

pytestmark = pytest.mark.slow

RELEASE = "5.5.0"
MESSAGES = 200
APACHE_SLAVE_ID = "2"
"""The id the controller gives the Apache broker, second of its set: the name server lists it under it."""
REFERENCE_ID = 1
"""The reference broker's id, first of its set: it registers under it once it is a slave."""
T = TypeVar("T")
CHUNK = 1024 * 1024


def _controller_broker(java: ApacheRocketMQ, store: Path, broker_name: str | None = None) -> Broker:
    return Broker(BrokerConfig(listen_port=0, broker_name=broker_name or java.broker_name,
                               broker_cluster_name=java.broker_config["brokerClusterName"],
                               namesrv_addr=java.namesrv_addr, store_path_root_dir=str(store),
                               enable_controller_mode=True, controller_addr=java.controller_addr,
                               slave_sync_interval=1000))


def _same_commitlog(master: Path, replica: Path) -> int:
    """The replica's first CommitLog file is the master's, byte for byte, up to the first MiB the master
    holds nothing in (so the replica holds nothing more either); returns where that MiB starts."""
    first = "0" * 20
    with (master / COMMITLOG_DIR / first).open("rb") as m, (replica / COMMITLOG_DIR / first).open("rb") as r:
        compared = 0
        while True:
            mine, theirs = m.read(CHUNK), r.read(CHUNK)
            assert mine == theirs, f"the CommitLogs differ in the MiB at {compared}"
            if not mine.strip(b"\0"):
                return compared
            compared += len(mine)


def test_reference_slave_of_an_apache_master(tmp_path: Path) -> None:
    topic = f"CtlSlave{int(time.time())}"
    store = tmp_path / "reference"
    seen: dict[str, object] = {}

    async def scenario(java: ApacheRocketMQ) -> None:
        await _send_all(java.broker_addr, topic)  # before the slave exists: caught up through the handshake
        slave = _controller_broker(java, store)
        await slave.start()
        try:
            assert await _eventually(lambda: _queue_total(slave.addr, topic), MESSAGES, 60) == MESSAGES
            await _send_all(java.broker_addr, topic)
            assert await _eventually(lambda: _queue_total(slave.addr, topic), 2 * MESSAGES, 60) \
                == 2 * MESSAGES
            assert slave.config.role is BrokerRole.SLAVE and slave.config.broker_id >= 1
            assert slave.store is not None
            seen["end"] = slave.store.max_phy_offset
        finally:
            await slave.stop()

    with running_or_skip(RELEASE, tmp_path / "java", controller=True) as java:
        asyncio.run(asyncio.wait_for(scenario(java), 180))
        master_store = java.store_path
        java.stop_broker()
        _replica_agrees(master_store, store)
        end = seen["end"]
        assert isinstance(end, int) and end > 0
        assert _same_commitlog(master_store, store) >= end
        master_epochs, replica_epochs = read_epochs(master_store), read_epochs(store)
        assert master_epochs is not None and replica_epochs is not None
        assert replica_epochs.entries == master_epochs.entries == ((1, 0),)
        assert (store / EPOCH_FILE_NAME).read_bytes() == (master_store / EPOCH_FILE_NAME).read_bytes()


def test_apache_slave_of_a_reference_master(tmp_path: Path) -> None:
    """The reference broker is the first of its broker-set, so the controller elects it; an Apache broker
    of the same set then joins as its slave."""
    topic, broker_set = f"CtlMaster{int(time.time())}", "broker-ref"
    store = tmp_path / "reference"
    seen: dict[str, object] = {}

    async def scenario(java: ApacheRocketMQ) -> None:
        master = _controller_broker(java, store, broker_set)
        await master.start()
        slave = ApacheRocketMQ(RELEASE, home=tmp_path / "java-slave", namesrv=java.namesrv_addr,
                               broker_config={"brokerName": broker_set, "brokerId": APACHE_SLAVE_ID,
                                              "enableControllerMode": "true",
                                              "controllerAddr": java.controller_addr})
        try:
            assert await _eventually(lambda: _is_master(master), 1, 60) == 1
            await _send_all(master.addr, topic)  # before the slave exists: caught up from offset 0
            await asyncio.to_thread(slave.start)
            seen["slave"] = slave
            assert await _eventually(lambda: _queue_total(slave.broker_addr, topic), MESSAGES, 90) == MESSAGES
            await _send_all(master.addr, topic)
            assert await _eventually(lambda: _queue_total(slave.broker_addr, topic), 2 * MESSAGES, 60) \
                == 2 * MESSAGES
            assert master.store is not None
            seen["end"] = master.store.max_phy_offset
            await asyncio.to_thread(slave.stop_broker)
        finally:
            await master.stop()
            await asyncio.to_thread(slave.stop)

    with running_or_skip(RELEASE, tmp_path / "java", controller=True) as java:
        asyncio.run(asyncio.wait_for(scenario(java), 240))
    slave = seen["slave"]
    assert isinstance(slave, ApacheRocketMQ)
    _replica_agrees(store, slave.store_path)
    end = seen["end"]
    assert isinstance(end, int) and end > 0
    assert _same_commitlog(store, slave.store_path) >= end
    assert (store / EPOCH_FILE_NAME).read_bytes() == (slave.store_path / EPOCH_FILE_NAME).read_bytes()
    epochs = read_epochs(store)
    assert epochs is not None and epochs.entries == ((1, 0),)


async def _is_master(broker: Broker) -> int:
    return int(broker.config.role is BrokerRole.SYNC_MASTER and broker.registrar.registrations > 0)


def test_failover_promotes_the_slave_and_the_old_master_truncates(tmp_path: Path) -> None:
    """kill -9 of the reference master: the controller promotes its Apache slave (epoch 2), and the
    reference broker, started again, rejoins as that slave and cuts the tail its slave never had."""
    topic, broker_set = f"CtlFailover{int(time.time())}", "broker-ref"
    with running_or_skip(RELEASE, tmp_path / "java", controller=True) as java:
        settings = {"brokerName": broker_set, "brokerClusterName": java.broker_config["brokerClusterName"],
                    "enableControllerMode": "true", "controllerAddr": java.controller_addr}
        with ReferenceServers(home=tmp_path / "reference", namesrv=java.namesrv_addr,
                              broker_config=settings) as reference, \
                ApacheRocketMQ(RELEASE, home=tmp_path / "java-slave", namesrv=java.namesrv_addr,
                               broker_config={**settings, "brokerId": APACHE_SLAVE_ID}) as slave:
            asyncio.run(_send_all(reference.broker_addr, topic))
            _wait(lambda: _queue_total(slave.broker_addr, topic), lambda n: n == MESSAGES, 90)
            _wait(lambda: _replica_info(java.controller_addr, broker_set),
                  lambda info: int(APACHE_SLAVE_ID) in info[2], 60)  # the slave is in the SyncStateSet
            os.kill(slave.broker_pid, signal.SIGSTOP)  # what the master now writes, the slave never gets
            try:
                asyncio.run(_send_all(reference.broker_addr, topic))
                reference.kill_broker()
            finally:
                os.kill(slave.broker_pid, signal.SIGCONT)
            _, epoch, _ = _wait(lambda: _replica_info(java.controller_addr, broker_set),
                                lambda info: info[0] == int(APACHE_SLAVE_ID), 90)
            assert epoch == 2
            _wait(lambda: _sends(slave.broker_addr, topic), bool, 60)  # the slave acts as master now
            asyncio.run(_send_all(slave.broker_addr, topic))
            reference.restart_broker(broker_id=REFERENCE_ID)
            # the first batch, the batch sent to the new master and its probes (a probe refused while the
            # new master had no slave may still be stored): not the batch its slave never got
            expected = asyncio.run(_queue_total(slave.broker_addr, topic))
            assert 2 * MESSAGES < expected < 3 * MESSAGES
            seen = _wait(lambda: _queue_total(reference.broker_addr, topic), lambda n: n >= expected, 90)
            assert seen == expected
            slave.stop_broker()
            reference.stop_broker()
            _replica_agrees(slave.store_path, reference.store_path)
            master_epochs, replica_epochs = read_epochs(slave.store_path), read_epochs(reference.store_path)
            assert master_epochs is not None and replica_epochs is not None
            assert [epoch for epoch, _ in master_epochs.entries] == [1, 2]
            assert replica_epochs.entries == master_epochs.entries
            assert _same_commitlog(slave.store_path, reference.store_path) > master_epochs.entries[-1][1]


def _wait(probe: Callable[[], Coroutine[Any, Any, T]], done: Callable[[T], bool], timeout: float) -> T:
    """Probe every second until ``done`` holds (a probe that cannot connect counts as not yet)."""
    deadline = time.monotonic() + timeout
    while True:
        seen: T | None
        try:
            seen = asyncio.run(probe())
        except (OSError, TimeoutError):
            seen = None
        if seen is not None and done(seen):
            return seen
        assert time.monotonic() < deadline, f"still {seen!r} after {timeout} s"
        time.sleep(1)


async def _replica_info(controller: str, broker_set: str) -> tuple[int | None, int, list[int]]:
    """The set's master id, master epoch and SyncStateSet at the controller."""
    client = await RemotingClient.connect(controller)
    try:
        fields = encode_header(GET_REPLICA_INFO_REQUEST, {"brokerName": broker_set})
        answer = await client.invoke(client.request(RequestCode.CONTROLLER_GET_REPLICA_INFO, fields))
    finally:
        await client.close()
    header = decode_header(GET_REPLICA_INFO_RESPONSE, answer.ext_fields)
    members = decode_body(SYNC_STATE_SET, answer.body or b"{}").get("syncStateSet") or []
    return header.get("masterBrokerId"), int(header.get("masterEpoch") or 0), sorted(members)


async def _sends(addr: str, topic: str) -> bool:
    client = await RemotingClient.connect(addr)
    try:
        answer = await send(client, topic, b"probe", {"WAIT": "true"})
        return answer.code == ResponseCode.SUCCESS
    finally:
        await client.close()
