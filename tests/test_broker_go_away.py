"""Graceful shutdown (RMQ-SRV-GO-AWAY): with ``enableShutdownGracefully`` a stopping 5.x name server and
broker keep serving for ``shutdownWaitTimeSeconds``, answering GO_AWAY to clients newer than their
release's threshold and serving older ones; a 4.9.8 wire release stops at once, as 4.9.8 has no GO_AWAY.
The conformance case ``lifecycle::stopping_broker_tells_new_clients_to_go_away`` judges the same of every
target the suite starts, Apache RocketMQ's releases included."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.config import BrokerConfig, NamesrvConfig
from rocketmq_spec.reference_broker.embedded import EmbeddedRocketMQ
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.releases import ordinal
from rocketmq_spec.spec.shutdown import GO_AWAY_REMARK, go_away_newer_than
from tests.broker_support import run, started

GRACE_SECONDS = 3
ASKED = {"broker": RequestCode.GET_BROKER_CONFIG, "namesrv": RequestCode.GET_BROKER_CLUSTER_INFO}


def _graceful(store: str, wire_release: str, seconds: int = GRACE_SECONDS) -> EmbeddedRocketMQ:
    broker = BrokerConfig(listen_port=0, store_path_root_dir=store, enable_shutdown_gracefully=True,
                          shutdown_wait_time_seconds=seconds)
    namesrv = NamesrvConfig(listen_port=0, kv_config_path=None, enable_shutdown_gracefully=True,
                            shutdown_wait_time_seconds=seconds)
    return EmbeddedRocketMQ(broker_config=broker, namesrv_config=namesrv, wire_release=wire_release)


def _as_client(command: RemotingCommand, release: str) -> RemotingCommand:
    return dataclasses.replace(command, version=ordinal(release))


async def _judged_while_stopping(addr: str, stop: Callable[[], Awaitable[object]], code: int) -> None:
    """Ask as a 5.5.0 client until the server, being stopped, answers GO_AWAY; then a 5.3.1 client is
    still served, and a code nobody serves is told to go away too (the check comes before dispatch)."""
    client = await RemotingClient.connect(addr)
    stopping = asyncio.ensure_future(stop())
    try:
        async with asyncio.timeout(60):
            while True:
                new = await client.invoke(_as_client(client.request(code), "5.5.0"))
                if new.code == ResponseCode.GO_AWAY:
                    break
                assert new.code == ResponseCode.SUCCESS
                await asyncio.sleep(0.05)
        assert new.remark == GO_AWAY_REMARK
        at_threshold = await client.invoke(_as_client(client.request(code), "5.3.1"))
        assert at_threshold.code == ResponseCode.SUCCESS
        unknown = await client.invoke(_as_client(client.request(99999), "5.5.0"))
        assert unknown.code == ResponseCode.GO_AWAY
    finally:
        await client.close()
        await stopping


def test_thresholds_follow_the_release() -> None:
    assert go_away_newer_than(ordinal("4.9.8")) is None
    assert go_away_newer_than(ordinal("5.1.4")) is None
    assert go_away_newer_than(ordinal("5.2.0")) == go_away_newer_than(ordinal("5.3.1")) == ordinal("5.1.4")
    assert go_away_newer_than(ordinal("5.3.2")) == go_away_newer_than(ordinal("5.5.0")) == ordinal("5.3.1")


@pytest.mark.parametrize("role", ["broker", "namesrv"])
def test_new_clients_are_told_to_go_away_while_old_ones_are_served(tmp_path: Path, role: str) -> None:
    async def scenario() -> None:
        mq = await _graceful(str(tmp_path / "store"), "5.5.0").start()
        addr = mq.broker_addr if role == "broker" else mq.namesrv_addr
        await _judged_while_stopping(addr, mq.stop, ASKED[role])

    run(scenario())


def test_a_4x_release_stops_at_once_whatever_its_config(tmp_path: Path) -> None:
    """4.9.8 has neither the keys nor GO_AWAY: asked for an hour's grace, it still stops at once."""
    async def scenario() -> None:
        mq = await _graceful(str(tmp_path / "store"), "4.9.8", seconds=3600).start()
        server = started(mq.broker).server
        client = await RemotingClient.connect(mq.broker_addr)
        answer = await client.invoke(_as_client(client.request(RequestCode.GET_BROKER_RUNTIME_INFO), "5.5.0"))
        assert answer.code == ResponseCode.SUCCESS
        await client.close()
        async with asyncio.timeout(300):
            await mq.stop()
        assert server.going_away_above is None

    run(scenario())
