"""The broker's message store: one object the SEND, PULL and QUERY handlers call, sans network.

A put appends records through the codec under one lock and dispatches them at once (consume queue entry, index
keys, arrival notification), so a pull issued right after a send sees the message. Flushing runs on a thread
(:mod:`rocketmq_spec.reference_broker.store.flush`); ``put_message_async`` lets an asyncio handler await the
SYNC_FLUSH group commit without blocking the loop, ``put_message`` blocks for callers without one.

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
from collections.abc import Callable

from rocketmq_spec.codec.store.checkpoint import CheckpointData, encode_checkpoint, read_checkpoint
from rocketmq_spec.codec.store.record import HostPort, MessageRecord
from rocketmq_spec.reference_broker.store.arrival import ArrivalNotifier, MessageArrival
from rocketmq_spec.reference_broker.store.commitlog import CommitLog
from rocketmq_spec.reference_broker.store.config import StoreConfig
from rocketmq_spec.reference_broker.store.confirm_gate import ConfirmGate
from rocketmq_spec.reference_broker.store.consume_queue import ConsumeQueue
from rocketmq_spec.reference_broker.store.flush import FlushService
from rocketmq_spec.reference_broker.store.index import IndexService
from rocketmq_spec.reference_broker.store.mapped_file import MappedFile
from rocketmq_spec.reference_broker.store.put_wait import PutWaiter
from rocketmq_spec.reference_broker.store.puts import QUEUED_TYPES, StorePuts, cached_tags_code
from rocketmq_spec.reference_broker.store.reads import StoreReads
from rocketmq_spec.reference_broker.store.replication import ReplicaAcks, ReplicaWaits
from rocketmq_spec.reference_broker.store.retention import RetentionService
from rocketmq_spec.reference_broker.store.schedule import DelayScheduler
from rocketmq_spec.reference_broker.store.timer import TimerSettings, TimerWheel
from rocketmq_spec.spec.checkpoint import CHECKPOINT_FILE_SIZE
from rocketmq_spec.spec.consumequeue import delay_level_ms
from rocketmq_spec.spec.errors import StoreError
from rocketmq_spec.spec.ha import BrokerRole
from rocketmq_spec.spec.properties import PropertyKey, round_trips
from rocketmq_spec.spec.store_layout import (
    ABORT_FILE,
    CHECKPOINT_FILE,
    CONFIG_DIR,
    CONSUMEQUEUE_DIR,
    INDEX_DIR,
    LOCK_CONTENT,
    LOCK_FILE,
    RMQ_STORE_LOCK,
)
from rocketmq_spec.spec.sysflag import TRANSACTION_MASK
from rocketmq_spec.spec.system_topics import SCHEDULE_TOPIC


class MessageStore(StorePuts, StoreReads):
    def __init__(self, config: StoreConfig) -> None:
        self.config = config
        self.root = config.root_dir
        self.store_host = HostPort(*config.store_host)
        self.commitlog = CommitLog(config.commit_log_path, config.mapped_file_size_commit_log)
        self.index = IndexService(self.root / INDEX_DIR, config.max_hash_slot_num, config.max_index_num,
                                  config.index_tag_key)
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
        self.in_sync_replicas_enough: Callable[[], bool] | None = None
        self.confirm_gate = ConfirmGate()
        self._running = False
        self._lock_fd: int | None = None
        self._checkpoint: MappedFile | None = None
        self._stamps = [0, 0, 0]
        """Store times of the newest record in the commitlog, the consume queues and the index."""
        self._master_flushed = 0
        """The checkpoint's masterFlushedOffset, kept as read (the reference broker does not set it)."""
        self.confirm_offset = 0
        """The checkpoint's confirmPhyOffset as read at open (RMQ-CKPT-CONFIRM): a controller-mode broker's
        confirm offset until its role sets one; written back unchanged without controller mode."""
        self.recorded_confirm: Callable[[], int] | None = None
        """Controller mode: the confirm offset as last set, which each checkpoint flush records."""
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
        self.timer = TimerWheel(self, self.root, config.timer_precision_ms)
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
                self._master_flushed = saved.master_flushed_offset
                self.confirm_offset = saved.confirm_phy_offset
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
        self.timer.stop()  # parks its pending messages again: before puts stop
        with self._put_lock:
            self._running = False
        self.retention.stop()
        self.scheduler.stop()
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

    # ---------------------------------------------------------------- replica (a slave's log)

    def append_replica(self, offset: int, data: bytes) -> None:
        """Master bytes for a slave's CommitLog end (RMQ-HA-REPLICA); the records they complete are
        dispatched to consume queues and index as a master dispatches its own puts."""
        with self._put_lock:
            self.commitlog.append_raw(offset, data)
            position = self._replica_dispatched
            complete = []
            while (step := self.commitlog.next_record_end(position)) is not None:
                end, is_record = step
                if is_record:
                    record = self.commitlog.read_record(position)
                    if record is None:
                        raise StoreError("replica record does not decode", offset=position)
                    complete.append(record)
                    self._next_queue_offset[(record.topic, record.queue_id)] = record.queue_offset + 1
                    self._stamps[0] = record.store_timestamp
                position = end
            self._replica_dispatched = position
            self.confirm_gate.written(complete, self.commitlog.max_offset, self._dispatch_new)

    def truncate_files(self, end: int) -> None:
        """Cut the CommitLog at ``end`` and what the consume queues and index hold beyond it
        (``DefaultMessageStore.truncateFiles``): a slave going back to its consistent point with a new
        master (RMQ-HA2-TRUNCATE)."""
        with self._put_lock:
            if end >= self.commitlog.max_offset:
                return
            self.commitlog.truncate(end)
            for queue in self.queues.values():
                queue.truncate_dirty(end)
            rebuild_from = self.index.drop_beyond(end)
            if rebuild_from is not None and self.config.message_index_enable:
                for record in self.commitlog.records(max(rebuild_from, self.commitlog.min_offset)):
                    self.index.build(record)
            self.confirm_gate.truncate(end)
            self._next_queue_offset = {key: queue.max_offset for key, queue in self.queues.items()}
            self._replica_dispatched = min(self._replica_dispatched, end)

    # ---------------------------------------------------------------- dispatching

    def confirm_advanced(self) -> None:
        """The confirm offset may have moved (an acknowledgement, a new SyncStateSet, a transfer header):
        dispatch what the gate held and it now covers (RMQ-HA2-CONFIRM-READ)."""
        with self._put_lock:
            self.confirm_gate.release(self.commitlog.max_offset, self._dispatch_new)

    def use_replica_waits(self, waits: ReplicaWaits | None) -> None:
        """What a SYNC_MASTER put waits on: a controller-mode master's SyncStateSet, or (None) the classic
        book of any slave's acknowledgements."""
        self._waiter.replicas = waits or self.replicas

    def _dispatch_new(self, record: MessageRecord) -> None:
        self._dispatch(record, notify=True)

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
        return cached_tags_code(record.tags)

    def _dispatch(self, record: MessageRecord, notify: bool) -> None:
        if record.sys_flag & TRANSACTION_MASK in QUEUED_TYPES:
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
            confirm = self.confirm_offset if self.recorded_confirm is None else self.recorded_confirm()
            physic, logics, index = self._stamps
            stamps = CheckpointData(physic, logics, index, self._master_flushed, confirm)
            self._checkpoint.mm[:CHECKPOINT_FILE_SIZE] = encode_checkpoint(stamps)
            self._checkpoint.wrote = CHECKPOINT_FILE_SIZE
            self._checkpoint.flush()

