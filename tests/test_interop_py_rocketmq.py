"""PyPI rocketmq 0.4.4 (the Apache C++ client 1.2 behind ctypes) against the reference broker: every
send mode, a tag-filtered clustering push consumer and a pull consumer, across a broker restart, and
the retry path of a refused message."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.interop_checks import (
    IDLE_TIMEOUT_S,
    RestartableBroker,
    assert_consumed_once,
    consume_across_restart,
    make_messages,
    refused_then_accepted,
    require,
)
from tests.interop_clients import PY_ROCKETMQ, run_consumer

pytestmark = pytest.mark.interop

QUEUES = 4
TAGS = ("TagA", "TagB", "TagC")
SUBSCRIBED = ("TagA", "TagB")


def test_all_send_modes_filtered_push_and_pull_across_restart(tmp_path: Path) -> None:
    require(PY_ROCKETMQ)
    topic = "InteropPy"
    orderly = make_messages("orderly", 4, TAGS, shardingKey=lambda i: i % 2 + 1)
    with RestartableBroker(tmp_path / "store") as broker:
        broker.create_topic(topic, QUEUES)
        sent, pushed = consume_across_restart(
            PY_ROCKETMQ, broker, topic,
            before=[("sync", make_messages("sync", 3, TAGS)), ("async", make_messages("async", 3, TAGS))],
            # no "batch": py-rocketmq sends a batch as SEND_MESSAGE with batch="1", which Java's
            # Boolean.parseBoolean reads as false, so Apache 4.9.7 (and the reference broker) store the
            # whole batch body as one message (RMQ-CMD-BOOLEAN)
            after=[("oneway", make_messages("oneway", 3, TAGS)), ("orderly", orderly)],
            expression=" || ".join(SUBSCRIBED), selected=SUBSCRIBED)
        assert {event["tags"] for event in pushed} == set(SUBSCRIBED)

        pulled = run_consumer(PY_ROCKETMQ, broker.namesrv_addr, f"{topic}-pull", topic, "*", expect=len(sent),
                              timeout=IDLE_TIMEOUT_S, kind="pull", property_keys=["origin", "index"])
        assert_consumed_once(sent, pulled, topic)

    # The queue selector put each message on queue shardingKey % QUEUES, in sending order.
    queues = {event["keys"]: event["queueId"] for event in pulled}
    assert [queues[m["keys"]] for m in orderly] == [m["shardingKey"] % QUEUES for m in orderly]
    offsets = [event["queueOffset"] for m in orderly for event in pulled if event["keys"] == m["keys"]]
    assert offsets[2] > offsets[0] and offsets[3] > offsets[1]


def test_refused_message_comes_back_through_the_retry_topic(tmp_path: Path) -> None:
    require(PY_ROCKETMQ)
    with RestartableBroker(tmp_path / "store") as broker:
        message = make_messages("retry", 1, TAGS)[0]
        deliveries = refused_then_accepted(PY_ROCKETMQ, broker, "InteropPyRetry", message, times=2)
    assert [event["reconsumeTimes"] for event in deliveries] == [0, 1, 2]
