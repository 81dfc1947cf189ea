"""The store codec against a store directory written by a real Apache RocketMQ 4.9.8 broker."""

from __future__ import annotations

import base64
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rocketmq_spec.codec.fastjson import dumps
from rocketmq_spec.codec.store import IndexFile, MessageRecord, StoreDirectory, index_keys, save_config
from rocketmq_spec.codec.store.configs import (
    TOPIC_TABLE,
    consumer_offsets_to_json,
    delay_offsets_to_json,
    table_to_json,
)
from rocketmq_spec.spec.consumequeue import delay_level_ms
from rocketmq_spec.spec.golden import STORE_MANIFEST, STORE_TARBALL
from rocketmq_spec.spec.hashing import tags_code
from rocketmq_spec.spec.indexfile import entry_position, slot_position
from rocketmq_spec.spec.message_id import decode_offset_msg_id
from rocketmq_spec.spec.properties import java_hashmap_order
from rocketmq_spec.spec.store_layout import CONFIG_DIR
from rocketmq_spec.spec.sysflag import TransactionType
from rocketmq_spec.spec.system_topics import SCHEDULE_TOPIC, TRANS_HALF_TOPIC

SCHEDULE_TOPIC = SCHEDULE_TOPIC
HALF_TOPIC = TRANS_HALF_TOPIC


@pytest.fixture(scope="session")
def golden_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tarball extracted with GNU tar (it keeps the 1 GiB commitlog and 420 MB index sparse)."""
    target = tmp_path_factory.mktemp("golden-store")
    subprocess.run(["tar", "-xzf", str(STORE_TARBALL), "-C", str(target)], check=True)
    return target / "store-4x"


@pytest.fixture(scope="session")
def store(golden_store: Path) -> Iterator[StoreDirectory]:
    with StoreDirectory(golden_store) as directory:
        yield directory


@pytest.fixture(scope="session")
def records(store: StoreDirectory) -> list[MessageRecord]:
    return list(store.messages(decompress=True))


@pytest.fixture(scope="session")
def manifest() -> dict[str, Any]:
    return json.loads(STORE_MANIFEST.read_text())


def test_every_record_decodes_with_a_valid_crc(records: list[MessageRecord]) -> None:
    assert len(records) == 50
    assert records[-1].physical_offset + records[-1].total_size == 34615


def test_reencoding_is_byte_identical(store: StoreDirectory, records: list[MessageRecord]) -> None:
    raw = (store.root / "commitlog" / "00000000000000000000").open("rb").read(34615)
    assert b"".join(r.encode() for r in records) == raw


def test_plain_records_list_properties_in_java_hashmap_order(records: list[MessageRecord]) -> None:
    plain = [r for r in records if r.topic != "GoldenTopicB"]
    for record in plain:
        names = [pair.split("\u0001")[0] for pair in record.properties_text.split("\u0002")]
        assert java_hashmap_order(names) == names


def test_batch_records_carry_the_broker_suffix(records: list[MessageRecord]) -> None:
    batch = [r for r in records if r.topic == "GoldenTopicB"]
    assert len(batch) == 12
    assert all(
        r.properties_text.endswith("\u0002CLUSTER\u0001DefaultCluster\u0002WAIT\u0001true") for r in batch
    )


def _expected_location(message: dict[str, Any]) -> tuple[str, int]:
    if message["delayTimeLevel"] > 0:
        return SCHEDULE_TOPIC, message["delayTimeLevel"] - 1
    if message["mode"] == "transaction":
        return HALF_TOPIC, 0
    return message["topic"], message["queueId"]


def _sent_record(store: StoreDirectory, message: dict[str, Any]) -> MessageRecord:
    """Transactional sends report no offsetMsgId: their half record is found by UNIQ_KEY instead."""
    if message["offsetMsgId"] is not None:
        record = store.read(decode_offset_msg_id(message["offsetMsgId"]).offset)
        assert record.offset_msg_id == message["offsetMsgId"]
        return record
    (half,) = [r for r in store.lookup_key(HALF_TOPIC, message["msgId"])]
    return half


def test_every_sent_message_is_at_its_offset(store: StoreDirectory, manifest: dict[str, Any]) -> None:
    for message in manifest["messages"]:
        record = _sent_record(store, message)
        topic, queue_id = _expected_location(message)
        assert (record.topic, record.queue_id, record.queue_offset) == (
            topic,
            queue_id,
            message["queueOffset"],
        )
        assert record.uniq_key == message["msgId"]
        assert record.decompressed_body() == base64.b64decode(message["body_b64"])
        for name, value in message["properties_after_send"].items():
            if name != "WAIT" or topic != message["topic"]:
                assert record.properties[name] == value, (message["seq"], name)
        if topic != message["topic"]:
            assert record.properties["REAL_TOPIC"] == message["topic"]
            assert int(record.properties["REAL_QID"]) == message["queueId"]


def _host(text: str) -> str:
    return text.lstrip("/")


def test_consumed_messages_match_the_broker_side_truth(
    store: StoreDirectory, manifest: dict[str, Any]
) -> None:
    consumed = [m for group in manifest["consumed"].values() for m in group]
    assert len(consumed) == 49
    for seen in consumed:
        record = store.read(seen["commitLogOffset"])
        assert (record.topic, record.queue_id, record.queue_offset) == (
            seen["topic"],
            seen["queueId"],
            seen["queueOffset"],
        )
        assert (record.total_size, record.sys_flag, record.body_crc, record.flag) == (
            seen["storeSize"],
            seen["sysFlag"],
            seen["bodyCRC"],
            seen["flag"],
        )
        assert (record.reconsume_times, record.prepared_transaction_offset) == (
            seen["reconsumeTimes"],
            seen["preparedTransactionOffset"],
        )
        assert (record.born_timestamp, record.store_timestamp) == (
            seen["bornTimestamp"],
            seen["storeTimestamp"],
        )
        assert (str(record.born_host), str(record.store_host)) == (
            _host(seen["bornHost"]),
            _host(seen["storeHost"]),
        )
        assert record.properties == seen["properties"]
        assert record.offset_msg_id == seen["offsetMsgId"]
        assert record.decompressed_body() == base64.b64decode(seen["body_b64"])


def test_compressed_bodies_use_all_three_algorithms(records: list[MessageRecord]) -> None:
    assert {r.sys_flag & 0x701 for r in records if r.sys_flag & 1} == {0x101, 0x201, 0x301}


def _tags_code(record: MessageRecord) -> int:
    if record.topic == SCHEDULE_TOPIC:
        return record.store_timestamp + delay_level_ms(int(record.properties["DELAY"]))
    return tags_code(record.tags)


def test_every_queue_entry_points_at_its_record(store: StoreDirectory) -> None:
    entries = 0
    for topic, queue_id in store.queues():
        queue = store.queue(topic, queue_id)
        assert queue.min_offset == 0
        for n in range(queue.min_offset, queue.max_offset):
            offset, size, code = queue.entry(n)
            record = store.read(offset)
            assert (record.topic, record.queue_id, record.queue_offset) == (topic, queue_id, n)
            assert (record.total_size, _tags_code(record)) == (size, code)
            entries += 1
    assert entries == 50  # half and op messages are stored as NOT_TYPE, so every record is queued


def test_every_dispatchable_record_has_a_queue_entry(
    store: StoreDirectory, records: list[MessageRecord]
) -> None:
    for record in records:
        if record.transaction_type in (TransactionType.NOT_TYPE, TransactionType.COMMIT):
            entry = store.queue(record.topic, record.queue_id).entry(record.queue_offset)
            assert entry[:2] == (record.physical_offset, record.total_size)


def test_every_key_is_found_through_the_index(store: StoreDirectory, records: list[MessageRecord]) -> None:
    looked_up = 0
    for record in records:
        if record.transaction_type is TransactionType.ROLLBACK:
            continue
        for key in [*record.keys, *([record.uniq_key] if record.uniq_key else [])]:
            found = store.lookup_key(record.topic, key)
            assert record.physical_offset in [r.physical_offset for r in found], (record.topic, key)
            looked_up += 1
    assert looked_up > 90


def test_rebuilding_the_index_gives_the_same_bytes(
    golden_store: Path, records: list[MessageRecord], tmp_path: Path
) -> None:
    golden_path = next((golden_store / "index").iterdir())
    with IndexFile(golden_path) as golden, IndexFile.create(tmp_path / "rebuilt") as rebuilt:
        for record in records:
            assert rebuilt.put_record(record, tags=False)  # 4.9.8 indexes no tags
        assert rebuilt.header == golden.header
        assert list(rebuilt.entries()) == list(golden.entries())
        with golden_path.open("rb") as handle:
            raw_golden = handle.read(entry_position(golden.header.index_count))
        slots = {slot_position(e.key_hash) for e in golden.entries()}
        assert len(slots) == golden.header.hash_slot_count
        rebuilt.flush()
        with (tmp_path / "rebuilt").open("rb") as handle:
            raw_rebuilt = handle.read(len(raw_golden))
        for pos in slots:
            assert raw_rebuilt[pos : pos + 4] == raw_golden[pos : pos + 4]
        entries_start = entry_position(1)
        assert raw_rebuilt[entries_start:] == raw_golden[entries_start:]
        assert raw_rebuilt[:40] == raw_golden[:40]
    assert sum(len(index_keys(r, tags=False)) for r in records) == golden.header.index_count - 1


def test_checkpoint_follows_the_last_record(store: StoreDirectory, records: list[MessageRecord]) -> None:
    checkpoint = store.checkpoint()
    assert checkpoint.physic_msg_timestamp == records[-1].store_timestamp
    assert checkpoint.logics_msg_timestamp == records[-1].store_timestamp
    assert checkpoint.min_timestamp == records[-1].store_timestamp - 3000


def test_config_files_decode(store: StoreDirectory) -> None:
    assert store.consumer_offsets()[("GoldenTopicA", "GoldenConsumerGroup")] == {0: 9, 1: 7, 2: 5, 3: 5}
    assert store.delay_offsets() == {1: 1, 2: 1}
    assert store.topics()["GoldenTopicA"]["writeQueueNums"] == 4
    assert store.subscription_groups()["GoldenConsumerGroup"]["retryMaxTimes"] == 16


@pytest.mark.parametrize(
    "name",
    [
        "topics.json",
        "consumerOffset.json",
        "subscriptionGroup.json",
        "delayOffset.json",
        "consumerFilter.json",
    ],
)
def test_config_files_are_rewritten_byte_identically(
    store: StoreDirectory, name: str, tmp_path: Path
) -> None:
    original = (store.root / CONFIG_DIR / name).read_text()
    assert dumps(store.config(name), pretty=True) == original
    target = tmp_path / name
    target.write_text("old")
    save_config(target, store.config(name))
    assert target.read_text() == original
    assert (tmp_path / f"{name}.bak").read_text() == "old"


def test_typed_config_writers_reproduce_the_files(store: StoreDirectory) -> None:
    def original(name: str) -> str:
        return (store.root / CONFIG_DIR / name).read_text()

    assert dumps(consumer_offsets_to_json(store.consumer_offsets()), pretty=True) == original(
        "consumerOffset.json"
    )
    assert dumps(delay_offsets_to_json(store.delay_offsets()), pretty=True) == original("delayOffset.json")
    version = store.config("topics.json")["dataVersion"]
    topics = table_to_json(store.topics(), TOPIC_TABLE, version["counter"], version["timestamp"])
    assert dumps(topics, pretty=True) == original("topics.json")
