"""Delivering delayed messages: each level's queue of SCHEDULE_TOPIC_XXXX is read in order and every
entry whose deliver time (its tags code) has come is re-put to REAL_TOPIC / REAL_QID.

Queue offsets per level survive restarts in ``config/delayOffset.json`` (written through the codec, the
same fastjson layout Java writes: ``{"offsetTable":{1:1,2:1}}``), persisted periodically and at stop.
A put into the schedule topic wakes the thread, so a short delay is honoured without polling fast.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Protocol

from rocketmq_spec.codec.store.configs import (
    delay_offsets_from_json,
    delay_offsets_to_json,
    load_config,
    save_config,
)
from rocketmq_spec.codec.store.record import MessageRecord
from rocketmq_spec.reference_broker.store.consume_queue import ConsumeQueue
from rocketmq_spec.reference_broker.store.status import PutResult
from rocketmq_spec.reference_broker.store.worker import DeliveryWorker
from rocketmq_spec.spec.errors import StoreError
from rocketmq_spec.spec.system_topics import SCHEDULE_TOPIC

DELAY_OFFSET_FILE = "delayOffset.json"
IDLE_WAIT_S = 1.0
"""Longest sleep with nothing due: bounds how late a message re-put by a missed wake-up can be."""
RETRY_WAIT_S = 0.1
"""Pause after a failed re-put (Java retries a level after DELAY_FOR_A_WHILE = 100 ms)."""


class DelayedStore(Protocol):
    """What the scheduler needs of the message store (which owns the scheduler, so it is not imported)."""

    def consume_queue(self, topic: str, queue_id: int) -> ConsumeQueue | None: ...

    def read_record(self, phys_offset: int) -> MessageRecord | None: ...

    def put_delivered(self, scheduled: MessageRecord) -> PutResult: ...


class DelayScheduler(DeliveryWorker):
    def __init__(self, store: DelayedStore, config_dir: Path, levels_ms: tuple[int, ...],
                 persist_interval_s: float) -> None:
        super().__init__("store-schedule", IDLE_WAIT_S, persist_interval_s)
        self._store = store
        self._path = config_dir / DELAY_OFFSET_FILE
        self._levels = len(levels_ms)
        self.offsets: dict[int, int] = {}

    def start(self) -> None:
        try:
            self.offsets = delay_offsets_from_json(load_config(self._path))
        except StoreError:
            self.offsets = {}
        super().start()

    def persist(self) -> None:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        save_config(self._path, delay_offsets_to_json(dict(sorted(self.offsets.items()))))

    def _round(self) -> float:
        waits = [self._deliver_due(level) for level in range(1, self._levels + 1)]
        return min([IDLE_WAIT_S, *waits])

    def _deliver_due(self, level: int) -> float:
        """Re-put every due message of a level; returns seconds until its next message is due."""
        queue = self._store.consume_queue(SCHEDULE_TOPIC, level - 1)
        if queue is None:
            return IDLE_WAIT_S
        offset = max(self.offsets.get(level, 0), queue.min_offset)
        while offset < queue.max_offset:
            entry = queue.entry(offset)
            if entry is None:
                return RETRY_WAIT_S
            phys, _, deliver_at = entry
            due_in_ms = deliver_at - int(time.time() * 1000)
            if due_in_ms > 0:
                return due_in_ms / 1000
            record = self._store.read_record(phys)
            if record is not None and not self._store.put_delivered(record).status.stored:
                return RETRY_WAIT_S
            offset += 1
            self.offsets[level] = offset
        return IDLE_WAIT_S
