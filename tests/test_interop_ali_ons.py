"""npm ali-ons 3.12.0 (pure JavaScript) against the reference broker: sync and async sends and a
clustering push consumer across a broker restart, and the retry path of a refused message."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.interop_checks import (
    RestartableBroker,
    consume_across_restart,
    make_messages,
    refused_then_accepted,
    require,
)
from tests.interop_clients import ALI_ONS

pytestmark = pytest.mark.interop

TAGS = ("TagA", "TagB")


def test_sync_and_async_sends_push_consumer_across_restart(tmp_path: Path) -> None:
    require(ALI_ONS)
    topic = "InteropAliOns"
    with RestartableBroker(tmp_path / "store") as broker:
        broker.create_topic(topic)
        consume_across_restart(ALI_ONS, broker, topic,
                               before=[("sync", make_messages("sync", 3, TAGS))],
                               after=[("async", make_messages("async", 3, TAGS))])


def test_refused_message_comes_back_through_the_retry_topic(tmp_path: Path) -> None:
    """One refusal only: ali-ons 3.12.0 runs a redelivered copy through a wrapper that drops the
    handler's answer, so a copy refused again counts as consumed and never comes back."""
    require(ALI_ONS)
    topic = "InteropAliOnsRetry"
    with RestartableBroker(tmp_path / "store") as broker:
        broker.create_topic(topic)
        message = make_messages("retry", 1, TAGS)[0]
        deliveries = refused_then_accepted(ALI_ONS, broker, topic, message, times=1)
    assert [event["reconsumeTimes"] for event in deliveries] == [0, 1]
    assert deliveries[1]["properties"]["RETRY_TOPIC"] == topic
    assert deliveries[1]["properties"]["ORIGIN_MESSAGE_ID"] == deliveries[0]["msgId"]
