"""Checking back transactions nobody ended: ``TransactionalMessageServiceImpl.check`` of 4.9.8.

A producer that crashes between its half message and END_TRANSACTION would leave the half message in
RMQ_SYS_TRANS_HALF_TOPIC forever, so every ``transactionCheckInterval`` the broker walks the half queue
from where its last walk stopped. A half message whose offset has an op message (RMQ_SYS_TRANS_OP_HALF_TOPIC,
tag ``d``, body = the half's queue offset) was ended and is passed over. One older than
``transactionTimeOut`` (or its CHECK_IMMUNITY_TIME_IN_SECONDS) is written again at the end of the half
queue with TRANSACTION_CHECK_TIMES counted up, and CHECK_TRANSACTION_STATE naming that new copy is sent
oneway to a live producer of its group; the producer answers with END_TRANSACTION (fromTransactionCheck).
A message checked ``transactionCheckMax`` times, or older than ``fileReservedTime``, is moved to
TRANS_CHECK_MAX_TIME_TOPIC instead. How far the walks got is kept as the consumer offsets of group
CID_RMQ_SYS_TRANS, in consumerOffset.json, as Java keeps it.

This module decides; the broker does the sending (:class:`CheckRequest` is what to send, to whom).
"""

from __future__ import annotations

import enum
import logging
import time
from dataclasses import dataclass
from typing import Any, NamedTuple

from rocketmq_spec.codec.store.record import MessageRecord, decode_record, make_record
from rocketmq_spec.reference_broker.broker.offsets import ConsumerOffsetManager
from rocketmq_spec.reference_broker.broker.topics import TopicConfigManager
from rocketmq_spec.reference_broker.config import BrokerConfig
from rocketmq_spec.reference_broker.store import GetMessageStatus, MessageStore, PutResult
from rocketmq_spec.reference_broker.store.message import java_map_text
from rocketmq_spec.spec.commitlog import MESSAGE_MAGIC_V1
from rocketmq_spec.spec.properties import PropertyKey
from rocketmq_spec.spec.system_topics import (
    TRANS_CHECK_GROUP,
    TRANS_CHECK_MAX_TIME_TOPIC,
    TRANS_HALF_TOPIC,
    TRANS_OP_HALF_TOPIC,
    TRANS_OP_TAG,
)

log = logging.getLogger(__name__)

OP_PULL_BATCH = 32
"""Op messages read per step (``fillOpRemoveMap`` pulls 32)."""
MAX_PROCESS_TIME_MS = 60_000
"""One queue's walk stops after this long (``MAX_PROCESS_TIME_LIMIT``)."""
MAX_RETRY_WHEN_HALF_NULL = 1
"""``MAX_RETRY_COUNT_WHEN_HALF_NULL``: offsets without a readable half message tolerated per walk."""
DISCARD_QUEUE_NUMS = 1
"""Queues of TRANS_CHECK_MAX_TIME_TOPIC (``TCMT_QUEUE_NUMS``)."""


class PullStatus(enum.Enum):
    """The client-side ``PullStatus`` the bridge turns a store status into."""

    FOUND = "FOUND"
    NO_NEW_MSG = "NO_NEW_MSG"
    NO_MATCHED_MSG = "NO_MATCHED_MSG"
    OFFSET_ILLEGAL = "OFFSET_ILLEGAL"


_PULL_STATUS = {
    GetMessageStatus.FOUND: PullStatus.FOUND,
    GetMessageStatus.NO_MATCHED_MESSAGE: PullStatus.NO_MATCHED_MSG,
    GetMessageStatus.NO_MESSAGE_IN_QUEUE: PullStatus.NO_NEW_MSG,
    GetMessageStatus.OFFSET_OVERFLOW_ONE: PullStatus.NO_NEW_MSG,
    # Java creates a queue on first sight, so a queue never written to is an empty one here too
    GetMessageStatus.NO_MATCHED_LOGIC_QUEUE: PullStatus.NO_NEW_MSG,
    GetMessageStatus.MESSAGE_WAS_REMOVING: PullStatus.OFFSET_ILLEGAL,
    GetMessageStatus.OFFSET_FOUND_NULL: PullStatus.OFFSET_ILLEGAL,
    GetMessageStatus.OFFSET_OVERFLOW_BADLY: PullStatus.OFFSET_ILLEGAL,
    GetMessageStatus.OFFSET_TOO_SMALL: PullStatus.OFFSET_ILLEGAL,
}
"""``TransactionalMessageBridge.getMessage``'s mapping."""


class _Pulled(NamedTuple):
    status: PullStatus
    next_begin_offset: int
    records: list[MessageRecord] | None
    """None unless FOUND (``getMsgFoundList``)."""


@dataclass(frozen=True)
class CheckRequest:
    """One CHECK_TRANSACTION_STATE to send oneway to a producer of ``producer_group``."""

    producer_group: str
    header: dict[str, Any]
    body: bytes
    """The half message as ``MessageDecoder.encode`` writes it: real topic and queue, new offsets."""


def _long(text: str | None) -> int:
    """``getLong``/``getInt``: -1 for anything that is not a number."""
    try:
        return int(text or "")
    except ValueError:
        return -1


def now_ms() -> int:
    return int(time.time() * 1000)


class TransactionChecker:
    def __init__(self, config: BrokerConfig, topics: TopicConfigManager, offsets: ConsumerOffsetManager,
                 store: MessageStore) -> None:
        self.config = config
        self.topics = topics
        self.offsets = offsets
        self.store = store

    def check(self) -> list[CheckRequest]:
        """One run over every half queue; returns the check-backs to send."""
        half_topic = self.topics.get(TRANS_HALF_TOPIC) or self.topics.create_in_send_back(TRANS_HALF_TOPIC, 1)
        requests: list[CheckRequest] = []
        for queue_id in range(half_topic.read_queue_nums):
            requests.extend(self._check_queue(queue_id))
        return requests

    def _check_queue(self, queue_id: int) -> list[CheckRequest]:
        timeout = self.config.transaction_time_out
        start = now_ms()
        half_offset = self._fetch_offset(TRANS_HALF_TOPIC, queue_id)
        op_offset = self._fetch_offset(TRANS_OP_HALF_TOPIC, queue_id)
        removed: dict[int, int] = {}
        """half queue offset -> op queue offset of the op message that ended it."""
        done_ops: list[int] = []
        ops = self._fill_removed(removed, queue_id, op_offset, half_offset, done_ops)
        requests: list[CheckRequest] = []
        null_count = 1
        offset = new_offset = half_offset
        while now_ms() - start <= MAX_PROCESS_TIME_MS:
            if offset in removed:
                done_ops.append(removed.pop(offset))
            else:
                half = self._pull(TRANS_HALF_TOPIC, queue_id, offset, 1)
                if not half.records:
                    if null_count > MAX_RETRY_WHEN_HALF_NULL or half.status is PullStatus.NO_NEW_MSG:
                        break
                    null_count += 1
                    offset = new_offset = half.next_begin_offset
                    continue
                record = half.records[0]
                properties = dict(record.properties)
                if self._discard_due(record, properties):
                    self._discard(record, properties)
                    offset = new_offset = offset + 1
                    continue
                if record.store_timestamp >= start:
                    break  # stored during this walk: checked next time
                age = now_ms() - record.born_timestamp
                immunity = timeout
                immunity_text = properties.get(PropertyKey.CHECK_IMMUNITY_TIME_IN_SECONDS)
                if immunity_text is not None:
                    immunity = _immunity_ms(immunity_text, timeout)
                    if age < immunity and self._still_immune(removed, done_ops, record, properties):
                        offset = new_offset = offset + 1
                        continue
                elif 0 <= age < immunity:
                    break  # too young; so is everything after it
                if not self._needs_check(ops, age, immunity, start, timeout):
                    ops = self._fill_removed(removed, queue_id, ops.next_begin_offset, half_offset, done_ops)
                    continue
                renewed = self._put_back(record, properties)
                if renewed is None:
                    continue
                requests.append(_check_request(record, properties, renewed))
            offset = new_offset = offset + 1
        if new_offset != half_offset:
            self._commit(TRANS_HALF_TOPIC, queue_id, new_offset)
        new_op_offset = _op_offset(done_ops, op_offset)
        if new_op_offset != op_offset:
            self._commit(TRANS_OP_HALF_TOPIC, queue_id, new_op_offset)
        return requests

    @staticmethod
    def _needs_check(ops: _Pulled, age: int, immunity: int, start: int, timeout: int) -> bool:
        """``isNeedCheck``: no op messages left to read and old enough, or a clock that went backwards.
        While op messages remain, more of them are read first (one of them may end this half message)."""
        if ops.records is None:
            return age > immunity or age <= -1
        return ops.records[-1].born_timestamp - start > timeout or age <= -1

    def _discard_due(self, record: MessageRecord, properties: dict[str, str]) -> bool:
        """``needDiscard || needSkip``; counts the check in TRANSACTION_CHECK_TIMES when it is not."""
        times_text = properties.get(PropertyKey.TRANSACTION_CHECK_TIMES)
        times = 1
        if times_text is not None:
            times = _long(times_text)
            if times >= self.config.transaction_check_max:
                return True
            times += 1
        properties[PropertyKey.TRANSACTION_CHECK_TIMES] = str(times)
        reserved_ms = self.store.config.file_reserved_time * 3600 * 1000
        return now_ms() - record.born_timestamp > reserved_ms

    def _discard(self, record: MessageRecord, properties: dict[str, str]) -> None:
        """``DefaultTransactionalMessageCheckListener.resolveDiscardMsg``."""
        log.error("half message %s checked too many times: moved to %s", record.uniq_key,
                  TRANS_CHECK_MAX_TIME_TOPIC)
        self.topics.create_in_send_back(TRANS_CHECK_MAX_TIME_TOPIC, DISCARD_QUEUE_NUMS)
        result = self.store.put_record_copy(record, TRANS_CHECK_MAX_TIME_TOPIC, 0, properties, record.flag,
                                            record.reconsume_times)
        if not result.ok:
            log.error("moving half message %s to %s failed: %s", record.uniq_key, TRANS_CHECK_MAX_TIME_TOPIC,
                      result.status.name)

    def _still_immune(self, removed: dict[int, int], done_ops: list[int], record: MessageRecord,
                      properties: dict[str, str]) -> bool:
        """``checkPrepareQueueOffset``: a message with its own immunity time is ended if its first copy's
        offset was; otherwise it is written again (to be looked at later) and passed over."""
        prepared = properties.get(PropertyKey.TRANSACTION_PREPARED_QUEUE_OFFSET)
        if prepared is not None:
            first_offset = _long(prepared)
            if first_offset == -1:
                return False
            if first_offset in removed:
                done_ops.append(removed.pop(first_offset))
                return True
        # renewImmunityHalfMessageInner builds a renewed copy (WAIT=false lands in the shared map), adds
        # the first copy's offset and writes the string again
        properties[PropertyKey.WAIT] = "false"
        properties[PropertyKey.TRANSACTION_PREPARED_QUEUE_OFFSET] = prepared or str(record.queue_offset)
        return self.store.put_record_copy(record, record.topic, record.queue_id, properties, 0, 0).ok

    def _put_back(self, record: MessageRecord, properties: dict[str, str]) -> PutResult | None:
        """``putBackHalfMsgQueue``: the copy whose offsets the check-back names."""
        result = self._renew(record, properties)
        if not result.ok:
            log.error("writing half message %s back failed: %s", record.uniq_key, result.status.name)
            return None
        return result

    def _renew(self, record: MessageRecord, properties: dict[str, str]) -> PutResult:
        """``renewHalfMessageInner``: same topic and queue, flag and reconsume times not carried. Java's copy
        shares the decoded message's property map and sets WAIT=false in it after writing its string, so
        the stored copy keeps WAIT as it was while the check-back that follows says WAIT=false."""
        result = self.store.put_record_copy(record, record.topic, record.queue_id, properties, 0, 0)
        properties[PropertyKey.WAIT] = "false"
        return result

    def _fill_removed(self, removed: dict[int, int], queue_id: int, op_offset: int, min_half_offset: int,
                      done_ops: list[int]) -> _Pulled:
        """``fillOpRemoveMap``: read op messages from ``op_offset``; those for half offsets already walked
        past are done, the others mark their half offset as ended."""
        pulled = self._pull(TRANS_OP_HALF_TOPIC, queue_id, op_offset, OP_PULL_BATCH)
        if pulled.status in (PullStatus.OFFSET_ILLEGAL, PullStatus.NO_MATCHED_MSG):
            self._commit(TRANS_OP_HALF_TOPIC, queue_id, pulled.next_begin_offset)
            return pulled
        for op in pulled.records or ():
            if op.tags != TRANS_OP_TAG:
                log.error("op message at %d has tag %r, not %r", op.queue_offset, op.tags, TRANS_OP_TAG)
                continue
            half_offset = _long(op.body.decode("utf-8", "replace"))
            if half_offset < min_half_offset:
                done_ops.append(op.queue_offset)
            else:
                removed[half_offset] = op.queue_offset
        return pulled

    def _pull(self, topic: str, queue_id: int, offset: int, count: int) -> _Pulled:
        result = self.store.get_messages(topic, queue_id, offset, count)
        status = _PULL_STATUS[result.status]
        records = [decode_record(raw) for raw in result.messages] if status is PullStatus.FOUND else None
        return _Pulled(status, result.next_begin_offset, records)

    def _fetch_offset(self, topic: str, queue_id: int) -> int:
        offset = self.offsets.query(TRANS_CHECK_GROUP, topic, queue_id)
        return offset if offset >= 0 else self.store.min_offset(topic, queue_id)

    def _commit(self, topic: str, queue_id: int, offset: int) -> None:
        self.offsets.commit(TRANS_CHECK_GROUP, topic, queue_id, offset)


def _immunity_ms(text: str, timeout: int) -> int:
    """``getImmunityTime``: seconds from the property, or the transaction timeout when unreadable."""
    seconds = _long(text)
    return timeout if seconds == -1 else seconds * 1000


def _op_offset(done: list[int], old: int) -> int:
    """``calculateOpOffset``: the op queue offset advances over a gap-free run of handled op messages."""
    offset = old
    for handled in sorted(done):
        if handled != offset:
            break
        offset += 1
    return offset


def _check_request(record: MessageRecord, properties: dict[str, str], renewed: PutResult) -> CheckRequest:
    """``sendCheckMessage``: the header names the renewed copy; the body is the half message with its real
    topic and queue restored and its properties as counted."""
    uniq = properties.get(PropertyKey.UNIQ_KEY)
    header = {"commitLogOffset": renewed.phys_offset, "offsetMsgId": renewed.msg_id, "msgId": uniq,
              "transactionId": uniq, "tranStateTableOffset": renewed.queue_offset}
    body = make_record(
        topic=properties.get(PropertyKey.REAL_TOPIC, ""), body=record.body,
        properties=java_map_text(properties), queue_id=_long(properties.get(PropertyKey.REAL_QUEUE_ID)),
        queue_offset=renewed.queue_offset, physical_offset=renewed.phys_offset,
        born_timestamp=record.born_timestamp, born_host=record.born_host,
        store_timestamp=record.store_timestamp, store_host=record.store_host, sys_flag=record.sys_flag,
        flag=record.flag, reconsume_times=record.reconsume_times,
        prepared_transaction_offset=record.prepared_transaction_offset, magic=MESSAGE_MAGIC_V1).encode()
    return CheckRequest(properties.get(PropertyKey.PRODUCER_GROUP, ""), header, body)
