"""The message properties string: ``name\\u0001value\\u0002name\\u0001value`` and its reserved keys.

The same string travels in the SEND header (``properties``) and in the CommitLog PROPERTIES field, so one
encoder and one parser serve both. Java's parser silently drops malformed pairs instead of failing, and
a reader that wants to agree with the broker on what a message carries must drop exactly the same ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from rocketmq_spec.spec.clauses import Level, clause
from rocketmq_spec.spec.hashing import java_string_hash
from rocketmq_spec.spec.releases import Releases, since

NAME_VALUE_SEPARATOR = "\u0001"
PROPERTY_SEPARATOR = "\u0002"
KEY_SEPARATOR = " "
"""Separates the keys inside the KEYS property."""

RMQ_PROP_ENCODING = clause(
    "RMQ-PROP-ENCODING", Level.MUST,
    "Properties are encoded as name U+0001 value pairs joined by U+0002, with no trailing U+0002; pairs "
    "whose value is null are left out and an empty map encodes as the empty string.",
    source="common/src/main/java/org/apache/rocketmq/common/message/MessageDecoder.java "
           "(messageProperties2String)",
)
RMQ_PROP_PARSING = clause(
    "RMQ-PROP-PARSING", Level.MUST,
    "A reader splits on U+0002 and keeps a segment only if it has a non-empty name before its first "
    "U+0001 and a non-empty value after it; other segments are skipped without error and a repeated name "
    "keeps its last value.",
    source="common/src/main/java/org/apache/rocketmq/common/message/MessageDecoder.java "
           "(string2messageProperties)",
)
RMQ_PROP_MAX_SIZE = clause(
    "RMQ-PROP-MAX-SIZE", Level.MUST,
    "The UTF-8 encoded properties string of a stored message is at most 32767 bytes.",
    source="store/src/main/java/org/apache/rocketmq/store/CommitLog.java (PROPERTIES_SIZE_EXCEEDED)",
)
RMQ_PROP_KEYS = clause(
    "RMQ-PROP-KEYS", Level.MUST,
    "The KEYS property holds a message's keys joined by single spaces; empty tokens are not keys.",
    source="common/src/main/java/org/apache/rocketmq/common/message/Message.java (setKeys)",
)


class PropertyKey:
    """Reserved property names of 4.9.8 (``MessageConst``)."""

    KEYS = "KEYS"
    TAGS = "TAGS"
    WAIT = "WAIT"
    DELAY = "DELAY"
    RETRY_TOPIC = "RETRY_TOPIC"
    REAL_TOPIC = "REAL_TOPIC"
    REAL_QUEUE_ID = "REAL_QID"
    TRANSACTION_PREPARED = "TRAN_MSG"
    PRODUCER_GROUP = "PGROUP"
    MIN_OFFSET = "MIN_OFFSET"
    MAX_OFFSET = "MAX_OFFSET"
    BUYER_ID = "BUYER_ID"
    ORIGIN_MESSAGE_ID = "ORIGIN_MESSAGE_ID"
    TRANSFER_FLAG = "TRANSFER_FLAG"
    CORRECTION_FLAG = "CORRECTION_FLAG"
    MQ2_FLAG = "MQ2_FLAG"
    RECONSUME_TIME = "RECONSUME_TIME"
    MSG_REGION = "MSG_REGION"
    TRACE_SWITCH = "TRACE_ON"
    UNIQ_KEY = "UNIQ_KEY"
    MAX_RECONSUME_TIMES = "MAX_RECONSUME_TIMES"
    CONSUME_START_TIMESTAMP = "CONSUME_START_TIME"
    TRANSACTION_PREPARED_QUEUE_OFFSET = "TRAN_PREPARED_QUEUE_OFFSET"
    TRANSACTION_CHECK_TIMES = "TRANSACTION_CHECK_TIMES"
    CHECK_IMMUNITY_TIME_IN_SECONDS = "CHECK_IMMUNITY_TIME_IN_SECONDS"
    INSTANCE_ID = "INSTANCE_ID"
    CORRELATION_ID = "CORRELATION_ID"
    MESSAGE_REPLY_TO_CLIENT = "REPLY_TO_CLIENT"
    MESSAGE_TTL = "TTL"
    REPLY_MESSAGE_ARRIVE_TIME = "ARRIVE_TIME"
    PUSH_REPLY_TIME = "PUSH_REPLY_TIME"
    CLUSTER = "CLUSTER"
    MESSAGE_TYPE = "MSG_TYPE"
    INNER_MULTI_DISPATCH = "INNER_MULTI_DISPATCH"
    INNER_MULTI_QUEUE_OFFSET = "INNER_MULTI_QUEUE_OFFSET"
    # 5.x (``PROPERTIES_SINCE_5``)
    POP_CK = "POP_CK"
    POP_CK_OFFSET = "POP_CK_OFFSET"
    FIRST_POP_TIME = "1ST_POP_TIME"
    TIMER_DELIVER_MS = "TIMER_DELIVER_MS"
    TIMER_DELAY_SEC = "TIMER_DELAY_SEC"
    TIMER_DELAY_MS = "TIMER_DELAY_MS"
    TIMER_ENQUEUE_MS = "TIMER_ENQUEUE_MS"
    TIMER_DEQUEUE_MS = "TIMER_DEQUEUE_MS"
    TIMER_ROLL_TIMES = "TIMER_ROLL_TIMES"
    TIMER_OUT_MS = "TIMER_OUT_MS"
    TIMER_DEL_UNIQKEY = "TIMER_DEL_UNIQKEY"
    TIMER_DELAY_LEVEL = "TIMER_DELAY_LEVEL"
    TRANSACTION_ID = "__transactionId__"
    SHARDING_KEY = "__SHARDINGKEY"
    BORN_HOST = "__BORNHOST"
    BORN_TIMESTAMP = "BORN_TIMESTAMP"
    CRC32 = "__CRC32#"
    DLQ_ORIGIN_TOPIC = "DLQ_ORIGIN_TOPIC"
    DLQ_ORIGIN_MESSAGE_ID = "DLQ_ORIGIN_MESSAGE_ID"


@dataclass(frozen=True)
class PropertyName:
    key: str
    java_name: str
    """The ``MessageConst`` constant."""
    releases: Releases
    meaning: str


PROPERTIES_SINCE_5: tuple[PropertyName, ...] = (
    PropertyName("POP_CK", "PROPERTY_POP_CK", since("5.0.0"),
                 "a popped message's handle: the extraInfo its ACK and CHANGE_MESSAGE_INVISIBLETIME carry"),
    PropertyName("POP_CK_OFFSET", "PROPERTY_POP_CK_OFFSET", since("5.0.0"),
                 "offset of the checkpoint record in the revive queue"),
    PropertyName("1ST_POP_TIME", "PROPERTY_FIRST_POP_TIME", since("5.0.0"),
                 "when a revived message was first popped, ms"),
    PropertyName("TIMER_DELIVER_MS", "PROPERTY_TIMER_DELIVER_MS", since("5.0.0"),
                 "timer message: absolute delivery time, ms since the epoch"),
    PropertyName("TIMER_DELAY_SEC", "PROPERTY_TIMER_DELAY_SEC", since("5.0.0"),
                 "timer message: delay from the store time, seconds"),
    PropertyName("TIMER_DELAY_MS", "PROPERTY_TIMER_DELAY_MS", since("5.0.0"),
                 "timer message: delay from the store time, ms"),
    PropertyName("TIMER_OUT_MS", "PROPERTY_TIMER_OUT_MS", since("5.0.0"),
                 "the delivery time the timer worked out (written on the parked copy)"),
    PropertyName("TIMER_ENQUEUE_MS", "PROPERTY_TIMER_ENQUEUE_MS", since("5.0.0"),
                 "when the timer took the message in (written on the delivered copy)"),
    PropertyName("TIMER_DEQUEUE_MS", "PROPERTY_TIMER_DEQUEUE_MS", since("5.0.0"),
                 "when the timer let the message out (written on the delivered copy)"),
    PropertyName("TIMER_ROLL_TIMES", "PROPERTY_TIMER_ROLL_TIMES", since("5.0.0"),
                 "times a message beyond the wheel's window was rolled over"),
    PropertyName("TIMER_DEL_UNIQKEY", "PROPERTY_TIMER_DEL_UNIQKEY", since("5.0.0"),
                 "marks a deletion of a pending timer message (a recall)"),
    PropertyName("TIMER_DELAY_LEVEL", "PROPERTY_TIMER_DELAY_LEVEL", since("5.0.0"),
                 "delay level a message had when timerInterceptDelayLevel moved it to the wheel"),
    PropertyName("__transactionId__", "PROPERTY_TRANSACTION_ID", since("5.0.0"), "transaction id"),
    PropertyName("__SHARDINGKEY", "PROPERTY_SHARDING_KEY", since("5.0.0"), "ordered-message sharding key"),
    PropertyName("__BORNHOST", "PROPERTY_BORN_HOST", since("5.0.0"), "born host as text"),
    PropertyName("BORN_TIMESTAMP", "PROPERTY_BORN_TIMESTAMP", since("5.0.0"), "born time as text"),
    PropertyName("DLQ_ORIGIN_TOPIC", "PROPERTY_DLQ_ORIGIN_TOPIC", since("5.1.0"),
                 "topic a dead-lettered message came from"),
    PropertyName("DLQ_ORIGIN_MESSAGE_ID", "PROPERTY_DLQ_ORIGIN_MESSAGE_ID", since("5.1.0"),
                 "message id a dead-lettered message had"),
    PropertyName("__CRC32#", "PROPERTY_CRC32", since("5.2.0"),
                 "CRC32 of the body, written as the last property when the store is asked to"),
)
"""5.x properties (``MessageConst``), by the releases that declare them; the 4.9.x line declares none."""

RESERVED_KEYS: frozenset[str] = frozenset(
    value for name, value in vars(PropertyKey).items() if not name.startswith("_")
)
SYSTEM_KEYS: frozenset[str] = RESERVED_KEYS - {row.key for row in PROPERTIES_SINCE_5} - {
    PropertyKey.TRANSACTION_PREPARED_QUEUE_OFFSET,
    PropertyKey.TRANSACTION_CHECK_TIMES,
    PropertyKey.CHECK_IMMUNITY_TIME_IN_SECONDS,
    PropertyKey.INNER_MULTI_DISPATCH,
}
"""4.9.8's ``MessageConst.STRING_HASH_SET``: names a producer may not set through ``putUserProperty``."""


def encode_properties(properties: Mapping[str, str | None], order: Iterable[str] | None = None) -> str:
    """Encode in the mapping's own order, or in ``order`` (its names, each once); use
    :func:`java_hashmap_order` for the order that matches Java's bytes."""
    names = properties if order is None else order
    return PROPERTY_SEPARATOR.join([f"{name}{NAME_VALUE_SEPARATOR}{value}" for name in names
                                    if (value := properties[name]) is not None])


def parse_properties(text: str) -> dict[str, str]:
    """Parse with Java's acceptance rules (see RMQ-PROP-PARSING); never raises."""
    result: dict[str, str] = {}
    for segment in text.split(PROPERTY_SEPARATOR):
        name, sep, value = segment.partition(NAME_VALUE_SEPARATOR)
        if sep and name and value:
            result.pop(name, None)
            result[name] = value
    return result


def round_trips(value: str) -> bool:
    """True when ``value`` comes back unchanged, as name or value, from :func:`parse_properties` of any
    string :func:`encode_properties` writes with it: not empty and free of both separators."""
    return bool(value) and NAME_VALUE_SEPARATOR not in value and PROPERTY_SEPARATOR not in value


def split_keys(keys: str | None) -> list[str]:
    """The individual keys of a KEYS property value."""
    return [k for k in (keys or "").split(KEY_SEPARATOR) if k]


def _java_spread_hash(name: str) -> int:
    h = java_string_hash(name) & 0xFFFFFFFF
    return h ^ (h >> 16)


JAVA_HASHMAP_INITIAL_CAPACITY = 16
JAVA_HASHMAP_LOAD_FACTOR = 0.75


def java_hashmap_order(names: Iterable[str], peak_size: int | None = None,
                       initial_capacity: int = JAVA_HASHMAP_INITIAL_CAPACITY) -> list[str]:
    """The iteration order of a ``java.util.HashMap`` holding ``names``, inserted in the given order.

    Java writes the properties string by iterating a HashMap, so the stored bytes follow bucket order:
    buckets by ``(h ^ h>>>16) & (capacity-1)``, insertion order inside a bucket. The capacity only grows
    (16, doubled whenever size exceeds 3/4 of it), so it depends on the largest size the map ever had,
    ``peak_size``, which defaults to the number of names, and on the capacity the map was created with
    (``new HashMap<>(initial_capacity)``, a power of two). Buckets that Java turns into trees (8 or more
    colliding names) are not modelled; property maps never get there.
    """
    ordered = list(names)
    size = max(peak_size or 0, len(ordered))
    capacity = initial_capacity
    while size > capacity * JAVA_HASHMAP_LOAD_FACTOR:
        capacity *= 2
    return sorted(ordered, key=lambda name: _java_spread_hash(name) & (capacity - 1))
