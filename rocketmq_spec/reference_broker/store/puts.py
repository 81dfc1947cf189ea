"""The write side of the message store: every kind of put (producer, batch, half and committed
transactional messages, send-back copies, delayed and timer deliveries, the plain fast put) turned into
records appended under the put lock and dispatched at once."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import NamedTuple, Protocol

from rocketmq_spec.codec.fast_store import (
    BORNHOST_V6,
    STOREHOST_V6,
    offset_msg_id,
    pack_plain_record,
    packed_ip,
)
from rocketmq_spec.codec.store.indexfile import message_index_keys
from rocketmq_spec.codec.store.record import HostPort, MessageRecord, make_record
from rocketmq_spec.reference_broker.store.arrival import ArrivalNotifier, MessageArrival
from rocketmq_spec.reference_broker.store.commitlog import CommitLog
from rocketmq_spec.reference_broker.store.config import FlushDiskType, StoreConfig
from rocketmq_spec.reference_broker.store.confirm_gate import ConfirmGate
from rocketmq_spec.reference_broker.store.consume_queue import ConsumeQueue
from rocketmq_spec.reference_broker.store.index import IndexService
from rocketmq_spec.reference_broker.store.message import (
    BatchItem,
    InnerMessage,
    add_cluster,
    batch_item_text,
    java_map_text,
    producer_text,
    redirect_text,
)
from rocketmq_spec.reference_broker.store.put_wait import Appended, PutWaiter
from rocketmq_spec.reference_broker.store.retention import RetentionService
from rocketmq_spec.reference_broker.store.schedule import DelayScheduler
from rocketmq_spec.reference_broker.store.status import (
    PutMessageStatus,
    PutResult,
)
from rocketmq_spec.reference_broker.store.timer import (
    TimerIllegal,
    TimerSettings,
    TimerWheel,
    park_timer_message,
)
from rocketmq_spec.reference_broker.store.timer.transform import TRIGGERS as TIMER_TRIGGERS
from rocketmq_spec.spec.commitlog import (
    END_FILE_MIN_BLANK_LENGTH,
    MAX_PROPERTIES_BYTES,
    MAX_TOPIC_BYTES_V1,
    MESSAGE_MAGIC_V1,
    RECORD_RESERVE,
    RMQ_CL_MAX_MESSAGE,
    RMQ_CL_PROPERTIES_LENGTH,
)
from rocketmq_spec.spec.errors import SpecViolation, StoreError
from rocketmq_spec.spec.ha import BrokerRole
from rocketmq_spec.spec.hashing import tags_code
from rocketmq_spec.spec.message_id import IPV6_LEN
from rocketmq_spec.spec.properties import PropertyKey
from rocketmq_spec.spec.sysflag import TRANSACTION_MASK, TransactionType
from rocketmq_spec.spec.system_topics import (
    SCHEDULE_TOPIC,
    TIMER_TOPIC,
    TRANS_HALF_TOPIC,
    TRANS_OP_HALF_TOPIC,
    TRANS_OP_TAG,
)

SYNC_FLUSH, SYNC_MASTER, SLAVE = FlushDiskType.SYNC_FLUSH, BrokerRole.SYNC_MASTER, BrokerRole.SLAVE
"""Members read by every put, bound once: reading a member off its Enum class goes through the class's
``__getattr__`` on Python 3.11, a few hundred instructions each."""
QUEUED_TYPES = frozenset({int(TransactionType.NOT_TYPE), int(TransactionType.COMMIT)})
"""Transaction types whose records get a consume-queue entry (RMQ-CQ-TRANSACTION), as plain ints."""
cached_tags_code = lru_cache(maxsize=4096)(tags_code)
"""Tags repeat across messages; hashing each distinct one once takes the Java hash off the put path."""


def now_ms() -> int:
    return int(time.time() * 1000)


class Draft(NamedTuple):
    """A record before the store assigns its offsets, store time and store host."""

    topic: str
    queue_id: int
    body: bytes
    properties_text: str
    born_timestamp: int
    born_host: HostPort
    sys_flag: int = 0
    flag: int = 0
    reconsume_times: int = 0
    prepared_transaction_offset: int = 0
    store_host: HostPort | None = None
    """None: this broker's address; a send-back copy keeps the host that stored its original."""
    properties: dict[str, str] | None = None
    """``parse_properties(properties_text)`` when the put already has it; the dispatch (tags code, index
    keys) then reads it instead of parsing the stored string a second time."""


_PARKING_TOPICS = frozenset({SCHEDULE_TOPIC, TIMER_TOPIC})
"""Topics whose messages wake a delivery service: never a plain put."""


class PlainPut(NamedTuple):
    """Where ``put_plain`` stored a message, and its offsetMsgId."""

    physical_offset: int
    queue_offset: int
    msg_id: str


class _Dispatch(Protocol):
    """``MessageStore._dispatch``: a record's consume-queue entry, index keys and (``notify``) arrival."""

    def __call__(self, record: MessageRecord, notify: bool) -> None: ...


class StorePuts:
    """Puts of :class:`~reference_broker.store.message_store.MessageStore`, which holds the state named
    here and dispatches what they append."""

    config: StoreConfig
    store_host: HostPort
    commitlog: CommitLog
    index: IndexService
    queues: dict[tuple[str, int], ConsumeQueue]
    arrivals: ArrivalNotifier
    on_append: Callable[[], None] | None
    scheduler: DelayScheduler
    retention: RetentionService
    timer: TimerWheel
    timer_settings: TimerSettings
    _put_lock: threading.RLock
    _running: bool
    _next_queue_offset: dict[tuple[str, int], int]
    in_sync_replicas_enough: Callable[[], bool] | None
    """Controller mode: whether the SyncStateSet has minInSyncReplicas members; a put that waits for
    the store is refused while it has not (RMQ-HA2-MIN-ISR, ``CommitLog.asyncPutMessage``)."""
    _stamps: list[int]
    _cluster_round_trips: bool
    _waiter: PutWaiter
    _dispatch: _Dispatch
    confirm_gate: ConfirmGate
    _dispatch_new: Callable[[MessageRecord], None]
    read_record: Callable[[int], MessageRecord | None]

    def put_message(self, message: InnerMessage) -> PutResult:
        """Store a producer's message; blocks for the flush under SYNC_FLUSH when it asks to wait."""
        try:
            appended = self._put_producer(message)
        except TimerIllegal:
            return PutResult(PutMessageStatus.WHEEL_TIMER_MSG_ILLEGAL)
        return self._waiter.wait(appended)

    async def put_message_async(self, message: InnerMessage) -> PutResult:
        """``put_message`` for the event loop: the append is immediate, the flush wait is awaited."""
        try:
            appended = self._put_producer(message)
        except TimerIllegal:
            return PutResult(PutMessageStatus.WHEEL_TIMER_MSG_ILLEGAL)
        return await self._waiter.wait_async(appended)

    def put_batch(self, batch: InnerMessage, items: Sequence[BatchItem]) -> PutResult:
        """SEND_BATCH_MESSAGE: ``batch`` carries topic, queue, hosts, sysFlag and the batch's properties,
        ``items`` the decoded messages of its body."""
        return self._waiter.wait(self._put_batch(batch, items))

    async def put_batch_async(self, batch: InnerMessage, items: Sequence[BatchItem]) -> PutResult:
        return await self._waiter.wait_async(self._put_batch(batch, items))

    def put_half_message(self, message: InnerMessage) -> PutResult:
        """A transactional producer's prepared message, parked in RMQ_SYS_TRANS_HALF_TOPIC queue 0."""
        return self._waiter.wait(self._put_half(message))

    async def put_half_message_async(self, message: InnerMessage) -> PutResult:
        return await self._waiter.wait_async(self._put_half(message))

    def put_send_back(self, message: InnerMessage, original_store_host: HostPort) -> PutResult:
        """CONSUMER_SEND_MSG_BACK's copy: Java stores the string of the map it built (WAIT=false kept,
        CLUSTER already inherited from the original) with the original's store host."""
        return self._waiter.wait(self._put_copy(message, original_store_host))

    async def put_send_back_async(self, message: InnerMessage, original_store_host: HostPort) -> PutResult:
        return await self._waiter.wait_async(self._put_copy(message, original_store_host))

    def put_broker_message(self, message: InnerMessage) -> PutResult:
        """A message the broker writes itself (OFFSET_MOVED_EVENT): the string of its map, no CLUSTER
        added, this broker as store host."""
        return self._waiter.wait(self._put_copy(message, self.store_host))

    def _put_producer(self, message: InnerMessage) -> Appended:
        props = dict(message.properties)
        peak = add_cluster(props, self.config.cluster_name)
        text = producer_text(props, peak)
        draft = self._delayed(message, props, text)
        if draft.properties_text is text and self._cluster_round_trips:
            # the stored string is the map without WAIT, and every entry of the map survives a parse of it
            # (names and values from a parse, CLUSTER checked once): that parse is the map without WAIT
            stored = dict(props)
            stored.pop(PropertyKey.WAIT, None)
            draft = draft._replace(properties=stored)
        return self._append([draft], message.wait_store_msg_ok)

    def put_plain(self, message: InnerMessage) -> PlainPut | None:
        """A producer's message that needs nothing but an append, appended and dispatched at once; None,
        with nothing written, for any message the general put must handle (a delay, a transaction type,
        a wait for flush or slave, a new queue or file, a refused size).

        This is ``put_message`` of such a message in fewer steps: the same stored bytes, the same
        consume-queue entry, index keys and notification, without the intermediate records and results
        (``tests/test_lanes.py`` holds the two equal byte for byte)."""
        if not self._plain(message):
            return None
        sys_flag = message.sys_flag
        config = self.config
        props = dict(message.properties)
        text = producer_text(props, add_cluster(props, config.cluster_name))
        props.pop(PropertyKey.WAIT, None)
        topic, queue_id = message.topic, message.queue_id
        topic_raw, text_raw = topic.encode(), text.encode()
        if len(topic_raw) > MAX_TOPIC_BYTES_V1 or len(text_raw) > MAX_PROPERTIES_BYTES:
            return None
        born, store = message.born_host, self.store_host
        born_ip, store_ip = packed_ip(born.ip), packed_ip(store.ip)
        sys_flag |= (BORNHOST_V6 if len(born_ip) == IPV6_LEN else 0) | (
            STOREHOST_V6 if len(store_ip) == IPV6_LEN else 0)
        key = (topic, queue_id)
        with self._put_lock:
            queue, files = self.queues.get(key), self.commitlog.files.files
            last = files[-1] if files else None  # MappedFiles.last, without a property call on every put
            queue_offset = self._next_queue_offset.get(key, 0)
            if (self._refuses_puts() or queue is None or last is None
                    or not queue.next_entry_fits(queue_offset)):
                return None
            physical = last.file_from_offset + last.wrote
            stamp = now_ms()
            record = pack_plain_record(
                queue_id, message.flag, queue_offset, physical, sys_flag, message.born_timestamp, born_ip,
                born.port, stamp, store_ip, store.port, message.reconsume_times, message.body, topic_raw,
                text_raw)
            size = len(record)
            if self._size_problem(len(message.body), size) is not None \
                    or size + END_FILE_MIN_BLANK_LENGTH > last.size - last.wrote:
                return None
            last.append(record)
            self._next_queue_offset[key] = queue_offset + 1
            code = cached_tags_code(props.get(PropertyKey.TAGS))
            queue.append_next(physical, size, code)
            queue.last_store_timestamp = stamp
            if self.arrivals.listening:
                self.arrivals.notify(MessageArrival(topic, queue_id, queue_offset + 1, code, stamp))
            if config.message_index_enable:
                self.index.put_keys(message_index_keys(topic, props, tags=config.index_tag_key), physical,
                                    stamp)
                self._stamps[2] = stamp
            self._stamps[0] = self._stamps[1] = stamp
        if self.on_append is not None:
            self.on_append()
        return PlainPut(physical, queue_offset, offset_msg_id(store_ip, store.port, physical))

    def _plain(self, message: InnerMessage) -> bool:
        """Whether ``message`` may be a plain put: no transaction, delay or timer, not for a topic a
        delivery service watches, nothing to wait for once appended."""
        config = self.config
        # the settings first: WAIT (a property parsing the map) matters only where one of them waits
        waits = (config.flush_disk_type is SYNC_FLUSH or config.broker_role is SYNC_MASTER
                 or self.in_sync_replicas_enough is not None) and message.wait_store_msg_ok
        return not (message.sys_flag & TRANSACTION_MASK or message.delay_level > 0 or waits
                    or self.confirm_gate.limit is not None
                    or message.topic in _PARKING_TOPICS or not self._cluster_round_trips
                    or not message.properties.keys().isdisjoint(TIMER_TRIGGERS))

    def _put_copy(self, message: InnerMessage, store_host: HostPort) -> Appended:
        props = dict(message.properties)
        try:
            draft = self._delayed(message, props, java_map_text(props))._replace(store_host=store_host)
        except TimerIllegal:
            return Appended(PutResult(PutMessageStatus.WHEEL_TIMER_MSG_ILLEGAL), None)
        return self._append([draft], message.wait_store_msg_ok)

    def _delayed(self, message: InnerMessage, props: dict[str, str], text: str) -> Draft:
        """The record to write: as given, or parked in SCHEDULE_TOPIC_XXXX when DELAY asks for a level
        (the string is then rewritten from the map with REAL_TOPIC/REAL_QID, as ``asyncPutMessage`` does)."""
        topic, queue_id = message.topic, message.queue_id
        level = message.delay_level
        queued = message.transaction_type in (TransactionType.NOT_TYPE, TransactionType.COMMIT)
        parked = queued and park_timer_message(props, topic, queue_id, level, now_ms(), self.timer_settings)
        if parked:
            topic, queue_id = parked
            text = java_map_text(props)
        elif level > 0 and queued:
            level = min(level, self.config.max_delay_level)
            props[PropertyKey.DELAY] = str(level)
            text = redirect_text(props, topic, queue_id)
            topic, queue_id = SCHEDULE_TOPIC, level - 1
        return Draft(topic, queue_id, message.body, text, message.born_timestamp, message.born_host,
                      message.sys_flag, message.flag, message.reconsume_times,
                      message.prepared_transaction_offset)

    def _put_batch(self, batch: InnerMessage, items: Sequence[BatchItem]) -> Appended:
        if batch.transaction_type is not TransactionType.NOT_TYPE or batch.delay_level > 0 or not items:
            return Appended(PutResult(PutMessageStatus.MESSAGE_ILLEGAL), None)
        props = dict(batch.properties)
        add_cluster(props, self.config.cluster_name)
        batch_text = "" if self.config.batch_keeps_own_properties else java_map_text(props)
        drafts = [Draft(batch.topic, batch.queue_id, item.body,
                         batch_item_text(item.properties_text, batch_text), batch.born_timestamp,
                         batch.born_host, batch.sys_flag, item.flag, batch.reconsume_times)
                  for item in items]
        return self._append(drafts, batch.wait_store_msg_ok)

    def _put_half(self, message: InnerMessage) -> Appended:
        props = dict(message.properties)
        add_cluster(props, self.config.cluster_name)
        text = redirect_text(props, message.topic, message.queue_id)
        draft = Draft(TRANS_HALF_TOPIC, 0, message.body, text, message.born_timestamp, message.born_host,
                       message.sys_flag & ~TRANSACTION_MASK, message.flag, message.reconsume_times)
        return self._append([draft], message.wait_store_msg_ok)

    def end_transaction(self, half_offset: int, commit: bool) -> PutResult:
        """END_TRANSACTION after the handler's checks: on commit the half message is written to its real
        topic (type COMMIT, PREPARED OFFSET = the half's offset); either way an op message marks it done."""
        half = self.read_record(half_offset)
        if half is None or half.topic != TRANS_HALF_TOPIC:
            return PutResult(PutMessageStatus.MESSAGE_ILLEGAL)
        result = PutResult(PutMessageStatus.PUT_OK)
        if commit:
            committed = to_real_topic(half, (half.sys_flag & ~TRANSACTION_MASK) | TransactionType.COMMIT,
                                       half.physical_offset)
            result = self._append([committed], wait=False).result
            if not result.ok:
                return result
        op = Draft(TRANS_OP_HALF_TOPIC, half.queue_id, str(half.queue_offset).encode(),
                    java_map_text({PropertyKey.TAGS: TRANS_OP_TAG, PropertyKey.WAIT: "true"}), now_ms(),
                    half.born_host)
        op_result = self._append([op], wait=False).result
        return result if op_result.ok else op_result

    def put_record_copy(self, record: MessageRecord, topic: str, queue_id: int, properties: dict[str, str],
                        flag: int, reconsume_times: int) -> PutResult:
        """A stored record written again under another topic or queue with the given properties, keeping
        its body, sysFlag, born host and time and store host: the transaction check's renewed half message
        (``renewHalfMessageInner``, which drops flag and reconsume times) and a half message discarded to
        TRANS_CHECK_MAX_TIME_TOPIC (``toMessageExtBrokerInner``, which keeps them)."""
        draft = Draft(topic, queue_id, record.body, java_map_text(properties), record.born_timestamp,
                       record.born_host, record.sys_flag, flag, reconsume_times, 0, record.store_host)
        return self._append([draft], wait=False).result

    def put_timer_delivered(self, parked: MessageRecord, properties: dict[str, str]) -> PutResult:
        """The timer wheel's put of a due message to REAL_TOPIC / REAL_QID (``convertMessage``): the string
        is written from the map before Java clears REAL_*, so they stay in it (RMQ-TIMER-DELIVERED); born
        and store host, flags and reconsume times are kept."""
        topic = properties.get(PropertyKey.REAL_TOPIC, "")
        queue_id = int(properties.get(PropertyKey.REAL_QUEUE_ID, "0"))
        draft = Draft(topic, queue_id, parked.body, java_map_text(properties), parked.born_timestamp,
                       parked.born_host, parked.sys_flag, parked.flag, parked.reconsume_times, 0,
                       parked.store_host)
        return self._append([draft], wait=False).result

    def put_delivered(self, scheduled: MessageRecord) -> PutResult:
        """The delay scheduler's re-put of a due message to REAL_TOPIC / REAL_QID (``messageTimeup``)."""
        draft = to_real_topic(scheduled, scheduled.sys_flag, scheduled.prepared_transaction_offset)
        return self._append([draft], wait=False).result

    def _append(self, drafts: list[Draft], wait: bool) -> Appended:
        with self._put_lock:
            if self._refuses_puts():
                return Appended(PutResult(PutMessageStatus.SERVICE_NOT_AVAILABLE), None)
            if wait and self.in_sync_replicas_enough is not None and not self.in_sync_replicas_enough():
                return Appended(PutResult(PutMessageStatus.IN_SYNC_REPLICAS_NOT_ENOUGH), None)
            store_timestamp = now_ms()
            try:
                records, next_offsets = self._build(drafts, store_timestamp)
            except SpecViolation as exc:
                status = PutMessageStatus.MESSAGE_ILLEGAL
                if exc.clause == RMQ_CL_PROPERTIES_LENGTH.id:
                    status = PutMessageStatus.PROPERTIES_SIZE_EXCEEDED
                return Appended(PutResult(status), None)
            try:
                written = self.commitlog.append(records)
            except StoreError:
                return Appended(PutResult(PutMessageStatus.MESSAGE_ILLEGAL), None)
            self._next_queue_offset.update(next_offsets)
            self.confirm_gate.written(written, self.commitlog.max_offset, self._dispatch_new)
            self._stamps[0] = store_timestamp
        first, last = written[0], written[-1]
        end = last.physical_offset + last.total_size
        timer_out = int(first.properties[PropertyKey.TIMER_OUT_MS]) if first.topic == TIMER_TOPIC else None
        result = PutResult(PutMessageStatus.PUT_OK, first.physical_offset,
                           ",".join(r.offset_msg_id for r in written), first.queue_offset,
                           sum(r.total_size for r in written), len(written), store_timestamp, timer_out)
        if first.topic == SCHEDULE_TOPIC:
            self.scheduler.wake()
        elif first.topic == TIMER_TOPIC:
            self.timer.wake()
        if self.on_append is not None:
            self.on_append()
        sync = wait and self.config.flush_disk_type is SYNC_FLUSH
        replicated = wait and self.config.broker_role is SYNC_MASTER
        return Appended(result, end if sync else None, end if replicated else None)

    def _refuses_puts(self) -> bool:
        """Whether no put may append now: the store is stopping, the disk is full, or this is a slave
        (RMQ-HA-SLAVE-REFUSES-SEND: a slave's log holds only its master's bytes). Every put asks this."""
        return not self._running or self.retention.disk_full or self.config.broker_role is SLAVE

    def _size_problem(self, body_size: int, record_size: int) -> SpecViolation | None:
        """RMQ-CL-MAX-MESSAGE for a record of ``record_size`` bytes with a body of ``body_size``: what is
        wrong with it, None when it fits. Every put asks this."""
        limit = self.config.max_message_size
        if body_size > limit:
            return SpecViolation("message body larger than maxMessageSize", expected=f"<= {limit}",
                                 seen=body_size, clause=RMQ_CL_MAX_MESSAGE.id)
        if record_size > limit + RECORD_RESERVE:
            return SpecViolation("message record larger than maxMessageSize + 64 KiB",
                                 expected=f"<= {limit + RECORD_RESERVE}", seen=record_size,
                                 clause=RMQ_CL_MAX_MESSAGE.id)
        return None

    def _build(self, drafts: list[Draft],
               store_timestamp: int) -> tuple[list[MessageRecord], dict[tuple[str, int], int]]:
        """Records for the current end of the log, and the queues' next offsets once they are written."""
        physical_offset = self.commitlog.max_offset
        offsets: dict[tuple[str, int], int] = {}
        records = []
        for draft in drafts:
            key = (draft.topic, draft.queue_id)
            if draft.sys_flag & TRANSACTION_MASK not in QUEUED_TYPES:
                queue_offset = 0
            else:
                queue_offset = offsets.get(key, self._next_queue_offset.get(key, 0))
                offsets[key] = queue_offset + 1
            record = make_record(
                topic=draft.topic, body=draft.body, properties=draft.properties_text, queue_id=draft.queue_id,
                queue_offset=queue_offset, physical_offset=physical_offset,
                born_timestamp=draft.born_timestamp, born_host=draft.born_host,
                store_timestamp=store_timestamp, store_host=draft.store_host or self.store_host,
                sys_flag=draft.sys_flag, flag=draft.flag, reconsume_times=draft.reconsume_times,
                prepared_transaction_offset=draft.prepared_transaction_offset, magic=MESSAGE_MAGIC_V1,
                parsed_properties=draft.properties)
            problem = self._size_problem(len(draft.body), record.total_size)
            if problem is not None:
                raise problem
            records.append(record)
            physical_offset += record.total_size
        return records, offsets


def to_real_topic(parked: MessageRecord, sys_flag: int, prepared_offset: int) -> Draft:
    """A parked (delayed or half) message moved to REAL_TOPIC / REAL_QID. Java writes the string from the
    decoded map before it clears DELAY / REAL_* / TRAN_MSG, so those keys stay in the stored string, and
    copies the parked record's store host (``ScheduleMessageService.messageTimeup`` and
    ``EndTransactionProcessor.endMessageTransaction`` both ``setStoreHost(msgExt.getStoreHost())``)."""
    props = parked.properties
    return Draft(props.get(PropertyKey.REAL_TOPIC, ""), int(props.get(PropertyKey.REAL_QUEUE_ID, "0")),
                  parked.body, java_map_text(dict(props)), parked.born_timestamp, parked.born_host, sys_flag,
                  parked.flag, parked.reconsume_times, prepared_offset, parked.store_host)
