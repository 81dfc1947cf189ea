"""JSON command bodies: every Java-written body in the golden frames re-encodes byte for byte."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rocketmq_spec.codec.bodies import (
    decode_body,
    decode_register_broker_body,
    encode_body,
    encode_register_broker_body,
)
from rocketmq_spec.codec.command import decode
from rocketmq_spec.spec import bodies
from rocketmq_spec.spec.errors import BodyError
from rocketmq_spec.spec.golden import JAVA_FRAMES

_BODY_OF = {
    ("REGISTER_BROKER", False): bodies.REGISTER_BROKER_BODY,
    ("REGISTER_BROKER", True): bodies.KV_TABLE,
    ("GET_ROUTEINFO_BY_TOPIC", True): bodies.TOPIC_ROUTE_DATA,
    ("GET_BROKER_CLUSTER_INFO", True): bodies.CLUSTER_INFO,
    ("HEART_BEAT", False): bodies.HEARTBEAT_DATA,
    ("GET_CONSUMER_LIST_BY_GROUP", True): bodies.CONSUMER_LIST,
}


def _golden_bodies() -> list[Any]:
    params = []
    for entry in json.loads((JAVA_FRAMES / "INDEX.json").read_text())["frames"]:
        name = entry.get("requestCodeName") if entry["isResponse"] else entry["codeName"]
        spec = _BODY_OF.get((name, entry["isResponse"]))
        if spec is not None and entry["bodyLength"] and not (entry["isResponse"] and entry["code"] != 0):
            params.append(pytest.param(entry["file"], spec, id=entry["file"]))
    return params


@pytest.mark.parametrize(("file", "spec"), _golden_bodies())
def test_golden_body_round_trip(file: str, spec: bodies.BodySpec) -> None:
    body = decode((JAVA_FRAMES / file).read_bytes()).body
    assert body is not None
    assert encode_body(spec, decode_body(spec, body)) == body


def test_unquoted_integer_keys_are_read() -> None:
    route = decode_body(bodies.TOPIC_ROUTE_DATA, b'{"brokerDatas":[{"brokerAddrs":{0:"127.0.0.1:10911"},'
                                                 b'"brokerName":"b","cluster":"c"}],"queueDatas":[]}')
    assert route["brokerDatas"][0]["brokerAddrs"] == {0: "127.0.0.1:10911"}


def test_bean_properties_sorted_and_nulls_dropped() -> None:
    body = encode_body(bodies.MESSAGE_QUEUE, {"topic": "t", "queueId": 1, "brokerName": None})
    assert body == b'{"queueId":1,"topic":"t"}'


@pytest.mark.parametrize("data", [b"[1]", b"{", b'{"lockOKMQSet":[{"queueId":"one"}]}',
                                  b'{"lockOKMQSet":[{"queueId":true}]}'])
def test_bad_bodies(data: bytes) -> None:
    with pytest.raises(BodyError):
        decode_body(bodies.LOCK_BATCH_RESPONSE, data)


def test_compressed_register_body_round_trip() -> None:
    value: dict[str, Any] = {"filterServerList": [], "topicConfigSerializeWrapper": {
        "dataVersion": {"counter": 3, "timestamp": 1700000000000},
        "topicConfigTable": {"T": {"topicName": "T", "readQueueNums": 4, "writeQueueNums": 4, "perm": 6,
                                   "topicFilterType": "SINGLE_TAG"}}}}
    data = encode_register_broker_body(value, compressed=True)
    assert data[:1] == b"\x78"
    # what TopicConfig.encode() leaves out comes back as TopicConfig's Java defaults, in either form
    defaulted = {**value["topicConfigSerializeWrapper"]["topicConfigTable"]["T"], "order": False,
                 "topicSysFlag": 0}
    assert decode_register_broker_body(data, compressed=True) == {**value, "topicConfigSerializeWrapper": {
        **value["topicConfigSerializeWrapper"], "topicConfigTable": {"T": defaulted}}}
    with pytest.raises(BodyError):
        decode_register_broker_body(data[:-3], compressed=True)
    plain = encode_register_broker_body(value, compressed=False)
    assert decode_register_broker_body(plain, compressed=False) == decode_register_broker_body(
        data, compressed=True)


def test_heartbeat_of_a_cpp_client_reads_ordinals_and_numeric_strings() -> None:
    """rocketmq-nodejs (C++ 2.x) sends enum ordinals and subVersion as a string; fastjson reads both."""
    body = (b'{"clientID":"127.0.0.1@1","consumerDataSet":[{"consumeFromWhere":0,"consumeType":1,'
            b'"groupName":"G","messageModel":1,"subscriptionDataSet":[{"subString":"*",'
            b'"subVersion":"1795334520211","topic":"T"}]}]}')
    [consumer] = decode_body(bodies.HEARTBEAT_DATA, body)["consumerDataSet"]
    assert (consumer["consumeFromWhere"], consumer["consumeType"], consumer["messageModel"]) == (
        "CONSUME_FROM_LAST_OFFSET", "CONSUME_PASSIVELY", "CLUSTERING")
    assert consumer["subscriptionDataSet"][0]["subVersion"] == 1795334520211


@pytest.mark.parametrize("bad", [b'"consumeType":7',
                                 b'"subscriptionDataSet":[{"subVersion":"1x","topic":"T"}]'])
def test_heartbeat_with_an_unknown_ordinal_or_a_non_numeric_string_is_a_body_error(bad: bytes) -> None:
    body = b'{"clientID":"c","consumerDataSet":[{' + bad + b',"groupName":"G"}]}'
    with pytest.raises(BodyError) as info:
        decode_body(bodies.HEARTBEAT_DATA, body)
    assert info.value.clause == "RMQ-CMD-BODY-LENIENT-SCALARS"


@pytest.mark.parametrize(("spec", "body"), [
    (bodies.HEARTBEAT_DATA, b'{"clientID":"c","producerDataSet":[{}]}'),
    (bodies.HEARTBEAT_DATA, b'{"clientID":"c","consumerDataSet":[{"groupName":null}]}'),
    (bodies.HEARTBEAT_DATA, b'{"producerDataSet":[]}'),
    (bodies.LOCK_BATCH_REQUEST, b'{"clientId":"c","consumerGroup":"g","mqSet":[{"topic":"t","queueId":0}]}'),
    (bodies.LOCK_BATCH_REQUEST, b'{"clientId":"c","consumerGroup":"g",'
                                b'"mqSet":[{"brokerName":"b","topic":"t"}]}'),
    (bodies.LOCK_BATCH_REQUEST, b'{"clientId":"c","mqSet":[]}'),
    (bodies.REGISTER_BROKER_BODY, b'{"topicConfigSerializeWrapper":{"topicConfigTable":{"t":{"perm":6}}}}'),
])
def test_a_body_without_a_field_the_receiver_needs_is_a_body_error(spec: bodies.BodySpec,
                                                                   body: bytes) -> None:
    with pytest.raises(BodyError) as info:
        decode_body(spec, body)
    assert info.value.clause == "RMQ-CMD-BODY-REQUIRED"


def test_absent_primitive_fields_take_their_java_defaults() -> None:
    table = decode_body(bodies.REGISTER_BROKER_BODY,
                        b'{"topicConfigSerializeWrapper":{"topicConfigTable":{"t":{"topicName":"t"}}}}')
    assert table["topicConfigSerializeWrapper"]["topicConfigTable"]["t"] == {
        "order": False, "perm": 6, "readQueueNums": 16, "topicFilterType": "SINGLE_TAG", "topicName": "t",
        "topicSysFlag": 0, "writeQueueNums": 16}
    assert decode_body(bodies.HEARTBEAT_DATA, b'{"clientID":"c"}') == {
        "clientID": "c", "consumerDataSet": [], "producerDataSet": []}
