"""POP consumption, sans network: pop, peek, ack, batch ack and change-invisible-time over the message store.

This is the broker's internal API for every front end that pops (the remoting handlers of
``rocketmq_spec.reference_broker.pop.handlers`` and the gRPC proxy's ReceiveMessage / AckMessage /
ChangeInvisibleDuration): each call takes plain values and returns a result record, never a frame.

A non-ordered pop moves the group's offset past the popped messages at once and writes a checkpoint to the
revive topic (Java's behaviour with ``enablePopBufferMerge=false``, the default); whatever the group does not
ack comes back through :mod:`rocketmq_spec.reference_broker.pop.revive`. An ordered pop leaves the offset
where it is and locks the queue to the popped batch (:class:`~reference_broker.pop.order_locks.OrderLocks`)
until the batch is acked or its invisible time ends; each ack commits the first offset of the batch not yet
acked. """

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from rocketmq_spec.codec.store.record import MessageRecord, decode_record, make_record
from rocketmq_spec.reference_broker.broker.filter import TagCodes
from rocketmq_spec.reference_broker.broker.offsets import ConsumerOffsetManager
from rocketmq_spec.reference_broker.broker.topics import TopicConfig, TopicConfigManager
from rocketmq_spec.reference_broker.pop.order_locks import OrderLocks
from rocketmq_spec.reference_broker.pop.records import Ack, CheckPoint, ack_message, checkpoint_message
from rocketmq_spec.reference_broker.store import GetMessageStatus, MessageStore
from rocketmq_spec.spec.codes import ResponseCode
from rocketmq_spec.spec.pop import (
    EXTRA_INFO_SEPARATOR,
    ORDER_REVIVE_QUEUE,
    InitMode,
    build_extra_info,
    offset_info_entry,
    pop_retry_topic,
    retry_flag,
    revive_topic,
)
from rocketmq_spec.spec.properties import PropertyKey, java_hashmap_order
from rocketmq_spec.spec.system_topics import RETRY_PREFIX

_CORRECTED = (GetMessageStatus.OFFSET_TOO_SMALL, GetMessageStatus.OFFSET_OVERFLOW_BADLY,
              GetMessageStatus.OFFSET_FOUND_NULL)
"""Statuses after which Java commits the store's nextBeginOffset and reads again."""


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class Popped:
    """One popped message: the record as answered and its receipt (the ``POP_CK`` the client builds)."""

    raw: bytes
    receipt: str
    queue_id: int
    queue_offset: int
    retry: bool


@dataclass
class PopResult:
    """What POP_MESSAGE / PEEK_MESSAGE answer: the response header's values and the records."""

    pop_time: int
    invisible_time: int
    revive_qid: int
    rest_num: int = 0
    start_offset_info: list[str] = field(default_factory=list)
    msg_offset_info: list[str] = field(default_factory=list)
    order_count_info: list[str] = field(default_factory=list)
    messages: list[Popped] = field(default_factory=list)

    @property
    def found(self) -> bool:
        return bool(self.messages)

    def header(self, order: bool) -> dict[str, object]:
        values: dict[str, object] = {
            "popTime": self.pop_time, "invisibleTime": self.invisible_time, "reviveQid": self.revive_qid,
            "restNum": self.rest_num, "startOffsetInfo": ";".join(self.start_offset_info),
            "msgOffsetInfo": ";".join(self.msg_offset_info)}
        if order:
            values["orderCountInfo"] = ";".join(self.order_count_info)
        return values


@dataclass
class Outcome:
    """An ack's or change's answer: the response code, its remark and (for a change) the header."""

    code: int = ResponseCode.SUCCESS
    remark: str | None = None
    header: dict[str, object] = field(default_factory=dict)


class PopService:
    def __init__(self, broker_name: str, cluster: str, topics: TopicConfigManager,
                 offsets: ConsumerOffsetManager, store: MessageStore, revive_queue_num: int,
                 changed: Callable[[str], None] = lambda topic: None,
                 orders: OrderLocks | None = None) -> None:
        self.broker_name = broker_name
        self.revive_topic = revive_topic(cluster)
        self.topics = topics
        self.offsets = offsets
        self.store = store
        self.orders = orders if orders is not None else OrderLocks()
        self._revive_queue_num = revive_queue_num
        self._ck_turn = itertools.count()
        self._changed = changed
        """Told the topic whenever something a held pop may now find appears (an ordered ack)."""

    # ------------------------------------------------------------------ popping

    def pop(self, group: str, topic: TopicConfig, queue_id: int, max_nums: int, invisible_time: int,
            init_mode: int, codes: TagCodes, order: bool = False) -> PopResult:
        """POP_MESSAGE after the handler's checks: the topic's queues (or one), then its retry topic."""
        pop_time = now_ms()
        revive_qid = ORDER_REVIVE_QUEUE if order else next(self._ck_turn) % self._revive_queue_num
        result = PopResult(pop_time, invisible_time, revive_qid)
        for name, queue in self._sources(group, topic, queue_id, order):
            if len(result.messages) >= max_nums:
                result.rest_num += self._backlog(group, name, queue)
                continue
            self._pop_queue(result, group, topic.topic_name, name, queue, max_nums, init_mode, codes, order)
        return result

    def peek(self, group: str, topic: TopicConfig, queue_id: int, max_nums: int) -> PopResult:
        """PEEK_MESSAGE: the messages from the group's offset, nothing hidden, no offset moved."""
        result = PopResult(now_ms(), 0, 0)
        for name, queue in self._sources(group, topic, queue_id, order=True):
            offset = self._offset(group, name, queue, InitMode.MIN, commit=False)
            got = self.store.get_messages(name, queue, offset, max_nums - len(result.messages))
            for raw, queue_offset in zip(got.messages, got.queue_offsets, strict=True):
                result.messages.append(Popped(raw, "", queue, queue_offset, name != topic.topic_name))
            result.rest_num += max(got.max_offset - got.next_begin_offset, 0)
        return result

    def has_message(self, group: str, topic: TopicConfig, queue_id: int, order: bool = False) -> bool:
        """NOTIFICATION: whether a pop would find a message now (filters aside)."""
        now = now_ms()
        for name, queue in self._sources(group, topic, queue_id, order):
            if order and self.orders.blocked(name, group, queue, now):
                continue
            if self._backlog(group, name, queue) > 0:
                return True
        return False

    def _sources(self, group: str, topic: TopicConfig, queue_id: int, order: bool) -> list[tuple[str, int]]:
        """The queues one pop reads, in Java's order: a given queue or every readable queue from a random
        one, then (unordered pops) the group's pop retry topic."""
        count = topic.read_queue_nums
        if queue_id >= 0:
            queues = [queue_id]
        else:
            start = random.randrange(max(count, 1))
            queues = [(start + i) % count for i in range(count)]
        sources = [(topic.topic_name, q) for q in queues]
        retry = self.topics.get(pop_retry_topic(topic.topic_name, group))
        if not order and retry is not None:
            sources += [(retry.topic_name, q) for q in range(retry.read_queue_nums)]
        return sources

    def _backlog(self, group: str, topic: str, queue_id: int) -> int:
        committed = self.offsets.query(group, topic, queue_id)
        start = committed if committed >= 0 else self.store.min_offset(topic, queue_id)
        return max(self.store.max_offset(topic, queue_id) - start, 0)

    def _offset(self, group: str, topic: str, queue_id: int, init_mode: int, commit: bool) -> int:
        """``getPopOffset`` / ``getInitOffset`` (RMQ-POP-INIT-MODE)."""
        offset = self.offsets.query(group, topic, queue_id)
        if offset >= 0:
            return offset
        if init_mode == InitMode.MIN or topic.startswith(RETRY_PREFIX):
            offset = self.store.min_offset(topic, queue_id)
        elif self.store.min_offset(topic, queue_id) <= 0:
            offset = 0  # the queue's first message is still in memory (initPopOffsetByCheckMsgInMem)
        else:
            offset = max(self.store.max_offset(topic, queue_id) - 1, 0)
        if commit:
            self.offsets.commit(group, topic, queue_id, offset)
        return offset

    def _pop_queue(self, result: PopResult, group: str, original: str, topic: str, queue_id: int,
                   max_nums: int, init_mode: int, codes: TagCodes, order: bool) -> None:
        if order and self.orders.blocked(topic, group, queue_id, result.pop_time):
            return
        offset = self._offset(group, topic, queue_id, init_mode, commit=True)
        got = self.store.get_messages(topic, queue_id, offset, max_nums - len(result.messages), codes)
        if got.status in _CORRECTED:
            offset = got.next_begin_offset
            self.offsets.commit(group, topic, queue_id, offset)
            got = self.store.get_messages(topic, queue_id, offset, max_nums - len(result.messages), codes)
        result.rest_num += max(got.max_offset - got.next_begin_offset, 0)
        if not got.messages:
            if not order and got.next_begin_offset > offset:
                self.offsets.commit(group, topic, queue_id, got.next_begin_offset)  # only filtered out
            return
        offsets = list(got.queue_offsets)
        if order:
            counts = self.orders.record(topic, group, queue_id, offsets, result.pop_time,
                                        result.invisible_time)
            result.order_count_info.append(offset_info_entry(topic, queue_id, [max(counts.values())]))
        else:
            ck = CheckPoint(topic, queue_id, group, offset, result.pop_time, result.invisible_time,
                            self.broker_name, [o - offset for o in offsets])
            self.store.put_broker_message(checkpoint_message(
                ck, self.revive_topic, result.revive_qid, self.store.store_host, result.pop_time))
            self.offsets.commit(group, topic, queue_id, got.next_begin_offset)
        result.start_offset_info.append(offset_info_entry(topic, queue_id, [offset]))
        result.msg_offset_info.append(offset_info_entry(topic, queue_id, offsets))
        retry = topic != original
        for raw, queue_offset in zip(got.messages, offsets, strict=True):
            receipt = build_extra_info(offset, result.pop_time, result.invisible_time, result.revive_qid,
                                       retry_flag(topic), self.broker_name, queue_id, queue_offset)
            answered = _as_original(raw, original, receipt) if retry else raw
            result.messages.append(Popped(answered, receipt, queue_id, queue_offset, retry))

    # ------------------------------------------------------------------ acknowledging

    def ack(self, group: str, topic: str, queue_id: int, receipt: str, offset: int) -> Outcome:
        """ACK_MESSAGE after the handler's range checks (RMQ-POP-ACK)."""
        parts = receipt.split(EXTRA_INFO_SEPARATOR)
        start, pop_time, invisible_time, revive_qid = (int(p) for p in parts[:4])
        real = _real_topic(topic, group, parts[4])
        if revive_qid == ORDER_REVIVE_QUEUE:
            return self._ack_ordered(group, real, queue_id, offset, pop_time)
        self._append_ack(Ack(real, queue_id, group, start, pop_time, parts[5], (offset,)), invisible_time,
                         revive_qid)
        return Outcome()

    def batch_ack(self, group: str, topic: str, retry: str, queue_id: int, revive_qid: int, start: int,
                  pop_time: int, invisible_time: int, offsets: list[int], broker_name: str) -> Outcome:
        """One BatchAck of BATCH_ACK_MESSAGE: offsets outside the queue's range are skipped."""
        real = _real_topic(topic, group, retry)
        low, high = self.store.min_offset(real, queue_id), self.store.max_offset(real, queue_id)
        kept = tuple(o for o in offsets if low <= o <= high)
        if revive_qid == ORDER_REVIVE_QUEUE:
            for offset in kept:
                self._ack_ordered(group, real, queue_id, offset, pop_time)
        elif kept:
            self._append_ack(Ack(real, queue_id, group, start, pop_time, broker_name, kept), invisible_time,
                             revive_qid)
        return Outcome()

    def change_invisible(self, group: str, topic: str, queue_id: int, receipt: str, offset: int,
                         invisible_time: int) -> Outcome:
        """CHANGE_MESSAGE_INVISIBLETIME: a new checkpoint for the one message, then the old receipt acked
        (RMQ-POP-CHANGE-INVISIBLE)."""
        parts = receipt.split(EXTRA_INFO_SEPARATOR)
        start, pop_time, old_invisible, revive_qid = (int(p) for p in parts[:4])
        real = _real_topic(topic, group, parts[4])
        now = now_ms()
        if revive_qid == ORDER_REVIVE_QUEUE:
            self.orders.change(real, group, queue_id, offset, pop_time, now + invisible_time)
            return Outcome(header={"popTime": pop_time, "invisibleTime": now - pop_time + invisible_time,
                                   "reviveQid": ORDER_REVIVE_QUEUE})
        new_qid = next(self._ck_turn) % self._revive_queue_num
        ck = CheckPoint(real, queue_id, group, offset, now, invisible_time, parts[5], [0])
        self.store.put_broker_message(checkpoint_message(ck, self.revive_topic, new_qid,
                                                         self.store.store_host, now))
        self._append_ack(Ack(real, queue_id, group, start, pop_time, parts[5], (offset,)), old_invisible,
                         revive_qid)
        return Outcome(header={"popTime": now, "invisibleTime": invisible_time, "reviveQid": new_qid})

    def _append_ack(self, ack: Ack, invisible_time: int, revive_qid: int) -> None:
        self.store.put_broker_message(ack_message(ack, invisible_time, self.revive_topic, revive_qid,
                                                  self.store.store_host, now_ms()))

    def _ack_ordered(self, group: str, topic: str, queue_id: int, offset: int, pop_time: int) -> Outcome:
        """``ackOrderly``: the queue's offset moves to the first offset of the batch not yet acked."""
        if offset < self.offsets.query(group, topic, queue_id):
            return Outcome()
        following = self.orders.ack(topic, group, queue_id, offset, pop_time)
        if following is not None:
            self.offsets.commit(group, topic, queue_id, following)
            self._changed(topic)
        return Outcome()


def _real_topic(topic: str, group: str, retry: str) -> str:
    """``ExtraInfoUtil.getRealTopic``: the topic a receipt's message was popped from. A topic that already
    is a retry topic is that topic: Apache's clients and proxy ack a retried message under its pop retry
    topic (``ReceiptHandle.getRealTopic``), and Java's AckMessageProcessor takes the header's topic as is."""
    if topic.startswith(RETRY_PREFIX):
        return topic
    if retry == "1":
        return pop_retry_topic(topic, group)
    if retry == "2":
        return pop_retry_topic(topic, group, v2=True)
    return topic


def _as_original(raw: bytes, original: str, receipt: str) -> bytes:
    """A message popped from a pop retry topic, answered under the original topic with POP_CK set
    (RMQ-POP-RETRY-RECODE)."""
    record = decode_record(raw)
    properties = dict(record.properties)
    properties.setdefault(PropertyKey.POP_CK, receipt)
    return _encode(record, original, properties)


def _encode(record: MessageRecord, topic: str, properties: dict[str, str]) -> bytes:
    ordered = {name: properties[name] for name in java_hashmap_order(properties)}
    return make_record(topic=topic, body=record.body, properties=ordered, queue_id=record.queue_id,
                       queue_offset=record.queue_offset, physical_offset=record.physical_offset,
                       born_timestamp=record.born_timestamp, born_host=record.born_host,
                       store_timestamp=record.store_timestamp, store_host=record.store_host,
                       sys_flag=record.sys_flag, flag=record.flag, reconsume_times=record.reconsume_times,
                       prepared_transaction_offset=record.prepared_transaction_offset).encode()

