"""One broker writes a store, another takes it over: what the first wrote must be what the second serves.

Used by ``tests/test_store_takeover.py`` with any two implementations. The writer creates a topic of four
queues, sends keyed, tagged messages with a user property to each queue and commits a consumer offset per
queue; it is then stopped cleanly. The reader, started on the same store directory, must serve every
message at its queue offset with its body and properties, answer the group's committed offsets, and
append the next message at the offset after the last one. Everything goes over the wire with the spec's
tables, so neither side's internals are involved.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field

from rocketmq_spec.admin.wire import AdminConnection
from rocketmq_spec.codec.store import MessageRecord, decode_records
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.properties import encode_properties
from rocketmq_spec.spec.sysflag import PullSysFlag
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC
from tests.mqadmin_commands import create_group

QUEUES = 4
PER_QUEUE = 5


@dataclass(frozen=True)
class Sent:
    queue_id: int
    queue_offset: int
    body: bytes
    key: str


@dataclass
class Scene:
    topic: str
    group: str
    sent: list[Sent] = field(default_factory=list)

    def committed(self, queue_id: int) -> int:
        """The offset the group commits on a queue (distinct per queue, so a mixed-up table shows)."""
        return queue_id + 1


def send(connection: AdminConnection, topic: str, queue_id: int, body: bytes, key: str,
         extra: dict[str, str] | None = None) -> int:
    """Send one keyed message (``extra``: more properties, e.g. a timer's); returns its queue offset."""
    answer = connection.call(RequestCode.SEND_MESSAGE_V2, {
        "producerGroup": "takeover_producer", "topic": topic, "defaultTopic": DEFAULT_TOPIC,
        "defaultTopicQueueNums": QUEUES, "queueId": queue_id, "sysFlag": 0,
        "bornTimestamp": int(time.time() * 1000), "flag": 0,
        "properties": encode_properties({"KEYS": key, "TAGS": "TagT", "UNIQ_KEY": uuid.uuid4().hex.upper(),
                                         "WAIT": "true", "takeover": key, **(extra or {})}),
        "reconsumeTimes": 0, "unitMode": False, "batch": False}, body)
    return int(answer.header["queueOffset"])


def create_topic(connection: AdminConnection, topic: str, queues: int) -> None:
    connection.call(RequestCode.UPDATE_AND_CREATE_TOPIC, {
        "topic": topic, "defaultTopic": DEFAULT_TOPIC, "readQueueNums": queues, "writeQueueNums": queues,
        "perm": 6, "topicFilterType": "SINGLE_TAG", "topicSysFlag": 0, "order": False})


def write(broker: str) -> Scene:
    suffix = uuid.uuid4().hex[:8]
    scene = Scene(f"takeover_{suffix}", f"takeover_group_{suffix}")
    with AdminConnection(broker, 10.0) as connection:
        create_topic(connection, scene.topic, QUEUES)
        for number in range(QUEUES * PER_QUEUE):
            queue_id, key = number % QUEUES, f"k{number}_{suffix}"
            body = f"takeover message {number} ".encode() * (number + 1)
            scene.sent.append(Sent(queue_id, send(connection, scene.topic, queue_id, body, key), body, key))
        create_group(connection, scene.group)
        for queue_id in range(QUEUES):
            connection.call(RequestCode.UPDATE_CONSUMER_OFFSET, {
                "consumerGroup": scene.group, "topic": scene.topic, "queueId": queue_id,
                "commitOffset": scene.committed(queue_id)})
    return scene


def pull(connection: AdminConnection, group: str, topic: str, queue_id: int) -> list[MessageRecord]:
    """Up to 32 records of a queue from its first offset (none when the queue is empty)."""
    answer = connection.call(RequestCode.PULL_MESSAGE, {
        "consumerGroup": group, "topic": topic, "queueId": queue_id, "queueOffset": 0,
        "maxMsgNums": 32, "sysFlag": int(PullSysFlag.SUBSCRIPTION), "commitOffset": 0,
        "suspendTimeoutMillis": 0, "subscription": "*", "subVersion": 0, "expressionType": "TAG"},
        accept=(ResponseCode.SUCCESS, ResponseCode.PULL_NOT_FOUND, ResponseCode.PULL_OFFSET_MOVED))
    return decode_records(answer.command.body) if answer.command.code == ResponseCode.SUCCESS else []


def problems(broker: str, scene: Scene) -> list[str]:
    """What the reader serves differently from what the writer stored (empty: a faithful takeover)."""
    found: list[str] = []
    with AdminConnection(broker, 10.0) as connection:
        for queue_id in range(QUEUES):
            expected = sorted((s.queue_offset, s.body, s.key) for s in scene.sent if s.queue_id == queue_id)
            served = [(record.queue_offset, record.body, record.properties.get("takeover", ""))
                      for record in pull(connection, f"{scene.group}_reader", scene.topic, queue_id)]
            if served != expected:
                found.append(f"queue {queue_id}: served {[s[0] for s in served]} {[s[2] for s in served]}, "
                             f"stored {[e[0] for e in expected]} {[e[2] for e in expected]}")
            answer = connection.call(RequestCode.QUERY_CONSUMER_OFFSET, {
                "consumerGroup": scene.group, "topic": scene.topic, "queueId": queue_id},
                accept=(ResponseCode.SUCCESS, ResponseCode.QUERY_NOT_FOUND))
            offset = answer.header.get("offset") if answer.command.code == ResponseCode.SUCCESS else None
            if offset != (committed := scene.committed(queue_id)):
                found.append(f"queue {queue_id}: group offset {offset}, committed {committed}")
            nxt = send(connection, scene.topic, queue_id, b"after takeover", f"next{queue_id}")
            if nxt != PER_QUEUE:
                found.append(f"queue {queue_id}: next message stored at offset {nxt}, expected {PER_QUEUE}")
    return found
