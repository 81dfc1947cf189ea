"""The proxy's renewals of auto-renewed receipt handles (RMQ-GRPC-AUTO-RENEW): the schedule on a table with
a stand-in broker, then one renewal through the embedded broker's proxy, acked with the handle the client
received."""

from __future__ import annotations

import asyncio
import time

from rocketmq_spec.codec.grpc.v2 import definition_pb2 as v2
from rocketmq_spec.conformance.cases.grpc_support import ack, receive
from rocketmq_spec.conformance.grpc_client import ProxyClient, message
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.embedded import SyncEmbeddedRocketMQ
from rocketmq_spec.reference_broker.proxy.renewal import Held, Renewals, next_visible_ms, retry_delay_ms
from rocketmq_spec.spec.grpc_codes import Code
from rocketmq_spec.spec.grpc_rpcs import (
    INVISIBLE_WHEN_CLEAR_MS,
    MAX_RENEW_RETRIES,
    RENEW_MAX_MS,
    RENEW_SLICES_MS,
)
from tests.sdk5_clients import create_group, create_topic

NOW = 1_700_000_000_000


def handle(retrieved_ms: int, invisible_ms: int, offset: int = 7) -> str:
    return f"0 {retrieved_ms} {invisible_ms} 0 0 broker-a 1 {offset} 4242"


class Broker:
    """A stand-in for CHANGE_INVISIBLETIME: records each change, answers a handle retrieved ``now``."""

    def __init__(self) -> None:
        self.changes: list[tuple[str, int]] = []
        self.failing = False
        self.refusing = False
        self.online = True

    async def change(self, client_id: str, held: Held, invisible_ms: int) -> str | None:
        self.changes.append((held.message_id, invisible_ms))
        if self.failing:
            raise ConnectionError("broker gone")
        if self.refusing:
            return None
        return handle(self.now, invisible_ms)

    now = NOW


def renewals(broker: Broker) -> Renewals:
    return Renewals(broker.change, lambda client_id, group: broker.online)


def held(received_ms: int = NOW, invisible_ms: int = 60_000) -> Held:
    return Held("group", "topic", "MSG", handle(received_ms, invisible_ms), received_ms, 0)


def test_renewals_follow_the_schedule_and_acks_use_the_newest_handle() -> None:
    broker = Broker()
    table = renewals(broker)
    table.add("client", held())
    first = held().handle

    async def run() -> str | None:
        await table.scan(NOW + 40_000)  # 20 s left: not yet
        assert broker.changes == []
        for renewal, slice_ms in enumerate(RENEW_SLICES_MS + RENEW_SLICES_MS[-1:]):
            due = next_visible_ms(table._held[("client", "group")][("MSG", "broker-a", 1, 7)].handle) - 10_000
            broker.now = due
            await table.scan(due)
            assert broker.changes[-1] == ("MSG", slice_ms), renewal
        return await table.take("client", "group", "MSG", first)

    newest = asyncio.run(run())
    assert newest is not None and newest != first and newest.split()[2] == str(RENEW_SLICES_MS[-1])
    assert len(table) == 0
    assert asyncio.run(table.take("client", "group", "MSG", first)) is None


def test_renewal_stops_after_the_longest_time_with_the_groups_retry_delay() -> None:
    broker = Broker()
    table = renewals(broker)
    table.add("client", held())
    asyncio.run(table.scan(NOW + RENEW_MAX_MS))
    assert broker.changes == [("MSG", retry_delay_ms(0))] and retry_delay_ms(0) == 10_000
    assert len(table) == 0


def test_failed_renewals_are_retried_then_given_up() -> None:
    broker = Broker()
    broker.failing = True
    table = renewals(broker)
    table.add("client", held())
    for _ in range(MAX_RENEW_RETRIES + 1):
        asyncio.run(table.scan(NOW + 55_000))
    assert len(broker.changes) == MAX_RENEW_RETRIES and len(table) == 0


def test_a_refused_renewal_lets_the_message_go() -> None:
    broker = Broker()
    broker.refusing = True
    table = renewals(broker)
    table.add("client", held())
    asyncio.run(table.scan(NOW + 55_000))
    assert len(broker.changes) == 1 and len(table) == 0


def test_a_client_gone_gets_its_messages_released() -> None:
    broker = Broker()
    table = renewals(broker)
    table.add("client", held())
    broker.online = False
    asyncio.run(table.scan(NOW))
    assert broker.changes == [("MSG", INVISIBLE_WHEN_CLEAR_MS)] and len(table) == 0


def test_the_embedded_proxy_renews_and_acks_with_the_newest_handle(
        rocketmq_broker: SyncEmbeddedRocketMQ) -> None:
    broker = rocketmq_broker.embedded.broker
    assert broker is not None and broker.grpc is not None and rocketmq_broker.grpc_addr is not None
    table = broker.grpc.consumer.renewals
    table.ahead_ms, table.period_ms = 59_000, 200  # renew at the first look after the receive
    client = ProxyClient(rocketmq_broker.grpc_addr)
    try:
        topic, group = "renewed_topic", "renewed_group"

        async def create() -> None:
            admin = await RemotingClient.connect(rocketmq_broker.broker_addr)
            try:
                await create_topic(admin, topic, "NORMAL")
                await create_group(admin, group)
            finally:
                await admin.close()

        rocketmq_broker.call(create())
        _, answer = client.announce(client.consumer_settings(group, topic, client_type=v2.PUSH_CONSUMER))
        assert answer.status.code == Code.OK
        sent = client.send(message(topic))
        assert sent.status.code == Code.OK, sent.status
        got: list[v2.Message] = []
        deadline = time.monotonic() + 30
        while not got and time.monotonic() < deadline:
            _, got = receive(client, group, topic, auto_renew=True)
        assert [m.system_properties.message_id for m in got] == [sent.entries[0].message_id]
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not any(
                h.renewals for handles in list(table._held.values()) for h in list(handles.values())):
            time.sleep(0.2)
        (renewed,) = [h for handles in table._held.values() for h in handles.values()]
        assert renewed.renewals >= 1 and renewed.handle != got[0].system_properties.receipt_handle
        acked = ack(client, group, topic, *got)
        assert acked.status.code == Code.OK, acked
        assert len(table) == 0
    finally:
        client.close()
