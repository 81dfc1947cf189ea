"""OFFSET_MOVED_EVENT: every pull answered PULL_OFFSET_MOVED leaves a message saying which group asked for
which offset and what it was told, as 4.9.8's ``generateOffsetMovedEvent`` writes it."""

from __future__ import annotations

from pathlib import Path

from rocketmq_spec.codec import fastjson
from rocketmq_spec.codec.store import decode_records
from rocketmq_spec.reference_broker.broker.pull import OFFSET_MOVED_EVENT_TOPIC
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.embedded import EmbeddedRocketMQ
from rocketmq_spec.spec.codes import ResponseCode
from rocketmq_spec.spec.properties import PropertyKey
from tests.broker_support import run, store_of
from tests.messaging_support import pull, send, with_broker


def test_offset_moved_pull_writes_an_event(tmp_path: Path) -> None:
    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        for body in (b"a", b"b"):
            assert (await send(client, "TopicM", body, {}, queue_id=2)).code == ResponseCode.SUCCESS
        beyond = await pull(client, "TopicM", 2, 9, group="cg-moved")
        assert beyond.code == ResponseCode.PULL_OFFSET_MOVED
        assert (await pull(client, "TopicM", 2, 1, group="cg-moved")).code == ResponseCode.SUCCESS
        empty = await pull(client, "TopicM", 3, 4, group="cg-empty")  # a queue nothing was written to
        assert empty.code == ResponseCode.PULL_OFFSET_MOVED
        events = decode_records((await pull(client, OFFSET_MOVED_EVENT_TOPIC, 0, 0)).body)
        assert [fastjson.loads(e.body) for e in events] == [
            {"consumerGroup": "cg-moved", "messageQueue": {"brokerName": "broker-a", "queueId": 2,
                                                           "topic": "TopicM"},
             "offsetNew": 2, "offsetRequest": 9},
            {"consumerGroup": "cg-empty", "messageQueue": {"brokerName": "broker-a", "queueId": 3,
                                                           "topic": "TopicM"},
             "offsetNew": 0, "offsetRequest": 4}]
        first = events[0]
        assert first.body.startswith(b'{"consumerGroup":"cg-moved","messageQueue":{"brokerName"')
        assert (first.tags, first.keys) == ("cg-moved", ["cg-moved"])
        assert first.properties == {PropertyKey.TAGS: "cg-moved", PropertyKey.DELAY: "0",
                                    PropertyKey.KEYS: "cg-moved"}
        assert first.queue_id == 0 and first.born_host == first.store_host == store_of(mq.broker).store_host

    run(with_broker(tmp_path / "store", scenario))
