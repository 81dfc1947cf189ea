"""``ConsumerOrderInfoManager``: per (topic, group, queue) the batch an ordered pop handed out, which locks
the queue until every offset of it is acked or visible again (RMQ-POP-ORDER).

The table is kept in ``config/consumerOrderInfo.json`` in Java's layout
(:mod:`rocketmq_spec.codec.store.order_info`), flushed with the consumer offsets and at stop, so a restart —
or Apache RocketMQ 5.x taking the store over, and the other way round — keeps an ordered queue locked for as
long as its batch is invisible. """

from __future__ import annotations

import time

from rocketmq_spec.codec.store.order_info import (
    OrderInfo,
    OrderTable,
    order_table_from_json,
    order_table_to_json,
)
from rocketmq_spec.reference_broker.persistence import ConfigFiles
from rocketmq_spec.spec.store_layout import ORDER_INFO_FILE


class OrderLocks:
    def __init__(self, files: ConfigFiles | None = None) -> None:
        self._files = files
        stored = files.load(ORDER_INFO_FILE) if files is not None else None
        self._batches: OrderTable = order_table_from_json(stored) if stored else {}
        self.dirty = False

    def blocked(self, topic: str, group: str, queue_id: int, now: int) -> bool:
        batch = self._batches.get((topic, group, queue_id))
        return batch is not None and batch.blocks(now)

    def record(self, topic: str, group: str, queue_id: int, offsets: list[int], pop_time: int,
               invisible_time: int) -> dict[int, int]:
        """Lock the queue to a new batch; returns how often each offset was handed out before
        (``mergeOffsetConsumedCount``: one more than before for an offset of the previous batch)."""
        key = (topic, group, queue_id)
        previous = self._batches.get(key)
        before = set(previous.offsets) if previous else set()
        counts = {o: previous.counts.get(o, 0) + 1 if previous and o in before else 0 for o in offsets}
        self._batches[key] = OrderInfo(offsets, pop_time, invisible_time, counts=counts,
                                       last_consume_timestamp=int(time.time() * 1000))
        self.dirty = True
        return counts

    def ack(self, topic: str, group: str, queue_id: int, offset: int, pop_time: int) -> int | None:
        """``commitAndNext``: the offset to commit (the first not acked, or past the batch), else None."""
        key = (topic, group, queue_id)
        batch = self._batches.get(key)
        if batch is None or batch.pop_time != pop_time or offset not in batch.offsets:
            return None
        batch.acked.add(offset)
        self.dirty = True
        following = batch.next_offset()
        if batch.acked >= set(batch.offsets):
            del self._batches[key]
        return following

    def change(self, topic: str, group: str, queue_id: int, offset: int, pop_time: int,
               visible_at: int) -> None:
        """``updateNextVisibleTime``: one offset of the batch becomes visible at another time."""
        batch = self._batches.get((topic, group, queue_id))
        if batch is not None and batch.pop_time == pop_time and offset in batch.offsets:
            batch.next_visible[offset] = visible_at
            self.dirty = True

    def persist(self) -> None:
        if self._files is not None:
            self._files.save(ORDER_INFO_FILE, order_table_to_json(self._batches))
        self.dirty = False
