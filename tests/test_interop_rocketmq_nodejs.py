"""npm rocketmq-nodejs 1.1.2 (N-API addon over the C++ client 2.x) against the reference broker: sync and
async sends and a clustering push consumer across a broker restart, and the retry path of a refused
message. The client sets only tags and keys and hands received bodies over as UTF-8 text, so these
messages carry no user properties and text bodies."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketmq_spec.spec.system_topics import RETRY_PREFIX
from tests.interop_checks import (
    RestartableBroker,
    consume_across_restart,
    make_messages,
    refused_then_accepted,
    require,
    retry_group,
)
from tests.interop_clients import ROCKETMQ_NODEJS

pytestmark = pytest.mark.interop

TAGS = ("TagA", "TagB")


def test_sync_and_async_sends_push_consumer_across_restart(tmp_path: Path) -> None:
    require(ROCKETMQ_NODEJS)
    with RestartableBroker(tmp_path / "store") as broker:
        consume_across_restart(
            ROCKETMQ_NODEJS, broker, "InteropNodejs",
            before=[("sync", make_messages("sync", 3, TAGS, properties=False, binary=False))],
            after=[("async", make_messages("async", 3, TAGS, properties=False, binary=False))],
            properties=False)


def test_refused_message_comes_back_through_the_retry_topic(tmp_path: Path) -> None:
    """The client reports no reconsumeTimes, so the driver counts deliveries per msgId (the UNIQ_KEY,
    which every copy keeps): three deliveries of one msgId are the original and two redeliveries.

    The C++ 2.x consumer looks its group's retry topic up once at start and then only every 30 s; the
    broker creates that topic at the first heartbeat, after the look-up. It is created beforehand, as
    an operator would, so the copies are pulled as soon as they are due."""
    require(ROCKETMQ_NODEJS)
    topic = "InteropNodejsRetry"
    message = make_messages("retry", 1, TAGS, properties=False, binary=False)[0]
    with RestartableBroker(tmp_path / "store") as broker:
        broker.create_topic(f"{RETRY_PREFIX}{retry_group(topic)}", queues=1)
        deliveries = refused_then_accepted(ROCKETMQ_NODEJS, broker, topic, message, times=2, properties=False)
    assert len({event["msgId"] for event in deliveries}) == 1
