"""Embedded use: the synchronous runner, the pytest fixture and the console script."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.embedded import EmbeddedRocketMQ, SyncEmbeddedRocketMQ
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC, OFFSET_MOVED_EVENT_TOPIC, SELF_TEST_TOPIC
from tests.broker_support import run


async def _route(namesrv_addr: str, topic: str) -> int:
    client = await RemotingClient.connect(namesrv_addr)
    try:
        request = client.request(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": topic})
        return (await client.invoke(request)).code
    finally:
        await client.close()


def test_sync_runner_starts_registers_and_cleans_up() -> None:
    with SyncEmbeddedRocketMQ() as mq:
        store = mq.store_path
        assert (store / "config" / "topics.json").exists()
        assert run(_route(mq.namesrv_addr, DEFAULT_TOPIC)) == ResponseCode.SUCCESS
    assert not store.exists()


def test_fixture(rocketmq_broker: SyncEmbeddedRocketMQ) -> None:
    assert rocketmq_broker.broker_addr.startswith("127.0.0.1:")
    assert rocketmq_broker.store_path.is_dir()
    assert run(_route(rocketmq_broker.namesrv_addr, SELF_TEST_TOPIC)) == ResponseCode.SUCCESS


def test_console_script_serves_until_terminated(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "rocketmq_spec.reference_broker.cli",
         "--store", str(tmp_path), "--namesrv-port", "0",
         "--broker-port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None  # stdout=PIPE
    try:
        line = process.stdout.readline()
        assert line.startswith("name server 127.0.0.1:")
        namesrv_addr = line.split()[2].rstrip(",")
        assert run(_route(namesrv_addr, DEFAULT_TOPIC)) == ResponseCode.SUCCESS
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0
    assert (tmp_path / "config" / "topics.json").exists()


def test_async_runner_in_a_caller_loop(tmp_path: Path) -> None:
    async def scenario() -> int:
        async with EmbeddedRocketMQ(tmp_path) as mq:
            await asyncio.sleep(0)
            return await _route(mq.namesrv_addr, OFFSET_MOVED_EVENT_TOPIC)

    assert run(scenario()) == ResponseCode.SUCCESS
