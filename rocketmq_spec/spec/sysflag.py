"""Bit fields carried in store records and requests: MessageSysFlag, PullSysFlag, PermName, TopicSysFlag
(and ForbiddenType, the reason code beside a refused pull).

MessageSysFlag packs three independent things into one int: single-bit flags, a 2-bit transaction type
(bits 2-3) and, from 4.9.4 on, a 3-bit compression type (bits 8-10). They are modelled separately so that
``flag & mask`` arithmetic is written once, here.
"""

from __future__ import annotations

import enum

from rocketmq_spec.spec.clauses import Level, clause
from rocketmq_spec.spec.errors import SpecViolation


class MessageSysFlag(enum.IntFlag):
    """Single-bit flags of a CommitLog record's SYSFLAG field."""

    COMPRESSED = 0x1
    MULTI_TAGS = 0x2
    BORNHOST_V6 = 0x10
    STOREHOST_V6 = 0x20
    NEED_UNWRAP = 0x40
    INNER_BATCH = 0x80


class TransactionType(enum.IntEnum):
    """The transaction-type field, bits 2-3 of SYSFLAG."""

    NOT_TYPE = 0x0
    PREPARED = 0x4
    COMMIT = 0x8
    ROLLBACK = 0xC


TRANSACTION_MASK = 0xC


class CompressionType(enum.IntEnum):
    """The compression-type field, bits 8-10 of SYSFLAG (value shown unshifted)."""

    LZ4 = 1
    ZSTD = 2
    ZLIB = 3


COMPRESSION_SHIFT = 8
COMPRESSION_MASK = 0x700

RMQ_FLAG_TRANSACTION = clause(
    "RMQ-FLAG-TRANSACTION", Level.MUST,
    "Bits 2-3 of SYSFLAG hold the transaction type: 0 not transactional, 4 prepared (half), 8 commit, "
    "12 rollback.",
    source="common/src/main/java/org/apache/rocketmq/common/sysflag/MessageSysFlag.java",
)
RMQ_FLAG_COMPRESSION = clause(
    "RMQ-FLAG-COMPRESSION", Level.MUST,
    "When COMPRESSED (0x1) is set, bits 8-10 of SYSFLAG name the algorithm: 1 LZ4, 2 ZSTD, 3 ZLIB, and 0 "
    "means ZLIB for records written before 4.9.4; any other value is an error.",
    source="common/src/main/java/org/apache/rocketmq/common/compression/CompressionType.java",
)
RMQ_FLAG_HOST_V6 = clause(
    "RMQ-FLAG-HOST-V6", Level.MUST,
    "SYSFLAG bit 0x10 makes BORNHOST a 20-byte IPv6 host and bit 0x20 does the same for STOREHOSTADDRESS.",
    source="common/src/main/java/org/apache/rocketmq/common/sysflag/MessageSysFlag.java",
)


def transaction_type(sys_flag: int) -> TransactionType:
    return TransactionType(sys_flag & TRANSACTION_MASK)


def with_transaction_type(sys_flag: int, kind: TransactionType) -> int:
    """``MessageSysFlag.resetTransactionValue``."""
    return (sys_flag & ~TRANSACTION_MASK) | int(kind)


def compression_type(sys_flag: int) -> CompressionType | None:
    """The algorithm of a compressed body, or None when COMPRESSED is not set.

    Type 0 is ZLIB because bodies from 4.9.0-4.9.3 producers carry no type bits and were always zlib.
    """
    if not sys_flag & MessageSysFlag.COMPRESSED:
        return None
    value = (sys_flag & COMPRESSION_MASK) >> COMPRESSION_SHIFT
    if value == 0:
        return CompressionType.ZLIB
    try:
        return CompressionType(value)
    except ValueError:
        raise SpecViolation("unknown compression type in sysFlag", expected=[0, 1, 2, 3], seen=value,
                            clause=RMQ_FLAG_COMPRESSION.id) from None


def with_compression(sys_flag: int, kind: CompressionType) -> int:
    """Mark a body as compressed with ``kind`` the way the producer does (COMPRESSED | type << 8)."""
    return (sys_flag & ~COMPRESSION_MASK) | MessageSysFlag.COMPRESSED | (int(kind) << COMPRESSION_SHIFT)


class PullSysFlag(enum.IntFlag):
    """The ``sysFlag`` of a PULL_MESSAGE request header."""

    COMMIT_OFFSET = 0x1
    SUSPEND = 0x2
    SUBSCRIPTION = 0x4
    CLASS_FILTER = 0x8
    LITE_PULL_MESSAGE = 0x10


class ForbiddenType(enum.IntEnum):
    """``forbiddenType`` of a 5.x pull answered 16 NO_PERMISSION: which setting forbade it."""

    BROKER_FORBIDDEN = 1
    GROUP_FORBIDDEN = 2
    TOPIC_FORBIDDEN = 3
    BROADCASTING_DISABLE_FORBIDDEN = 4
    SUBSCRIPTION_FORBIDDEN = 5


class PermName(enum.IntFlag):
    """Topic and broker permissions (``perm`` in topic configs and route data)."""

    INHERIT = 1
    WRITE = 2
    READ = 4
    PRIORITY = 8


PERM_READ_WRITE = PermName.READ | PermName.WRITE


def perm_to_string(perm: int) -> str:
    """``PermName.perm2String``: three positions R, W and X (inherit), '-' when absent."""
    return "".join(
        letter if perm & bit else "-"
        for letter, bit in (("R", PermName.READ), ("W", PermName.WRITE), ("X", PermName.INHERIT))
    )


class TopicSysFlag(enum.IntFlag):
    """``topicSysFlag`` of a topic config (unit-mode markers)."""

    UNIT = 0x1
    UNIT_SUB = 0x2
