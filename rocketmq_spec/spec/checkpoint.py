"""The checkpoint file: how far the CommitLog, the consume queues and the index were flushed.

After an abnormal shutdown the broker replays the CommitLog from the last file whose first record is
older than these times, so the file is what bounds recovery work. It is mapped at one OS page; 4.x uses
the first 24 bytes, 5.x the first 40.
"""

from __future__ import annotations

from construct import Int64sb, Struct

from rocketmq_spec.spec.clauses import Level, clause

_CKPT = "store/src/main/java/org/apache/rocketmq/store/StoreCheckpoint.java"
_COMMITLOG = "store/src/main/java/org/apache/rocketmq/store/CommitLog.java"

CHECKPOINT_FILE_SIZE = 4096
"""``MappedFile.OS_PAGE_SIZE``."""
MIN_TIMESTAMP_MARGIN_MS = 3000

Checkpoint = Struct(
    "physic_msg_timestamp" / Int64sb * "store time of the last flushed CommitLog message, ms",
    "logics_msg_timestamp" / Int64sb * "store time of the last flushed consume-queue entry, ms",
    "index_msg_timestamp" / Int64sb * "store time of the last flushed index entry, ms",
)

Checkpoint5x = Struct(
    *Checkpoint.subcons,
    "master_flushed_offset" / Int64sb * "5.x: commitlog offset flushed by the master",
    "confirm_phy_offset" / Int64sb * "5.x: commitlog offset confirmed by the replicas",
)

RMQ_CKPT_LAYOUT = clause(
    "RMQ-CKPT-LAYOUT", Level.MUST,
    "The checkpoint file is 4096 bytes: physic, logics and index timestamps as int64 at 0, 8 and 16 "
    "(5.x adds two offsets at 24 and 32), zeros after.",
    source=_CKPT,
)
RMQ_CKPT_MIN_TIMESTAMP = clause(
    "RMQ-CKPT-MIN-TIMESTAMP", Level.MUST,
    "Recovery starts from max(0, min(physic, logics) - 3000) ms, lowered to the index timestamp when the "
    "index is also recovered.",
    source=f"{_CKPT} (getMinTimestamp, getMinTimestampIndex)",
)


RMQ_CKPT_ZERO = clause(
    "RMQ-CKPT-ZERO", Level.MAY,
    "A checkpoint whose physic or logics timestamp is zero has not been flushed yet (a young store, or one "
    "killed before its first flush); it bounds nothing, so recovery replays the CommitLog from its first "
    "file.",
    source=f"{_CKPT}; {_COMMITLOG} (isMappedFileMatchedRecover)",
)


def min_timestamp(physic: int, logics: int) -> int:
    return max(0, min(physic, logics) - MIN_TIMESTAMP_MARGIN_MS)


def min_timestamp_index(physic: int, logics: int, index: int) -> int:
    return min(min_timestamp(physic, logics), index)
