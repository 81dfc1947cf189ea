"""How a proxy carries a v2 ``Message`` as a remoting message, and a stored message back as a v2 one.

A send becomes SEND_MESSAGE_V2 (one message) or SEND_BATCH_MESSAGE (several) with the producer group set
to the topic's name, because a gRPC producer has no group: the broker checks a half message back with a
producer of that group, which is any gRPC producer publishing to the topic. Each row below says which
remoting property, header field or sysflag bit a v2 field becomes, and what a delivery fills back.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

from rocketmq_spec.spec.clauses import Level, clause
from rocketmq_spec.spec.properties import SYSTEM_KEYS

SHARDING_KEY = "__SHARDINGKEY"
TRACE_CONTEXT = "TRACE_CONTEXT"
BORN_HOST = "__BORNHOST"
BORN_TIMESTAMP = "BORN_TIMESTAMP"
TIMER_DELIVER_MS = "TIMER_DELIVER_MS"
TIMER_DELAY_SEC = "TIMER_DELAY_SEC"
TRANSACTION_ID = "__transactionId__"
DLQ_ORIGIN_TOPIC = "DLQ_ORIGIN_TOPIC"
DLQ_ORIGIN_MESSAGE_ID = "DLQ_ORIGIN_MESSAGE_ID"
POP_CK = "POP_CK"

RESERVED_KEYS_5X: frozenset[str] = SYSTEM_KEYS | {
    "MQ2_FLAG", "POP_CK", "POP_CK_OFFSET", "1ST_POP_TIME", "DUP_INFO", "EXTEND_UNIQ_INFO",
    "TIMER_DELAY_MS", TIMER_DELAY_SEC, TIMER_DELIVER_MS, "TIMER_ENQUEUE_MS", "TIMER_DEQUEUE_MS",
    "TIMER_ROLL_TIMES", "TIMER_OUT_MS", "TIMER_DEL_UNIQKEY", "TIMER_DELAY_LEVEL", BORN_HOST, BORN_TIMESTAMP,
    DLQ_ORIGIN_TOPIC, DLQ_ORIGIN_MESSAGE_ID, "__CRC32#",
}
"""5.3.3's ``MessageConst.STRING_HASH_SET``: a user property with one of these names is refused
(ILLEGAL_MESSAGE_PROPERTY_KEY)."""


@dataclass(frozen=True)
class FieldMapping:
    v2: str
    remoting: str
    meaning: str


SEND_MAPPING: tuple[FieldMapping, ...] = (
    FieldMapping("topic.name", "header topic", "destination; every message of a request has the same one"),
    FieldMapping("(none)", "header producerGroup = topic name, property PGROUP",
                 "the group that transaction checks go to"),
    FieldMapping("(none)", "header defaultTopic TBW102, defaultTopicQueueNums 4", "as a 4.x producer sends"),
    FieldMapping("(queue)", "header queueId", "hash of message_group over the writable queues for a single "
                 "FIFO message, otherwise the next queue in turn"),
    FieldMapping("user_properties", "properties, as given", "reserved names refused"),
    FieldMapping("system_properties.tag", "property TAGS", ""),
    FieldMapping("system_properties.keys", "property KEYS (space separated)", ""),
    FieldMapping("system_properties.message_id", "property UNIQ_KEY", "the id the SDK chose"),
    FieldMapping("system_properties.body_encoding GZIP", "sysFlag COMPRESSED_FLAG", "body kept compressed"),
    FieldMapping("system_properties.message_type TRANSACTION", "sysFlag TRANSACTION_PREPARED, property "
                 "TRAN_MSG=true", "stored as a half message"),
    FieldMapping("system_properties.orphaned_transaction_recovery_duration",
                 "property CHECK_IMMUNITY_TIME_IN_SECONDS", "seconds before the first check-back"),
    FieldMapping("system_properties.delivery_timestamp", "property TIMER_DELIVER_MS",
                 "milliseconds since the epoch; a 5.x broker holds the message until then"),
    FieldMapping("system_properties.delivery_attempt", "property RECONSUME_TIME", "0 on a first send"),
    FieldMapping("system_properties.message_group", "property __SHARDINGKEY", "FIFO group"),
    FieldMapping("system_properties.trace_context", "property TRACE_CONTEXT", ""),
    FieldMapping("system_properties.born_host", "property __BORNHOST", "the peer's address when empty"),
    FieldMapping("system_properties.born_timestamp", "property BORN_TIMESTAMP, header bornTimestamp", "ms"),
)
"""SendMessage → SEND_MESSAGE_V2 (``SendMessageActivity.buildMessageProperty``)."""

DELIVERY_MAPPING: tuple[FieldMapping, ...] = (
    FieldMapping("topic.name", "topic, or RETRY_TOPIC for a retry", "the topic the consumer subscribed"),
    FieldMapping("user_properties", "every property outside RESERVED_KEYS_5X (so __SHARDINGKEY, "
                 "TRACE_CONTEXT and __transactionId__ appear there too, as in Apache's proxy)", ""),
    FieldMapping("system_properties.message_id", "UNIQ_KEY, else the offsetMsgId", ""),
    FieldMapping("system_properties.body_digest", "MD5 of the body as stored, upper-case hex", ""),
    FieldMapping("system_properties.body_encoding", "GZIP when the record's sysFlag says compressed (the "
                 "body is handed over as stored), else IDENTITY", ""),
    FieldMapping("system_properties.message_type", "TRANSACTION with TRAN_MSG, DELAY with DELAY, "
                 "TIMER_DELIVER_MS or TIMER_DELAY_SEC, FIFO with __SHARDINGKEY, else NORMAL", ""),
    FieldMapping("system_properties.store_timestamp / store_host", "storeTimestamp / storeHost", ""),
    FieldMapping("system_properties.queue_id / queue_offset", "queueId / queueOffset", ""),
    FieldMapping("system_properties.receipt_handle", "the message's POP_CK (extra info of the pop) + ' ' + "
                 "its commitlog offset", "to ack or change invisibility"),
    FieldMapping("system_properties.delivery_attempt", "reconsumeTimes + 1", ""),
)
"""A popped message → ReceiveMessageResponse.message (``GrpcConverter.buildMessage``)."""

RECEIPT_HANDLE: tuple[FieldMapping, ...] = (
    FieldMapping("0", "ckQueueOffset", "start offset of the popped batch"),
    FieldMapping("1", "popTime", "broker time of the pop, ms"),
    FieldMapping("2", "invisibleTime", "ms; popTime + invisibleTime is when the handle expires"),
    FieldMapping("3", "reviveQid", "revive queue of the checkpoint; 999 for an ordered pop"),
    FieldMapping("4", "retry", "0 the topic, 1 or 2 its pop retry topic (V1 or V2)"),
    FieldMapping("5", "brokerName", "broker that served the pop"),
    FieldMapping("6", "queueId", "queue of the message"),
    FieldMapping("7", "queueOffset", "offset of the message"),
    FieldMapping("8", "commitLogOffset", "where the message is stored (the DLQ forward needs it)"),
)
"""A receipt handle's space-separated parts (``ReceiptHandle.encode``): the POP_CK extra info the remoting
client builds from a pop answer (``rocketmq_spec.spec.pop.EXTRA_INFO``) and the message's commitlog offset."""

GRPC_RECEIPT = clause(
    "RMQ-GRPC-RECEIPT", Level.MUST,
    "A received message's receipt_handle is its POP_CK extra info followed by its commitlog offset "
    "(RECEIPT_HANDLE); AckMessage and ChangeInvisibleDuration send that whole string as extraInfo, with the "
    "pop retry topic as topic for a retried message, and answer INVALID_RECEIPT_HANDLE for a handle whose "
    "popTime + invisibleTime has passed.",
    source="common/src/main/java/org/apache/rocketmq/common/consumer/ReceiptHandle.java")

@dataclass(frozen=True)
class RecallHandle:
    topic: str
    broker_name: str
    timestamp: str
    message_id: str


RECALL_HANDLE_VERSION = "v1"


class RecallHandleError(ValueError):
    """A recall handle that is not base64url of ``v1 topic brokerName timestamp messageId``."""


def decode_recall_handle(handle: str) -> RecallHandle:
    """``RecallMessageHandle.decodeHandle``: base64url (RFC 4648) of five space-separated parts."""
    try:
        raw = base64.urlsafe_b64decode(handle.encode()).decode()
    except (ValueError, UnicodeDecodeError):
        raise RecallHandleError("recall handle is invalid") from None
    items = raw.split(" ")
    if not handle or items[0] != RECALL_HANDLE_VERSION or len(items) < 5:
        raise RecallHandleError("recall handle is invalid")
    return RecallHandle(items[1], items[2], items[3], items[4])


GRPC_RECALL = clause(
    "RMQ-GRPC-RECALL", Level.MUST,
    "RecallMessage takes the recall_handle a delay message's send answered (base64url of 'v1 topic "
    "brokerName timestamp messageId') and asks that broker to RECALL_MESSAGE it, and the message is never "
    "delivered; a handle that does not decode answers INTERNAL_SERVER_ERROR, a topic that is not DELAY or "
    "MIXED MESSAGE_PROPERTY_CONFLICT_WITH_TYPE. A broker recalls only with recallMessageEnable=true (off by "
    "default in Apache RocketMQ 5.x: 'recall failed, operation is forbidden').",
    source="proxy/src/main/java/org/apache/rocketmq/proxy/processor/ProducerProcessor.java")

GRPC_PRODUCER_GROUP = clause(
    "RMQ-GRPC-PRODUCER-GROUP", Level.MUST,
    "A proxy sends a gRPC producer's messages with the topic's name as producer group (header and PGROUP) "
    "and registers the producer under that group, so the broker's transaction check-backs of a topic reach "
    "the gRPC producers publishing to it.",
    source="proxy/src/main/java/org/apache/rocketmq/proxy/grpc/v2/producer/SendMessageActivity.java")
