"""The reference broker in controller mode beside Apache RocketMQ 5.5.0 brokers, under Apache's controller
(in its name server): it registers, takes the role the controller gives it and replicates through the
auto-switch HA stream. Skipped where Java or Maven is missing; slow (starts JVMs)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from rocketmq_spec.apache import ApacheRocketMQ
from rocketmq_spec.apache.pytest_plugin import running_or_skip
from rocketmq_spec.codec.store.epoch_file import read_epochs
from rocketmq_spec.reference_broker.broker.server import Broker
from rocketmq_spec.reference_broker.config import BrokerConfig
from rocketmq_spec.spec.epoch_file import EPOCH_FILE_NAME
from rocketmq_spec.spec.ha import BrokerRole
from rocketmq_spec.spec.store_layout import COMMITLOG_DIR
from tests.test_ha_java_interop import _eventually, _queue_total, _replica_agrees, _send_all

pytestmark = pytest.mark.slow

RELEASE = "5.5.0"
MESSAGES = 200
APACHE_SLAVE_ID = "2"
"""The id the controller gives the Apache broker, second of its set: the name server lists it under it."""
TAIL_CHECK = 4096
"""Bytes past the replica's end that must be empty on the master too (the master wrote nothing more)."""


def _controller_broker(java: ApacheRocketMQ, store: Path, broker_name: str | None = None) -> Broker:
    return Broker(BrokerConfig(listen_port=0, broker_name=broker_name or java.broker_name,
                               broker_cluster_name=java.broker_config["brokerClusterName"],
                               namesrv_addr=java.namesrv_addr, store_path_root_dir=str(store),
                               enable_controller_mode=True, controller_addr=java.controller_addr,
                               slave_sync_interval=1000))


def _same_commitlog(master: Path, replica: Path, end: int) -> None:
    """The replica's CommitLog is the master's, byte for byte, up to its end (first file)."""
    first = "0" * 20
    with (master / COMMITLOG_DIR / first).open("rb") as m, (replica / COMMITLOG_DIR / first).open("rb") as r:
        assert m.read(end) == r.read(end)
        assert m.read(TAIL_CHECK) == bytes(TAIL_CHECK)


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
        _same_commitlog(master_store, store, end)
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
    _same_commitlog(store, slave.store_path, end)
    assert (store / EPOCH_FILE_NAME).read_bytes() == (slave.store_path / EPOCH_FILE_NAME).read_bytes()
    epochs = read_epochs(store)
    assert epochs is not None and epochs.entries == ((1, 0),)


async def _is_master(broker: Broker) -> int:
    return int(broker.config.role is BrokerRole.ASYNC_MASTER and broker.registrar.registrations > 0)
