"""Admin bodies against the golden frames of a 4.9.8 broker: decoded through the spec's tables and written
back byte for byte (MessageQueue-keyed maps included); Properties bodies; the broker's counters."""

from __future__ import annotations

import pytest

from rocketmq_spec.codec import fastjson
from rocketmq_spec.codec.bodies import (
    decode_body,
    decode_properties_text,
    encode_body,
    encode_properties_text,
    object_key,
)
from rocketmq_spec.codec.fast_store import count_records as record_count
from rocketmq_spec.reference_broker.broker.admin import disk_used_ratio
from rocketmq_spec.reference_broker.broker.stats import DAY, MINUTE, TOPIC_PUT_NUMS, BrokerStats
from rocketmq_spec.spec.admin import runtime_info_keys
from rocketmq_spec.spec.admin_bodies import CONSUME_STATS, RESET_OFFSET_BODY, TOPIC_STATS_TABLE
from rocketmq_spec.spec.bodies import KV_TABLE, BodySpec
from rocketmq_spec.spec.errors import BodyError
from tests.broker_support import golden_command

ADMIN_ANSWERS = [(699, CONSUME_STATS), (715, TOPIC_STATS_TABLE), (8, KV_TABLE), (722, KV_TABLE)]
"""(frame, table) of the answers mqadmin got from the golden broker: consumerProgress, topicStatus, and
clusterList's runtime info on an idle and a busy broker."""


@pytest.mark.parametrize(("seq", "spec"), ADMIN_ANSWERS, ids=[str(seq) for seq, _ in ADMIN_ANSWERS])
def test_golden_admin_bodies_round_trip(seq: int, spec: BodySpec) -> None:
    body = golden_command("json", seq).body or b""
    assert encode_body(spec, decode_body(spec, body)) == body


def test_golden_consume_stats_keys_are_message_queues() -> None:
    stats = decode_body(CONSUME_STATS, golden_command("json", 699).body or b"")
    key = object_key({"topic": "TopicTest", "queueId": 3, "brokerName": "broker-a"})
    assert stats["offsetTable"][key] == {"brokerOffset": 26, "consumerOffset": 26,
                                         "lastTimestamp": 1795335489723}


def test_golden_runtime_info_has_every_key_mqadmin_reads() -> None:
    table = decode_body(KV_TABLE, golden_command("json", 722).body or b"")["table"]
    assert [key for key in runtime_info_keys(409) if key not in table] == []


def test_object_key_written_sorted_and_read_back() -> None:
    body = encode_body(RESET_OFFSET_BODY, {"offsetTable": {
        object_key({"topic": "T", "queueId": 1, "brokerName": "b"}): 7}})
    assert body == b'{"offsetTable":{{"brokerName":"b","queueId":1,"topic":"T"}:7}}'
    key = object_key({"brokerName": "b", "queueId": 1, "topic": "T"})
    assert fastjson.loads(body)["offsetTable"] == {key: 7}


def test_string_key_where_a_message_queue_belongs_is_refused() -> None:
    with pytest.raises(BodyError):
        decode_body(CONSUME_STATS, b'{"offsetTable":{"T":{"brokerOffset":1}}}')


def test_properties_text_round_trip() -> None:
    values = {"brokerName": "broker-a", "autoCreateTopicEnable": True, "listenPort": 10911, "unset": None}
    text = encode_properties_text(values)
    assert text == b"brokerName=broker-a\nautoCreateTopicEnable=true\nlistenPort=10911\n"
    assert decode_properties_text(b"# comment\n" + text) == {
        "brokerName": "broker-a", "autoCreateTopicEnable": "true", "listenPort": "10911"}


def test_properties_text_is_read_as_java_properties_load_reads_bytes() -> None:
    """ISO-8859-1 with escapes undone, as ``MixAll.string2Properties`` reads an update body."""
    assert decode_properties_text(b"regionId=R\\u00e9gion\\t\\\\x\n") == {"regionId": "R\u00e9gion\t\\x"}
    assert decode_properties_text("regionId=Région\n".encode()) == {"regionId": "RÃ©gion"}


def test_properties_line_without_equals_is_refused() -> None:
    with pytest.raises(BodyError):
        decode_properties_text(b"brokerName broker-a\n")


def test_disk_ratio_follows_java_rounding() -> None:
    assert disk_used_ratio(used=25, usable=75) == 0.25
    assert disk_used_ratio(used=2531, usable=8109) == 0.24  # 23.79 % rounds up, as df's Use% does
    assert disk_used_ratio(used=0, usable=0) == -1.0


def test_stats_windows() -> None:
    now = [1_000_000.0]
    stats = BrokerStats(clock=lambda: now[0])
    stats.count_put("T", 6)
    stats.count_put("T", 4)
    data = stats.stats_data(TOPIC_PUT_NUMS, "T")
    assert data is not None
    assert data["statsMinute"] == {"avgpt": 5.0, "sum": 10, "tps": 10 / MINUTE}
    now[0] += 2 * MINUTE
    later = stats.stats_data(TOPIC_PUT_NUMS, "T")
    assert later is not None and later["statsMinute"]["sum"] == 0 and later["statsHour"]["sum"] == 10
    now[0] += DAY
    stats.count_put("T", 1)
    last = stats.stats_data(TOPIC_PUT_NUMS, "T")
    assert last is not None and last["statsDay"]["sum"] == 1
    assert stats.put_total == 11 and stats.stats_data(TOPIC_PUT_NUMS, "other") is None


def test_record_count_walks_total_sizes() -> None:
    record = (12).to_bytes(4, "big") + bytes(8)
    assert record_count(record * 3) == 3
    assert record_count(b"") == 0
