"""A controller-mode master's acknowledgements and confirm offset: when a send is answered, what is read.

In controller mode the elected master is a SYNC_MASTER (``ReplicasManager.changeToMaster``), but what a
send with WAIT=true waits for is not the classic "one slave" (``rocketmq_spec.spec.ha``): with
``allAckInSyncStateSet=true`` it waits until every member of the SyncStateSet has acknowledged the
message's end, so that whichever member the controller elects next holds it; without it, for
``inSyncReplicas`` acknowledgements (1, the default, is the master itself: no wait). There is no
SLAVE_NOT_AVAILABLE in this mode: a SyncStateSet of the master alone answers at once.

The confirm offset is the other half: the end of what every SyncStateSet member holds. Consume queues are
dispatched only up to it (``readUnCommitted=false``), so a consumer never reads a message a failover could
take back; a slave takes the confirm offset the master sends in each transfer header (RMQ-HA2-SLAVE-EPOCH).
"""

from __future__ import annotations

from dataclasses import dataclass

from rocketmq_spec.spec.clauses import Level, clause
from rocketmq_spec.spec.ha import ReplicaPutAnswer

_STORE = "store/src/main/java/org/apache/rocketmq/store/"
_COMMITLOG = _STORE + "CommitLog.java"
_MESSAGE_STORE = _STORE + "DefaultMessageStore.java"
_TRANSFER = _STORE + "ha/GroupTransferService.java"
_SERVICE = _STORE + "ha/autoswitch/AutoSwitchHAService.java"
_REPLICAS = "broker/src/main/java/org/apache/rocketmq/broker/controller/ReplicasManager.java"
_MIXALL = "common/src/main/java/org/apache/rocketmq/common/MixAll.java"

ALL_ACK_IN_SYNC_STATE_SET = -1
"""``MixAll.ALL_ACK_IN_SYNC_STATE_SET``: the ack count that means "every SyncStateSet member"."""


def need_ack_nums(all_ack_in_sync_state_set: bool, in_sync_replicas: int) -> int:
    """The acknowledgements a controller-mode put with WAIT=true waits for, the master's own counted
    (``CommitLog.asyncPutMessage``): -1 for every SyncStateSet member, else ``inSyncReplicas``."""
    return ALL_ACK_IN_SYNC_STATE_SET if all_ack_in_sync_state_set else in_sync_replicas


def waits_for_replicas(need: int) -> bool:
    """``CommitLog.handleHA``: 0 or 1 acknowledgement is the master's own, answered at once."""
    return not 0 <= need <= 1


CONTROLLER_MASTER_ANSWERS = (
    ReplicaPutAnswer("PUT_OK", 0, True,
                     "allAckInSyncStateSet: every SyncStateSet member's connection acknowledged the "
                     "message's end within slaveTimeout, or the set is the master alone; otherwise "
                     "inSyncReplicas <= 1, or that many acknowledgements (the master's own counted) came in "
                     "time"),
    ReplicaPutAnswer("FLUSH_SLAVE_TIMEOUT", 12, True,
                     "the acknowledgements waited for did not all come within slaveTimeout (a member without "
                     "a connection never acknowledges)"),
    ReplicaPutAnswer("IN_SYNC_REPLICAS_NOT_ENOUGH", 1, False,
                     "the SyncStateSet (with a reported change pending: both sets' union) has fewer than "
                     "minInSyncReplicas members; nothing is stored (RMQ-HA2-MIN-ISR)"),
)
"""A controller-mode master's answers to a send with WAIT=true: the store's status, the SEND response code
and whether the message is in the CommitLog. SLAVE_NOT_AVAILABLE is never answered in this mode."""


@dataclass(frozen=True)
class ConfirmOffsetRule:
    broker: str
    when: str
    confirm_offset: str
    source: str


CONFIRM_OFFSET_RULES = (
    ConfirmOffsetRule("master", "its SyncStateSet is itself alone, or allAckInSyncStateSet=false",
                      "its CommitLog max offset", _COMMITLOG + " (getConfirmOffset:681-688)"),
    ConfirmOffsetRule("master", "allAckInSyncStateSet=true and the set has slaves, each with a connection",
                      "the smallest positive acknowledgement of the members' connections, at most its max "
                      "offset; computed again on an acknowledgement of a member of its set, on a new set and "
                      "when it becomes master",
                      _SERVICE + " (computeConfirmOffset:423-445, updateConfirmOffsetWhenSlaveAck:360, "
                                 "setSyncStateSet:447, changeToMaster:137)"),
    ConfirmOffsetRule("master", "allAckInSyncStateSet=true and a member of the set (with a change pending: "
                                "of the union) has no connection",
                      "unchanged: the value it had", _SERVICE + " (computeConfirmOffset:428-435)"),
    ConfirmOffsetRule("slave", "before its first transfer block",
                      "the value it had: after a start the checkpoint's confirmPhyOffset within the "
                      "CommitLog's min offset and recovered end (RMQ-CKPT-CONFIRM), after stepping down its "
                      "last as master",
                      _COMMITLOG + " (getConfirmOffset:694, recoverNormally:408-415); " + _MESSAGE_STORE
                      + " (loadCheckPoint:388)"),
    ConfirmOffsetRule("slave", "a transfer block arrives",
                      "min(the block header's confirm offset, its own max offset)",
                      "store/src/main/java/org/apache/rocketmq/store/ha/autoswitch/AutoSwitchHAClient.java "
                      "(HAClientReader.processReadResult:570)"),
)
"""Where a broker in controller mode puts its confirm offset, the end of what consumers may read."""

RMQ_HA2_SYNC_MASTER = clause(
    "RMQ-HA2-SYNC-MASTER", Level.MUST,
    "A broker the controller elects acts as a SYNC_MASTER (brokerRole SYNC_MASTER whatever broker.conf "
    "said): a send with WAIT=true waits for replication as RMQ-HA2-ALL-ACK says; one with WAIT=false "
    "answers without waiting.",
    source=_REPLICAS + " (changeToMaster:265); " + _COMMITLOG + " (needHandleHA:1308)")
RMQ_HA2_ALL_ACK = clause(
    "RMQ-HA2-ALL-ACK", Level.MUST,
    "With allAckInSyncStateSet=true a controller-mode master answers a send with WAIT=true SUCCESS only once "
    "the connection of every member of its SyncStateSet (with a reported change pending, of the union of "
    "both sets; a slave whose connection closed leaves it at once) has acknowledged the message's end, at "
    "once when the set is the master alone, and 12 FLUSH_SLAVE_TIMEOUT after slaveTimeout otherwise; the "
    "message is stored in both cases. Without it a put waits for inSyncReplicas acknowledgements, the "
    "master's own counted (none for the default 1); no put is answered SLAVE_NOT_AVAILABLE.",
    source=_COMMITLOG + " (asyncPutMessage:1017-1027, handleHA:1355-1369); " + _TRANSFER
    + " (doWaitTransfer:79-146); " + _SERVICE + " (getSyncStateSet:462, removeConnection:101-118); "
    + _MIXALL + " (ALL_ACK_IN_SYNC_STATE_SET:101)")
RMQ_HA2_CONFIRM_READ = clause(
    "RMQ-HA2-CONFIRM-READ", Level.MUST,
    "A broker in controller mode dispatches a CommitLog record to its consume queues (and index) only once "
    "the record ends at or before its confirm offset (readUnCommitted=false, the default): a message beyond "
    "it is neither pulled nor counted in a queue's max offset, and a send whose acknowledgements timed out "
    "becomes readable only when they come.",
    source=_MESSAGE_STORE + " (ReputMessageService.getReputEndOffset:2709, "
                            "preCheckMessageAndReturnSize:3080); " + _COMMITLOG + " (getConfirmOffset:681)")
