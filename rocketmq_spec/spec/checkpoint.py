"""The checkpoint file: how far the CommitLog, the consume queues and the index were flushed.

After an abnormal shutdown the broker replays the CommitLog from the last file whose first record is
older than these times, so the file is what bounds recovery work. It is mapped at one OS page; 4.x uses
the first 24 bytes, 5.x adds offsets after them (:data:`CHECKPOINT_FIELDS` says which release added
which). In controller mode one of them, ``confirmPhyOffset``, is the confirm offset the broker starts from
(the end of what consumers may read, ``rocketmq_spec.spec.ha_autoswitch_acks``).
"""

from __future__ import annotations

from dataclasses import dataclass

from construct import Int64sb, Struct

from rocketmq_spec.spec.clauses import Level, clause
from rocketmq_spec.spec.releases import Releases

_CKPT = "store/src/main/java/org/apache/rocketmq/store/StoreCheckpoint.java"
_COMMITLOG = "store/src/main/java/org/apache/rocketmq/store/CommitLog.java"
_STORE = "store/src/main/java/org/apache/rocketmq/store/DefaultMessageStore.java"

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
    "master_flushed_offset" / Int64sb * "5.0.0+: commitlog offset flushed by the master",
    "confirm_phy_offset" / Int64sb * "5.1.1+: the confirm offset (RMQ-CKPT-CONFIRM)",
)



@dataclass(frozen=True)
class CheckpointField:
    """One int64 (big-endian) of the file, the releases that read and write it."""

    offset: int
    java_field: str
    releases: Releases
    meaning: str
    source: str


CHECKPOINT_FIELDS = (
    CheckpointField(0, "physicMsgTimestamp", Releases((None, None)),
                    "store time of the last flushed CommitLog message, ms", _CKPT),
    CheckpointField(8, "logicsMsgTimestamp", Releases((None, None)),
                    "store time of the last flushed consume-queue entry, ms", _CKPT),
    CheckpointField(16, "indexMsgTimestamp", Releases((None, None)),
                    "store time of the last flushed index entry, ms", _CKPT),
    CheckpointField(24, "masterFlushedOffset", Releases(("5.0.0", None)),
                    "a slave's record of its master's flushed offset (HA runtime information only); read "
                    "at load", _CKPT + " (flush:96); " + _STORE + " (loadCheckPoint:387)"),
    CheckpointField(32, "confirmPhyOffset", Releases(("5.1.1", None)),
                    "the CommitLog's confirm offset as last set (CommitLog.setConfirmOffset writes it "
                    "through; the file is flushed with the consume queues and at shutdown): a controller-"
                    "mode master's computeConfirmOffset on becoming master, on a new SyncStateSet and on a "
                    "member's acknowledgement, a slave's at each transfer block (a master alone or without "
                    "allAckInSyncStateSet answers its max offset without setting it, so the file may lag); "
                    "without controller mode the start of the last record recovery found. Read at load as "
                    "the confirm offset (RMQ-CKPT-CONFIRM)",
                    _CKPT + " (StoreCheckpoint:60, flush:97); " + _COMMITLOG
                    + " (setConfirmOffset:719-721, recoverNormally:366-418); " + _STORE
                    + " (loadCheckPoint:388)"),
    CheckpointField(40, "logicsPhysicalOffset", Releases(("5.5.0", None)),
                    "the CommitLog offset the consume queues were flushed up to, where an abnormal recovery "
                    "dispatches from; 0 (an older file, or one written by a release without it) makes "
                    "5.5.0 fall back to the timestamps",
                    _CKPT + " (StoreCheckpoint:61, flush:98); "
                    "store/src/main/java/org/apache/rocketmq/store/queue/ConsumeQueueStore.java "
                    "(getDispatchFromPhyOffset:627)"),
)
"""The file's fields by offset; zeros after the last one a release knows."""

RMQ_CKPT_LAYOUT = clause(
    "RMQ-CKPT-LAYOUT", Level.MUST,
    "The checkpoint file is 4096 bytes: physic, logics and index timestamps as int64 at 0, 8 and 16 "
    "(5.x adds offsets at 24 and 32, 5.5.0 one at 40: CHECKPOINT_FIELDS), zeros after.",
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


RMQ_CKPT_CONFIRM = clause(
    "RMQ-CKPT-CONFIRM", Level.MUST,
    "A 5.1.1+ broker keeps its confirm offset at offset 32 of the checkpoint file and starts from the value "
    "there: in controller mode, after recovery, raised to the CommitLog's min offset or lowered to the "
    "recovered end when outside them, it is the confirm offset (what its heartbeats report, and a slave's "
    "consume-queue bound) until a role or a transfer block sets another.",
    source=f"{_STORE} (loadCheckPoint:383-389); {_COMMITLOG} (recoverNormally:408-415, "
           "recoverAbnormally:860-866, getConfirmOffset:681-697, setConfirmOffset:719-721)",
)


def confirm_after_recovery(saved: int, min_offset: int, end: int) -> int:
    """RMQ-CKPT-CONFIRM: a controller-mode broker's confirm offset after recovery, from the file's
    ``confirmPhyOffset``, the CommitLog's min offset and the recovered end."""
    if saved < min_offset:
        return min_offset
    return min(saved, end)
