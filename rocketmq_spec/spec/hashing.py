"""The store's three hash functions: Java ``String.hashCode``, masked CRC32 and the index key hash.

Consume-queue tag codes and IndexFile slots are computed by the broker with Java's string hash, so a
reader that wants to filter by tag or find a key must reproduce it bit for bit, including the 32-bit
overflow and the fact that it runs over UTF-16 code units (a character outside the BMP counts twice).
"""

from __future__ import annotations

import zlib

from rocketmq_spec.spec.clauses import Level, clause

INT32_MIN = -(2**31)

RMQ_CL_BODY_CRC = clause(
    "RMQ-CL-BODY-CRC", Level.MUST,
    "BODYCRC is the CRC-32 (ISO-HDLC, as zlib) of the body bytes as stored, with the sign bit cleared "
    "(crc & 0x7FFFFFFF).",
    source="common/src/main/java/org/apache/rocketmq/common/UtilAll.java (crc32)",
)
RMQ_CQ_TAGS_CODE = clause(
    "RMQ-CQ-TAGS-CODE", Level.MUST,
    "The tags code of an ordinary message is the Java String.hashCode of its TAGS property, sign-extended "
    "to 64 bits, and 0 when the message has no tags.",
    source="store/src/main/java/org/apache/rocketmq/store/MessageExtBrokerInner.java (tagsString2tagsCode)",
)
RMQ_IDX_KEY_HASH = clause(
    "RMQ-IDX-KEY-HASH", Level.MUST,
    "The index key hash is abs(String.hashCode(k)) of the index key string k (RMQ-IDX-KEYS: topic + '#' + "
    "key, or from 5.4.0 topic + '#T#' + TAGS), and 0 when the hash is Integer.MIN_VALUE.",
    source="store/src/main/java/org/apache/rocketmq/store/index/IndexFile.java (indexKeyHashMethod)",
)


def to_int32(value: int) -> int:
    """Wrap an integer to Java ``int`` (two's complement, 32 bits)."""
    value &= 0xFFFFFFFF
    return value - 0x1_0000_0000 if value & 0x8000_0000 else value


def java_string_hash(text: str) -> int:
    """Java ``String.hashCode``: ``h = 31*h + c`` over UTF-16 code units, wrapping at 32 bits."""
    units = text.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + ((units[i] << 8) | units[i + 1])) & 0xFFFFFFFF
    return to_int32(h)


def masked_crc32(data: bytes) -> int:
    """``UtilAll.crc32``: the sign bit is cleared so the value fits a non-negative Java int."""
    return zlib.crc32(data) & 0x7FFFFFFF


def index_key_hash(key: str) -> int:
    """``IndexFile.indexKeyHashMethod``: ``abs`` overflows for MIN_VALUE, which Java then maps to 0."""
    h = java_string_hash(key)
    return 0 if h == INT32_MIN else abs(h)


def tags_code(tags: str | None) -> int:
    """The consume-queue tags code of an ordinary (non-delayed) message."""
    return java_string_hash(tags) if tags else 0


_LCG_MULTIPLIER = 2862933555777941757
_MASK64 = (1 << 64) - 1


def guava_consistent_hash(value: int, buckets: int) -> int:
    """Guava's ``Hashing.consistentHash(long, int)``: a jump through buckets driven by a 64-bit linear
    congruential generator seeded with ``value``. Apache's proxy picks a FIFO message's queue with it
    (``consistentHash(messageGroup.hashCode(), writableQueues)``)."""
    if buckets <= 0:
        raise ValueError(f"buckets must be positive: {buckets}")
    state = value & _MASK64
    candidate = 0
    while True:
        state = (_LCG_MULTIPLIER * state + 1) & _MASK64
        next_double = ((state >> 33) + 1) / float(1 << 31)  # state >>> 33 has 31 bits: a positive int
        jump = int((candidate + 1) / next_double)
        if 0 <= jump < buckets:
            candidate = jump
        else:
            return candidate
