"""``PopReviveService``: reads the revive queues and sends back what nobody acked (RMQ-POP-REVIVE).

Checkpoints and acks arrive in a revive queue when they come due (they are timer messages). A checkpoint
is kept until its batch's revive time plus one ack interval has passed, so the acks written for it have
arrived too; then every offset of the batch no ack named is written to the group's pop retry topic. How
far each revive queue has been decided is the offset of group CID_RMQ_SYS_REVIVE_GROUP, as Java keeps it:
the revive-queue offset of the last record decided (the one before the oldest checkpoint still open), not
the next one to read. ``PopReviveService`` resumes at that offset + 1 (-1, absent, starts at 0), so a
restart, of either implementation on the other's store, reads again only what was not decided
(RMQ-POP-REVIVE-OFFSET).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from rocketmq_spec.codec.bodies import decode_body
from rocketmq_spec.codec.store.record import MessageRecord
from rocketmq_spec.reference_broker.broker.offsets import ConsumerOffsetManager
from rocketmq_spec.reference_broker.broker.topics import TopicConfigManager
from rocketmq_spec.reference_broker.pop.records import Ack, CheckPoint
from rocketmq_spec.reference_broker.store import MessageStore
from rocketmq_spec.reference_broker.store.message import InnerMessage
from rocketmq_spec.spec.errors import RocketMQSpecError
from rocketmq_spec.spec.pop import (
    ACK_MSG,
    ACK_TAG,
    ACK_TIME_INTERVAL_MS,
    BATCH_ACK_MSG,
    BATCH_ACK_TAG,
    CK_TAG,
    POP_CHECKPOINT,
    RETRY_QUEUE_NUMS,
    pop_retry_topic,
    revive_resume_offset,
)
from rocketmq_spec.spec.properties import PropertyKey
from rocketmq_spec.spec.system_topics import RETRY_PREFIX, REVIVE_GROUP

log = logging.getLogger(__name__)

Key = tuple[str, int, str, int, int, str]


@dataclass
class _Open:
    ck: CheckPoint
    revive_offset: int
    acked: set[int] = field(default_factory=set)


@dataclass
class _ReviveQueue:
    read_to: int = -1
    open: dict[Key, _Open] = field(default_factory=dict)
    early_acks: dict[Key, set[int]] = field(default_factory=dict)


class ReviveService:
    def __init__(self, revive_topic: str, queue_num: int, topics: TopicConfigManager,
                 offsets: ConsumerOffsetManager, store: MessageStore) -> None:
        self.revive_topic = revive_topic
        self.topics = topics
        self.offsets = offsets
        self.store = store
        self._queues = [_ReviveQueue() for _ in range(queue_num)]

    def revive(self, now: int) -> int:
        """One round over every revive queue; returns how many messages were written back."""
        return sum(self._revive_queue(queue_id, state, now) for queue_id, state in enumerate(self._queues))

    def _revive_queue(self, queue_id: int, state: _ReviveQueue, now: int) -> int:
        queue = self.store.consume_queue(self.revive_topic, queue_id)
        if queue is None:
            return 0
        if state.read_to < 0:
            committed = self.offsets.query(REVIVE_GROUP, self.revive_topic, queue_id)
            state.read_to = max(revive_resume_offset(committed), queue.min_offset)
        while state.read_to < queue.max_offset:
            entry = queue.entry(state.read_to)
            record = self.store.read_record(entry[0]) if entry else None
            if record is not None:
                self._take(state, record, state.read_to)
            state.read_to += 1
        revived = 0
        for key, pending in list(state.open.items()):
            if now < pending.ck.revive_time + ACK_TIME_INTERVAL_MS:
                continue
            for offset in pending.ck.offsets:
                if offset not in pending.acked and self._write_back(pending.ck, offset):
                    revived += 1
            del state.open[key]
        last_decided = min((p.revive_offset for p in state.open.values()), default=state.read_to) - 1
        committed = self.offsets.query(REVIVE_GROUP, self.revive_topic, queue_id)
        if last_decided >= 0 and committed != last_decided:
            self.offsets.commit(REVIVE_GROUP, self.revive_topic, queue_id, last_decided)
        return revived

    def _take(self, state: _ReviveQueue, record: MessageRecord, revive_offset: int) -> None:
        tag = record.properties.get(PropertyKey.TAGS)
        try:
            if tag == CK_TAG:
                ck = CheckPoint.from_json(decode_body(POP_CHECKPOINT, record.body))
                opened = _Open(ck, revive_offset, state.early_acks.pop(ck.key, set()))
                state.open[ck.key] = opened
            elif tag in (ACK_TAG, BATCH_ACK_TAG):
                ack = Ack.from_json(decode_body(BATCH_ACK_MSG if tag == BATCH_ACK_TAG else ACK_MSG,
                                                record.body))
                target = state.open.get(ack.key)
                (target.acked if target else state.early_acks.setdefault(ack.key, set())).update(ack.offsets)
        except RocketMQSpecError as exc:
            log.warning("revive record at %d of %s skipped: %s", revive_offset, self.revive_topic, exc)

    def _write_back(self, ck: CheckPoint, offset: int) -> bool:
        """``reviveRetry``: the original message, RECONSUME_TIMES + 1 and 1ST_POP_TIME, to the retry topic."""
        queue = self.store.consume_queue(ck.topic, ck.queue_id)
        entry = queue.entry(offset) if queue else None
        original = self.store.read_record(entry[0]) if entry else None
        if original is None:
            return False
        retry = ck.topic if ck.topic.startswith(RETRY_PREFIX) else pop_retry_topic(ck.topic, ck.group)
        self.topics.create_in_send_back(retry, RETRY_QUEUE_NUMS)
        if self.offsets.query(ck.group, retry, 0) < 0:
            self.offsets.commit(ck.group, retry, 0, 0)
        properties = dict(original.properties)
        if original.reconsume_times == 0 or PropertyKey.FIRST_POP_TIME not in properties:
            properties[PropertyKey.FIRST_POP_TIME] = str(ck.pop_time)
        message = InnerMessage(retry, 0, original.body, properties, original.born_timestamp,
                               self.store.store_host,
                               flag=original.flag, sys_flag=original.sys_flag,
                               reconsume_times=original.reconsume_times + 1)
        return self.store.put_broker_message(message).ok
