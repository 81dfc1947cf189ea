"""Cluster roles as Apache RocketMQ has them, from the command line: ``rmq-namesrv`` alone, ``rmq-broker``
joining the name servers its ``namesrvAddr`` names, and the two mixed with Apache RocketMQ's own.

The default run drives Apache RocketMQ 4.9.7; the 5.5.0 forms are ``slow`` (one more pair of JVMs).
Every process is started the way an operator would start it (a config file, a console script), and the
cluster is judged from outside: ``rmq-admin`` for what the name server knows, the wire for what each
broker serves, ``rmq-conformance store --replica`` for a slave's copy of its master's CommitLog. The
Apache forms skip, with the reason, where Java or Maven is missing or the release is not served.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

from rocketmq_spec.apache.cluster import ApacheRocketMQ
from rocketmq_spec.apache.maven import NotServed, ToolMissing
from rocketmq_spec.codec.store.record import decode_records
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from tests import process_tree
from tests.broker_process import BrokerProcess, write_broker_conf
from tests.messaging_support import pull, send

CLUSTER = "MixedCluster"
TOPIC = "OneTopicOfThree"
QUEUES = 2
SMALL_COMMITLOG = 4 * 1024 * 1024
"""Both sides of a replication pair must agree on mappedFileSizeCommitLog; small keeps the files small."""
REPLICATED = 200
REPLICATION_WAIT = 60.0
DISPATCH_WAIT_S = 10.0
"""How long a pull may find nothing after the send it follows: a Java broker fills its consume queue
asynchronously, after answering the send."""
"""A slave reports every 5 s at worst (haSendHeartbeatInterval), a cold JVM is slow: a bound, not a pace."""
ADMIN_TIMEOUT = 60


def _admin(*argv: str) -> str:
    done = process_tree.run([sys.executable, "-m", "rocketmq_spec.admin.cli",
                             *argv], capture_output=True, text=True,
                            timeout=ADMIN_TIMEOUT, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@contextmanager
def _apache(version: str, home: Path, **options: object) -> Iterator[ApacheRocketMQ]:
    cluster = ApacheRocketMQ(version, home=home, heap_mb=384, **options)  # type: ignore[arg-type]
    try:
        cluster.start()
    except (ToolMissing, NotServed) as exc:
        pytest.skip(str(exc))
    try:
        yield cluster
    finally:
        cluster.stop()


def _namesrv(stack: ExitStack, tmp_path: Path) -> BrokerProcess:
    conf = write_broker_conf(tmp_path / "namesrv.conf", {"listenPort": "0",
                                                         "kvConfigPath": str(tmp_path / "kv.json")})
    return stack.enter_context(BrokerProcess(conf, tmp_path / "namesrv.log", options=(),
                                             command="namesrv_main"))


def _joined_broker(stack: ExitStack, tmp_path: Path, name: str, namesrv: str,
                   **properties: str) -> BrokerProcess:
    conf = write_broker_conf(tmp_path / f"{name}.conf", {
        "brokerClusterName": CLUSTER, "brokerName": name, "namesrvAddr": namesrv, "listenPort": "0",
        "storePathRootDir": str(tmp_path / name), **properties})
    return stack.enter_context(BrokerProcess(conf, tmp_path / f"{name}.log", options=()))


async def _send(client: RemotingClient, body: bytes, queue_id: int) -> None:
    sent = await send(client, TOPIC, body, {"WAIT": "true"}, queue_id=queue_id)
    assert sent.code == ResponseCode.SUCCESS, (sent.code, sent.remark)


async def _send_many(addr: str, bodies: list[bytes]) -> None:
    client = await RemotingClient.connect(addr)
    try:
        for n, body in enumerate(bodies):
            await _send(client, body, n % QUEUES)
    finally:
        await client.close()


async def _send_and_pull(addr: str, body: bytes, queue_id: int) -> list[bytes]:
    """Send ``body`` to ``addr``'s queue and pull that queue from the start: the bodies it serves."""
    client = await RemotingClient.connect(addr)
    try:
        await _send(client, body, queue_id)
        pulled = await pull(client, TOPIC, queue_id, 0)
        deadline = time.monotonic() + DISPATCH_WAIT_S
        while pulled.code == ResponseCode.PULL_NOT_FOUND and time.monotonic() < deadline:
            await asyncio.sleep(0.2)  # Java dispatches to the consume queue after the send is answered
            pulled = await pull(client, TOPIC, queue_id, 0)
        assert pulled.code == ResponseCode.SUCCESS, (addr, pulled.code, pulled.remark)
        return [record.body for record in decode_records(pulled.body)]
    finally:
        await client.close()


def test_a_name_server_alone_and_brokers_that_join_it(tmp_path: Path) -> None:
    """``rmq-namesrv`` serves; two ``rmq-broker`` with ``namesrvAddr`` register there and start no name
    server of their own (their banner says whom they joined)."""
    with ExitStack() as stack:
        namesrv = _namesrv(stack, tmp_path)
        brokers = [_joined_broker(stack, tmp_path, name, namesrv.namesrv_addr) for name in ("ref-1", "ref-2")]
        assert {b.namesrv_addr for b in brokers} == {namesrv.namesrv_addr}
        listed = json.loads(_admin("clusterList", "-n", namesrv.namesrv_addr, "--json"))
        assert {(row["brokerName"], row["addr"]) for row in listed} == {
            ("ref-1", brokers[0].broker_addr), ("ref-2", brokers[1].broker_addr)}


def test_a_broker_key_in_a_name_server_config_is_reported(tmp_path: Path) -> None:
    conf = write_broker_conf(tmp_path / "namesrv.conf", {"listenPort": "0", "brokerName": "b",
                                                         "kvConfigPath": str(tmp_path / "kv.json")})
    with BrokerProcess(conf, tmp_path / "namesrv.log", options=(), command="namesrv_main") as namesrv:
        assert namesrv.namesrv_addr.startswith("127.0.0.1:")
        assert "config key brokerName is read by a broker, not by a name server" in namesrv.log_tail()


def test_a_joining_broker_refuses_a_name_server_port(tmp_path: Path) -> None:
    done = process_tree.run([sys.executable, "-m", "rocketmq_spec.reference_broker.cli", "-n", "127.0.0.1:1",
                             "--namesrv-port", "0", "--store", str(tmp_path)], capture_output=True, text=True,
                            timeout=ADMIN_TIMEOUT, check=False)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "starts no name server" in done.stderr


# the default run's 4.9.7 form is the reference-only one (slow) plus an Apache broker
@pytest.mark.parametrize("apache", [pytest.param(None, marks=pytest.mark.slow), "4.9.7",
                                    pytest.param("5.5.0", marks=pytest.mark.slow)])
def test_reference_and_apache_brokers_serve_one_topic(tmp_path: Path, apache: str | None) -> None:
    """One ``rmq-namesrv``, two ``rmq-broker`` and (in the Apache form) an Apache RocketMQ broker joined
    to it in one cluster: ``rmq-admin updateTopic -c`` creates the topic on every master, the route the
    name server answers names them all, and each broker stores and serves the messages sent to it."""
    with ExitStack() as stack:
        namesrv = _namesrv(stack, tmp_path)
        brokers = {name: _joined_broker(stack, tmp_path, name, namesrv.namesrv_addr).broker_addr
                   for name in ("ref-1", "ref-2")}
        if apache is not None:
            java = stack.enter_context(_apache(apache, tmp_path / "apache", namesrv=namesrv.namesrv_addr,
                                               broker_config={"brokerClusterName": CLUSTER,
                                                              "brokerName": "apache"}))
            brokers["apache"] = java.broker_addr
        _admin("updateTopic", "-n", namesrv.namesrv_addr, "-t", TOPIC, "-c", CLUSTER,
               "-r", str(QUEUES), "-w", str(QUEUES))
        route = json.loads(_admin("topicRoute", "-n", namesrv.namesrv_addr, "-t", TOPIC, "--json"))
        assert {data["brokerName"]: data["brokerAddrs"]["0"] for data in route["brokerDatas"]} == brokers
        assert {(queue["brokerName"], queue["writeQueueNums"]) for queue in route["queueDatas"]} == {
            (name, QUEUES) for name in brokers}
        for name, addr in brokers.items():
            for queue_id in range(QUEUES):
                body = f"{name} queue {queue_id}".encode()
                assert asyncio.run(_send_and_pull(addr, body, queue_id)) == [body], name


async def _commitlog_end(addr: str) -> int:
    client = await RemotingClient.connect(addr)
    try:
        answer = await client.invoke(client.request(RequestCode.GET_BROKER_RUNTIME_INFO, {}))
    finally:
        await client.close()
    table = json.loads(answer.body or b"{}")["table"]
    return int(table["commitLogMaxOffset"])


def _wait_replicated(master: str, slave: str) -> int:
    deadline = time.monotonic() + REPLICATION_WAIT
    end = asyncio.run(_commitlog_end(master))
    while (copied := asyncio.run(_commitlog_end(slave))) != end and time.monotonic() < deadline:
        time.sleep(0.5)
    assert copied == end, f"slave at {copied} of the master's {end} bytes after {REPLICATION_WAIT} s"
    return end


@pytest.mark.parametrize("version", ["4.9.7", pytest.param("5.5.0", marks=pytest.mark.slow)])
def test_reference_slave_of_an_apache_master_replicates_byte_for_byte(tmp_path: Path, version: str) -> None:
    """``rmq-broker -c slave.conf`` with brokerRole=SLAVE, the master's brokerName and the Apache name
    server as ``namesrvAddr``: it registers, learns the master's HA address from the name server, copies
    the CommitLog, and ``rmq-conformance store MASTER --replica SLAVE`` finds the copy byte-identical."""
    settings = {"mappedFileSizeCommitLog": str(SMALL_COMMITLOG)}
    with _apache(version, tmp_path / "apache", broker_config=settings) as master, ExitStack() as stack:
        asyncio.run(_send_many(master.broker_addr, [f"before the slave {n}".encode()
                                                    for n in range(REPLICATED // 2)]))
        slave = _joined_broker(stack, tmp_path, master.broker_name, master.namesrv_addr, brokerId="1",
                               brokerRole="SLAVE", brokerClusterName="DefaultCluster", **settings)
        asyncio.run(_send_many(master.broker_addr, [f"with the slave {n}".encode()
                                                    for n in range(REPLICATED // 2)]))
        end = _wait_replicated(master.broker_addr, slave.broker_addr)
        assert end > 0
        assert slave.stop() == 0
    report = tmp_path / "report"
    check = process_tree.run([sys.executable, "-m", "rocketmq_spec.conformance.cli",
                              "store", str(master.store_path),
                              "--replica", str(tmp_path / master.broker_name), "-k", "replica",
                              "--report", str(report)],
                             capture_output=True, text=True, timeout=300, check=False)
    assert check.returncode == 0, check.stdout[-3000:]
    verdicts = {c["case"]: c["verdict"] for c in json.loads((report / "index.json").read_text())["cases"]}
    assert verdicts and set(verdicts.values()) == {"PASS"}, verdicts
