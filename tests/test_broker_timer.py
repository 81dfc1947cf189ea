"""Timer messages on the reference broker (5.x wire release): parked in rmq_sys_wheel_timer, delivered to
their topic when due, refused when illegal, overruled by a delay level, kept across a restart; a 4.9.8
broker stores them at once."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from rocketmq_spec.codec.custom_header import encode_header
from rocketmq_spec.codec.store import MessageRecord, decode_records
from rocketmq_spec.codec.store.timercheck import (
    TimerCheckpointData,
    encode_timer_checkpoint,
    read_timer_checkpoint,
)
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.embedded import EmbeddedRocketMQ
from rocketmq_spec.reference_broker.small_store import small_config
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.properties import PropertyKey
from rocketmq_spec.spec.system_topics import TIMER_TOPIC
from rocketmq_spec.spec.timer import (
    RECALL_FORBIDDEN_REMARK,
    RECALL_MESSAGE_REQUEST,
    TIMER_CHECKPOINT_FILE,
    decode_recall_handle,
    release_ms,
    rounded_deliver_ms,
)
from tests.broker_support import run
from tests.messaging_support import pull, send, with_broker

DELIVERY_WAIT_S = 20.0
"""Bound on waiting for a due message (the wheel delivers within its precision, 1 s)."""


async def _records(client: RemotingClient, topic: str, queue_id: int = 0) -> list[MessageRecord]:
    answer = await pull(client, topic, queue_id, 0)
    return decode_records(answer.body) if answer.code == ResponseCode.SUCCESS else []


async def _delivered(client: RemotingClient, topic: str, count: int) -> list[MessageRecord]:
    deadline = time.monotonic() + DELIVERY_WAIT_S
    while True:
        records = await _records(client, topic)
        if len(records) >= count or time.monotonic() > deadline:
            return records
        await asyncio.sleep(0.2)


@given(st.integers(1, 2**50), st.sampled_from([100, 200, 500, 1000]))
def test_a_slot_is_released_at_the_first_grid_time_not_before_the_time_asked_for(deliver_ms: int,
                                                                               precision_ms: int) -> None:
    """RMQ-TIMER-PROPERTIES: TIMER_OUT_MS is the slot start S with S < D <= S + p, released at S + p."""
    parked = rounded_deliver_ms(deliver_ms, precision_ms)
    released = release_ms(parked, precision_ms)
    assert parked < deliver_ms <= released < deliver_ms + precision_ms
    assert released % precision_ms == 0


def test_each_trigger_parks_then_delivers(tmp_path: Path) -> None:
    async def scenario(_: EmbeddedRocketMQ, client: RemotingClient) -> None:
        sent_at = int(time.time() * 1000)
        triggers = [{PropertyKey.TIMER_DELAY_SEC: "2"}, {PropertyKey.TIMER_DELAY_MS: "2000"},
                    {PropertyKey.TIMER_DELIVER_MS: str(sent_at + 2000)}]
        for number, trigger in enumerate(triggers):
            answer = await send(client, "TimerT", str(number).encode(), {**trigger, "KEYS": f"k{number}"})
            assert answer.code == ResponseCode.SUCCESS, answer.remark
        assert await _records(client, "TimerT") == []
        parked = await _records(client, TIMER_TOPIC)
        assert [r.properties[PropertyKey.REAL_TOPIC] for r in parked] == ["TimerT"] * 3
        assert all(int(r.properties[PropertyKey.TIMER_OUT_MS]) % 1000 == 0 for r in parked)
        delivered = await _delivered(client, "TimerT", 3)
        assert sorted(r.body for r in delivered) == [b"0", b"1", b"2"]
        for record in delivered:
            assert record.properties[PropertyKey.REAL_TOPIC] == "TimerT"  # written before Java clears it
            assert {PropertyKey.TIMER_ENQUEUE_MS, PropertyKey.TIMER_DEQUEUE_MS} <= set(record.properties)
            assert record.store_timestamp >= sent_at + 2000, "delivered before the time asked for"

    run(with_broker(tmp_path / "store", scenario))


def test_delay_level_wins_past_time_is_immediate_and_too_late_is_refused(tmp_path: Path) -> None:
    async def scenario(_: EmbeddedRocketMQ, client: RemotingClient) -> None:
        both = await send(client, "TimerD", b"d", {"DELAY": "1", PropertyKey.TIMER_DELAY_SEC: "60"})
        assert both.code == ResponseCode.SUCCESS
        assert await _records(client, TIMER_TOPIC) == []
        past = await send(client, "TimerP", b"p", {PropertyKey.TIMER_DELIVER_MS: "1000"})
        assert past.code == ResponseCode.SUCCESS and len(await _records(client, "TimerP")) == 1
        late = await send(client, "TimerP", b"l", {PropertyKey.TIMER_DELAY_SEC: str(4 * 24 * 3600)})
        assert late.code == ResponseCode.MESSAGE_ILLEGAL
        assert (late.remark or "").startswith("timer message illegal")
        bad = await send(client, "TimerP", b"b", {PropertyKey.TIMER_DELAY_MS: "soon"})
        assert bad.code == ResponseCode.MESSAGE_ILLEGAL
        delayed = await _delivered(client, "TimerD", 1)
        assert len(delayed) == 1 and PropertyKey.TIMER_DELAY_SEC not in delayed[0].properties

    run(with_broker(tmp_path / "store", scenario, message_delay_level="1s 2s"))


def test_pending_timers_survive_a_restart(tmp_path: Path) -> None:
    store = tmp_path / "store"

    async def scenario() -> None:
        async with EmbeddedRocketMQ(store, broker_config=small_config(store)) as mq:
            client = await RemotingClient.connect(mq.broker_addr)
            answer = await send(client, "TimerR", b"r", {PropertyKey.TIMER_DELAY_SEC: "3"})
            assert answer.code == ResponseCode.SUCCESS
            await client.close()
        checkpoint = read_timer_checkpoint(store / TIMER_CHECKPOINT_FILE)
        assert checkpoint is not None and checkpoint.last_timer_queue_offset == 1  # the stop's copy
        async with EmbeddedRocketMQ(store, broker_config=small_config(store)) as mq:
            client = await RemotingClient.connect(mq.broker_addr)
            assert [r.body for r in await _delivered(client, "TimerR", 1)] == [b"r"]
            await asyncio.sleep(1.5)
            assert len(await _records(client, "TimerR")) == 1  # the original, not its copy too
            await client.close()

    run(scenario())


def test_a_stop_parks_pending_messages_again_after_everything_delivered(tmp_path: Path) -> None:
    """Java 5.x taking the store over re-reads the wheel queue from the smaller of lastTimerQueueOffset and
    masterTimerQueueOffset and delivers whatever it finds due. A clean stop parks each pending message
    again at the queue's end, as Java's roll does, and names the first copy in both: nothing delivered
    (here "soon", parked after the pending "later") lies beyond it."""
    store = tmp_path / "store"

    async def scenario() -> None:
        async with EmbeddedRocketMQ(store, broker_config=small_config(store)) as mq:
            client = await RemotingClient.connect(mq.broker_addr)
            await send(client, "TimerM", b"later", {PropertyKey.TIMER_DELAY_SEC: "600"})
            await send(client, "TimerM", b"soon", {PropertyKey.TIMER_DELAY_MS: "1000"})
            assert len(await _delivered(client, "TimerM", 1)) == 1
            await client.close()
        checkpoint = read_timer_checkpoint(store / TIMER_CHECKPOINT_FILE)
        assert checkpoint is not None
        assert (checkpoint.last_timer_queue_offset, checkpoint.master_timer_queue_offset) == (2, 2)
        async with EmbeddedRocketMQ(store, broker_config=small_config(store)) as mq:
            client = await RemotingClient.connect(mq.broker_addr)
            wheel = await _records(client, TIMER_TOPIC)
            assert [(r.body, r.properties.get(PropertyKey.TIMER_ROLL_TIMES)) for r in wheel] == [
                (b"later", None), (b"soon", None), (b"later", "1")]
            await client.close()

    run(scenario())


def test_a_copy_java_rolled_is_delivered_once(tmp_path: Path) -> None:
    """Java parks a message due beyond its roll window again, with TIMER_ROLL_TIMES, the same UNIQ_KEY and
    TIMER_OUT_MS: a store it wrote holds both entries. Sent here as two timer messages of one UNIQ_KEY,
    the second carrying TIMER_ROLL_TIMES, and read by a restarted broker as a store taken over."""
    store = tmp_path / "store"
    due = str(int(time.time() * 1000) + 4000)
    same = {PropertyKey.TIMER_DELIVER_MS: due, PropertyKey.UNIQ_KEY: "0A0B0C0D0E0F0102030405060708090A"}

    async def park() -> None:
        async with EmbeddedRocketMQ(store, broker_config=small_config(store)) as mq:
            client = await RemotingClient.connect(mq.broker_addr)
            await send(client, "TimerRoll", b"rolled", same)
            await send(client, "TimerRoll", b"rolled", {**same, PropertyKey.TIMER_ROLL_TIMES: "1"})
            assert len(await _records(client, TIMER_TOPIC)) == 2
            await client.close()

    async def deliver() -> None:
        async with EmbeddedRocketMQ(store, broker_config=small_config(store)) as mq:
            client = await RemotingClient.connect(mq.broker_addr)
            assert len(await _delivered(client, "TimerRoll", 1)) == 1
            await asyncio.sleep(2.0)
            assert len(await _records(client, "TimerRoll")) == 1
            await client.close()

    run(park())
    run(deliver())


def test_a_4_9_8_broker_stores_timer_messages_at_once(tmp_path: Path) -> None:
    async def scenario(_: EmbeddedRocketMQ, client: RemotingClient) -> None:
        answer = await send(client, "Timer4", b"x", {PropertyKey.TIMER_DELAY_SEC: "60"})
        assert answer.code == ResponseCode.SUCCESS and answer.version == 409
        assert len(await _records(client, "Timer4")) == 1

    run(with_broker(tmp_path / "store", scenario, wire_release="4.9.8"))


def _recall_fields(topic: str, handle: str) -> dict[str, str]:
    return encode_header(RECALL_MESSAGE_REQUEST, {"producerGroup": "pg", "topic": topic,
                                                  "recallHandle": handle})


def test_a_recalled_timer_message_is_never_delivered(tmp_path: Path) -> None:
    async def scenario(_: EmbeddedRocketMQ, client: RemotingClient) -> None:
        kept = await send(client, "TimerC", b"kept", {PropertyKey.TIMER_DELAY_SEC: "2", "UNIQ_KEY": "U1"})
        recalled = await send(client, "TimerC", b"recalled", {PropertyKey.TIMER_DELAY_SEC: "2",
                                                              "UNIQ_KEY": "U2"})
        handle = (recalled.ext_fields or {})["recallHandle"]
        assert decode_recall_handle(handle)[::3] == ("TimerC",
                                                     "U2") and "recallHandle" in (kept.ext_fields or {})
        answer = await client.invoke(client.request(RequestCode.RECALL_MESSAGE, _recall_fields("TimerC",
                                                                                               handle)))
        assert answer.code == ResponseCode.SUCCESS and (answer.ext_fields or {})["msgId"] == "U2"
        wrong = await client.invoke(client.request(RequestCode.RECALL_MESSAGE, _recall_fields("TimerC",
                                                                                              "bad!")))
        assert wrong.code == ResponseCode.ILLEGAL_OPERATION
        await asyncio.sleep(4)
        assert [r.body for r in await _delivered(client, "TimerC", 1)] == [b"kept"]

    run(with_broker(tmp_path / "store", scenario, recall_message_enable=True))


def test_recall_is_forbidden_by_default(tmp_path: Path) -> None:
    async def scenario(_: EmbeddedRocketMQ, client: RemotingClient) -> None:
        sent = await send(client, "TimerF", b"x", {PropertyKey.TIMER_DELAY_SEC: "30", "UNIQ_KEY": "U3"})
        answer = await client.invoke(client.request(RequestCode.RECALL_MESSAGE, _recall_fields(
            "TimerF", (sent.ext_fields or {})["recallHandle"])))
        assert (answer.code, answer.remark) == (ResponseCode.NO_PERMISSION, RECALL_FORBIDDEN_REMARK)

    run(with_broker(tmp_path / "store", scenario))


def test_java_s_timer_index_is_taken_over_from_the_wheel_queue(tmp_path: Path) -> None:
    """On a store with Java's timerlog and timerwheel, every wheel entry from the checkpoint's
    lastTimerQueueOffset on is pending (Java had not read it), whatever its time, and Java's index is
    removed once this broker's checkpoint is written: Java restarted later resumes the queue there, as on a
    store this broker alone wrote, instead of delivering what its timerlog holds and the copies again."""
    store = tmp_path / "store"

    async def park() -> None:
        async with EmbeddedRocketMQ(store, broker_config=small_config(store)) as mq:
            client = await RemotingClient.connect(mq.broker_addr)
            assert (await send(client, "TimerJ", b"j", {PropertyKey.TIMER_DELAY_SEC: "3"})).code == 0
            await client.close()

    async def take_over() -> None:
        async with EmbeddedRocketMQ(store, broker_config=small_config(store)) as mq:
            client = await RemotingClient.connect(mq.broker_addr)
            assert [r.body for r in await _delivered(client, "TimerJ", 1)] == [b"j"]
            assert not (store / "timerlog").exists() and not (store / "timerwheel").exists()
            await asyncio.sleep(1.5)
            assert len(await _records(client, "TimerJ")) == 1
            await client.close()

    run(park())
    (store / "timerlog").mkdir()
    (store / "timerlog" / "00000000000000000000").write_bytes(b"\0" * 52)
    (store / "timerwheel").write_bytes(b"\0" * 32)
    later = int(time.time() * 1000) + 3_600_000  # as if every slot before were delivered: only the
    (store / TIMER_CHECKPOINT_FILE).write_bytes(encode_timer_checkpoint(TimerCheckpointData(  # unread copy
        last_read_time_ms=later, last_timer_queue_offset=1, master_timer_queue_offset=1)))
    run(take_over())
