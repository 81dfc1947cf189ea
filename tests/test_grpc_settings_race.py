"""A ReceiveMessage that overtakes its client's own Settings (RMQ-GRPC-RECEIVE-BEFORE-SETTINGS): the
reference proxy waits for them, as long as the Java SDK waits for their answer, instead of answering 50001
as Apache 5.5.0 does."""

from __future__ import annotations

import asyncio

from rocketmq_spec.codec.grpc.v2 import definition_pb2 as v2
from rocketmq_spec.reference_broker.proxy.settings import SettingsStore


def _consumer_settings() -> v2.Settings:
    return v2.Settings(client_type=v2.SIMPLE_CONSUMER,
                       subscription=v2.Subscription(group=v2.Resource(name="g")))


def test_a_receive_waiting_for_settings_gets_them_when_they_arrive() -> None:
    async def scenario() -> v2.Settings | None:
        store = SettingsStore(lambda group: None)
        store.expect("client-1")  # its Telemetry stream opened
        waiting = asyncio.ensure_future(store.arrival("client-1", timeout=30))
        await asyncio.sleep(0)
        assert not waiting.done()
        store.update("client-1", _consumer_settings())
        return await waiting

    got = asyncio.run(scenario())
    assert got is not None and got.subscription.group.name == "g" and got.subscription.receive_batch_size


def test_settings_that_never_come_are_none() -> None:
    async def scenario() -> tuple[v2.Settings | None, int]:
        store = SettingsStore(lambda group: None)
        store.expect("client-2")
        missing = await store.arrival("client-2", timeout=0.01)
        store.unexpect("client-2")  # the stream ended without Settings
        return missing, len(store._awaited)

    assert asyncio.run(scenario()) == (None, 0)


def test_a_client_without_telemetry_is_not_waited_for() -> None:
    async def scenario() -> v2.Settings | None:
        # were it waited for, the hour-long wait would end the test with TimeoutError
        return await asyncio.wait_for(SettingsStore(lambda group: None).arrival("client-4", timeout=3600), 30)

    assert asyncio.run(scenario()) is None


def test_known_settings_are_answered_at_once() -> None:
    async def scenario() -> v2.Settings | None:
        store = SettingsStore(lambda group: None)
        store.update("client-3", _consumer_settings())
        return await store.arrival("client-3", timeout=0)

    assert asyncio.run(scenario()) is not None
