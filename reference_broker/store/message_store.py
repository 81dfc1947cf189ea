"""The broker's message store: one object the SEND, PULL and QUERY handlers call, sans network.

A put appends records through the codec under one lock and dispatches them at once (consume queue entry,
index keys, arrival notification), so a pull issued right after a send sees the message. Flushing runs
on a thread (:mod:`reference_broker.store.flush`); ``put_message_async`` lets an asyncio handler await
the SYNC_FLUSH group commit without blocking the loop, ``put_message`` blocks for callers without one.

Start-up recovery is the same for a clean and a crashed predecessor, only more of it is needed after a
crash: the CommitLog's valid end is found by the codec's validating iterator (CRC and length checks) from
at least the last three files, a torn tail is zeroed, consume-queue entries and index files that point
past the end are dropped, and the records the queues or the index lack are dispatched again.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from functools import lru_cache
from typing import NamedTuple

from codec.fast_store import (
    BORNHOST_V6,
    STOREHOST_V6,
    gather_records,
    offset_msg_id,
    pack_plain_record,
    packed_ip,
)
from codec.store.checkpoint import CheckpointData, encode_checkpoint, read_checkpoint
from codec.store.indexfile import message_index_keys
from codec.store.record import HostPort, MessageRecord, make_record
from reference_broker.store.arrival import ArrivalNotifier, MessageArrival
from reference_broker.store.commitlog import CommitLog
from reference_broker.store.config import FlushDiskType, StoreConfig
from reference_broker.store.consume_queue import ConsumeQueue
from reference_broker.store.flush import FlushService
from reference_broker.store.index import IndexService
from reference_broker.store.mapped_file import MappedFile
from reference_broker.store.message import (
    BatchItem,
    InnerMessage,
    add_cluster,
    batch_item_text,
    java_map_text,
    producer_text,
    redirect_text,
)
from reference_broker.store.put_wait import Appended, PutWaiter
from reference_broker.store.replication import ReplicaAcks
from reference_broker.store.retention import RetentionService
from reference_broker.store.schedule import DelayScheduler
from reference_broker.store.status import (
    GetMessageStatus,
    GetResult,
    PutMessageStatus,
    PutResult,
    QueryResult,
)
from reference_broker.store.topics import SCHEDULE_TOPIC, TRANS_HALF_TOPIC, TRANS_OP_HALF_TOPIC, TRANS_OP_TAG
from reference_broker.timer import TimerIllegal, TimerSettings, TimerWheel, park_timer_message
from reference_broker.timer.transform import TRIGGERS as TIMER_TRIGGERS
from spec.checkpoint import CHECKPOINT_FILE_SIZE
from spec.commitlog import (
    END_FILE_MIN_BLANK_LENGTH,
    MAX_PROPERTIES_BYTES,
    MAX_TOPIC_BYTES_V1,
    MESSAGE_MAGIC_V1,
    RECORD_RESERVE,
    RMQ_CL_MAX_MESSAGE,
    RMQ_CL_PROPERTIES_LENGTH,
)
from spec.consumequeue import CQ_ENTRY_SIZE, delay_level_ms
from spec.errors import SpecViolation, StoreError
from spec.ha import BrokerRole
from spec.hashing import tags_code
from spec.message_id import IPV6_LEN
from spec.properties import PropertyKey, round_trips
from spec.store_layout import (
    ABORT_FILE,
    CHECKPOINT_FILE,
    CONFIG_DIR,
    CONSUMEQUEUE_DIR,
    INDEX_DIR,
    LOCK_CONTENT,
    LOCK_FILE,
    RMQ_STORE_LOCK,
)
from spec.sysflag import TRANSACTION_MASK, TransactionType
from spec.timer import TIMER_CHECKPOINT_FILE, TIMER_TOPIC

MAX_FILTER_SCAN_BYTES = 16_000
"""A pull scans at most max(16000, maxMsgNums * 20) bytes of consume queue (``getMessage``), so a filter
that matches nothing costs a bounded amount of work per request."""


_QUEUED_TYPES = frozenset({int(TransactionType.NOT_TYPE), int(TransactionType.COMMIT)})
"""Transaction types whose records get a consume-queue entry (RMQ-CQ-TRANSACTION), as plain ints."""
_tags_code = lru_cache(maxsize=4096)(tags_code)
"""Tags repeat across messages; hashing each distinct one once takes the Java hash off the put path."""


def now_ms() -> int:
    return int(time.time() * 1000)


class _Draft(NamedTuple):
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


class MessageStore:
    def __init__(self, config: StoreConfig) -> None:
        self.config = config
        self.root = config.root_dir
        self.store_host = HostPort(*config.store_host)
        self.commitlog = CommitLog(config.commit_log_path, config.mapped_file_size_commit_log)
        self.index = IndexService(self.root / INDEX_DIR, config.max_hash_slot_num, config.max_index_num)
        self.queues: dict[tuple[str, int], ConsumeQueue] = {}
        self.arrivals = ArrivalNotifier()
        self.replicas = ReplicaAcks(config.ha_slave_fallbehind_max)
        self.on_append: Callable[[], None] | None = None
        """Called after every append (from whichever thread put): the HA server's wake-up."""
        self._replica_dispatched = 0
        """A slave's CommitLog offset up to which records have been dispatched (the rest is partial)."""
        self.recovered_abnormally = False
        self._put_lock = threading.RLock()
        self._next_queue_offset: dict[tuple[str, int], int] = {}
        self._running = False
        self._lock_fd: int | None = None
        self._checkpoint: MappedFile | None = None
        self._stamps = [0, 0, 0]
        """Store times of the newest record in the commitlog, the consume queues and the index."""
        self._flusher = FlushService(self.commitlog.flush, self._flush_logics,
                                     config.flush_interval_commit_log_ms / 1000,
                                     config.flush_interval_consume_queue_ms / 1000)
        self._cluster_round_trips = round_trips(config.cluster_name)
        self.scheduler = DelayScheduler(self, self.root / CONFIG_DIR, config.delay_levels_ms,
                                        config.flush_delay_offset_interval_ms / 1000)
        self.retention = RetentionService(config, self.commitlog, self._queue_list, self.index,
                                          self._put_lock)
        self.timer_settings = TimerSettings(config.timer_wheel_enable, config.timer_precision_ms,
                                            config.timer_max_delay_sec)
        self.timer = TimerWheel(self, self.root / TIMER_CHECKPOINT_FILE)
        self._waiter = PutWaiter(config, self._flusher, self.replicas)

    # ---------------------------------------------------------------- life cycle

    def open(self) -> MessageStore:
        self.root.mkdir(parents=True, exist_ok=True)
        self._take_lock()
        abort = self.root / ABORT_FILE
        self.recovered_abnormally = abort.exists()
        abort.touch()
        try:
            checkpoint_path = self.root / CHECKPOINT_FILE
            if checkpoint_path.exists():
                saved = read_checkpoint(checkpoint_path)
                self._stamps = [saved.physic_msg_timestamp, saved.logics_msg_timestamp,
                                saved.index_msg_timestamp]
            self._checkpoint = MappedFile(checkpoint_path, CHECKPOINT_FILE_SIZE)
            self._recover()
        except BaseException:
            self._abandon_open()
            raise
        self._replica_dispatched = self.commitlog.max_offset
        self._running = True
        self._flusher.start()
        if self.config.broker_role is not BrokerRole.SLAVE:
            self.scheduler.start()
            if self.timer_settings.enabled:
                self.timer.start()
        self.retention.start()
        return self

    def __enter__(self) -> MessageStore:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _take_lock(self) -> None:
        fd = os.open(self.root / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 0)
        except OSError:
            os.close(fd)
            raise StoreError("Lock failed,MQ already started", expected="an unlocked store",
                             seen=str(self.root), clause=RMQ_STORE_LOCK.id) from None
        os.pwrite(fd, LOCK_CONTENT, 0)
        self._lock_fd = fd

    def _abandon_open(self) -> None:
        """A store that failed to open is left as it was found: no ``abort`` file it did not have (a
        refused store does not read as crashed afterwards), no mapped files, no lock."""
        if not self.recovered_abnormally:
            (self.root / ABORT_FILE).unlink(missing_ok=True)
        self.commitlog.close()
        for queue in self.queues.values():
            queue.close()
        self.index.close()
        if self._checkpoint is not None:
            self._checkpoint.close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def close(self) -> None:
        """Clean shutdown: stop the scheduler, flush everything, write the checkpoint, remove abort."""
        if not self._running:
            return
        with self._put_lock:
            self._running = False
        self.retention.stop()
        self.scheduler.stop()
        self.timer.stop()
        self._flusher.stop()
        self.retention.close_retired()
        self.commitlog.close()
        for queue in self.queues.values():
            queue.close()
        self.index.close()
        if self._checkpoint is not None:
            self._checkpoint.close()
        (self.root / ABORT_FILE).unlink(missing_ok=True)
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def _recover(self) -> None:
        self.commitlog.load()
        base = self.root / CONSUMEQUEUE_DIR
        if base.is_dir():
            for topic_dir in sorted(p for p in base.iterdir() if p.is_dir()):
                for queue_dir in sorted(p for p in topic_dir.iterdir() if p.name.isdigit()):
                    queue = self._queue(topic_dir.name, int(queue_dir.name))
                    queue.recover()
        if self.config.message_index_enable:
            self.index.load()
        dispatch_from = self._dispatch_from()
        end, newest = self.commitlog.find_end(dispatch_from, self.config.check_crc_on_recover)
        self.commitlog.truncate(end)
        for queue in self.queues.values():
            queue.truncate_dirty(end)
        rebuild_index_from = self.index.drop_beyond(end)
        if rebuild_index_from is None:
            rebuild_index_from = end
        dispatch_from = min(self._dispatch_from(), rebuild_index_from)
        for record in self.commitlog.records(max(dispatch_from, self.commitlog.min_offset)):
            self._dispatch(record, notify=False)
        self._next_queue_offset = {key: queue.max_offset for key, queue in self.queues.items()}
        for queue in self.queues.values():
            queue.correct_min_offset(self.commitlog.min_offset)
        # Every record up to ``end`` is now in the consume queues (and the index), whether recovery
        # dispatched it or found it already there: a crash before the checkpoint's first flush must not
        # leave stamps of 0 behind a store that holds messages (RMQ-BRK-CHECKPOINT).
        covered = [True, True, self.config.message_index_enable]
        self._stamps = [max(stamp, newest) if cover else stamp for stamp, cover in zip(self._stamps, covered,
                                                                                        strict=True)]

    def _dispatch_from(self) -> int:
        """Where the consume queues (Java: the one furthest ahead) and the index stop covering records."""
        covered = max((q.last_entry_end() for q in self.queues.values()), default=0)
        if self.config.message_index_enable:
            covered = min(covered, max(self.index.last_indexed, 0))
        return covered

    # ---------------------------------------------------------------- putting

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
            queue, last = self.queues.get(key), self.commitlog.files.last
            queue_offset = self._next_queue_offset.get(key, 0)
            if (not self._running or self.retention.disk_full or config.broker_role is BrokerRole.SLAVE
                    or queue is None or last is None or not queue.next_entry_fits(queue_offset)):
                return None
            physical = last.file_from_offset + last.wrote
            stamp = now_ms()
            record = pack_plain_record(
                queue_id, message.flag, queue_offset, physical, sys_flag, message.born_timestamp, born_ip,
                born.port, stamp, store_ip, store.port, message.reconsume_times, message.body, topic_raw,
                text_raw)
            size, limit = len(record), config.max_message_size
            if len(message.body) > limit or size > limit + RECORD_RESERVE \
                    or size + END_FILE_MIN_BLANK_LENGTH > last.remaining:
                return None
            last.append(record)
            self._next_queue_offset[key] = queue_offset + 1
            code = _tags_code(props.get(PropertyKey.TAGS))
            queue.append_next(physical, size, code)
            queue.last_store_timestamp = stamp
            self.arrivals.notify(MessageArrival(topic, queue_id, queue_offset + 1, code, stamp))
            if config.message_index_enable:
                self.index.put_keys(message_index_keys(topic, props), physical, stamp)
                self._stamps[2] = stamp
            self._stamps[0] = self._stamps[1] = stamp
        if self.on_append is not None:
            self.on_append()
        return PlainPut(physical, queue_offset, offset_msg_id(store_ip, store.port, physical))

    def _plain(self, message: InnerMessage) -> bool:
        """Whether ``message`` may be a plain put: no transaction, delay or timer, not for a topic a
        delivery service watches, nothing to wait for once appended."""
        config = self.config
        waits = message.wait_store_msg_ok and (config.flush_disk_type is FlushDiskType.SYNC_FLUSH
                                               or config.broker_role is BrokerRole.SYNC_MASTER)
        return not (message.sys_flag & TRANSACTION_MASK or message.delay_level > 0 or waits
                    or message.topic in _PARKING_TOPICS or not self._cluster_round_trips
                    or not message.properties.keys().isdisjoint(TIMER_TRIGGERS))

    def _put_copy(self, message: InnerMessage, store_host: HostPort) -> Appended:
        props = dict(message.properties)
        try:
            draft = self._delayed(message, props, java_map_text(props))._replace(store_host=store_host)
        except TimerIllegal:
            return Appended(PutResult(PutMessageStatus.WHEEL_TIMER_MSG_ILLEGAL), None)
        return self._append([draft], message.wait_store_msg_ok)

    def _delayed(self, message: InnerMessage, props: dict[str, str], text: str) -> _Draft:
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
        return _Draft(topic, queue_id, message.body, text, message.born_timestamp, message.born_host,
                      message.sys_flag, message.flag, message.reconsume_times,
                      message.prepared_transaction_offset)

    def _put_batch(self, batch: InnerMessage, items: Sequence[BatchItem]) -> Appended:
        if batch.transaction_type is not TransactionType.NOT_TYPE or batch.delay_level > 0 or not items:
            return Appended(PutResult(PutMessageStatus.MESSAGE_ILLEGAL), None)
        props = dict(batch.properties)
        add_cluster(props, self.config.cluster_name)
        batch_text = java_map_text(props)
        drafts = [_Draft(batch.topic, batch.queue_id, item.body,
                         batch_item_text(item.properties_text, batch_text), batch.born_timestamp,
                         batch.born_host, batch.sys_flag, item.flag, batch.reconsume_times)
                  for item in items]
        return self._append(drafts, batch.wait_store_msg_ok)

    def _put_half(self, message: InnerMessage) -> Appended:
        props = dict(message.properties)
        add_cluster(props, self.config.cluster_name)
        text = redirect_text(props, message.topic, message.queue_id)
        draft = _Draft(TRANS_HALF_TOPIC, 0, message.body, text, message.born_timestamp, message.born_host,
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
            committed = _to_real_topic(half, (half.sys_flag & ~TRANSACTION_MASK) | TransactionType.COMMIT,
                                       half.physical_offset)
            result = self._append([committed], wait=False).result
            if not result.ok:
                return result
        op = _Draft(TRANS_OP_HALF_TOPIC, half.queue_id, str(half.queue_offset).encode(),
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
        draft = _Draft(topic, queue_id, record.body, java_map_text(properties), record.born_timestamp,
                       record.born_host, record.sys_flag, flag, reconsume_times, 0, record.store_host)
        return self._append([draft], wait=False).result

    def put_timer_delivered(self, parked: MessageRecord, properties: dict[str, str]) -> PutResult:
        """The timer wheel's put of a due message to REAL_TOPIC / REAL_QID (``convertMessage``): the string
        is written from the map before Java clears REAL_*, so they stay in it (RMQ-TIMER-DELIVERED); born
        and store host, flags and reconsume times are kept."""
        topic = properties.get(PropertyKey.REAL_TOPIC, "")
        queue_id = int(properties.get(PropertyKey.REAL_QUEUE_ID, "0"))
        draft = _Draft(topic, queue_id, parked.body, java_map_text(properties), parked.born_timestamp,
                       parked.born_host, parked.sys_flag, parked.flag, parked.reconsume_times, 0,
                       parked.store_host)
        return self._append([draft], wait=False).result

    def put_delivered(self, scheduled: MessageRecord) -> PutResult:
        """The delay scheduler's re-put of a due message to REAL_TOPIC / REAL_QID (``messageTimeup``)."""
        draft = _to_real_topic(scheduled, scheduled.sys_flag, scheduled.prepared_transaction_offset)
        return self._append([draft], wait=False).result

    def _append(self, drafts: list[_Draft], wait: bool) -> Appended:
        with self._put_lock:
            if not self._running or self.retention.disk_full or self.config.broker_role is BrokerRole.SLAVE:
                # RMQ-HA-SLAVE-REFUSES-SEND: a slave's log holds only its master's bytes
                return Appended(PutResult(PutMessageStatus.SERVICE_NOT_AVAILABLE), None)
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
            for record in written:
                self._dispatch(record, notify=True)
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
        sync = wait and self.config.flush_disk_type is FlushDiskType.SYNC_FLUSH
        replicated = wait and self.config.broker_role is BrokerRole.SYNC_MASTER
        return Appended(result, end if sync else None, end if replicated else None)

    def _build(self, drafts: list[_Draft],
               store_timestamp: int) -> tuple[list[MessageRecord], dict[tuple[str, int], int]]:
        """Records for the current end of the log, and the queues' next offsets once they are written."""
        physical_offset = self.commitlog.max_offset
        offsets: dict[tuple[str, int], int] = {}
        records = []
        for draft in drafts:
            key = (draft.topic, draft.queue_id)
            if draft.sys_flag & TRANSACTION_MASK not in _QUEUED_TYPES:
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
            limit = self.config.max_message_size
            if len(draft.body) > limit:
                raise SpecViolation("message body larger than maxMessageSize", expected=f"<= {limit}",
                                    seen=len(draft.body), clause=RMQ_CL_MAX_MESSAGE.id)
            if record.total_size > limit + RECORD_RESERVE:
                raise SpecViolation("message record larger than maxMessageSize + 64 KiB",
                                    expected=f"<= {limit + RECORD_RESERVE}", seen=record.total_size,
                                    clause=RMQ_CL_MAX_MESSAGE.id)
            records.append(record)
            physical_offset += record.total_size
        return records, offsets

    # ---------------------------------------------------------------- replica (a slave's log)

    def append_replica(self, offset: int, data: bytes) -> None:
        """Master bytes for a slave's CommitLog end (RMQ-HA-REPLICA); the records they complete are
        dispatched to consume queues and index as a master dispatches its own puts."""
        with self._put_lock:
            self.commitlog.append_raw(offset, data)
            position = self._replica_dispatched
            while (step := self.commitlog.next_record_end(position)) is not None:
                end, is_record = step
                if is_record:
                    record = self.commitlog.read_record(position)
                    if record is None:
                        raise StoreError("replica record does not decode", offset=position)
                    self._dispatch(record, notify=True)
                    self._next_queue_offset[(record.topic, record.queue_id)] = record.queue_offset + 1
                    self._stamps[0] = record.store_timestamp
                position = end
            self._replica_dispatched = position

    # ---------------------------------------------------------------- dispatching

    def _queue(self, topic: str, queue_id: int) -> ConsumeQueue:
        key = (topic, queue_id)
        queue = self.queues.get(key)
        if queue is None:
            queue = ConsumeQueue(self.root / CONSUMEQUEUE_DIR / topic / str(queue_id), topic, queue_id,
                                 self.config.mapped_file_size_consume_queue)
            self.queues[key] = queue
        return queue

    def _queue_list(self) -> list[ConsumeQueue]:
        with self._put_lock:
            return list(self.queues.values())

    # ---------------------------------------------------------------- retention

    def delete_expired_commitlog(self) -> None:
        """DELETE_EXPIRED_COMMITLOG (``executeDeleteFilesManually``): the next 20 retention rounds delete
        expired commitlog files whatever the hour."""
        self.retention.delete_manually()

    def clean_expired_consume_queues(self) -> int:
        """CLEAN_EXPIRED_CONSUMEQUEUE (``cleanExpiredConsumerQueue``): drop every queue (but the delay
        levels') whose last entry points below the commitlog's first offset; a later message to it starts
        again at queue offset 0. Returns how many queues were dropped."""
        commitlog_min = self.commitlog.min_offset
        dropped = 0
        with self._put_lock:
            for key, queue in list(self.queues.items()):
                end = queue.last_entry_end()
                if key[0] == SCHEDULE_TOPIC or end == 0 or end >= commitlog_min:
                    continue
                del self.queues[key]
                self._next_queue_offset.pop(key, None)
                self.retention.retire(queue.files.retire_first(len(queue.files.files)))
                with contextlib.suppress(OSError):  # the directories go too, unless something else is there
                    queue.files.directory.rmdir()
                    queue.files.directory.parent.rmdir()
                dropped += 1
        return dropped

    def tags_code_of(self, record: MessageRecord) -> int:
        """The consume-queue tags code: the deliver time for a parked delayed message (RMQ-CQ-DELAY-TAGS),
        else the tags hash (RMQ-CQ-TAGS-CODE)."""
        if record.topic == SCHEDULE_TOPIC:
            level = record.properties.get(PropertyKey.DELAY, "")
            if level.isdigit() and int(level) > 0:
                return record.store_timestamp + delay_level_ms(int(level), self.config.message_delay_level)
        return _tags_code(record.tags)

    def _dispatch(self, record: MessageRecord, notify: bool) -> None:
        if record.sys_flag & TRANSACTION_MASK in _QUEUED_TYPES:
            queue = self._queue(record.topic, record.queue_id)
            code = self.tags_code_of(record)
            if queue.put(record.queue_offset, record.physical_offset, record.total_size, code):
                queue.last_store_timestamp = record.store_timestamp
                self._stamps[1] = record.store_timestamp
                if notify:  # the queue now ends just past this entry
                    end = record.queue_offset + 1
                    self.arrivals.notify(MessageArrival(record.topic, record.queue_id, end, code,
                                                        record.store_timestamp))
        if self.config.message_index_enable:
            self.index.build(record)
            self._stamps[2] = record.store_timestamp

    def _flush_logics(self) -> None:
        for queue in list(self.queues.values()):
            queue.flush()
        self.index.flush()
        if self._checkpoint is not None and not self._checkpoint.mm.closed:
            stamps = CheckpointData(*self._stamps)
            self._checkpoint.mm[:CHECKPOINT_FILE_SIZE] = encode_checkpoint(stamps)
            self._checkpoint.wrote = CHECKPOINT_FILE_SIZE
            self._checkpoint.flush()

    # ---------------------------------------------------------------- reading

    def get_messages(self, topic: str, queue_id: int, offset: int, max_nums: int,
                     tag_codes: AbstractSet[int] | None = None) -> GetResult:
        """``DefaultMessageStore.getMessage`` for TAG filtering: statuses, next offsets and batch limits as
        Java's (every message counts as in memory, the broker has no disk-lag mode)."""
        queue = self.queues.get((topic, queue_id))
        if queue is None:
            return GetResult(GetMessageStatus.NO_MATCHED_LOGIC_QUEUE, 0, 0, 0)
        min_offset, max_offset = queue.min_offset, queue.max_offset
        if max_offset == 0:
            return GetResult(GetMessageStatus.NO_MESSAGE_IN_QUEUE, 0, min_offset, max_offset)
        if offset < min_offset:
            return GetResult(GetMessageStatus.OFFSET_TOO_SMALL, min_offset, min_offset, max_offset)
        if offset == max_offset:
            return GetResult(GetMessageStatus.OFFSET_OVERFLOW_ONE, offset, min_offset, max_offset)
        if offset > max_offset:  # 4.9.8 corrects to the max offset (older versions to 0 when min is 0)
            return GetResult(GetMessageStatus.OFFSET_OVERFLOW_BADLY, max_offset, min_offset, max_offset)
        scan = max(MAX_FILTER_SCAN_BYTES, max_nums * CQ_ENTRY_SIZE) // CQ_ENTRY_SIZE
        rows = queue.rows(offset, scan)
        if rows is None:
            return GetResult(GetMessageStatus.OFFSET_FOUND_NULL, queue.next_file_offset(offset), min_offset,
                             max_offset)
        config = self.config
        files = [(mapped.file_from_offset, mapped.wrote, mapped.mm) for mapped in self.commitlog.files.files]
        scanned, messages, deltas, missing = gather_records(
            rows, files, self.commitlog.files.file_size, max_nums,
            config.max_transfer_bytes_on_message_in_memory, config.max_transfer_count_on_message_in_memory,
            tag_codes)
        status = GetMessageStatus.FOUND if messages else (
            GetMessageStatus.MESSAGE_WAS_REMOVING if missing else GetMessageStatus.NO_MATCHED_MESSAGE)
        return GetResult(status, offset + scanned, min_offset, max_offset, messages,
                         [offset + delta for delta in deltas])

    def consume_queue(self, topic: str, queue_id: int) -> ConsumeQueue | None:
        return self.queues.get((topic, queue_id))

    def max_offset(self, topic: str, queue_id: int) -> int:
        queue = self.queues.get((topic, queue_id))
        return queue.max_offset if queue else 0

    def min_offset(self, topic: str, queue_id: int) -> int:
        queue = self.queues.get((topic, queue_id))
        return queue.min_offset if queue else 0

    def queue_ids(self, topic: str) -> list[int]:
        return sorted(qid for t, qid in self.queues if t == topic)

    @property
    def max_phy_offset(self) -> int:
        return self.commitlog.max_offset

    @property
    def min_phy_offset(self) -> int:
        return self.commitlog.min_offset

    def commitlog_offset_in_queue(self, topic: str, queue_id: int, offset: int) -> int:
        queue = self.queues.get((topic, queue_id))
        entry = queue.entry(offset) if queue else None
        return entry[0] if entry else 0

    def message_store_timestamp(self, topic: str, queue_id: int, offset: int) -> int:
        """Store time of the message at a queue offset, -1 if there is none (``getMessageStoreTimeStamp``)."""
        queue = self.queues.get((topic, queue_id))
        entry = queue.entry(offset) if queue else None
        record = self.read_record(entry[0]) if entry else None
        return record.store_timestamp if record else -1

    def earliest_message_time(self, topic: str, queue_id: int) -> int:
        return self.message_store_timestamp(topic, queue_id, self.min_offset(topic, queue_id))

    def search_offset_by_timestamp(self, topic: str, queue_id: int, timestamp: int, *,
                                   lower_bound: bool = False) -> int:
        """``getOffsetInQueueByTime``: the offset whose store time equals ``timestamp``, else the nearer of
        its two neighbours (binary search over the queue, store times read from the commitlog); with
        ``lower_bound`` (5.1.1+, spec.release_rules) the first offset stored at or after it, else the max."""
        queue = self.queues.get((topic, queue_id))
        if queue is None or queue.max_offset == 0:
            return 0
        if lower_bound:
            return self._lower_bound(topic, queue_id, queue.min_offset, queue.max_offset, timestamp)
        low, high = queue.min_offset, queue.max_offset - 1
        left = right = -1
        left_time = right_time = -1
        while low <= high:
            mid = (low + high) // 2
            stamp = self.message_store_timestamp(topic, queue_id, mid)
            if stamp < 0:
                return 0
            if stamp == timestamp:
                return mid
            if stamp > timestamp:
                high, right, right_time = mid - 1, mid, stamp
            else:
                low, left, left_time = mid + 1, mid, stamp
        if left_time == -1:
            return right
        if right_time == -1:
            return left
        return right if abs(timestamp - left_time) > abs(timestamp - right_time) else left

    def _lower_bound(self, topic: str, queue_id: int, low: int, end: int, timestamp: int) -> int:
        """The first offset in [low, end) whose store time is at least ``timestamp`` (``end`` if none)."""
        high = end
        while low < high:
            mid = (low + high) // 2
            stamp = self.message_store_timestamp(topic, queue_id, mid)
            if stamp < 0:
                return 0
            if stamp < timestamp:
                low = mid + 1
            else:
                high = mid
        return low

    def view_by_offset(self, phys_offset: int) -> bytes | None:
        """The whole record at a commitlog offset (VIEW_MESSAGE_BY_ID decodes it from an offsetMsgId)."""
        return self.commitlog.read_raw(phys_offset)

    def read_record(self, phys_offset: int) -> MessageRecord | None:
        return self.commitlog.read_record(phys_offset)

    def query_by_key(self, topic: str, key: str, max_num: int, begin: int, end: int) -> QueryResult:
        """QUERY_MESSAGE through the index. Like Java, records are returned for every hash match (the
        client compares the keys); the count is capped at ``maxMsgsNumBatch``."""
        offsets = self.index.query(topic, key, min(max_num, self.config.max_msgs_num_batch), begin, end)
        raws = [raw for raw in map(self.view_by_offset, offsets) if raw is not None]
        timestamp, phy_offset = self.index.last_update
        return QueryResult(raws, timestamp, phy_offset)


def _to_real_topic(parked: MessageRecord, sys_flag: int, prepared_offset: int) -> _Draft:
    """A parked (delayed or half) message moved to REAL_TOPIC / REAL_QID. Java writes the string from the
    decoded map before it clears DELAY / REAL_* / TRAN_MSG, so those keys stay in the stored string, and
    copies the parked record's store host (``ScheduleMessageService.messageTimeup`` and
    ``EndTransactionProcessor.endMessageTransaction`` both ``setStoreHost(msgExt.getStoreHost())``)."""
    props = parked.properties
    return _Draft(props.get(PropertyKey.REAL_TOPIC, ""), int(props.get(PropertyKey.REAL_QUEUE_ID, "0")),
                  parked.body, java_map_text(dict(props)), parked.born_timestamp, parked.born_host, sys_flag,
                  parked.flag, parked.reconsume_times, prepared_offset, parked.store_host)
