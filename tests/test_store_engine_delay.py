"""Delay levels: parked in SCHEDULE_TOPIC_XXXX with the deliver time as tags code, re-put when due."""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path

from rocketmq_spec.codec.store import StoreDirectory, decode_record
from rocketmq_spec.codec.store.configs import delay_offsets_from_json, load_config
from rocketmq_spec.codec.store.record import HostPort
from rocketmq_spec.reference_broker.store import MessageArrival, MessageStore, PutMessageStatus
from rocketmq_spec.spec.properties import PropertyKey
from rocketmq_spec.spec.system_topics import SCHEDULE_TOPIC
from tests.test_store_engine_helpers import assert_consistent, message, tiny_config

DELIVERY_DEADLINE_S = 30.0
"""Bound on waiting for a 1 s / 2 s delay level to be delivered."""


def test_delayed_message_is_parked_then_delivered(tmp_path: Path) -> None:
    delivered = threading.Event()

    def on_arrival(arrival: MessageArrival) -> None:
        if arrival.topic == "TopicD" and arrival.max_offset == 2:
            delivered.set()

    with MessageStore(tiny_config(tmp_path)) as store:
        store.arrivals.subscribe(on_arrival)
        parked = store.put_message(message("TopicD", 3, 1, extra={PropertyKey.DELAY: "1"}))
        clamped = store.put_message(message("TopicD", 3, 2, extra={PropertyKey.DELAY: "7"}))
        assert parked.status is PutMessageStatus.PUT_OK
        first = store.read_record(parked.phys_offset)
        assert first is not None and (first.topic, first.queue_id) == (SCHEDULE_TOPIC, 0)
        assert first.properties[PropertyKey.REAL_TOPIC] == "TopicD"
        assert first.properties[PropertyKey.REAL_QUEUE_ID] == "3"
        assert first.properties[PropertyKey.WAIT] == "true"
        schedule_queue = store.consume_queue(SCHEDULE_TOPIC, 0)
        assert schedule_queue is not None
        deliver_at = first.store_timestamp + 1000
        assert schedule_queue.entry(0) == (parked.phys_offset, parked.wrote_bytes, deliver_at)
        assert store.max_offset(SCHEDULE_TOPIC, 1) == 1 and clamped.queue_offset == 0
        assert delivered.wait(DELIVERY_DEADLINE_S)
        records = [decode_record(raw) for raw in store.get_messages("TopicD", 3, 0, 32).messages]
    assert [r.body for r in records] == [b"body-1", b"body-2"]
    assert records[0].store_timestamp >= deliver_at
    assert records[0].properties_text == first.properties_text
    assert records[0].born_host == first.born_host
    assert delay_offsets_from_json(load_config(tmp_path / "config" / "delayOffset.json")) == {1: 1, 2: 1}
    assert_consistent(tmp_path)
    with StoreDirectory(tmp_path) as directory:
        assert [r.topic for r in directory.messages()] == [SCHEDULE_TOPIC, SCHEDULE_TOPIC, "TopicD", "TopicD"]


def test_delivered_message_keeps_the_parked_store_host(tmp_path: Path) -> None:
    """``messageTimeup`` copies the parked record's store host (``setStoreHost(msgExt.getStoreHost())``):
    a message parked under another address, e.g. before a restart on a new port, keeps that address."""
    with MessageStore(tiny_config(tmp_path, message_delay_level="1h")) as store:
        parked = store.put_message(message("TopicD", 1, 1, extra={PropertyKey.DELAY: "1"}))
        record = store.read_record(parked.phys_offset)
        assert record is not None and record.store_host == store.store_host
        elsewhere = dataclasses.replace(record, store_host=HostPort("10.0.0.9", 7777))
        delivered = store.put_delivered(elsewhere)
        assert delivered.status is PutMessageStatus.PUT_OK
        copy = store.read_record(delivered.phys_offset)
    assert copy is not None and copy.topic == "TopicD"
    assert copy.store_host == HostPort("10.0.0.9", 7777)
    assert delivered.msg_id == copy.offset_msg_id
