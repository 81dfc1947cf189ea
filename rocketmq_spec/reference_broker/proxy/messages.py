"""A v2 ``Message`` as a remoting message and back, by the rows of ``rocketmq_spec.spec.grpc_mapping``.

Sans-IO: ``outgoing`` validates one message of a SendMessage and returns what the remoting send carries;
``delivered`` builds the v2 message a consumer receives from a stored record.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from google.protobuf import duration_pb2, timestamp_pb2

from rocketmq_spec.codec.grpc.v2 import definition_pb2 as v2
from rocketmq_spec.codec.store.record import MessageRecord
from rocketmq_spec.reference_broker.proxy import validation
from rocketmq_spec.reference_broker.proxy.call import Refusal
from rocketmq_spec.spec.grpc_codes import Code
from rocketmq_spec.spec.grpc_mapping import (
    BORN_HOST,
    BORN_TIMESTAMP,
    DLQ_ORIGIN_MESSAGE_ID,
    DLQ_ORIGIN_TOPIC,
    RESERVED_KEYS_5X,
    SHARDING_KEY,
    TIMER_DELAY_SEC,
    TIMER_DELIVER_MS,
    TRACE_CONTEXT,
)
from rocketmq_spec.spec.grpc_rpcs import MAX_DELAY_MS, MAX_MESSAGE_SIZE
from rocketmq_spec.spec.properties import KEY_SEPARATOR, PropertyKey
from rocketmq_spec.spec.sysflag import MessageSysFlag, TransactionType

TOPIC_MESSAGE_TYPES = {
    "NORMAL": (v2.NORMAL,), "FIFO": (v2.FIFO,), "DELAY": (v2.DELAY,), "TRANSACTION": (v2.TRANSACTION,),
    "MIXED": (v2.NORMAL, v2.FIFO, v2.DELAY, v2.TRANSACTION),
}
"""A topic's ``message.type`` → the accept_message_types of its queues (``RouteActivity``)."""


@dataclass(frozen=True)
class Outgoing:
    """One message as the remoting send carries it."""

    properties: dict[str, str]
    body: bytes
    sys_flag: int
    message_id: str
    born_timestamp: int


def message_type_name(message: v2.Message) -> str:
    """The kind the topic's ``message.type`` must accept (``TopicMessageType.parseFromMessageProperty``)."""
    props = message.system_properties
    if props.message_type == v2.TRANSACTION:
        return "TRANSACTION"
    if props.HasField("delivery_timestamp"):
        return "DELAY"
    if props.message_group:
        return "FIFO"
    return "NORMAL"


UNSPECIFIED = "UNSPECIFIED"
"""The message type of a topic the broker does not have (``LocalMetadataService``)."""


def check_type_of_topic(topic: Any) -> str:
    """A topic config's ``message.type``, UNSPECIFIED for no topic."""
    return UNSPECIFIED if topic is None else str(topic.message_type)


def check_type(topic_type: str, message: v2.Message) -> None:
    """RMQ-GRPC-SEND-TYPE and RMQ-GRPC-SEND-UNKNOWN-TOPIC (``DefaultTopicMessageTypeValidator``): MIXED
    accepts every kind, UNSPECIFIED (no such topic) none."""
    kind = message_type_name(message)
    if topic_type == UNSPECIFIED or (kind != topic_type and topic_type != "MIXED"):
        raise Refusal(Code.MESSAGE_PROPERTY_CONFLICT_WITH_TYPE,
                      f"TopicMessageType validate failed, the expected type is {topic_type}, but actual type "
                      f"is {kind}")


def outgoing(message: v2.Message, producer_group: str, peer: str, now_ms: int) -> Outgoing:
    """RMQ-GRPC-SEND-VALIDATION and the SEND_MAPPING rows (``SendMessageActivity.buildMessage``)."""
    body = message.body
    if not body:
        raise Refusal(Code.MESSAGE_BODY_EMPTY, "message body cannot be empty")
    if len(body) > MAX_MESSAGE_SIZE:
        raise Refusal(Code.MESSAGE_BODY_TOO_LARGE, f"message body cannot exceed the max {MAX_MESSAGE_SIZE}")
    props = message.system_properties
    user = dict(message.user_properties)
    validation.user_properties(user, props.tag, props.keys)
    validation.tag(props.tag)
    validation.keys(props.keys)
    if not props.message_id.strip():
        raise Refusal(Code.ILLEGAL_MESSAGE_ID, "message id cannot be empty")
    properties = dict(user)
    if props.tag:
        properties[PropertyKey.TAGS] = props.tag
    if props.keys:
        properties[PropertyKey.KEYS] = KEY_SEPARATOR.join(props.keys)
    properties[PropertyKey.UNIQ_KEY] = props.message_id
    sys_flag = 0
    if props.body_encoding == v2.GZIP:
        sys_flag |= MessageSysFlag.COMPRESSED
    if props.message_type == v2.TRANSACTION:
        sys_flag |= TransactionType.PREPARED
        properties[PropertyKey.TRANSACTION_PREPARED] = "true"
        if props.HasField("orphaned_transaction_recovery_duration"):
            properties[PropertyKey.CHECK_IMMUNITY_TIME_IN_SECONDS] = str(
                _seconds(props.orphaned_transaction_recovery_duration))
    if props.HasField("delivery_timestamp"):
        deliver_ms = _millis(props.delivery_timestamp)
        if deliver_ms - now_ms > MAX_DELAY_MS:
            raise Refusal(Code.ILLEGAL_DELIVERY_TIME,
                          f"the max delay time of message is too large, max is {MAX_DELAY_MS}")
        properties[TIMER_DELIVER_MS] = str(deliver_ms)
    properties[PropertyKey.RECONSUME_TIME] = str(props.delivery_attempt)
    properties[PropertyKey.PRODUCER_GROUP] = producer_group
    if props.message_group:
        validation.message_group(props.message_group)
        properties[SHARDING_KEY] = props.message_group
    if props.trace_context:
        properties[TRACE_CONTEXT] = props.trace_context
    born_host = props.born_host.strip() or peer
    if born_host:
        properties[BORN_HOST] = born_host
    born_ms = now_ms
    if props.HasField("born_timestamp") and _valid(props.born_timestamp):
        born_ms = props.born_timestamp.ToMilliseconds()
        properties[BORN_TIMESTAMP] = str(born_ms)
    return Outgoing(properties, body, sys_flag, props.message_id, born_ms)


def _valid(value: timestamp_pb2.Timestamp | duration_pb2.Duration) -> bool:
    try:
        value.ToMilliseconds()
    except ValueError:
        return False
    return True


def _millis(value: timestamp_pb2.Timestamp) -> int:
    """``Timestamps.toMillis``: an out-of-range timestamp fails the call (INTERNAL_SERVER_ERROR in Java)."""
    try:
        return int(value.ToMilliseconds())
    except ValueError as exc:
        raise Refusal(Code.INTERNAL_SERVER_ERROR, f"Timestamp is not valid: {exc}") from None


def _seconds(value: duration_pb2.Duration) -> int:
    """``Durations.toSeconds``, failing as ``_millis`` does for an out-of-range duration."""
    if not _valid(value):
        raise Refusal(Code.INTERNAL_SERVER_ERROR, "Duration is not valid")
    return int(value.seconds)


def _timestamp(ms: int) -> timestamp_pb2.Timestamp:
    stamp = timestamp_pb2.Timestamp()
    stamp.FromMilliseconds(ms)
    return stamp


def delivered(record: MessageRecord, topic: str, *, receipt_handle: str | None = None,
              reconsume_times: int | None = None) -> v2.Message:
    """The DELIVERY_MAPPING rows (``GrpcConverter.buildMessage``) for one stored message: the body as stored
    (GZIP encoding when the record is compressed), an MD5 digest, every property outside the reserved set
    as a user property."""
    properties: Mapping[str, str] = record.properties
    body = record.body
    attempts = record.reconsume_times if reconsume_times is None else reconsume_times
    system = v2.SystemProperties(
        message_id=properties.get(PropertyKey.UNIQ_KEY) or record.offset_msg_id,
        body_digest=v2.Digest(type=v2.MD5, checksum=hashlib.md5(body).hexdigest().upper()),
        body_encoding=v2.GZIP if record.sys_flag & MessageSysFlag.COMPRESSED else v2.IDENTITY,
        message_type=_delivered_type(properties),
        born_timestamp=_timestamp(record.born_timestamp),
        born_host=properties.get(BORN_HOST) or str(record.born_host),
        store_timestamp=_timestamp(record.store_timestamp),
        store_host=str(record.store_host),
        queue_id=record.queue_id,
        queue_offset=record.queue_offset,
        delivery_attempt=attempts + 1,
    )
    if PropertyKey.TAGS in properties:
        system.tag = properties[PropertyKey.TAGS]
    if PropertyKey.KEYS in properties:
        system.keys.extend(properties[PropertyKey.KEYS].split(KEY_SEPARATOR))
    if TIMER_DELAY_SEC in properties and properties[TIMER_DELAY_SEC].isdigit():
        system.delivery_timestamp.CopyFrom(_timestamp(int(time.time() * 1000)
                                                      + int(properties[TIMER_DELAY_SEC]) * 1000))
    elif TIMER_DELIVER_MS in properties and properties[TIMER_DELIVER_MS].isdigit():
        system.delivery_timestamp.CopyFrom(_timestamp(int(properties[TIMER_DELIVER_MS])))
    if SHARDING_KEY in properties:
        system.message_group = properties[SHARDING_KEY]
    if receipt_handle is not None:
        system.receipt_handle = receipt_handle
    if TRACE_CONTEXT in properties:
        system.trace_context = properties[TRACE_CONTEXT]
    if DLQ_ORIGIN_TOPIC in properties and DLQ_ORIGIN_MESSAGE_ID in properties:
        system.dead_letter_queue.CopyFrom(v2.DeadLetterQueue(
            topic=properties[DLQ_ORIGIN_TOPIC], message_id=properties[DLQ_ORIGIN_MESSAGE_ID]))
    user = {k: v for k, v in properties.items() if k not in RESERVED_KEYS_5X}
    return v2.Message(topic=v2.Resource(name=topic), user_properties=user, system_properties=system,
                      body=body)


def _delivered_type(properties: Mapping[str, str]) -> v2.MessageType:
    if properties.get(PropertyKey.TRANSACTION_PREPARED) == "true":
        return v2.TRANSACTION
    if PropertyKey.DELAY in properties or TIMER_DELIVER_MS in properties or TIMER_DELAY_SEC in properties:
        return v2.DELAY
    if SHARDING_KEY in properties:
        return v2.FIFO
    return v2.NORMAL
