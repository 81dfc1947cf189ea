"""POP consumption (5.x): the broker hands messages out, hides them a while, takes back the unacked.

A POP_MESSAGE answer carries raw stored records; the client builds each message's receipt (the ``POP_CK``
property, the "extraInfo" of ACK_MESSAGE and CHANGE_MESSAGE_INVISIBLETIME) from the answer's header:
``startOffsetInfo`` and ``msgOffsetInfo`` say which queue and offsets the records come from. The broker
keeps its state as records of the revive topic ``rmq_sys_REVIVE_LOG_<cluster>``: a checkpoint (tag ``ck``)
per popped batch and an ack (``ack``, ``bAck``) per acknowledgement, each written as a timer message due
when the batch becomes visible again. When a checkpoint comes due with offsets nobody acked, the broker
writes those messages again to the group's pop retry topic, from which later pops serve them.
Ordered pops (``order=true``) take no checkpoint: the queue stays locked to the popped batch until it is
acked or its invisibility ends, and the answer's reviveQid is 999.
"""

from __future__ import annotations

from dataclasses import dataclass

from rocketmq_spec.spec.bodies import BodyField, BodySpec, Json
from rocketmq_spec.spec.clauses import Level, clause
from rocketmq_spec.spec.codes import RequestCode
from rocketmq_spec.spec.header_fields import (
    BNAME,
    INT,
    RPC_FIELDS_5X,
    TOPIC_RPC_FIELDS_5X,
    B,
    Field,
    HeaderSpec,
    L,
    S,
)
from rocketmq_spec.spec.releases import since
from rocketmq_spec.spec.system_topics import RETRY_PREFIX, REVIVE_TOPIC_PREFIX

_HEADER = "remoting/src/main/java/org/apache/rocketmq/remoting/protocol/header/"
_BODY = "remoting/src/main/java/org/apache/rocketmq/remoting/protocol/body/"
_PROCESSOR = "broker/src/main/java/org/apache/rocketmq/broker/processor/"
_POP_STORE = "store/src/main/java/org/apache/rocketmq/store/pop/"

CK_TAG = "ck"
ACK_TAG = "ack"
BATCH_ACK_TAG = "bAck"
REVIVE_QUEUE_NUM = 8
"""``reviveQueueNum``: queues of the revive topic; checkpoints go to them in turn."""
ORDER_REVIVE_QUEUE = 999
"""``KeyBuilder.POP_ORDER_REVIVE_QUEUE``: the reviveQid of an ordered pop, which takes no checkpoint."""
ACK_TIME_INTERVAL_MS = 1000
"""``PopAckConstants.ackTimeInterval``: a checkpoint is due this long before its revive time."""
MAX_POP_NUMS = 32
"""The most messages one POP_MESSAGE may ask for."""
RETRY_QUEUE_NUMS = 1
"""``PopAckConstants.retryQueueNum``: queues of a pop retry topic the broker creates."""
POLLING_TIMEOUT_SLACK_MS = 20_000
"""``PopMessageRequestHeader.isTimeoutTooMuch``: a request born this much before it arrived is refused."""


def revive_topic(cluster: str) -> str:
    return REVIVE_TOPIC_PREFIX + cluster


def pop_retry_topic(topic: str, group: str, v2: bool = False) -> str:
    """``KeyBuilder.buildPopRetryTopic``: ``%RETRY%<group>_<topic>`` (V1, the default) or
    ``%RETRY%<group>+<topic>`` (V2, ``enableRetryTopicV2``)."""
    return f"{RETRY_PREFIX}{group}{'+' if v2 else '_'}{topic}"


class InitMode:
    """``ConsumeInitMode``: where a group with no offset starts popping."""

    LAST = 0
    """The queue's last message (``getMaxOffsetInQueue - 1``), or 0 when the first is still in memory."""
    MIN = 1
    """The queue's first message."""


class MessageRequestMode:
    """``MessageRequestMode``: how a group's consumers fetch (SET_MESSAGE_REQUEST_MODE)."""

    PULL = "PULL"
    POP = "POP"


@dataclass(frozen=True)
class ExtraInfoPart:
    position: int
    name: str
    meaning: str


EXTRA_INFO: tuple[ExtraInfoPart, ...] = (
    ExtraInfoPart(0, "ckQueueOffset", "start offset of the popped batch (the checkpoint's startOffset)"),
    ExtraInfoPart(1, "popTime", "broker time of the pop, ms"),
    ExtraInfoPart(2, "invisibleTime", "how long the message stays hidden, ms"),
    ExtraInfoPart(3, "reviveQid", "revive queue of the checkpoint; 999 for an ordered pop"),
    ExtraInfoPart(4, "retry", "0 the topic, 1 its V1 pop retry topic, 2 its V2 pop retry topic"),
    ExtraInfoPart(5, "brokerName", "broker that served the pop"),
    ExtraInfoPart(6, "queueId", "queue of the message"),
    ExtraInfoPart(7, "queueOffset", "offset of the message (present in a message's POP_CK)"),
)
"""The space-separated fields of a receipt (``ExtraInfoUtil.buildExtraInfo``)."""
EXTRA_INFO_SEPARATOR = " "


def build_extra_info(ck_offset: int, pop_time: int, invisible_time: int, revive_qid: int, retry: str,
                     broker_name: str, queue_id: int, queue_offset: int) -> str:
    return EXTRA_INFO_SEPARATOR.join(str(part) for part in (
        ck_offset, pop_time, invisible_time, revive_qid, retry, broker_name, queue_id, queue_offset))


def retry_flag(topic: str) -> str:
    """``ExtraInfoUtil.getRetry``: 2 for a V2 pop retry topic, 1 for any other %RETRY% topic, 0 else."""
    if topic.startswith(RETRY_PREFIX) and "+" in topic:
        return "2"
    return "1" if topic.startswith(RETRY_PREFIX) else "0"


def offset_info_entry(topic: str, queue_id: int, values: list[int]) -> str:
    """One ``;``-separated entry of the offset infos: ``retry queueId v,v``."""
    return f"{retry_flag(topic)} {queue_id} {','.join(str(v) for v in values)}"


POP_MESSAGE_REQUEST = HeaderSpec("PopMessageRequestHeader", (
    Field("consumerGroup", S, True, "consumer group"),
    Field("topic", S, True, "topic"),
    Field("queueId", INT, True, "queue; -1 pops from every readable queue"),
    Field("maxMsgNums", INT, True, "most messages to return (at most 32)"),
    Field("invisibleTime", L, True, "how long the popped messages stay hidden, ms"),
    Field("pollTime", L, True, "long-poll hold time, ms"),
    Field("bornTime", L, True, "client time of the request, ms"),
    Field("initMode", INT, True, "ConsumeInitMode: 0 LAST, 1 MIN"),
    Field("expType", S, False, "TAG or SQL92"),
    Field("exp", S, False, "filter expression"),
    Field("order", B, False, "ordered pop (default false)"),
    Field("attemptId", S, False, "client attempt id of an ordered pop", releases=since("5.1.1")),
    BNAME,
    *TOPIC_RPC_FIELDS_5X,
))
POP_MESSAGE_RESPONSE = HeaderSpec("PopMessageResponseHeader", (
    Field("popTime", L, True, "broker time of the pop, ms"),
    Field("invisibleTime", L, True, "the request's invisibleTime"),
    Field("reviveQid", INT, True, "revive queue of the batch's checkpoint; 999 for an ordered pop"),
    Field("restNum", L, True, "messages left in the queues popped"),
    Field("startOffsetInfo", S, False, "per queue popped: retry queueId startOffset"),
    Field("msgOffsetInfo", S, False, "per queue popped: retry queueId offset,offset,..."),
    Field("orderCountInfo", S, False, "ordered pop: per queue (or qo<queue>%<offset>) times consumed"),
))
_RECEIPT = (
    Field("consumerGroup", S, True, "consumer group"),
    Field("topic", S, True, "the topic popped (not its retry topic)"),
    Field("queueId", INT, True, "queue of the message"),
    Field("extraInfo", S, True, "the message's receipt (its POP_CK)"),
    Field("offset", L, True, "queue offset of the message"),
)
ACK_MESSAGE_REQUEST = HeaderSpec("AckMessageRequestHeader", (
    *_RECEIPT,
    Field("liteTopic", S, False, "lite topic of the message", releases=since("5.5.0")),
    BNAME,
    *TOPIC_RPC_FIELDS_5X,
))
CHANGE_INVISIBLE_TIME_REQUEST = HeaderSpec("ChangeInvisibleTimeRequestHeader", (
    *_RECEIPT,
    Field("invisibleTime", L, True, "new invisible time from now, ms"),
    Field("liteTopic", S, False, "lite topic of the message", releases=since("5.5.0")),
    Field("suspend", B, False, "lite consumption: suspend the message", releases=since("5.5.0")),
    BNAME,
    *TOPIC_RPC_FIELDS_5X,
))
CHANGE_INVISIBLE_TIME_RESPONSE = HeaderSpec("ChangeInvisibleTimeResponseHeader", (
    Field("popTime", L, True, "new pop time, ms"),
    Field("invisibleTime", L, True, "the new invisible time"),
    Field("reviveQid", INT, True, "revive queue of the new checkpoint"),
))
PEEK_MESSAGE_REQUEST = HeaderSpec("PeekMessageRequestHeader", (
    Field("topic", S, True, "topic"),
    Field("queueId", INT, True, "queue; -1 peeks every readable queue"),
    Field("maxMsgNums", INT, True, "most messages to return"),
    Field("consumerGroup", S, True, "consumer group whose offset to peek from"),
    BNAME,
    *TOPIC_RPC_FIELDS_5X,
))
NOTIFICATION_REQUEST = HeaderSpec("NotificationRequestHeader", (
    Field("consumerGroup", S, True, "consumer group"),
    Field("topic", S, True, "topic"),
    Field("queueId", INT, True, "queue; -1 is every queue"),
    Field("pollTime", L, True, "long-poll hold time, ms"),
    Field("bornTime", L, True, "client time of the request, ms"),
    Field("order", B, False, "ordered consumption (default false)", releases=since("5.1.1")),
    Field("attemptId", S, False, "client attempt id", releases=since("5.1.1")),
    Field("expType", S, False, "TAG or SQL92", releases=since("5.5.0")),
    Field("exp", S, False, "filter expression", releases=since("5.5.0")),
    BNAME,
    *TOPIC_RPC_FIELDS_5X,
))
NOTIFICATION_RESPONSE = HeaderSpec("NotificationResponseHeader", (
    Field("hasMsg", B, True, "a pop would find a message now"),
    Field("pollingFull", B, False, "the hold was refused: too many waiting", releases=since("5.3.2")),
))
POLLING_INFO_REQUEST = HeaderSpec("PollingInfoRequestHeader", (
    Field("consumerGroup", S, True, "consumer group"),
    Field("topic", S, True, "topic"),
    Field("queueId", INT, True, "queue"),
    BNAME,
    *TOPIC_RPC_FIELDS_5X,
))
POLLING_INFO_RESPONSE = HeaderSpec("PollingInfoResponseHeader", (
    Field("pollingNum", INT, True, "POP_MESSAGE and NOTIFICATION requests held for the queue"),
))
NO_HEADER_5X = HeaderSpec("RpcRequestHeader", (BNAME, *RPC_FIELDS_5X))

_S, _N, _B, _A, _O = Json.STRING, Json.NUMBER, Json.BOOLEAN, Json.ARRAY, Json.OBJECT

BATCH_ACK = BodySpec("BatchAck", (
    BodyField("c", _S, "consumer group (also read as consumerGroup)", required=True),
    BodyField("t", _S, "the topic popped (also read as topic)", required=True),
    BodyField("r", _S, "retry flag of the receipts: 0, 1 or 2 (also read as retry)", default="0"),
    BodyField("so", _N, "start offset of the popped batch (startOffset)", default=0),
    BodyField("q", _N, "queue (queueId)", default=0),
    BodyField("rq", _N, "revive queue of the batch (reviveQueueId)", default=0),
    BodyField("pt", _N, "pop time (popTime)", default=0),
    BodyField("it", _N, "invisible time (invisibleTime)", default=0),
    BodyField("b", _S, "base64 of BitSet.toByteArray(): bit i acks offset so + i (bitSet)", required=True),
))
BATCH_ACK_BODY = BodySpec("BatchAckMessageRequestBody", (
    BodyField("brokerName", _S, "broker that served the pops"),
    BodyField("acks", _A, "one entry per popped batch", BATCH_ACK, default=()),
))
POP_CHECKPOINT = BodySpec("PopCheckPoint", (
    BodyField("so", _N, "start offset of the batch", default=0),
    BodyField("pt", _N, "pop time, ms", default=0),
    BodyField("it", _N, "invisible time, ms", default=0),
    BodyField("bm", _N, "bits of the offsets acked while the checkpoint was buffered", default=0),
    BodyField("n", _N, "messages in the batch", default=0),
    BodyField("q", _N, "queue popped", default=0),
    BodyField("t", _S, "topic popped (the retry topic for a retry pop)"),
    BodyField("c", _S, "consumer group"),
    BodyField("ro", _N, "offset of the checkpoint in its revive queue", default=0),
    BodyField("d", _A, "each message's offset minus so"),
    BodyField("bn", _S, "broker name"),
    BodyField("rp", _S, "times the checkpoint was written again"),
))
ACK_MSG = BodySpec("AckMsg", (
    BodyField("ao", _N, "acked offset (ackOffset)", default=0),
    BodyField("so", _N, "start offset of the batch (startOffset)", default=0),
    BodyField("c", _S, "consumer group (consumerGroup)"),
    BodyField("t", _S, "topic popped (topic)"),
    BodyField("q", _N, "queue (queueId)", default=0),
    BodyField("pt", _N, "pop time of the batch (popTime)", default=0),
    BodyField("bn", _S, "broker name (brokerName)"),
))
BATCH_ACK_MSG = BodySpec("BatchAckMsg", (
    *ACK_MSG.fields,
    BodyField("aol", _A, "acked offsets (ackOffsetList)"),
))
MESSAGE_REQUEST_MODES = (MessageRequestMode.PULL, MessageRequestMode.POP)
SET_MESSAGE_REQUEST_MODE_BODY = BodySpec("SetMessageRequestModeRequestBody", (
    BodyField("topic", _S, "topic", required=True),
    BodyField("consumerGroup", _S, "consumer group", required=True),
    BodyField("mode", _S, "PULL or POP", constants=MESSAGE_REQUEST_MODES, default=MessageRequestMode.PULL),
    BodyField("popShareQueueNum", _N, "POP: how many consumers share a queue (0: the broker decides)",
              default=0),
))
_MESSAGE_QUEUE = BodySpec("MessageQueue", (
    BodyField("brokerName", _S, "broker"), BodyField("queueId", _N, "queue"),
    BodyField("topic", _S, "topic")))
MESSAGE_QUEUE_ASSIGNMENT = BodySpec("MessageQueueAssignment", (
    BodyField("messageQueue", _O, "the queue (queueId -1: every queue of the broker, for POP)",
              _MESSAGE_QUEUE),
    BodyField("mode", _S, "PULL or POP", constants=MESSAGE_REQUEST_MODES, default=MessageRequestMode.PULL),
    BodyField("attachments", _O, "extra attributes", is_map=True),
))
QUERY_ASSIGNMENT_REQUEST_BODY = BodySpec("QueryAssignmentRequestBody", (
    BodyField("topic", _S, "topic", required=True),
    BodyField("consumerGroup", _S, "consumer group", required=True),
    BodyField("clientId", _S, "client asking", required=True),
    BodyField("strategyName", _S, "allocation strategy (AVG ...)"),
    BodyField("messageModel", _S, "CLUSTERING or BROADCASTING", constants=("BROADCASTING", "CLUSTERING")),
))
QUERY_ASSIGNMENT_RESPONSE_BODY = BodySpec("QueryAssignmentResponseBody", (
    BodyField("messageQueueAssignments", _A, "the queues assigned to the client", MESSAGE_QUEUE_ASSIGNMENT),
))
GET_ALL_MESSAGE_REQUEST_MODE_BODY = BodySpec("MessageRequestModeSerializeWrapper", (
    BodyField("messageRequestModeMap", _O, "topic -> group -> SetMessageRequestModeRequestBody", is_map=True),
))

_C = RequestCode
POP_REQUEST_HEADERS: dict[int, HeaderSpec] = {
    _C.POP_MESSAGE: POP_MESSAGE_REQUEST,
    _C.ACK_MESSAGE: ACK_MESSAGE_REQUEST,
    _C.BATCH_ACK_MESSAGE: NO_HEADER_5X,
    _C.CHANGE_MESSAGE_INVISIBLETIME: CHANGE_INVISIBLE_TIME_REQUEST,
    _C.PEEK_MESSAGE: PEEK_MESSAGE_REQUEST,
    _C.NOTIFICATION: NOTIFICATION_REQUEST,
    _C.POLLING_INFO: POLLING_INFO_REQUEST,
    _C.QUERY_ASSIGNMENT: NO_HEADER_5X,
    _C.SET_MESSAGE_REQUEST_MODE: NO_HEADER_5X,
    _C.GET_ALL_MESSAGE_REQUEST_MODE: NO_HEADER_5X,
}
POP_RESPONSE_HEADERS: dict[int, HeaderSpec] = {
    _C.POP_MESSAGE: POP_MESSAGE_RESPONSE,
    _C.PEEK_MESSAGE: POP_MESSAGE_RESPONSE,
    _C.CHANGE_MESSAGE_INVISIBLETIME: CHANGE_INVISIBLE_TIME_RESPONSE,
    _C.NOTIFICATION: NOTIFICATION_RESPONSE,
    _C.POLLING_INFO: POLLING_INFO_RESPONSE,
}

POP_FOUND = clause(
    "RMQ-POP-FOUND", Level.MUST,
    "POP_MESSAGE answers SUCCESS with the popped records as a PULL body, remark FOUND, popTime, the "
    "request's invisibleTime, reviveQid, restNum and, per queue popped, startOffsetInfo and msgOffsetInfo "
    "entries \"retry queueId offsets\" that name every record of the body.",
    source=_PROCESSOR + "PopMessageProcessor.java")
POP_INVISIBLE = clause(
    "RMQ-POP-INVISIBLE", Level.MUST,
    "A popped message is not popped again, by any consumer of the group, before its invisible time ends.",
    source=_PROCESSOR + "PopMessageProcessor.java")
POP_NOT_FOUND = clause(
    "RMQ-POP-POLLING-TIMEOUT", Level.MUST,
    "A POP_MESSAGE that finds nothing is held up to pollTime and then answered 210 POLLING_TIMEOUT with "
    "remark NO_MESSAGE_IN_QUEUE; a message arriving meanwhile ends the hold with SUCCESS.",
    source="broker/src/main/java/org/apache/rocketmq/broker/longpolling/PopLongPollingService.java")
POP_LIMITS = clause(
    "RMQ-POP-LIMITS", Level.MUST,
    "POP_MESSAGE asking for more than 32 messages is answered 29 INVALID_PARAMETER (5.3.2+), a queueId "
    "beyond the topic's read queues INVALID_PARAMETER, an unknown topic TOPIC_NOT_EXIST, an unknown "
    "group SUBSCRIPTION_GROUP_NOT_EXIST.",
    source=_PROCESSOR + "PopMessageProcessor.java")
POP_ACK = clause(
    "RMQ-POP-ACK", Level.MUST,
    "ACK_MESSAGE with a message's receipt answers SUCCESS, and an acked message is not revived.",
    source=_PROCESSOR + "AckMessageProcessor.java")
POP_ACK_ILLEGAL = clause(
    "RMQ-POP-ACK-OFFSET", Level.MUST,
    "ACK_MESSAGE for an offset outside the queue's range answers 208 NO_MESSAGE; a queueId outside the "
    "topic's read queues answers 13 MESSAGE_ILLEGAL.",
    source=_PROCESSOR + "AckMessageProcessor.java")
POP_BATCH_ACK = clause(
    "RMQ-POP-BATCH-ACK", Level.MUST,
    "BATCH_ACK_MESSAGE acks, per BatchAck, every offset startOffset + i whose bit i is set; an empty body "
    "answers 208 NO_MESSAGE.",
    source=_PROCESSOR + "AckMessageProcessor.java, " + _BODY + "BatchAck.java")
POP_REVIVE = clause(
    "RMQ-POP-REVIVE", Level.MUST,
    "A popped message neither acked nor made invisible again is written, once its invisible time has "
    "passed, to the group's pop retry topic %RETRY%<group>_<topic> with RECONSUME_TIMES + 1 and "
    "1ST_POP_TIME, and a later pop of the topic serves it with a receipt of retry flag 1.",
    source=_PROCESSOR + "PopReviveService.java")
POP_REVIVE_LOG = clause(
    "RMQ-POP-REVIVE-LOG", Level.MUST,
    "A non-ordered pop writes a checkpoint record (tag ck, PopCheckPoint JSON) and an ack writes an ack "
    "record (tag ack or bAck) to a queue of rmq_sys_REVIVE_LOG_<cluster>, each as a timer message due at "
    "the batch's revive time (the checkpoint 1 s earlier), so written there never before that time "
    "(RMQ-TIMER-PROPERTIES).",
    source=(_PROCESSOR + "PopMessageProcessor.java, AckMessageProcessor.java, " + _POP_STORE
            + "PopCheckPoint.java"))
POP_REVIVE_OFFSET = clause(
    "RMQ-POP-REVIVE-OFFSET", Level.MUST,
    "The offset of group CID_RMQ_SYS_REVIVE_GROUP for topic rmq_sys_REVIVE_LOG_<cluster> and a revive queue "
    "is the queue offset of the last revive record decided (a checkpoint revived or skipped, everything "
    "before it read), not the next to read: a broker starting on the store resumes reading that queue at "
    "the offset + 1 (at 0 when there is none, -1), so a checkpoint already revived is not revived again.",
    source=_PROCESSOR + "PopReviveService.java (consumeReviveMessage: oldOffset + 1; mergeAndRevive: "
           "commitOffset(newOffset = the last revived checkpoint's reviveOffset); \"the next pull offset is "
           "reviveOffset + 1\")")


def revive_resume_offset(committed: int) -> int:
    """RMQ-POP-REVIVE-OFFSET: the first revive-queue offset to read given the committed offset (-1 when
    absent, as ``ConsumerOffsetManager.queryOffset`` answers)."""
    return max(committed, -1) + 1


POP_CHANGE_INVISIBLE = clause(
    "RMQ-POP-CHANGE-INVISIBLE", Level.MUST,
    "CHANGE_MESSAGE_INVISIBLETIME acks the old receipt and answers SUCCESS with a new popTime, the given "
    "invisibleTime and a reviveQid, from which the client builds the new receipt; the message becomes "
    "visible again invisibleTime after the new popTime.",
    source=_PROCESSOR + "ChangeInvisibleTimeProcessor.java")
POP_PEEK = clause(
    "RMQ-POP-PEEK", Level.MUST,
    "PEEK_MESSAGE answers the messages from the group's offset without hiding them or moving the offset.",
    source=_PROCESSOR + "PeekMessageProcessor.java")
POP_NOTIFICATION = clause(
    "RMQ-POP-NOTIFICATION", Level.MUST,
    "NOTIFICATION answers SUCCESS with hasMsg=true at once when a pop would find a message, else holds up "
    "to pollTime and answers hasMsg=false (POLLING_TIMEOUT is not used).",
    source=_PROCESSOR + "NotificationProcessor.java")
POP_POLLING_INFO = clause(
    "RMQ-POP-POLLING-INFO", Level.MUST,
    "POLLING_INFO answers SUCCESS with pollingNum, the number of pops held for the topic and queue.",
    source=_PROCESSOR + "PollingInfoProcessor.java")
POP_ORDER = clause(
    "RMQ-POP-ORDER", Level.MUST,
    "An ordered pop answers reviveQid 999 and orderCountInfo; until the batch is acked (or its invisible "
    "time ends) no further message of that queue is popped, and once acked the next pop serves the next "
    "offset.",
    source=_PROCESSOR + "PopMessageProcessor.java, AckMessageProcessor.java (ackOrderly)")
POP_INIT_MODE = clause(
    "RMQ-POP-INIT-MODE", Level.MUST,
    "A group popping a queue it has no offset for starts at the first message with initMode 1 (MIN) and at "
    "the last one with initMode 0 (LAST), or at 0 while the queue's first message is still in memory.",
    source=_PROCESSOR + "PopMessageProcessor.java (getInitOffset)")
POP_REQUEST_MODE = clause(
    "RMQ-POP-REQUEST-MODE", Level.MUST,
    "SET_MESSAGE_REQUEST_MODE records a group's PULL or POP mode for a topic; QUERY_ASSIGNMENT then answers "
    "the client's queues with that mode (POP: one assignment of queueId -1 per broker when the group "
    "pops the whole topic).",
    source=_PROCESSOR + "QueryAssignmentProcessor.java")
POP_RECEIPT = clause(
    "RMQ-POP-RECEIPT", Level.MUST,
    "A receipt (extraInfo, POP_CK) is \"ckOffset popTime invisibleTime reviveQid retry brokerName queueId "
    "queueOffset\" separated by single spaces.",
    source=_HEADER + "ExtraInfoUtil.java")
POP_RETRY_TOPIC_BODY = clause(
    "RMQ-POP-RETRY-RECODE", Level.MUST,
    "A message popped from a pop retry topic is answered under the original topic with its POP_CK "
    "property set (popResponseReturnActualRetryTopic=false, the default).",
    source=_PROCESSOR + "PopMessageProcessor.java (popMsgFromQueue)")
POP_UNSUPPORTED_4X = clause(
    "RMQ-POP-4X", Level.MUST,
    "A 4.x broker has no POP processor: it answers every POP code with 3 REQUEST_CODE_NOT_SUPPORTED.",
    source="broker/src/main/java/org/apache/rocketmq/broker/BrokerController.java (registerProcessor, 4.9.8)")
