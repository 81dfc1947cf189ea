"""The broker's name server registration loop: woken by topic changes, always stoppable."""

from __future__ import annotations

import asyncio

import pytest

from rocketmq_spec.reference_broker.broker.registration import BrokerRegistrar
from rocketmq_spec.reference_broker.config import BrokerConfig
from tests.broker_support import run

STOP_BOUND = 5.0
"""Seconds stop() may take; the registration period is at least 10 s, so a swallowed cancel shows."""


@pytest.mark.parametrize("yields", range(5))
def test_stop_right_after_a_topic_change(yields: int) -> None:
    """A wake-up and a stop in the same few loop turns: the stop must not be lost.

    ``asyncio.wait_for`` of Python 3.11 returns the inner result when the cancellation arrives after the
    inner wait finished but before the waiting task resumed, so the loop went on registering and stop()
    hung. Each count of loop turns between the wake-up and the stop hits a different step of that race.
    """

    async def scenario() -> bool:
        registrar = BrokerRegistrar(BrokerConfig(namesrv_addr=None), dict)
        await registrar.start()
        await asyncio.sleep(0)
        registrar.topics_changed()
        for _ in range(yields):
            await asyncio.sleep(0)
        stopping = asyncio.ensure_future(registrar.stop())
        done, _ = await asyncio.wait([stopping], timeout=STOP_BOUND)
        return stopping in done

    assert run(scenario())
