"""A master and its slave, both reference brokers: the slave's CommitLog is the master's, byte for byte,
its queues serve pulls, it refuses sends, and a SYNC_MASTER answers as Java's does with and without a
slave (RMQ-HA-*)."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rocketmq_spec.codec.ha import encode_report
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.embedded import EmbeddedMasterSlave, SyncEmbeddedMasterSlave
from rocketmq_spec.reference_broker.small_store import SMALL_STORE
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.ha import BrokerRole
from rocketmq_spec.spec.store_layout import COMMITLOG_DIR
from tests.broker_support import run, started, store_of
from tests.messaging_support import pull, send

FAST_HA = {**SMALL_STORE, "mapped_file_size_commit_log": 64 * 1024, "ha_send_heartbeat_interval": 200,
           "ha_housekeeping_interval": 3000, "ha_reconnect_interval": 200, "slave_sync_interval": 200,
           "slave_timeout": 500}
"""Small files (so the log spans several) and short HA intervals (so a test takes a second or two)."""
TOPIC = "HaTopic"


def pair(tmp_path: Path, role: BrokerRole = BrokerRole.ASYNC_MASTER, **overrides: Any) -> EmbeddedMasterSlave:
    return EmbeddedMasterSlave(tmp_path, role=role, master_config={**FAST_HA, **overrides})


def commitlog_files(store: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((store / COMMITLOG_DIR).iterdir())}


async def _send_many(client: RemotingClient, count: int, size: int = 1000) -> list[Any]:
    return [await send(client, TOPIC, bytes([i % 251]) * size, {"KEYS": f"k{i}", "WAIT": "true"},
                       queue_id=i % 2)
            for i in range(count)]


async def _wait_for(predicate: Callable[[], object], timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.02)


def test_slave_log_is_byte_identical_and_serves_pulls(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with pair(tmp_path) as ha:
            client = await RemotingClient.connect(ha.master_addr)
            slave = await RemotingClient.connect(ha.slave_addr)
            try:
                answers = await _send_many(client, 150)
                assert {a.code for a in answers} == {ResponseCode.SUCCESS}
                end = await ha.wait_replicated()
                assert end == store_of(ha.master).max_phy_offset and end > 2 * 64 * 1024
                assert commitlog_files(ha.slave_store_path) == commitlog_files(ha.master_store_path)
                await _wait_for(lambda: started(ha.slave).topics.get(TOPIC) is not None)
                for queue_id in (0, 1):
                    assert store_of(ha.slave).max_offset(TOPIC, queue_id) == 75
                    response = await pull(slave, TOPIC, queue_id, 70)
                    assert response.code == ResponseCode.SUCCESS
                    assert (response.ext_fields or {})["suggestWhichBrokerId"] == "0"
                moved = await pull(slave, TOPIC, 0, 1000, commit_offset=5)
                assert moved.code == ResponseCode.PULL_RETRY_IMMEDIATELY  # a master answers 21 here
                # nor does a slave commit the offset
                assert started(ha.slave).offsets.query("cg", TOPIC, 0) == -1
                refused = await send(slave, TOPIC, b"x", {"WAIT": "true"})
                assert refused.code == ResponseCode.SERVICE_NOT_AVAILABLE
                assert "messages are put to the slave" in (refused.remark or "")
                assert store_of(ha.slave).max_phy_offset == end
            finally:
                await client.close()
                await slave.close()
    run(scenario())


def test_slave_catches_up_after_a_restart_and_pull_after_master_stops(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with pair(tmp_path) as ha:
            client = await RemotingClient.connect(ha.master_addr)
            try:
                await _send_many(client, 20)
                await ha.wait_replicated()
                await ha.stop_slave()
                await _send_many(client, 20)
            finally:
                await client.close()
            await ha.start_slave()
            await ha.wait_replicated()
            assert commitlog_files(ha.slave_store_path) == commitlog_files(ha.master_store_path)
            await _wait_for(lambda: started(ha.slave).topics.get(TOPIC) is not None)
            await ha.stop_master()
            slave = await RemotingClient.connect(ha.slave_addr)
            try:
                response = await pull(slave, TOPIC, 0, 0)
                assert response.code == ResponseCode.SUCCESS
            finally:
                await slave.close()
    run(scenario())


def test_sync_master_answers_with_and_without_a_slave(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with pair(tmp_path, BrokerRole.SYNC_MASTER) as ha:
            client = await RemotingClient.connect(ha.master_addr)
            try:
                await _wait_for(lambda: store_of(ha.master).replicas.connections == 1)
                (ok,) = await _send_many(client, 1)
                assert ok.code == ResponseCode.SUCCESS
                master = store_of(ha.master)
                assert master.replicas.acked >= master.max_phy_offset
                no_wait = await send(client, TOPIC, b"w", {"WAIT": "false"})
                assert no_wait.code == ResponseCode.SUCCESS
                await ha.stop_slave()
                await _wait_for(lambda: store_of(ha.master).replicas.connections == 0)
                alone = await send(client, TOPIC, b"alone", {"WAIT": "true"})
                assert alone.code == ResponseCode.SLAVE_NOT_AVAILABLE
                assert (alone.ext_fields or {}).get("msgId")
                # a "slave" that reports once and never acknowledges again: the put times out
                host, port = ha.master_ha_addr.rsplit(":", 1)
                with socket.create_connection((host, int(port))) as mute:
                    mute.sendall(encode_report(store_of(ha.master).max_phy_offset))
                    await _wait_for(lambda: store_of(ha.master).replicas.connections == 1)
                    late = await send(client, TOPIC, b"late", {"WAIT": "true"})
                assert late.code == ResponseCode.FLUSH_SLAVE_TIMEOUT
                assert store_of(ha.master).max_offset(TOPIC, 0) == 4
            finally:
                await client.close()
    run(scenario())


def test_pytest_fixture_gives_a_replicating_pair(rocketmq_master_slave: SyncEmbeddedMasterSlave) -> None:
    async def put() -> int:
        client = await RemotingClient.connect(rocketmq_master_slave.master_addr)
        try:
            await _send_many(client, 3)
        finally:
            await client.close()
        return 0
    rocketmq_master_slave.call(put())
    end = rocketmq_master_slave.wait_replicated()
    assert end > 0
    assert commitlog_files(rocketmq_master_slave.slave_store_path) == \
        commitlog_files(rocketmq_master_slave.master_store_path)


def test_store_comparison_of_master_and_slave(tmp_path: Path) -> None:
    """``rmq-conformance store MASTER --replica SLAVE`` passes on a replicated pair and fails when a byte
    of the slave's log differs."""
    from rocketmq_spec.conformance import cli

    async def replicate() -> None:
        async with pair(tmp_path) as ha:
            client = await RemotingClient.connect(ha.master_addr)
            try:
                await _send_many(client, 80)
            finally:
                await client.close()
            await ha.wait_replicated()
    run(replicate())
    master, slave = tmp_path / "master", tmp_path / "slave"
    args = ["store", str(master), "--replica", str(slave), "-k", "replica", "-n", "0"]
    assert cli.main(args) == 0
    first = sorted((slave / COMMITLOG_DIR).iterdir())[0]
    with first.open("r+b") as handle:
        handle.seek(200)
        byte = handle.read(1)
        handle.seek(200)
        handle.write(bytes([byte[0] ^ 0xFF]))
    assert cli.main(args) != 0


def test_roles_fix_broker_ids(tmp_path: Path) -> None:
    """RMQ-HA-ROLE-ID: a master is brokerId 0 whatever it was given; a slave without an id > 0 is refused."""
    from rocketmq_spec.reference_broker.broker.server import Broker
    from rocketmq_spec.reference_broker.config import BrokerConfig

    master = Broker(BrokerConfig(broker_role="SYNC_MASTER", broker_id=3, store_path_root_dir=str(tmp_path)))
    assert master.config.broker_id == 0
    with pytest.raises(ValueError, match="brokerId must be > 0"):
        Broker(BrokerConfig(broker_role="SLAVE", broker_id=0, store_path_root_dir=str(tmp_path)))


def test_slave_read_enable_suggests_the_group_broker(tmp_path: Path) -> None:
    """RMQ-HA-SLAVE-READ: with slaveReadEnable a pull answer suggests the group's brokerId, else 0."""
    async def scenario() -> list[str]:
        async with EmbeddedMasterSlave(tmp_path, master_config=FAST_HA,
                                       slave_config={"slave_read_enable": True}) as ha:
            client = await RemotingClient.connect(ha.master_addr)
            slave = await RemotingClient.connect(ha.slave_addr)
            try:
                await _send_many(client, 2)
                await ha.wait_replicated()
                await _wait_for(lambda: started(ha.slave).topics.get(TOPIC) is not None)
                suggestions = []
                groups = started(ha.master).groups
                group = groups.find_or_create("cg")  # the slave copies it from its master
                assert group is not None
                group.broker_id = 1
                groups.data_version.bump()
                slave_groups = started(ha.slave).groups  # its table is replaced by each sync
                await _wait_for(lambda: getattr(slave_groups.groups.get("cg"), "broker_id", 0) == 1)
                for connection in (client, slave):
                    answer = await pull(connection, TOPIC, 0, 0)
                    suggestions.append((answer.ext_fields or {})["suggestWhichBrokerId"])
                return suggestions
            finally:
                await client.close()
                await slave.close()
    assert run(scenario()) == ["0", "1"]


def test_routes_list_master_and_slave_under_one_name(rocketmq_master_slave: SyncEmbeddedMasterSlave) -> None:
    """RMQ-HA-ROLE-ID: the name server's route for a topic lists the master as 0 and the slave as 1."""
    from rocketmq_spec.codec.bodies import decode_body
    from rocketmq_spec.codec.custom_header import encode_header
    from rocketmq_spec.spec.bodies import TOPIC_ROUTE_DATA
    from rocketmq_spec.spec.headers import GET_ROUTE_INFO_REQUEST

    async def route() -> dict[str, Any]:
        client = await RemotingClient.connect(rocketmq_master_slave.master_addr)
        try:
            await _send_many(client, 1)
        finally:
            await client.close()
        namesrv = await RemotingClient.connect(rocketmq_master_slave.namesrv_addr)
        try:
            for _ in range(100):
                answer = await namesrv.invoke(namesrv.request(
                    RequestCode.GET_ROUTEINFO_BY_TOPIC,
                    encode_header(GET_ROUTE_INFO_REQUEST, {"topic": TOPIC})))
                if answer.code == ResponseCode.SUCCESS:
                    return decode_body(TOPIC_ROUTE_DATA, answer.body or b"{}")
                await asyncio.sleep(0.05)
            raise AssertionError("no route")
        finally:
            await namesrv.close()
    data = rocketmq_master_slave.call(route())
    (broker,) = data["brokerDatas"]
    addrs = {int(k): v for k, v in broker["brokerAddrs"].items()}
    assert addrs == {0: rocketmq_master_slave.master_addr, 1: rocketmq_master_slave.slave_addr}
