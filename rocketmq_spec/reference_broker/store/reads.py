"""The read side of the message store: what PULL, the offset queries, search by time, VIEW and QUERY ask
of it, over the consume queues, the CommitLog and the index the store keeps."""

from __future__ import annotations

from collections.abc import Set as AbstractSet

from rocketmq_spec.codec.fast_store import (
    gather_records,
)
from rocketmq_spec.codec.store.record import MessageRecord
from rocketmq_spec.reference_broker.store.commitlog import CommitLog
from rocketmq_spec.reference_broker.store.config import StoreConfig
from rocketmq_spec.reference_broker.store.consume_queue import ConsumeQueue
from rocketmq_spec.reference_broker.store.index import IndexService
from rocketmq_spec.reference_broker.store.status import (
    GetMessageStatus,
    GetResult,
    QueryResult,
)
from rocketmq_spec.spec.consumequeue import CQ_ENTRY_SIZE

MAX_FILTER_SCAN_BYTES = 16_000
"""A pull scans at most max(16000, maxMsgNums * 20) bytes of consume queue (``getMessage``), so a filter
that matches nothing costs a bounded amount of work per request."""

_FOUND, _WAS_REMOVING, _NO_MATCHED_MESSAGE = (GetMessageStatus.FOUND, GetMessageStatus.MESSAGE_WAS_REMOVING,
                                              GetMessageStatus.NO_MATCHED_MESSAGE)
"""The statuses of a read that reached the log, bound once: reading a member off its Enum class goes
through the class's ``__getattr__`` on Python 3.11, a few hundred instructions each."""


class StoreReads:
    """Reads of :class:`~reference_broker.store.message_store.MessageStore`, which holds the state named
    here; none of them takes the put lock (each reads one consistent snapshot of a queue or file)."""

    config: StoreConfig
    commitlog: CommitLog
    index: IndexService
    queues: dict[tuple[str, int], ConsumeQueue]

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
        status = _FOUND if messages else (_WAS_REMOVING if missing else _NO_MATCHED_MESSAGE)
        return GetResult(status, offset + scanned, min_offset, max_offset, messages, offset, deltas)

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

    def query_by_key(self, topic: str, key: str, max_num: int, begin: int, end: int,
                     index_type: str | None = None) -> QueryResult:
        """QUERY_MESSAGE through the index. Like Java, records are returned for every hash match (the
        client compares the keys, and a record found under two keys of the same hash comes twice); the
        count is capped at ``maxMsgsNumBatch`` and the records come in commitlog order
        (``DefaultMessageStore.queryMessage`` sorts the offsets)."""
        limit = min(max_num, self.config.max_msgs_num_batch)
        offsets = sorted(self.index.query(topic, key, limit, begin, end, index_type))
        raws = [raw for raw in map(self.view_by_offset, offsets) if raw is not None]
        timestamp, phy_offset = self.index.last_update
        return QueryResult(raws, timestamp, phy_offset)

