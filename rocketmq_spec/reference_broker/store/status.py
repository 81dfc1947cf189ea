"""What the store answers: Java's PutMessageStatus / GetMessageStatus names and the result records.

The names are Java's own because handlers map them onto response codes and remarks exactly as the Java
broker does (a failed CONSUMER_SEND_MSG_BACK even puts the status name into the remark).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class PutMessageStatus(enum.Enum):
    PUT_OK = "PUT_OK"
    FLUSH_DISK_TIMEOUT = "FLUSH_DISK_TIMEOUT"
    FLUSH_SLAVE_TIMEOUT = "FLUSH_SLAVE_TIMEOUT"
    SLAVE_NOT_AVAILABLE = "SLAVE_NOT_AVAILABLE"
    SERVICE_NOT_AVAILABLE = "SERVICE_NOT_AVAILABLE"
    CREATE_MAPEDFILE_FAILED = "CREATE_MAPEDFILE_FAILED"
    MESSAGE_ILLEGAL = "MESSAGE_ILLEGAL"
    PROPERTIES_SIZE_EXCEEDED = "PROPERTIES_SIZE_EXCEEDED"
    OS_PAGECACHE_BUSY = "OS_PAGECACHE_BUSY"
    UNKNOWN_ERROR = "UNKNOWN_ERROR"
    IN_SYNC_REPLICAS_NOT_ENOUGH = "IN_SYNC_REPLICAS_NOT_ENOUGH"
    """5.x controller mode: fewer SyncStateSet members than minInSyncReplicas (RMQ-HA2-MIN-ISR)."""
    WHEEL_TIMER_MSG_ILLEGAL = "WHEEL_TIMER_MSG_ILLEGAL"
    """5.x: a timer property that is not a number or asks for too late a time (RMQ-TIMER-MAX-DELAY)."""

    @property
    def stored(self) -> bool:
        """Whether the message is in the commitlog (a flush timeout still stored it)."""
        return self in (PutMessageStatus.PUT_OK, PutMessageStatus.FLUSH_DISK_TIMEOUT,
                        PutMessageStatus.FLUSH_SLAVE_TIMEOUT, PutMessageStatus.SLAVE_NOT_AVAILABLE)


class GetMessageStatus(enum.Enum):
    FOUND = "FOUND"
    NO_MATCHED_MESSAGE = "NO_MATCHED_MESSAGE"
    MESSAGE_WAS_REMOVING = "MESSAGE_WAS_REMOVING"
    OFFSET_FOUND_NULL = "OFFSET_FOUND_NULL"
    OFFSET_OVERFLOW_BADLY = "OFFSET_OVERFLOW_BADLY"
    OFFSET_OVERFLOW_ONE = "OFFSET_OVERFLOW_ONE"
    OFFSET_TOO_SMALL = "OFFSET_TOO_SMALL"
    NO_MATCHED_LOGIC_QUEUE = "NO_MATCHED_LOGIC_QUEUE"
    NO_MESSAGE_IN_QUEUE = "NO_MESSAGE_IN_QUEUE"

    __hash__ = object.__hash__
    """Members are singletons compared by identity, so the identity hash agrees with equality; Enum's own
    ``__hash__`` is a Python call (hash of the name), and every pull looks its status up twice (its
    response code, its answer template)."""


@dataclass(frozen=True)
class PutResult:
    status: PutMessageStatus
    phys_offset: int = -1
    """Commitlog offset of the (first) record written; -1 when nothing was written."""
    msg_id: str = ""
    """offsetMsgId of every record written, comma-joined for a batch as SEND_BATCH_MESSAGE answers."""
    queue_offset: int = -1
    """Consume-queue offset of the (first) record: the queue the record was put into, which for a delayed
    message is SCHEDULE_TOPIC_XXXX's and for a half message RMQ_SYS_TRANS_HALF_TOPIC's."""
    wrote_bytes: int = 0
    msg_num: int = 0
    store_timestamp: int = 0
    timer_out_ms: int | None = None
    """TIMER_OUT_MS of a message parked in rmq_sys_wheel_timer (what its recall handle names)."""

    @property
    def ok(self) -> bool:
        return self.status is PutMessageStatus.PUT_OK


@dataclass(slots=True)
class GetResult:
    """What a read found. Not frozen, though nothing changes it: a frozen dataclass's ``__init__`` sets
    each field through ``object.__setattr__``, and at one per pull that was 9k of a pull's 139k
    instructions (``benchmarks.hot_path --pulls``)."""

    status: GetMessageStatus
    next_begin_offset: int
    min_offset: int
    max_offset: int
    messages: list[bytes] = field(default_factory=list)
    """Whole commitlog records exactly as stored: the pull response body is their concatenation."""
    scanned_from: int = 0
    offset_deltas: list[int] = field(default_factory=list)
    """Each message's queue offset less ``scanned_from``, as the store's gather gives them."""

    @property
    def body(self) -> bytes:
        return b"".join(self.messages)

    @property
    def queue_offsets(self) -> list[int]:
        """Each message's queue offset: computed when asked (POP asks, a pull does not)."""
        start = self.scanned_from
        return [start + delta for delta in self.offset_deltas]


@dataclass(frozen=True)
class QueryResult:
    messages: list[bytes]
    """Whole records whose key matched (hash collisions already filtered out by the real keys)."""
    index_last_update_timestamp: int
    index_last_update_phyoffset: int

    @property
    def body(self) -> bytes:
        return b"".join(self.messages)
