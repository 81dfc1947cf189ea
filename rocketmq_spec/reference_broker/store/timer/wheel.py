"""Delivering timer messages: every entry of ``rmq_sys_wheel_timer`` queue 0 is taken into an in-memory
wheel (a heap by TIMER_OUT_MS) and written to REAL_TOPIC / REAL_QID once its slot has ended, as Java
releases it: never before the requested time (RMQ-TIMER-PROPERTIES, ``release_ms``).

Java keeps the wheel in the files ``timerwheel`` and ``timerlog``; both are an index of the wheel topic's
queue, so here the queue itself is the only durable state. ``config/timercheck`` (Java's layout) says how
far the wheel was read: ``lastReadTimeMs``, the time up to which every due message has been delivered (no
pending message is due earlier), and ``lastTimerQueueOffset``, the oldest entry not yet delivered. A
restart re-reads the queue and takes in every entry due at or after ``lastReadTimeMs`` (RMQ-TIMER-RESTART),
which is also what those fields mean in a checkpoint Java wrote, so a store Apache RocketMQ 5.x left
behind hands its pending timers over too. An entry delivered at exactly that time is delivered again. On
such a store the entries from the checkpoint's ``lastTimerQueueOffset`` on, which Java had not read, are
pending too, and Java's own index is removed once this broker's checkpoint is written
(:mod:`rocketmq_spec.reference_broker.store.timer.java_index`), so that Java restarted later resumes the queue
where this broker's checkpoint says.

A master's ``masterTimerQueueOffset`` is its own ``lastTimerQueueOffset`` (Java's
``prepareTimerCheckPoint``), and Java 5.x starts re-reading the queue at the smaller of the two: written
as 0, it would take the whole queue in again and deliver every message once more. Java finds no
``timerlog`` in a store written here, so it re-reads from ``lastTimerQueueOffset`` and delivers at once
whatever is due: a clean stop therefore parks the pending messages again past everything delivered
(:meth:`TimerWheel._repark`). After a crash the checkpoint names the oldest pending entry, and an entry
after it that was already delivered is delivered again by Java.

Java rolls a message due more than ``timerRollWindowSlot`` slots ahead: it parks it again, with
``TIMER_ROLL_TIMES`` and the same ``TIMER_OUT_MS``, so a store it wrote can hold the message twice; an entry
with ``TIMER_ROLL_TIMES`` naming a message already pending is not taken in (the same holds for this
broker's own copies made at a stop).
"""

from __future__ import annotations

import heapq
import logging
import time
from pathlib import Path
from typing import Protocol

from rocketmq_spec.codec.store.record import MessageRecord
from rocketmq_spec.codec.store.timercheck import (
    TimerCheckpointData,
    encode_timer_checkpoint,
    read_timer_checkpoint,
)
from rocketmq_spec.reference_broker.store.consume_queue import ConsumeQueue
from rocketmq_spec.reference_broker.store.status import PutResult
from rocketmq_spec.reference_broker.store.timer.java_index import drop_java_timer_index, java_timer_index
from rocketmq_spec.reference_broker.store.worker import DeliveryWorker
from rocketmq_spec.spec.properties import PropertyKey
from rocketmq_spec.spec.system_topics import TIMER_TOPIC
from rocketmq_spec.spec.timer import (
    TIMER_CHECKPOINT_FILE,
    TIMER_PRECISION_MS,
    TIMER_QUEUE_ID,
    delete_key,
    read_time_ms,
    release_ms,
)

log = logging.getLogger(__name__)

IDLE_WAIT_S = 1.0
"""Longest sleep with nothing due."""
RETRY_WAIT_S = 0.1
"""Pause after a failed delivery."""
PERSIST_INTERVAL_S = 1.0
"""``timerFlushIntervalMs``: how often the checkpoint is written."""


class TimerStore(Protocol):
    """What the wheel needs of the message store (which owns the wheel)."""

    def consume_queue(self, topic: str, queue_id: int) -> ConsumeQueue | None: ...

    def read_record(self, phys_offset: int) -> MessageRecord | None: ...

    def put_timer_delivered(self, parked: MessageRecord, properties: dict[str, str]) -> PutResult: ...

    def put_record_copy(self, record: MessageRecord, topic: str, queue_id: int, properties: dict[str, str],
                        flag: int, reconsume_times: int) -> PutResult: ...


def now_ms() -> int:
    return int(time.time() * 1000)


class TimerWheel(DeliveryWorker):
    def __init__(self, store: TimerStore, root: Path, precision_ms: int = TIMER_PRECISION_MS) -> None:
        super().__init__("store-timer", IDLE_WAIT_S, PERSIST_INTERVAL_S)
        self._store = store
        self._root = root
        self._checkpoint = root / TIMER_CHECKPOINT_FILE
        self._precision_ms = precision_ms
        self._taken = 0
        """Next offset of the wheel queue to take in."""
        self._pending: list[tuple[int, int, int]] = []
        """(TIMER_OUT_MS, queue offset, commitlog offset) of every parked message not yet delivered."""
        self._enqueued: dict[int, int] = {}
        """Queue offset -> when it was taken in (TIMER_ENQUEUE_MS)."""
        self._read_time = 0
        """Entries found at start and due before this were delivered before (the checkpoint's
        lastReadTimeMs)."""
        self._recalled: set[str] = set()
        """TIMER_DEL_UNIQKEY of the recalls taken in: the messages they name are not delivered."""
        self._pending_keys: set[str] = set()
        """REAL_TOPIC+UNIQ_KEY of the pending messages: a copy Java rolled is not a second message."""
        self._found_end: int | None = None
        """The wheel queue's end at start: later entries are all pending, whatever their time."""
        self._java_index: list[Path] = []
        """Java's timer index found at start, removed once taken over (``java_index``)."""
        self._unread_from: int | None = None
        """With Java's index: its checkpoint's lastTimerQueueOffset, from which Java had read nothing."""

    @property
    def pending(self) -> int:
        return len(self._pending)

    def start(self) -> None:
        saved = read_timer_checkpoint(self._checkpoint)
        self._read_time = saved.last_read_time_ms if saved else 0
        self._java_index = java_timer_index(self._root)
        self._unread_from = saved.last_timer_queue_offset if saved and self._java_index else None
        self._taken = 0
        super().start()

    def _stopped(self) -> None:
        """Called while the store still takes puts: the pending messages are parked again (see
        :meth:`_repark`) before the checkpoint is written."""
        self._repark()
        self.persist()

    def _repark(self) -> None:
        """Park every pending message again at the end of the wheel queue, as Java's roll does (same
        TIMER_OUT_MS, TIMER_ROLL_TIMES one more), so the checkpoint's lastTimerQueueOffset names the first
        copy: Java 5.x, which keeps no record of delivered entries but ``timerlog`` (not written here),
        then re-reads only pending messages, none already delivered. This broker's own restart takes in
        the originals and skips the copies (:meth:`_take_in_entry`). A recalled message is not copied: its
        marker would be behind the copies. Nothing changes if a put fails (the oldest pending entry stays
        the low-water mark)."""
        copies: list[tuple[int, int, int]] = []
        for due, _, phys in sorted(self._pending, key=lambda item: item[1]):
            record = self._store.read_record(phys)
            if record is None or _delete_key(record) in self._recalled:
                continue
            properties = dict(record.properties)
            properties[PropertyKey.TIMER_ROLL_TIMES] = str(int(properties.get(PropertyKey.TIMER_ROLL_TIMES,
                                                                              "0")) + 1)
            put = self._store.put_record_copy(record, TIMER_TOPIC, TIMER_QUEUE_ID, properties, record.flag,
                                              record.reconsume_times)
            if not put.status.stored:
                return
            copies.append((due, put.queue_offset, put.phys_offset))
        heapq.heapify(copies)
        self._pending = copies

    def persist(self) -> None:
        pending = list(self._pending)
        low_water = min((offset for _, offset, _ in pending), default=self._taken)
        read_time = min([read_time_ms(now_ms(), self._precision_ms), *(due for due, _, _ in pending)])
        data = TimerCheckpointData(last_read_time_ms=read_time, last_timer_queue_offset=low_water,
                                   master_timer_queue_offset=low_water, timestamp=now_ms())
        self._checkpoint.parent.mkdir(parents=True, exist_ok=True)
        self._checkpoint.write_bytes(encode_timer_checkpoint(data))

    def _round(self) -> float:
        self._take_in()
        if self._java_index:
            self.persist()
            drop_java_timer_index(self._java_index)
            self._java_index = []
        return self._deliver_due()

    def _take_in(self) -> None:
        queue = self._store.consume_queue(TIMER_TOPIC, TIMER_QUEUE_ID)
        if queue is None:
            return
        self._taken = max(self._taken, queue.min_offset)
        if self._found_end is None:
            self._found_end = queue.max_offset
        while self._taken < queue.max_offset:
            entry = queue.entry(self._taken)
            if entry is None:
                return
            record = self._store.read_record(entry[0])
            if record is None:
                log.warning("wheel entry %d names no record; skipped", self._taken)
            else:
                self._take_in_entry(self._taken, entry[0], record)
            self._taken += 1

    def _take_in_entry(self, offset: int, phys: int, record: MessageRecord) -> None:
        due = record.properties.get(PropertyKey.TIMER_OUT_MS, "")
        recalled = record.properties.get(PropertyKey.TIMER_DEL_UNIQKEY)
        if recalled is not None:
            self._recalled.add(recalled)  # a RECALL_MESSAGE marker: never delivered itself
        elif not due.lstrip("-").isdigit():
            log.warning("wheel entry %d has no TIMER_OUT_MS; skipped", offset)
        elif self._found_end is None or offset >= self._found_end or int(due) >= self._read_time or (
                self._unread_from is not None and offset >= self._unread_from):
            key = _delete_key(record)
            if PropertyKey.TIMER_ROLL_TIMES in record.properties and key in self._pending_keys:
                return  # a copy Java rolled of a message still pending
            heapq.heappush(self._pending, (int(due), offset, phys))
            self._enqueued[offset] = now_ms()
            self._pending_keys.add(key)

    def _deliver_due(self) -> float:
        """Deliver every due message; returns seconds until the next one is due."""
        while self._pending:
            due, offset, phys = self._pending[0]
            wait_ms = release_ms(due, self._precision_ms) - now_ms()
            if wait_ms > 0:
                return wait_ms / 1000
            record = self._store.read_record(phys)
            key = _delete_key(record) if record is not None else ""
            self._pending_keys.discard(key)
            if key in self._recalled:
                self._recalled.discard(key)
            elif record is not None:
                properties = dict(record.properties)
                properties[PropertyKey.TIMER_ENQUEUE_MS] = str(self._enqueued.get(offset, now_ms()))
                properties[PropertyKey.TIMER_DEQUEUE_MS] = str(now_ms())
                if not self._store.put_timer_delivered(record, properties).status.stored:
                    return RETRY_WAIT_S
            heapq.heappop(self._pending)
            self._enqueued.pop(offset, None)
        return IDLE_WAIT_S


def _delete_key(record: MessageRecord) -> str:
    return delete_key(record.properties.get(PropertyKey.REAL_TOPIC, ""),
                      record.properties.get(PropertyKey.UNIQ_KEY, ""))
