"""The HA stream: how a slave copies its master's CommitLog byte for byte (4.9.x classic replication).

It is RocketMQ's second wire format. A slave opens a plain TCP connection to the master's HA port
(``listenPort + 1``) — no RemotingCommand framing — and the two sides speak in fixed-size units: the slave
sends 8-byte offset reports ("I hold the log up to here"), the master answers with transfer blocks, a
12-byte header (where the bytes go, how many) followed by raw CommitLog bytes. Blocks cut the log at
arbitrary points, so a record may arrive in two blocks; the slave appends what it gets at its own end and
rebuilds its consume queues and index from the log, as a master's dispatcher does.

The offsets the slave reports are also the master's acknowledgements: a SYNC_MASTER answers a send only
when a report has reached the end of the message (or its wait times out), which is where replication can
lose data silently, and what the clauses below pin down.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from construct import Int32sb, Int64sb, Struct

from rocketmq_spec.spec.clauses import Level, clause

_HA = "store/src/main/java/org/apache/rocketmq/store/ha/"
_SERVICE = _HA + "HAService.java"
_CONNECTION = _HA + "HAConnection.java"
_COMMITLOG = "store/src/main/java/org/apache/rocketmq/store/CommitLog.java"
_STORE = "store/src/main/java/org/apache/rocketmq/store/DefaultMessageStore.java"
_BRK = "broker/src/main/java/org/apache/rocketmq/broker/"
_CONTROLLER = _BRK + "BrokerController.java"

HA_PORT_OFFSET = 1
"""The HA port is ``listenPort + 1`` (10912 beside 10911): ``BrokerStartup`` sets ``haListenPort`` so,
overriding any ``haListenPort`` in broker.conf."""

MASTER_ID = 0
"""``MixAll.MASTER_ID``: the brokerId of a master; slaves have ids > 0."""

REPORT_SIZE = 8
HEADER_SIZE = 12

SlaveOffsetReport = Struct(
    "slave_max_offset" / Int64sb * "the slave's CommitLog max physical offset (end of its data)",
)
"""Slave -> master. The only thing a slave ever sends; one report is also its acknowledgement."""

TransferHeader = Struct(
    "master_phy_offset" / Int64sb * "CommitLog offset of the first body byte on the master",
    "body_size" / Int32sb * "bytes of raw CommitLog data that follow (0: heartbeat)",
)
"""Master -> slave. Followed by ``body_size`` raw CommitLog bytes."""


class BrokerRole(enum.Enum):
    """``brokerRole`` in broker.conf (``MessageStoreConfig``); DLedger roles are out of scope."""

    ASYNC_MASTER = "ASYNC_MASTER"
    SYNC_MASTER = "SYNC_MASTER"
    SLAVE = "SLAVE"


@dataclass(frozen=True)
class HaSetting:
    key: str
    default: int
    meaning: str


HA_SETTINGS = (
    HaSetting("haSendHeartbeatInterval", 5_000,
              "ms of write silence after which a slave re-reports and a master sends an empty block"),
    HaSetting("haHousekeepingInterval", 20_000,
              "ms of silence after which either side closes the connection"),
    HaSetting("haTransferBatchSize", 32 * 1024, "largest body of one transfer block, bytes"),
    HaSetting("haSlaveFallbehindMax", 256 * 1024 * 1024,
              "a SYNC_MASTER waits for a slave only if its last ack is less than this far behind, bytes"),
    HaSetting("slaveTimeout", 3_000, "ms a SYNC_MASTER put waits for the slave's ack"),
    HaSetting("syncFlushTimeout", 5_000, "ms a SYNC_FLUSH put waits for its flush"),
)
"""``MessageStoreConfig`` defaults of the HA settings, each settable in broker.conf."""

HA_DEFAULTS = {s.key: s.default for s in HA_SETTINGS}


@dataclass(frozen=True)
class ReplicaPutAnswer:
    put_status: str
    response_code: int
    stored: bool
    when: str


SYNC_MASTER_ANSWERS = (
    ReplicaPutAnswer("PUT_OK", 0, True, "a slave report reached the message's end within slaveTimeout"),
    ReplicaPutAnswer("FLUSH_SLAVE_TIMEOUT", 12, True,
                     "a slave was connected and close enough, but no report reached the end in time"),
    ReplicaPutAnswer("SLAVE_NOT_AVAILABLE", 11, True,
                     "no slave connected, or the best ack is haSlaveFallbehindMax or more behind"),
    ReplicaPutAnswer("FLUSH_DISK_TIMEOUT", 10, True,
                     "SYNC_FLUSH only: no flush within syncFlushTimeout (a replica answer wins)"),
)
"""A SYNC_MASTER send with WAIT=true (the default): the store's status and the SEND response code.
The message is stored and the response header (msgId, queue offset) is filled in every case."""


def initial_transfer_offset(slave_report: int, master_max_offset: int, file_size: int) -> int:
    """Where a master starts sending after a slave's first report (RMQ-HA-START)."""
    if slave_report != 0:
        return slave_report
    return max(0, master_max_offset - master_max_offset % file_size)


RMQ_HA_PORT = clause(
    "RMQ-HA-PORT", Level.MUST,
    "A master accepts slaves on its HA port, listenPort + 1, with no RemotingCommand framing: the slave "
    "sends only 8-byte offset reports and the master only transfer blocks.",
    source=_SERVICE + " (AcceptSocketService); broker/.../BrokerStartup.java")
RMQ_HA_REPORT = clause(
    "RMQ-HA-REPORT", Level.MUST,
    "A slave's offset report is one big-endian int64: its CommitLog max physical offset. The master reads "
    "whole 8-byte units and takes the last complete one of what arrived.",
    source=_CONNECTION + " (ReadSocketService.processReadEvent)")
RMQ_HA_REPORT_WHEN = clause(
    "RMQ-HA-REPORT-WHEN", Level.MUST,
    "A slave reports after appending a block that moved its end, and whenever it has written nothing for "
    "haSendHeartbeatInterval (so its first report comes at most that long after it connects).",
    source=_SERVICE + " (HAClient.run, reportSlaveMaxOffsetPlus)")
RMQ_HA_START = clause(
    "RMQ-HA-START", Level.MUST,
    "A master sends nothing before the slave's first report. A first report of n > 0 starts the transfer "
    "at n; a first report of 0 (an empty slave) starts it at the start of the master's last CommitLog "
    "file, maxOffset - maxOffset % mappedFileSizeCommitLog.",
    source=_CONNECTION + " (WriteSocketService.run)")
RMQ_HA_BLOCK = clause(
    "RMQ-HA-BLOCK", Level.MUST,
    "A transfer block is a 12-byte header (int64 master offset of its first body byte, int32 body size) and "
    "that many raw CommitLog bytes, exactly the master's bytes at that offset; consecutive blocks are "
    "contiguous.",
    source=_CONNECTION + " (WriteSocketService.run, transferData)")
RMQ_HA_BLOCK_SIZE = clause(
    "RMQ-HA-BLOCK-SIZE", Level.MUST,
    "A block's body is at most haTransferBatchSize bytes (32 KiB) and never crosses a CommitLog file; it may "
    "split a record, and carries a full file's BLANK tail like any other bytes.",
    source=_CONNECTION + "; " + _STORE + " (getCommitLogData)")
RMQ_HA_HEARTBEAT = clause(
    "RMQ-HA-HEARTBEAT", Level.MUST,
    "Once transfer has started, a master that has written nothing for haSendHeartbeatInterval sends an "
    "empty block (body size 0) whose offset is where its next data will start.",
    source=_CONNECTION + " (WriteSocketService.run)")
RMQ_HA_REPORT_AHEAD = clause(
    "RMQ-HA-REPORT-AHEAD", Level.MUST,
    "A report after the first one that is greater than the master's CommitLog max offset (a slave claiming "
    "data the master never wrote) makes the master close the connection (up to 4.9.8; 5.x keeps it, see "
    "rocketmq_spec.spec.release_rules).",
    source=_CONNECTION + " (ReadSocketService.processReadEvent)")
RMQ_HA_CONTIGUOUS = clause(
    "RMQ-HA-CONTIGUOUS", Level.MUST,
    "A slave holding data closes the connection on a block whose offset is not its own CommitLog end, and "
    "appends nothing of it; an empty slave takes the first block's offset as its start.",
    source=_SERVICE + " (HAClient.dispatchReadRequest)")
RMQ_HA_HOUSEKEEPING = clause(
    "RMQ-HA-HOUSEKEEPING", Level.MUST,
    "A master closes a slave's connection after haHousekeepingInterval (20 s) without reading anything from "
    "it; a slave closes its connection after that long without writing, and reconnects.",
    source=_CONNECTION + "; " + _SERVICE)
RMQ_HA_REPLICA = clause(
    "RMQ-HA-REPLICA", Level.MUST,
    "A slave's CommitLog is byte-identical to the master's over the range it received (file names, record "
    "bytes, BLANK tails), and its consume queues and index are built from it as a master builds its own.",
    source=_STORE + " (appendToCommitLog, ReputMessageService)")
RMQ_HA_MASTER_ADDR = clause(
    "RMQ-HA-MASTER-ADDR", Level.MUST,
    "A slave without haMasterAddress replicates from the haServerAddr its REGISTER_BROKER response names "
    "(the master's brokerIP2:haListenPort), and syncs metadata from the response's masterAddr.",
    source=_CONTROLLER + " (registerBrokerAll)")
RMQ_HA_ROLE_ID = clause(
    "RMQ-HA-ROLE-ID", Level.MUST,
    "A master (ASYNC_MASTER or SYNC_MASTER) registers with brokerId 0, a slave with its brokerId > 0 "
    "(a SLAVE configured with an id <= 0 does not start); routes list both under one brokerName.",
    source=_BRK + "BrokerStartup.java")
RMQ_HA_SYNC_MASTER = clause(
    "RMQ-HA-SYNC-MASTER", Level.MUST,
    "A SYNC_MASTER answers a send with WAIT=true SUCCESS only once a slave has acknowledged the message's "
    "end; 12 FLUSH_SLAVE_TIMEOUT after slaveTimeout without it; 11 SLAVE_NOT_AVAILABLE at once when no slave "
    "is connected or close enough. The message is stored and the header filled in every case.",
    source=_COMMITLOG + " (submitReplicaRequest, handleHA); " + _SERVICE + " (GroupTransferService)")
RMQ_HA_ASYNC_MASTER = clause(
    "RMQ-HA-ASYNC-MASTER", Level.MUST,
    "An ASYNC_MASTER, and a SYNC_MASTER for a send with WAIT=false, answers without waiting for any slave.",
    source=_COMMITLOG + " (submitReplicaRequest)")
RMQ_HA_SLAVE_REFUSES_SEND = clause(
    "RMQ-HA-SLAVE-REFUSES-SEND", Level.MUST,
    "A slave stores no message a client sends: SEND_MESSAGE and its variants are answered 14 "
    "SERVICE_NOT_AVAILABLE (\"... messages are put to the slave ...\").",
    source=_STORE + " (checkStoreStatus); " + _BRK + "processor/SendMessageProcessor.java")
RMQ_HA_SLAVE_READ = clause(
    "RMQ-HA-SLAVE-READ", Level.MUST,
    "A slave serves pulls from its replica like a master. suggestWhichBrokerId is 0 unless slaveReadEnable "
    "is true; then it is the group's brokerId (0 by default), or whichBrokerWhenConsumeSlowly (1) for a "
    "consumer lagging beyond accessMessageInMemoryMaxRatio of memory.",
    source=_BRK + "processor/PullMessageProcessor.java")
RMQ_HA_SLAVE_PULL_OFFSETS = clause(
    "RMQ-HA-SLAVE-PULL-OFFSETS", Level.MUST,
    "A slave does not commit the consumer offset a pull carries, and answers a pull outside its queue's "
    "range 20 PULL_RETRY_IMMEDIATELY instead of 21 PULL_OFFSET_MOVED (offsetCheckInSlave=false).",
    source=_BRK + "processor/PullMessageProcessor.java")
RMQ_HA_SLAVE_SYNC = clause(
    "RMQ-HA-SLAVE-SYNC", Level.MUST,
    "A slave copies the master's topic config, consumer offsets, delay offsets and subscription groups every "
    "10 s through GET_ALL_TOPIC_CONFIG (21), GET_ALL_CONSUMER_OFFSET (43), GET_ALL_DELAY_OFFSET (45) and "
    "GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201), which a master serves.",
    source=_BRK + "slave/SlaveSynchronize.java")
