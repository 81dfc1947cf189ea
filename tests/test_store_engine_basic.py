"""The store engine's put and read paths, checked against the codec's independent readers."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from rocketmq_spec.codec.store import CommitLog, IndexFile, StoreDirectory, decode_record, read_prefix
from rocketmq_spec.codec.store.indexfile import index_keys
from rocketmq_spec.reference_broker.store import (
    BatchItem,
    FlushDiskType,
    GetMessageStatus,
    MessageArrival,
    MessageStore,
    PutMessageStatus,
)
from rocketmq_spec.spec.commitlog import BLANK_MAGIC, MAX_PROPERTIES_BYTES
from rocketmq_spec.spec.hashing import java_string_hash
from rocketmq_spec.spec.message_id import decode_offset_msg_id
from rocketmq_spec.spec.properties import PropertyKey, encode_properties
from rocketmq_spec.spec.store_layout import ABORT_FILE, LOCK_CONTENT, LOCK_FILE
from rocketmq_spec.spec.system_topics import TRANS_HALF_TOPIC, TRANS_OP_HALF_TOPIC
from tests import process_tree
from tests.test_store_engine_helpers import BORN_HOST, TINY_COMMITLOG, assert_consistent, message, tiny_config


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MessageStore]:
    with MessageStore(tiny_config(tmp_path)) as opened:
        yield opened


def test_put_then_pull_returns_the_stored_records(store: MessageStore) -> None:
    results = [store.put_message(message("TopicA", n % 2, n)) for n in range(6)]
    assert [r.status for r in results] == [PutMessageStatus.PUT_OK] * 6
    assert [r.queue_offset for r in results] == [0, 0, 1, 1, 2, 2]
    got = store.get_messages("TopicA", 1, 0, 32)
    assert got.status is GetMessageStatus.FOUND
    assert (got.next_begin_offset, got.min_offset, got.max_offset) == (3, 0, 3)
    decoded = [decode_record(raw) for raw in got.messages]
    assert [r.body for r in decoded] == [b"body-1", b"body-3", b"body-5"]
    assert [r.physical_offset for r in decoded] == [results[n].phys_offset for n in (1, 3, 5)]
    first = decoded[0]
    assert first.store_host == store.store_host and first.born_host == BORN_HOST
    assert decode_offset_msg_id(results[1].msg_id).offset == results[1].phys_offset
    assert results[1].wrote_bytes == first.total_size


def test_stored_properties_gain_cluster_and_lose_wait(store: MessageStore) -> None:
    result = store.put_message(message("TopicA", 0, 1))
    record = store.read_record(result.phys_offset)
    assert record is not None
    assert PropertyKey.WAIT not in record.properties
    assert record.properties[PropertyKey.CLUSTER] == "DefaultCluster"


def test_pull_statuses_follow_the_queue_bounds(store: MessageStore) -> None:
    assert store.get_messages("Nope", 0, 0, 32).status is GetMessageStatus.NO_MATCHED_LOGIC_QUEUE
    for n in range(3):
        store.put_message(message("TopicA", 0, n))
    at_end = store.get_messages("TopicA", 0, 3, 32)
    assert (at_end.status, at_end.next_begin_offset) == (GetMessageStatus.OFFSET_OVERFLOW_ONE, 3)
    beyond = store.get_messages("TopicA", 0, 9, 32)
    assert (beyond.status, beyond.next_begin_offset) == (GetMessageStatus.OFFSET_OVERFLOW_BADLY, 3)
    limited = store.get_messages("TopicA", 0, 0, 2)
    assert (len(limited.messages), limited.next_begin_offset) == (2, 2)


def test_tag_filter_skips_entries_but_advances(store: MessageStore) -> None:
    for n, tag in enumerate(["TagA", "TagB", "TagA", "TagB"]):
        store.put_message(message("TopicA", 0, n, tags=tag))
    only_b = store.get_messages("TopicA", 0, 0, 32, {java_string_hash("TagB")})
    assert only_b.queue_offsets == [1, 3]
    assert only_b.next_begin_offset == 4
    none = store.get_messages("TopicA", 0, 0, 32, {java_string_hash("TagZ")})
    assert (none.status, none.next_begin_offset) == (GetMessageStatus.NO_MATCHED_MESSAGE, 4)


def test_pull_stops_at_the_in_memory_transfer_limit(tmp_path: Path) -> None:
    with MessageStore(tiny_config(tmp_path, mapped_file_size_commit_log=1 << 20,
                                  max_transfer_count_on_message_in_memory=4)) as store:
        for n in range(10):
            store.put_message(message("TopicA", 0, n))
        assert len(store.get_messages("TopicA", 0, 0, 32).messages) == 4


def test_files_roll_with_a_blank_marker_and_records_never_span(tmp_path: Path) -> None:
    with MessageStore(tiny_config(tmp_path)) as store:
        results = [store.put_message(message("TopicA", n % 3, n, body=bytes(300))) for n in range(40)]
    files = sorted((tmp_path / "commitlog").iterdir())
    assert len(files) > 3
    assert all(f.stat().st_size == TINY_COMMITLOG for f in files)
    assert [int(f.name) for f in files] == [n * TINY_COMMITLOG for n in range(len(files))]
    for f in files[:-1]:
        data = f.read_bytes()
        ends = [r.phys_offset + r.wrote_bytes - int(f.name) for r in results
                if int(f.name) <= r.phys_offset < int(f.name) + TINY_COMMITLOG]
        assert max(ends) <= TINY_COMMITLOG - 8
        size, magic = read_prefix(data, max(ends))
        assert (magic, size) == (BLANK_MAGIC, TINY_COMMITLOG - max(ends))
    with CommitLog(tmp_path / "commitlog") as log:
        assert [r.physical_offset for r in log.records()] == [r.phys_offset for r in results]
    assert_consistent(tmp_path)


def test_files_are_sparse(tmp_path: Path) -> None:
    with MessageStore(tiny_config(tmp_path, mapped_file_size_commit_log=64 << 20)) as store:
        store.put_message(message("TopicA", 0, 1))
    commitlog = next((tmp_path / "commitlog").iterdir())
    assert commitlog.stat().st_size == 64 << 20
    assert commitlog.stat().st_blocks * 512 < 1 << 20


def test_store_is_read_by_the_codec_and_the_cli(tmp_path: Path) -> None:
    with MessageStore(tiny_config(tmp_path)) as store:
        sent = [store.put_message(message(f"Topic{n % 2}", n % 4, n)) for n in range(30)]
    assert not (tmp_path / ABORT_FILE).exists()
    assert (tmp_path / LOCK_FILE).read_bytes() == LOCK_CONTENT
    assert_consistent(tmp_path)
    with StoreDirectory(tmp_path) as directory:
        assert [m.physical_offset for m in directory.messages()] == [r.phys_offset for r in sent]
        assert [r.physical_offset for r in directory.lookup_key("Topic1", "key-7")] == [sent[7].phys_offset]
        assert directory.checkpoint().physic_msg_timestamp >= sent[-1].store_timestamp
    dump = process_tree.run([sys.executable, "-m", "rocketmq_spec.codec.cli.store", "dump", str(tmp_path)],
                            capture_output=True, text=True, timeout=120, check=True)
    for result in sent:
        assert result.msg_id in dump.stdout


def test_batch_records_are_consecutive_and_carry_batch_properties(store: MessageStore) -> None:
    items = [BatchItem(b"batch-%d" % n, 0, encode_properties({PropertyKey.UNIQ_KEY: f"U{n}", "i": str(n)}))
             for n in range(3)]
    batch = message("TopicB", 2, 100)
    result = store.put_batch(batch, items)
    assert (result.status, result.msg_num, result.queue_offset) == (PutMessageStatus.PUT_OK, 3, 0)
    records = [decode_record(raw) for raw in store.get_messages("TopicB", 2, 0, 32).messages]
    assert [r.queue_offset for r in records] == [0, 1, 2]
    ids = result.msg_id.split(",")
    assert [r.physical_offset for r in records] == [decode_offset_msg_id(i).offset for i in ids]
    assert records[1].properties_text.startswith(f"{PropertyKey.UNIQ_KEY}\x01U1\x02i\x011\x02")
    assert records[1].properties[PropertyKey.CLUSTER] == "DefaultCluster"
    assert records[1].properties[PropertyKey.WAIT] == "true"


def test_batch_with_delay_is_illegal(store: MessageStore) -> None:
    batch = message("TopicB", 0, 1, extra={PropertyKey.DELAY: "1"})
    assert store.put_batch(batch, [BatchItem(b"x")]).status is PutMessageStatus.MESSAGE_ILLEGAL


def test_oversized_messages_are_refused(tmp_path: Path) -> None:
    with MessageStore(tiny_config(tmp_path, max_message_size=1000)) as store:
        assert store.put_message(message("TopicA", 0, 1, body=bytes(2000))).status \
            is PutMessageStatus.MESSAGE_ILLEGAL
        huge = message("TopicA", 0, 2, extra={"big": "x" * MAX_PROPERTIES_BYTES})
        assert store.put_message(huge).status is PutMessageStatus.PROPERTIES_SIZE_EXCEEDED
        assert store.put_message(message("T" * 128, 0, 3)).status is PutMessageStatus.MESSAGE_ILLEGAL
        assert store.put_message(message("TopicA", 0, 4)).queue_offset == 0


def test_query_by_key_and_view_by_offset(store: MessageStore) -> None:
    sent = [store.put_message(message("TopicA", 0, n)) for n in range(5)]
    found = store.query_by_key("TopicA", "key-3", 32, 0, 2**62)
    assert [decode_record(raw).physical_offset for raw in found.messages] == [sent[3].phys_offset]
    assert found.index_last_update_phyoffset == sent[-1].phys_offset
    shared = store.query_by_key("TopicA", "shared", 3, 0, 2**62)
    # the newest three, in commitlog order (queryMessage sorts the offsets the index walk found)
    assert [decode_record(r).physical_offset for r in shared.messages] == [s.phys_offset for s in sent[2:]]
    view = store.view_by_offset(sent[2].phys_offset)
    assert view is not None and decode_record(view).body == b"body-2"
    assert store.view_by_offset(sent[2].phys_offset + 1) is None


def test_index_rolls_to_a_new_file_when_full(tmp_path: Path) -> None:
    with MessageStore(tiny_config(tmp_path, max_hash_slot_num=7, max_index_num=10)) as store:
        sent = [store.put_message(message("TopicA", 0, n)) for n in range(12)]
        assert store.query_by_key("TopicA", "key-11", 32, 0, 2**62).messages
    files = sorted((tmp_path / "index").iterdir())
    assert len(files) >= 3
    indexed = []
    for path in files:
        with IndexFile(path, slot_count=7, index_count=10) as index:
            indexed += [e.phy_offset for e in index.entries()]
    with StoreDirectory(tmp_path) as directory:
        expected = [r.physical_offset for r in directory.messages() for _ in index_keys(r, tags=False)]
    assert indexed == expected
    assert sorted(set(indexed)) == [r.phys_offset for r in sent]
    assert_consistent(tmp_path, index_sizes=(7, 10))


def test_search_offset_by_timestamp_and_earliest_time(store: MessageStore) -> None:
    sent = [store.put_message(message("TopicA", 0, n)) for n in range(4)]
    assert store.earliest_message_time("TopicA", 0) == sent[0].store_timestamp
    assert store.search_offset_by_timestamp("TopicA", 0, sent[2].store_timestamp) in {
        n for n, r in enumerate(sent) if r.store_timestamp == sent[2].store_timestamp}
    assert store.search_offset_by_timestamp("TopicA", 0, 0) == 0
    assert store.search_offset_by_timestamp("Nope", 0, 0) == 0


def test_arrivals_are_announced(store: MessageStore) -> None:
    seen: list[MessageArrival] = []
    store.arrivals.subscribe(seen.append)
    store.put_message(message("TopicA", 3, 1, tags="TagX"))
    assert seen == [MessageArrival("TopicA", 3, 1, java_string_hash("TagX"), seen[0].store_timestamp)]


def test_sync_flush_put_waits_for_the_flush(tmp_path: Path) -> None:
    async def send(store: MessageStore) -> list[PutMessageStatus]:
        store.arrivals.bind_loop(asyncio.get_running_loop())
        results = await asyncio.gather(*(store.put_message_async(message("TopicA", 0, n)) for n in range(20)))
        return [r.status for r in results]

    with MessageStore(tiny_config(tmp_path, flush_disk_type=FlushDiskType.SYNC_FLUSH)) as store:
        assert store.put_message(message("TopicA", 0, 100)).status is PutMessageStatus.PUT_OK
        assert asyncio.run(send(store)) == [PutMessageStatus.PUT_OK] * 20


def test_second_store_on_the_same_root_is_refused(tmp_path: Path) -> None:
    with MessageStore(tiny_config(tmp_path)):
        probe = ("import sys; from rocketmq_spec.reference_broker.store import MessageStore, StoreConfig\n"
                 "try:\n    MessageStore(StoreConfig(sys.argv[1])).open()\n"
                 "except Exception as exc:\n    print(type(exc).__name__, exc)\n")
        out = process_tree.run([sys.executable, "-c", probe, str(tmp_path)], capture_output=True, text=True,
                               timeout=60, check=True)
    assert out.stdout.startswith("StoreError Lock failed")


def test_transaction_commit_and_rollback(store: MessageStore) -> None:
    half_props = {PropertyKey.TRANSACTION_PREPARED: "true", PropertyKey.PRODUCER_GROUP: "G"}
    committed = store.put_half_message(message("TopicTx", 2, 1, extra=half_props))
    rolled_back = store.put_half_message(message("TopicTx", 3, 2, extra=half_props))
    assert (committed.queue_offset, rolled_back.queue_offset) == (0, 1)
    half = store.read_record(committed.phys_offset)
    assert half is not None and half.topic == TRANS_HALF_TOPIC and half.queue_id == 0
    assert half.properties[PropertyKey.REAL_TOPIC] == "TopicTx"
    assert store.end_transaction(committed.phys_offset, commit=True).ok
    assert store.end_transaction(rolled_back.phys_offset, commit=False).ok
    final = decode_record(store.get_messages("TopicTx", 2, 0, 32).messages[0])
    assert (final.sys_flag & 0xC, final.prepared_transaction_offset) == (0x8, committed.phys_offset)
    assert store.max_offset("TopicTx", 3) == 0
    ops = [decode_record(r) for r in store.get_messages(TRANS_OP_HALF_TOPIC, 0, 0, 32).messages]
    assert [(op.body, op.tags) for op in ops] == [(b"0", "d"), (b"1", "d")]
