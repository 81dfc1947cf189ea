"""The auto-switch HA stream: replication between brokers in controller mode, with epochs (5.x).

Same port and same idea as the classic stream (``rocketmq_spec.spec.ha``): the slave connects to the
master's HA port and the master sends raw CommitLog bytes. What changes is that every unit starts with the
sender's connection state (an ``HAConnectionState`` ordinal) and that both sides know *epochs*: each time
the controller elects a master it hands out a new master epoch, and the new master appends
``(epoch, its CommitLog max offset)`` to its epoch file (``rocketmq_spec.spec.epoch_file``). A connection
starts with a **handshake**: the slave says who it is, the master answers with its whole epoch list and
max offset, and the slave truncates its CommitLog to the last point both histories agree on (the
*consistent point*) before the **transfer** begins, so a deposed master's unreplicated tail is cut off
rather than kept. In transfer, every block's header carries the epoch of its bytes, the offset that
epoch started at, and the master's confirm offset (the end of what every SyncStateSet member holds).

Offsets reported by the slave drive the SyncStateSet: a master adds a slave whose report reaches its
confirm offset within the current epoch, and drops one that has not caught up for
``haMaxTimeSlaveNotCatchup``, reporting each change to the controller (CONTROLLER_ALTER_SYNC_STATE_SET).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from construct import Int16sb, Int32sb, Int64sb, Struct

from rocketmq_spec.spec.clauses import Level, clause
from rocketmq_spec.spec.releases import Releases, since

_AUTO = "store/src/main/java/org/apache/rocketmq/store/ha/autoswitch/"
_CLIENT = _AUTO + "AutoSwitchHAClient.java"
_CONNECTION = _AUTO + "AutoSwitchHAConnection.java"
_SERVICE = _AUTO + "AutoSwitchHAService.java"
_CACHE = _AUTO + "EpochFileCache.java"
_COMMITLOG = "store/src/main/java/org/apache/rocketmq/store/CommitLog.java"
_CONFIG = "store/src/main/java/org/apache/rocketmq/store/config/MessageStoreConfig.java"
_BROKER_CONFIG = "common/src/main/java/org/apache/rocketmq/common/BrokerConfig.java"
_REPLICAS = "broker/src/main/java/org/apache/rocketmq/broker/controller/ReplicasManager.java"

AUTOSWITCH_RELEASES = since("5.1.1")
"""Releases whose frames are the ones below: brokers named by id (RIP-44); 5.0.0 sent the slave's address."""


class HAConnectionState(enum.IntEnum):
    """``HAConnectionState`` (store/ha/HAConnectionState.java:20): the ordinal opens every unit."""

    READY = 0
    HANDSHAKE = 1
    TRANSFER = 2
    SUSPEND = 3
    SHUTDOWN = 4


SlaveHandshake = Struct(
    "state" / Int32sb * "HANDSHAKE (1)",
    "sync_from_last_file" / Int16sb * "1: an empty slave starts at the master's last CommitLog file",
    "async_learner" / Int16sb * "1: the slave never joins the SyncStateSet",
    "slave_broker_id" / Int64sb * "the slave's controller-assigned broker id",
)
"""Slave -> master, first on a new connection (AutoSwitchHAClient.sendHandshakeHeader:290)."""

SlaveReport = Struct(
    "state" / Int32sb * "TRANSFER (2)",
    "slave_max_offset" / Int64sb * "the slave's CommitLog end: its acknowledgement",
)
"""Slave -> master after the handshake (AutoSwitchHAClient.reportSlaveOffset:322)."""

MasterHandshake = Struct(
    "state" / Int32sb * "HANDSHAKE (1)",
    "body_size" / Int32sb * "12 × the number of epoch entries that follow",
    "master_max_offset" / Int64sb * "the master's CommitLog max offset",
    "last_epoch" / Int32sb * "the master's last epoch",
)
"""Master -> slave, answering the slave's handshake; followed by the epoch entries
(AutoSwitchHAConnection.WriteSocketService.buildHandshakeBuffer:476)."""

EpochEntryFrame = Struct(
    "epoch" / Int32sb * "a master epoch",
    "start_offset" / Int64sb * "the CommitLog offset its first byte was written at",
)
"""One entry of the master's handshake body, oldest first (AutoSwitchHAConnection.java:497-498)."""

MasterTransferHeader = Struct(
    "state" / Int32sb * "TRANSFER (2)",
    "body_size" / Int32sb * "raw CommitLog bytes that follow (0: heartbeat)",
    "offset" / Int64sb * "master CommitLog offset of the first body byte",
    "epoch" / Int32sb * "the epoch those bytes were written in",
    "epoch_start_offset" / Int64sb * "where that epoch starts",
    "confirm_offset" / Int64sb * "the master's confirm offset",
)
"""Master -> slave in transfer (AutoSwitchHAConnection.WriteSocketService.buildTransferHeaderBuffer:519)."""


SLAVE_HANDSHAKE_SIZE = SlaveHandshake.sizeof()
"""16: ``AutoSwitchHAClient.HANDSHAKE_HEADER_SIZE`` (AutoSwitchHAClient.java:68)."""
SLAVE_REPORT_SIZE = SlaveReport.sizeof()
"""12: ``AutoSwitchHAClient.TRANSFER_HEADER_SIZE`` (AutoSwitchHAClient.java:103)."""
MASTER_HANDSHAKE_SIZE = MasterHandshake.sizeof()
"""20: ``AutoSwitchHAConnection.HANDSHAKE_HEADER_SIZE`` (AutoSwitchHAConnection.java:56)."""
MASTER_TRANSFER_SIZE = MasterTransferHeader.sizeof()
"""36: ``AutoSwitchHAConnection.TRANSFER_HEADER_SIZE`` (AutoSwitchHAConnection.java:71)."""
EPOCH_ENTRY_SIZE = EpochEntryFrame.sizeof()
"""12: ``AutoSwitchHAConnection.EPOCH_ENTRY_SIZE`` (AutoSwitchHAConnection.java:72)."""
IN_SYNC_REPLICAS_NOT_ENOUGH_REMARK = "in-sync replicas not enough"
"""The remark of the SYSTEM_ERROR a send gets when the SyncStateSet is too small
(SendMessageProcessor.java:418)."""
MAX_HANDSHAKE_ENTRIES = 1000
"""The master builds its handshake body in a buffer of 1000 entries (AutoSwitchHAConnection.java:450)."""
FLAG_SET = 1
"""A handshake flag is on when its short is exactly 1 (AutoSwitchHAConnection.java:322, 327)."""


@dataclass(frozen=True)
class EpochEntry:
    """An epoch and the CommitLog range written in it; the last entry's end is the log's end."""

    epoch: int
    start_offset: int
    end_offset: int


def consistent_point(local: Sequence[EpochEntry], master: Sequence[EpochEntry]) -> int:
    """Where a slave truncates to (RMQ-HA2-TRUNCATE): walking its own epochs from the newest, the first one
    the master also has with the same start offset gives ``min(local end, master end)``; -1 if none does.

    Each list's last entry ends at its owner's max offset (``setLastEpochEntryEndOffset``)."""
    by_epoch = {entry.epoch: entry for entry in master}
    for mine in sorted(local, key=lambda entry: entry.epoch, reverse=True):
        theirs = by_epoch.get(mine.epoch)
        if theirs is not None and theirs.start_offset == mine.start_offset:
            return min(mine.end_offset, theirs.end_offset)
    return -1


def with_ends(pairs: Sequence[tuple[int, int]], max_offset: int) -> list[EpochEntry]:
    """Entries from ``(epoch, start)`` pairs in epoch order: each ends where the next starts, the last at
    ``max_offset`` (EpochFileCache.initCacheFromEntries, setLastEpochEntryEndOffset)."""
    ordered = sorted(pairs)
    return [EpochEntry(epoch, start, ordered[i + 1][1] if i + 1 < len(ordered) else max_offset)
            for i, (epoch, start) in enumerate(ordered)]


@dataclass(frozen=True)
class AutoSwitchSetting:
    key: str
    default: str
    meaning: str
    source: str
    releases: Releases = AUTOSWITCH_RELEASES


AUTOSWITCH_SETTINGS: tuple[AutoSwitchSetting, ...] = (
    AutoSwitchSetting("enableControllerMode", "false", "the broker takes its role from a controller",
                      _BROKER_CONFIG + ":366"),
    AutoSwitchSetting("controllerAddr", "(none)", "controllers, ip:port;...", _BROKER_CONFIG + ":368"),
    AutoSwitchSetting("minInSyncReplicas", "1",
                      "a put with fewer SyncStateSet members fails IN_SYNC_REPLICAS_NOT_ENOUGH",
                      _CONFIG + ":380"),
    AutoSwitchSetting("allAckInSyncStateSet", "false",
                      "a put waits for every SyncStateSet member rather than inSyncReplicas",
                      _CONFIG + ":386"),
    AutoSwitchSetting("inSyncReplicas", "1", "acks a put waits for without allAckInSyncStateSet",
                      _CONFIG + ":373"),
    AutoSwitchSetting("readUnCommitted", "false",
                      "consume queues are dispatched past the confirm offset too", _CONFIG + ":470"),
    AutoSwitchSetting("haMaxTimeSlaveNotCatchup", "15000",
                      "ms a SyncStateSet slave may stay behind before the master drops it", _CONFIG + ":409"),
    AutoSwitchSetting("syncFromLastFile", "false", "sent as the handshake flag of the same name",
                      _CONFIG + ":430"),
    AutoSwitchSetting("asyncLearner", "false", "sent as the handshake flag of the same name",
                      _CONFIG + ":432"),
)

AUTOSWITCH_DEFAULTS = {setting.key: setting.default for setting in AUTOSWITCH_SETTINGS}

RMQ_HA2_UNIT = clause(
    "RMQ-HA2-UNIT", Level.MUST,
    "Every unit of the auto-switch HA stream, both ways, starts with the sender's HAConnectionState ordinal "
    "(int32: 1 HANDSHAKE, 2 TRANSFER); a slave reads a master unit whose state is not its own as the end of "
    "the connection.",
    source=_CLIENT + " (HAClientReader.processReadResult:484-510); " + _CONNECTION + " (HAServerReader:304)")
RMQ_HA2_SLAVE_HANDSHAKE = clause(
    "RMQ-HA2-SLAVE-HANDSHAKE", Level.MUST,
    "A slave opens each connection with a 16-byte handshake: state 1, int16 syncFromLastFile, int16 "
    "asyncLearner (each 1 or 0), int64 its broker id; the master answers nothing before it.",
    source=_CLIENT + " (sendHandshakeHeader:290); " + _CONNECTION + " (HAServerReader:316-336, run:648)")
RMQ_HA2_MASTER_HANDSHAKE = clause(
    "RMQ-HA2-MASTER-HANDSHAKE", Level.MUST,
    "A master answers a slave's handshake with a 20-byte header (state 1, body size = 12 × entries, int64 "
    "max offset, int32 last epoch) and its epoch entries oldest first, 12 bytes each (int32 epoch, int64 "
    "start offset).",
    source=_CONNECTION + " (buildHandshakeBuffer:476, handshakeWithSlave)")
RMQ_HA2_TRUNCATE = clause(
    "RMQ-HA2-TRUNCATE", Level.MUST,
    "A slave with epochs truncates its CommitLog to the consistent point: its newest epoch that the master "
    "has with the same start offset, cut at the smaller of the two ends (each list's last entry ends at its "
    "owner's max offset), dropping its epochs that start at or after it; with no such epoch it does not "
    "transfer. A slave without epochs keeps its log and reports 0.",
    source=_CLIENT + " (doTruncate:435); " + _CACHE + " (findConsistentPoint:227, "
                                                      "truncateSuffixByOffset:258)")
RMQ_HA2_REPORT = clause(
    "RMQ-HA2-REPORT", Level.MUST,
    "After the handshake a slave reports in 12-byte units: state 2 and int64 its CommitLog end; its first "
    "report is where the transfer starts.",
    source=_CLIENT + " (reportSlaveOffset:322, doTruncate:474); " + _CONNECTION + " (HAServerReader:337)")
RMQ_HA2_START = clause(
    "RMQ-HA2-START", Level.MUST,
    "A master starts the transfer at the slave's first report; a report of 0 starts it at the CommitLog's "
    "min offset, or at the start of its last file when the slave's handshake set syncFromLastFile.",
    source=_CONNECTION + " (WriteSocketService.run:669-697)")
RMQ_HA2_TRANSFER = clause(
    "RMQ-HA2-TRANSFER", Level.MUST,
    "A transfer block is a 36-byte header (state 2, int32 body size, int64 offset, int32 epoch, int64 epoch "
    "start offset, int64 confirm offset) and that many raw CommitLog bytes; an empty body is a heartbeat. "
    "Blocks are contiguous and one block's bytes belong to one epoch.",
    source=_CONNECTION + " (buildTransferHeaderBuffer:519, sendHeartbeatIfNeeded:555)")
RMQ_HA2_SLAVE_EPOCH = clause(
    "RMQ-HA2-SLAVE-EPOCH", Level.MUST,
    "A slave holding data refuses a block whose offset is not its CommitLog end; on a block of a new "
    "epoch it "
    "appends (epoch, epoch start offset) to its epoch file; it takes min(confirm offset, its end) as its "
    "confirm offset.",
    source=_CLIENT + " (HAClientReader.processReadResult:540-570)")
RMQ_HA2_EPOCH_ORDER = clause(
    "RMQ-HA2-EPOCH-ORDER", Level.MUST,
    "Epochs and their start offsets only grow: an entry whose epoch or start offset is not greater than the "
    "last one's is not appended. A new master appends (its master epoch, its max offset) after truncating "
    "what it held beyond its confirm offset.",
    source=_CACHE + " (appendEntry:101); " + _SERVICE + " (changeToMaster:122-148)")
RMQ_HA2_EXPAND = clause(
    "RMQ-HA2-EXPAND", Level.MUST,
    "A master adds a slave to the SyncStateSet once a report reaches its confirm offset and the start of the "
    "current epoch, and reports the new set to the controller (asyncLearner slaves never join).",
    source=_SERVICE + " (maybeExpandInSyncStateSet:316); " + _CONNECTION + " (maybeExpandInSyncStateSet:215)")
RMQ_HA2_SHRINK = clause(
    "RMQ-HA2-SHRINK", Level.MUST,
    "A master drops from the SyncStateSet a slave that has not caught up for haMaxTimeSlaveNotCatchup (15 "
    "s), "
    "or has no connection, and reports the new set to the controller.",
    source=_SERVICE + " (maybeShrinkSyncStateSet:280); " + _REPLICAS + " (checkSyncStateSetAndDoReport:741)")
RMQ_HA2_CONFIRM = clause(
    "RMQ-HA2-CONFIRM", Level.MUST,
    "A master's confirm offset is the smallest acknowledgement of the SyncStateSet members connected to it "
    "(its own max offset when it is alone); consumers read no further than it.",
    source=_SERVICE + " (computeConfirmOffset:423)")
RMQ_HA2_MIN_ISR = clause(
    "RMQ-HA2-MIN-ISR", Level.MUST,
    "In controller mode a put that needs replication fails IN_SYNC_REPLICAS_NOT_ENOUGH (the send answers 1 "
    "SYSTEM_ERROR \"in-sync replicas not enough\") while the SyncStateSet has fewer than minInSyncReplicas "
    "members; while a change the master reported is pending, the union of its set and the proposed one "
    "counts, and a change the controller refused stays pending until one is accepted. With "
    "allAckInSyncStateSet=true a put waits for every member's ack.",
    source=_COMMITLOG + " (asyncPutMessage:1020-1027); " + _SERVICE + " (inSyncReplicasNums:372, "
    "markSynchronizingSyncStateSet:335, setSyncStateSet:447); "
    + _REPLICAS + " (doReportSyncStateSetChanged:759)")
