"""5.x topic attributes on the reference broker: set and removed through UPDATE_AND_CREATE_TOPIC, kept in
topics.json, listed by GET_ALL_TOPIC_CONFIG; a topic without any keeps 4.9.8's JSON."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketmq_spec.codec import fastjson
from rocketmq_spec.codec.store.configs import load_config
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.embedded import EmbeddedRocketMQ
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC
from rocketmq_spec.spec.topic_attributes import TopicAttributeError, apply
from tests.broker_support import body, config_file, run


def _create(topic: str, attributes: str | None) -> dict[str, str]:
    header = {"topic": topic, "defaultTopic": DEFAULT_TOPIC, "readQueueNums": "4", "writeQueueNums": "4",
              "perm": "6", "topicFilterType": "SINGLE_TAG", "order": "false"}
    return header if attributes is None else {**header, "attributes": attributes}


def test_attributes_are_set_listed_persisted_and_removed(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with EmbeddedRocketMQ(tmp_path / "store") as mq:
            client = await RemotingClient.connect(mq.broker_addr)
            try:
                for topic, attributes in (("Fifo", "+message.type=FIFO"), ("Plain", None)):
                    answer = await client.invoke(client.request(RequestCode.UPDATE_AND_CREATE_TOPIC,
                                                                _create(topic, attributes)))
                    assert answer.code == ResponseCode.SUCCESS
                bad = await client.invoke(client.request(RequestCode.UPDATE_AND_CREATE_TOPIC,
                                                         _create("Fifo", "+message.type=SOMETIMES")))
                assert bad.code == ResponseCode.SYSTEM_ERROR and "SOMETIMES" in (bad.remark or "")
                listed = await client.invoke(client.request(RequestCode.GET_ALL_TOPIC_CONFIG, None))
                table = fastjson.loads(body(listed))["topicConfigTable"]
                assert table["Fifo"]["attributes"] == {"message.type": "FIFO"}
                assert "attributes" not in table["Plain"]
                stored = load_config(config_file(mq.store_path, "topics.json"))["topicConfigTable"]
                assert stored["Fifo"]["attributes"] == {"message.type": "FIFO"}
                removed = await client.invoke(client.request(RequestCode.UPDATE_AND_CREATE_TOPIC,
                                                             _create("Fifo", "-message.type")))
                assert removed.code == ResponseCode.SUCCESS
                listed = await client.invoke(client.request(RequestCode.GET_ALL_TOPIC_CONFIG, None))
                assert "attributes" not in fastjson.loads(body(listed))["topicConfigTable"]["Fifo"]
            finally:
                await client.close()

    run(scenario())


@pytest.mark.parametrize("text", ["message.type=FIFO", "+colour=red", "+message.type"])
def test_unusable_attribute_strings_are_refused(text: str) -> None:
    with pytest.raises(TopicAttributeError):
        apply({}, text)


def test_attribute_string_sets_and_removes() -> None:
    assert apply({"message.type": "FIFO"}, "-message.type") == {}
    assert apply({}, " +message.type=MIXED , ") == {"message.type": "MIXED"}
