"""The ConsumeQueue: one fixed-width index of commitlog positions per topic and queue.

Entry *n* of a queue (its queue offset) lives at byte ``20 * n`` of the queue's file sequence, so a
consumer's offset is a direct array index. An entry points at the record (offset and size) and carries a
tags code that lets the broker filter by tag without reading the CommitLog. The unwritten tail of a file
is zeros, which is how a reader finds the end.
"""

from __future__ import annotations

from construct import Int16sb, Int32sb, Int64sb, Struct

from rocketmq_spec.spec.clauses import Level, clause

_CQ = "store/src/main/java/org/apache/rocketmq/store/ConsumeQueue.java"
_CQ_EXT = "store/src/main/java/org/apache/rocketmq/store/ConsumeQueueExt.java"

CQ_ENTRY_SIZE = 20
CQ_FILE_ENTRIES = 300_000
CQ_FILE_SIZE = CQ_ENTRY_SIZE * CQ_FILE_ENTRIES
"""``mappedFileSizeConsumeQueue`` default: 6,000,000 bytes; file names are multiples of it."""

ConsumeQueueEntry = Struct(
    "commitlog_offset" / Int64sb * "physical offset of the record in the CommitLog",
    "size" / Int32sb * "TOTALSIZE of the record",
    "tags_code" / Int64sb * "tags hash, deliver time (SCHEDULE_TOPIC_XXXX) or a ConsumeQueueExt address",
)

PRE_BLANK_OFFSET = 0
PRE_BLANK_SIZE = 0x7FFFFFFF
PRE_BLANK_TAGS_CODE = 0
"""A queue whose first file starts past offset 0 has its leading entries filled with (0, MAX_INT, 0)."""

EXT_MAX_ADDRESS = -(2**31) - 1
"""``ConsumeQueueExt.MAX_ADDR``: tags codes at or below it are decorated ext-file addresses."""
EXT_ADDRESS_BASE = -(2**63)
"""An ext address is stored as ``offset + Long.MIN_VALUE``."""

ConsumeQueueExtUnit = Struct(
    "size" / Int16sb * "unit length: 20 + bitmap length",
    "tags_code" / Int64sb * "the real tags code",
    "msg_store_time" / Int64sb * "store timestamp of the message, ms",
    "bitmap_size" / Int16sb * "length of the bloom-filter bitmap that follows",
)
"""Header of a unit in ``consumequeue_ext`` (optional, only with enableConsumeQueueExt)."""

RMQ_CQ_ENTRY = clause(
    "RMQ-CQ-ENTRY", Level.MUST,
    "A ConsumeQueue entry is 20 bytes: commitlog offset (int64), record size (int32), tags code (int64).",
    source=_CQ,
)
RMQ_CQ_POSITION = clause(
    "RMQ-CQ-POSITION", Level.MUST,
    "The entry of queue offset n is at byte 20*n of the queue, in the file named by the 20-digit start "
    "byte offset of its file; every file of a store has the same size, a multiple of 20 "
    "(mappedFileSizeConsumeQueue, 6,000,000 by default).",
    source=_CQ,
)
RMQ_CQ_END = clause(
    "RMQ-CQ-END", Level.MUST,
    "The written part of a queue ends at the first entry without commitlog offset >= 0 and size > 0.",
    source=f"{_CQ} (recover)",
)
RMQ_CQ_POINTS_AT_RECORD = clause(
    "RMQ-CQ-POINTS-AT-RECORD", Level.MUST,
    "Entry n of topic T queue q points at a record of topic T, queue q and queue offset n whose TOTALSIZE "
    "is the entry's size.",
    source=f"{_CQ} (putMessagePositionInfoWrapper)",
)
RMQ_CQ_PRE_BLANK = clause(
    "RMQ-CQ-PRE-BLANK", Level.MUST,
    "Entries before the first message of a queue that starts past offset 0 are (0, 2147483647, 0).",
    source=f"{_CQ} (fillPreBlank)",
)
RMQ_CQ_TRANSACTION = clause(
    "RMQ-CQ-TRANSACTION", Level.MUST,
    "Only records of transaction type NOT or COMMIT get a consume-queue entry.",
    source="store/src/main/java/org/apache/rocketmq/store/CommitLogDispatcherBuildConsumeQueue.java",
)
RMQ_CQ_DISPATCH_LAG = clause(
    "RMQ-CQ-DISPATCH-LAG", Level.MAY,
    "Consume queues and the index are built from the CommitLog asynchronously, in CommitLog order: a "
    "running or killed broker's store may end with records that have no queue or index entry yet (recovery "
    "dispatches them again). Records without an entry before a dispatched record are a hole, and a cleanly "
    "shut down store has none. A copy taken while the broker runs may also hold queue or index entries past "
    "the copied CommitLog's data end, which recovery truncates.",
    source="store/src/main/java/org/apache/rocketmq/store/DefaultMessageStore.java (ReputMessageService)",
)
RMQ_CQ_DELAY_TAGS = clause(
    "RMQ-CQ-DELAY-TAGS", Level.MUST,
    "An entry of SCHEDULE_TOPIC_XXXX carries the deliver time (store time + delay of the level, ms) as "
    "its tags code.",
    source="store/src/main/java/org/apache/rocketmq/store/schedule/ScheduleMessageService.java",
)
RMQ_CQ_EXT_ADDRESS = clause(
    "RMQ-CQ-EXT-ADDRESS", Level.MUST,
    "A tags code <= -2147483649 is a ConsumeQueueExt address (ext offset + Long.MIN_VALUE), not a hash.",
    source=_CQ_EXT,
)


def is_ext_address(tags_code: int) -> bool:
    return tags_code <= EXT_MAX_ADDRESS


def ext_address(ext_offset: int) -> int:
    """Decorate an offset in the ext file as the CQ stores it."""
    return ext_offset + EXT_ADDRESS_BASE


def ext_offset(address: int) -> int:
    return address - EXT_ADDRESS_BASE


def is_pre_blank(commitlog_offset: int, size: int, tags_code: int) -> bool:
    return (commitlog_offset, size, tags_code) == (PRE_BLANK_OFFSET, PRE_BLANK_SIZE, PRE_BLANK_TAGS_CODE)


DELAY_LEVELS = "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h"
"""``messageDelayLevel`` default; level i (1-based) is the i-th token."""
_UNIT_MS = {"s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
UNKNOWN_LEVEL_DELAY_MS = 1000


def delay_level_ms(level: int, levels: str = DELAY_LEVELS) -> int:
    """Delay of a level; levels past the table are clamped to the last one, unknown ones cost 1 s."""
    tokens = levels.split()
    if level < 1:
        return UNKNOWN_LEVEL_DELAY_MS
    token = tokens[min(level, len(tokens)) - 1]
    return int(token[:-1]) * _UNIT_MS[token[-1]]
