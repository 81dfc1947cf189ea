"""What the broker leaves on disk: a restart on the same store keeps everything, and the files it wrote
read back through the store codec with queues and index agreeing with the commitlog."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rocketmq_spec.codec.cli.store import dump, inconsistencies
from rocketmq_spec.codec.store import decode_records
from rocketmq_spec.codec.store.directory import StoreDirectory
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.embedded import EmbeddedRocketMQ
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from tests.broker_support import fields, run, started, store_of
from tests.messaging_support import pull, send, with_broker

QUEUES = 4
PER_QUEUE = 5
JAVA_INDEX_SIZES = {"max_hash_slot_num": 5_000_000, "max_index_num": 5_000_000 * 4}
"""rmq-store reads index files of Java's default geometry only (a sparse 400 MiB file)."""


async def _fill(mq: EmbeddedRocketMQ, client: RemotingClient) -> dict[int, list[bytes]]:
    sent: dict[int, list[bytes]] = {}
    for n in range(QUEUES * PER_QUEUE):
        queue_id = n % QUEUES
        body = b"message-%d" % n
        answer = await send(client, "TopicR", body, {"TAGS": "T", "KEYS": f"key-{n}"}, queue_id=queue_id)
        assert answer.code == ResponseCode.SUCCESS
        sent.setdefault(queue_id, []).append(body)
    await client.invoke(client.request(RequestCode.UPDATE_CONSUMER_OFFSET, {
        "consumerGroup": "cg", "topic": "TopicR", "queueId": "1", "commitOffset": "3"}))
    return sent


async def _pull_all(client: RemotingClient, queue_id: int) -> list[bytes]:
    answer = await pull(client, "TopicR", queue_id, 0)
    return [r.body for r in decode_records(answer.body)]


def test_restart_on_the_same_store_keeps_messages_offsets_and_topics(tmp_path: Path) -> None:
    store = tmp_path / "store"
    sent = run(with_broker(store, _fill, wire_release="4.9.8"))

    async def after_restart(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        assert not store_of(mq.broker).recovered_abnormally
        topic = started(mq.broker).topics.get("TopicR")
        assert topic is not None and topic.write_queue_nums == QUEUES
        for queue_id, bodies in sent.items():
            assert await _pull_all(client, queue_id) == bodies
        offset = await client.invoke(client.request(RequestCode.QUERY_CONSUMER_OFFSET, {
            "consumerGroup": "cg", "topic": "TopicR", "queueId": "1"}))
        assert offset.ext_fields == {"offset": "3"}
        more = await send(client, "TopicR", b"after restart", {}, queue_id=0)
        assert fields(more)["queueOffset"] == str(PER_QUEUE)
        query = await client.invoke(client.request(RequestCode.QUERY_MESSAGE, {
            "topic": "TopicR", "key": "key-6", "maxNum": "32", "beginTimestamp": "0",
            "endTimestamp": str(2**63 - 1)}))
        assert [r.body for r in decode_records(query.body)] == [b"message-6"]

    run(with_broker(store, after_restart, wire_release="4.9.8"))


def test_store_written_by_the_broker_dumps_and_agrees_with_itself(tmp_path: Path) -> None:
    store = tmp_path / "store"
    sent = run(with_broker(store, _fill, wire_release="4.9.8", **JAVA_INDEX_SIZES))
    with StoreDirectory(store) as directory:
        stored = list(directory.messages())
        assert len(stored) == QUEUES * PER_QUEUE
        assert not directory.crashed
        assert list(inconsistencies(directory, stored)) == []
        for queue_id, bodies in sent.items():
            queue = directory.queue("TopicR", queue_id)
            assert (queue.min_offset, queue.max_offset) == (0, len(bodies))
            assert [directory.read(queue.entry(n)[0]).body for n in range(len(bodies))] == bodies
        for n in range(QUEUES * PER_QUEUE):
            assert [r.body for r in directory.lookup_key("TopicR", f"key-{n}")] == [b"message-%d" % n]
        assert directory.consumer_offsets()[("TopicR", "cg")] == {1: 3}
        assert "TopicR" in directory.topics()
        checkpoint = directory.checkpoint()
        assert checkpoint.physic_msg_timestamp >= stored[-1].store_timestamp
        out = io.StringIO()
        dump(directory, out, as_json=True)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [line["offset_msg_id"] for line in lines] == [r.offset_msg_id for r in stored]
    assert {line["topic"] for line in lines} == {"TopicR"}
