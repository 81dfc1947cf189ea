"""Stores handed over both ways with Apache RocketMQ 5.5.0: a store the reference broker (answering as
5.5.0) wrote is served by Apache 5.5.0, and a store Apache 5.5.0 wrote is served by the reference broker,
including a timer message still pending and a group that popped messages without acking them (their
checkpoints are in the revive log: the other broker sends them back to the group's pop retry topic).

Java's timer index (``timerwheel``, ``timerlog``) is not written by the reference broker, which hands
pending timers over through ``config/timercheck`` and the wheel queue itself. The slow
``tests/test_store_takeover.py`` covers more of the in-flight state (a delivered timer parked past a pending
one, acks, ordered pops); docs/FIVE.md says what carries over and what cannot. Skipped without a JDK or
the provisioned 5.5.0 jars.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest

from rocketmq_spec.apache.cluster import ApacheRocketMQ
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.custom_header import encode_header
from rocketmq_spec.codec.store import MessageRecord, decode_records
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.embedded import EmbeddedRocketMQ
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.pop import POP_MESSAGE_REQUEST
from rocketmq_spec.spec.properties import PropertyKey
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC
from tests.java_programs import require_release
from tests.messaging_support import pull, send

pytestmark = pytest.mark.interop

RELEASE = "5.5.0"
MESSAGES = 5
TIMER_DELAY_S = 25
"""Long enough to survive the hand-over (stop one broker, start the other), short for a test."""
INVISIBLE_MS = 5_000
WAIT_S = 120.0
"""Bound on waiting for the timer message and the revived pop messages after the hand-over."""
GROUP = "handover_pop_group"


def _provisioned() -> None:
    require_release(RELEASE)


async def _write(addr: str) -> None:
    """MESSAGES messages to HoPlain, a timer message to HoTimer, and two messages of HoPop popped by GROUP
    and never acked."""
    client = await RemotingClient.connect(addr)
    try:
        for topic in ("HoPlain", "HoTimer", "HoPop"):
            created = await client.invoke(client.request(RequestCode.UPDATE_AND_CREATE_TOPIC, {
                "topic": topic, "defaultTopic": DEFAULT_TOPIC, "readQueueNums": "1", "writeQueueNums": "1",
                "perm": "6", "topicFilterType": "SINGLE_TAG", "topicSysFlag": "0", "order": "false"}))
            assert created.code == ResponseCode.SUCCESS, created.remark
        for number in range(MESSAGES):
            sent = await send(client, "HoPlain", f"plain {number}".encode(), {"KEYS": f"k{number}"})
            assert sent.code == ResponseCode.SUCCESS
        timer = await send(client, "HoTimer", b"timer", {PropertyKey.TIMER_DELAY_SEC: str(TIMER_DELAY_S)})
        assert timer.code == ResponseCode.SUCCESS, timer.remark
        for number in range(2):
            assert (await send(client, "HoPop", f"pop {number}".encode(), {})).code == ResponseCode.SUCCESS
        await asyncio.sleep(1)  # Java dispatches a moment after the put
        popped = await _pop(client, INVISIBLE_MS)
        assert popped.code == ResponseCode.SUCCESS and len(decode_records(popped.body)) == 2, popped.remark
    finally:
        await client.close()


async def _pop(client: RemotingClient, invisible_ms: int) -> RemotingCommand:
    fields = encode_header(POP_MESSAGE_REQUEST, {
        "consumerGroup": GROUP, "topic": "HoPop", "queueId": -1, "maxMsgNums": 32,
        "invisibleTime": invisible_ms,
        "pollTime": 2000, "bornTime": int(time.time() * 1000), "initMode": 1})
    return await client.invoke(client.request(RequestCode.POP_MESSAGE, fields), 15)


async def _records(client: RemotingClient, topic: str) -> list[MessageRecord]:
    answer = await pull(client, topic, 0, 0)
    return decode_records(answer.body) if answer.code == ResponseCode.SUCCESS else []


async def _served(addr: str) -> None:
    """Every message of HoPlain, the timer message once due, and both popped messages back for GROUP."""
    client = await RemotingClient.connect(addr)
    try:
        plain = await _records(client, "HoPlain")
        assert sorted(r.body for r in plain) == [f"plain {n}".encode() for n in range(MESSAGES)]
        revived: set[bytes] = set()
        deadline = time.monotonic() + WAIT_S
        timer: list[MessageRecord] = []
        while time.monotonic() < deadline and (not timer or len(revived) < 2):
            timer = timer or await _records(client, "HoTimer")
            popped = await _pop(client, 60_000)
            if popped.code == ResponseCode.SUCCESS:
                revived |= {r.body for r in decode_records(popped.body)}
        assert [r.body for r in timer] == [b"timer"], "the pending timer message was not delivered"
        assert revived == {b"pop 0", b"pop 1"}, f"popped messages not sent back: {revived}"
    finally:
        await client.close()


def _run(coroutine: Coroutine[Any, Any, None]) -> None:
    asyncio.run(asyncio.wait_for(coroutine, WAIT_S + 60))


def test_apache_serves_a_reference_store(tmp_path: Path) -> None:
    _provisioned()
    store = tmp_path / "store"

    async def write() -> None:
        async with EmbeddedRocketMQ(store, wire_release=RELEASE) as mq:
            await _write(mq.broker_addr)

    _run(write())
    with ApacheRocketMQ(RELEASE, home=tmp_path / "apache", store=store, heap_mb=384) as apache:
        _run(_served(apache.broker_addr))


def test_reference_serves_an_apache_store(tmp_path: Path) -> None:
    _provisioned()
    store = tmp_path / "store"
    with ApacheRocketMQ(RELEASE, home=tmp_path / "apache", store=store, heap_mb=384) as apache:
        _run(_write(apache.broker_addr))
        apache.stop_broker()

    async def serve() -> None:
        async with EmbeddedRocketMQ(store, wire_release=RELEASE) as mq:
            await _served(mq.broker_addr)

    _run(serve())
