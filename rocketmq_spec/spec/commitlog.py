"""The CommitLog: every message of a broker, appended as one record after another in fixed-size files.

A record is self-delimiting (TOTALSIZE first) and self-checking (BODYCRC, and TOTALSIZE must equal the
length its variable parts add up to). A file never holds part of a record: when the next record does not
fit, the writer puts an 8-byte BLANK marker whose TOTALSIZE covers the rest of the file and starts the
next file, named after its absolute start offset. Past the last record a file holds zeros.
"""

from __future__ import annotations

from construct import (
    Bytes,
    Const,
    GreedyBytes,
    IfThenElse,
    Int8ub,
    Int16ub,
    Int32sb,
    Int32ub,
    Int64sb,
    PascalString,
    Prefixed,
    Struct,
    Switch,
    this,
)

from rocketmq_spec.spec.clauses import Level, clause
from rocketmq_spec.spec.sysflag import MessageSysFlag

_COMMITLOG = "store/src/main/java/org/apache/rocketmq/store/CommitLog.java"
_DECODER = "common/src/main/java/org/apache/rocketmq/common/message/MessageDecoder.java"

MESSAGE_MAGIC_V1 = 0xDAA320A7
"""4.x records: one-byte topic length."""
MESSAGE_MAGIC_V2 = 0xDAA320AB
"""5.x records for topics longer than 127 bytes: two-byte topic length."""
BLANK_MAGIC = 0xCBD43194
"""End-of-file marker: the rest of the file is unused."""
MESSAGE_MAGICS = (MESSAGE_MAGIC_V1, MESSAGE_MAGIC_V2)

END_FILE_MIN_BLANK_LENGTH = 8
"""A writer always keeps room for the BLANK marker (TOTALSIZE + MAGICCODE)."""
COMMITLOG_FILE_SIZE = 1024 * 1024 * 1024
"""``mappedFileSizeCommitLog`` default; files are pre-allocated (zero-filled) at full size."""
FILE_NAME_DIGITS = 20
MAX_MESSAGE_SIZE = 4 * 1024 * 1024
"""``maxMessageSize``: the broker refuses a message whose body is longer (MESSAGE_ILLEGAL)."""
RECORD_RESERVE = 64 * 1024
"""Room for the rest of a record beside a body of maxMessageSize (``MessageExtEncoder``): a record may be
up to maxMessageSize + 64 KiB long."""
MAX_TOPIC_BYTES_V1 = 127
"""A v1 record stores the topic length as a signed byte."""
MAX_TOPIC_BYTES_V2 = 32767
MAX_PROPERTIES_BYTES = 32767
"""The properties length is a signed short."""

IPV4_HOST_SIZE = 8
IPV6_HOST_SIZE = 20

Host4 = Struct(
    "ip" / Bytes(4) * "IPv4 address",
    "port" / Int32sb * "TCP port",
)
Host6 = Struct(
    "ip" / Bytes(16) * "IPv6 address",
    "port" / Int32sb * "TCP port",
)

CommitLogRecord = Struct(
    "total_size" / Int32sb * "length of the whole record, this field included",
    "magic" / Int32ub * "MESSAGE_MAGIC_V1 (0xDAA320A7) or MESSAGE_MAGIC_V2 (0xDAA320AB)",
    "body_crc" / Int32sb * "CRC-32 of the stored body with the sign bit cleared",
    "queue_id" / Int32sb * "consume queue of the topic this record belongs to",
    "flag" / Int32sb * "application flag, opaque to the broker",
    "queue_offset" / Int64sb * "logical offset in the consume queue (0 for prepared/rollback records)",
    "physical_offset" / Int64sb * "absolute commitlog offset of this record",
    "sys_flag" / Int32sb * "MessageSysFlag bits, transaction type and compression type",
    "born_timestamp" / Int64sb * "producer's send time, ms since the epoch",
    "born_host" / IfThenElse(this.sys_flag & MessageSysFlag.BORNHOST_V6, Host6, Host4)
    * "producer address as the broker saw it; IPv6 when sysFlag has BORNHOST_V6 (0x10)",
    "store_timestamp" / Int64sb * "broker's store time, ms since the epoch",
    "store_host" / IfThenElse(this.sys_flag & MessageSysFlag.STOREHOST_V6, Host6, Host4)
    * "broker address (brokerIP1:listenPort); IPv6 when sysFlag has STOREHOST_V6 (0x20)",
    "reconsume_times" / Int32sb * "times the message was sent back for redelivery",
    "prepared_transaction_offset" / Int64sb
    * "commitlog offset of the half message for a committed transaction record, else 0",
    "body" / Prefixed(Int32sb, GreedyBytes) * "int32 length, then the body as stored (compressed if flagged)",
    "topic" / Switch(this.magic, {MESSAGE_MAGIC_V1: PascalString(Int8ub, "utf8"),
                                  MESSAGE_MAGIC_V2: PascalString(Int16ub, "utf8")})
    * "topic name in UTF-8 after a 1-byte (v1) or 2-byte (v2) length",
    "properties" / PascalString(Int16ub, "utf8") * "int16 length, then the properties string in UTF-8",
)

BlankMarker = Struct(
    "total_size" / Int32sb * "bytes from this marker to the end of the file",
    "magic" / Const(BLANK_MAGIC, Int32ub) * "BLANK_MAGIC (0xCBD43194)",
)

RecordPrefix = Struct(
    "total_size" / Int32sb * "record length, or remaining file length for a BLANK marker",
    "magic" / Int32ub * "tells a record (v1/v2) from a BLANK marker",
)

# Fixed positions of MessageDecoder, valid whatever the host widths (they precede the first host).
MAGIC_POSITION = 4
BODY_CRC_POSITION = 8
QUEUE_ID_POSITION = 12
FLAG_POSITION = 16
QUEUE_OFFSET_POSITION = 20
PHYSICAL_OFFSET_POSITION = 28
SYS_FLAG_POSITION = 36
BORN_TIMESTAMP_POSITION = 40
BORN_HOST_POSITION = 48

FIXED_PART_V4 = 84
"""Bytes before the body length when both hosts are IPv4 (fields TOTALSIZE .. PREPARED OFFSET)."""

RMQ_CL_LAYOUT = clause(
    "RMQ-CL-LAYOUT", Level.MUST,
    "A CommitLog record is TOTALSIZE, MAGICCODE, BODYCRC, QUEUEID, FLAG, QUEUEOFFSET, PHYSICALOFFSET, "
    "SYSFLAG, BORNTIMESTAMP, BORNHOST, STORETIMESTAMP, STOREHOST, RECONSUMETIMES, PREPARED OFFSET, "
    "body, topic and properties, all big-endian.",
    source=f"{_COMMITLOG} (DefaultAppendMessageCallback.doAppend)",
)
RMQ_CL_MAGIC = clause(
    "RMQ-CL-MAGIC", Level.MUST,
    "MAGICCODE is 0xDAA320A7 (v1, 1-byte topic length) or 0xDAA320AB (v2, 2-byte topic length) for a "
    "record and 0xCBD43194 for a BLANK marker; any other value at a record boundary is corruption.",
    source=f"{_COMMITLOG} (checkMessageAndReturnSize)",
)
RMQ_CL_TOTAL_SIZE = clause(
    "RMQ-CL-TOTAL-SIZE", Level.MUST,
    "TOTALSIZE equals the length computed from the host widths, body, topic and properties lengths.",
    source=f"{_COMMITLOG} (checkMessageAndReturnSize, calMsgLength)",
)
RMQ_CL_BODY_CRC_CHECK = clause(
    "RMQ-CL-BODY-CRC-CHECK", Level.MUST,
    "A reader verifying a record recomputes the masked CRC-32 of the stored body and compares it with "
    "BODYCRC.",
    source=f"{_COMMITLOG} (checkMessageAndReturnSize, checkCRCOnRecover)",
)
RMQ_CL_PHYSICAL_OFFSET = clause(
    "RMQ-CL-PHYSICAL-OFFSET", Level.MUST,
    "PHYSICALOFFSET equals the record's absolute position: its file's start offset plus its position in "
    "the file.",
    source=f"{_COMMITLOG} (doAppend: wroteOffset = fileFromOffset + byteBuffer.position())",
)
RMQ_CL_TOPIC_LENGTH = clause(
    "RMQ-CL-TOPIC-LENGTH", Level.MUST,
    "A v1 record's topic is at most 127 UTF-8 bytes (its length is a signed byte); longer topics need v2.",
    source=f"{_COMMITLOG} (MessageExtEncoder); {_DECODER}",
)
RMQ_CL_PROPERTIES_LENGTH = clause(
    "RMQ-CL-PROPERTIES-LENGTH", Level.MUST,
    "The properties field is at most 32767 bytes (signed short length).",
    source=f"{_COMMITLOG} (PROPERTIES_SIZE_EXCEEDED)",
)
RMQ_CL_MAX_MESSAGE = clause(
    "RMQ-CL-MAX-MESSAGE", Level.MUST,
    "A message whose body is longer than maxMessageSize (4 MiB by default), or whose record would be longer "
    "than maxMessageSize + 64 KiB, is refused by the writer.",
    source=f"{_COMMITLOG} (MessageExtEncoder.encode)",
)
RMQ_CL_BLANK = clause(
    "RMQ-CL-BLANK", Level.MUST,
    "When a record plus 8 bytes does not fit in the rest of a file, the writer puts TOTALSIZE = remaining "
    "bytes and MAGICCODE = 0xCBD43194 there and writes the record at the start of the next file; a reader "
    "skips to the next file at a BLANK marker.",
    source=f"{_COMMITLOG} (doAppend END_OF_FILE)",
)
RMQ_CL_NO_SPAN = clause(
    "RMQ-CL-NO-SPAN", Level.MUST,
    "A record never spans two files.",
    source=f"{_COMMITLOG} (doAppend)",
)
RMQ_CL_END_OF_DATA = clause(
    "RMQ-CL-END-OF-DATA", Level.MUST,
    "Past the last record the file holds zero bytes; a reader stops at a zero TOTALSIZE and MAGICCODE.",
    source=f"{_COMMITLOG} (recoverNormally)",
)
RMQ_CL_PREALLOCATED = clause(
    "RMQ-CL-PREALLOCATED", Level.MAY,
    "A running broker may create the next CommitLog file ahead of need, so files wholly of zero bytes can "
    "follow the data end of a running or killed broker's store; they hold no data, and a reader's data "
    "ends before them.",
    source="store/src/main/java/org/apache/rocketmq/store/AllocateMappedFileService.java",
)
RMQ_CL_TORN_TAIL = clause(
    "RMQ-CL-TORN-TAIL", Level.SHOULD,
    "A store ends with a whole record. A crash may leave the last record torn (not a valid record, or a "
    "wrong BODYCRC, with only zero bytes after it): recovery truncates the CommitLog at its start, and a "
    "reader's data ends there.",
    source=f"{_COMMITLOG} (recoverAbnormally, checkMessageAndReturnSize); MappedFileQueue.truncateDirtyFiles",
)
RMQ_CL_FILE_NAME = clause(
    "RMQ-CL-FILE-NAME", Level.MUST,
    "A CommitLog file is named by its absolute start offset in 20 zero-padded decimal digits, and starts "
    "are multiples of the file size.",
    source="store/src/main/java/org/apache/rocketmq/store/MappedFileQueue.java; UtilAll.offset2FileName",
)
RMQ_CL_TRANSACTION_OFFSETS = clause(
    "RMQ-CL-TRANSACTION-OFFSETS", Level.MUST,
    "A committed transaction's record carries transaction type COMMIT (0x8) and the half message's "
    "commitlog offset in PREPARED OFFSET; every other record carries 0 there.",
    source="broker/src/main/java/org/apache/rocketmq/broker/processor/EndTransactionProcessor.java",
)
RMQ_CL_PROPERTIES_ORDER = clause(
    "RMQ-CL-PROPERTIES-ORDER", Level.SHOULD,
    "A broker writes a message's properties in java.util.HashMap iteration order, after adding CLUSTER "
    "and removing WAIT.",
    source=f"{_DECODER} (messageProperties2String); golden store-4x",
)
RMQ_CL_BATCH_PROPERTIES = clause(
    "RMQ-CL-BATCH-PROPERTIES", Level.SHOULD,
    "Each record of a batch keeps the producer's properties string for that message and gets the broker's "
    "U+0002 CLUSTER U+0001 <cluster> U+0002 WAIT U+0001 true appended, so WAIT may appear twice.",
    source="golden store-4x (GoldenTopicB)",
)


def host_size(sys_flag: int, v6_bit: MessageSysFlag) -> int:
    return IPV6_HOST_SIZE if sys_flag & v6_bit else IPV4_HOST_SIZE


def topic_length_size(magic: int) -> int:
    return 2 if magic == MESSAGE_MAGIC_V2 else 1


def record_length(*, sys_flag: int, body_len: int, topic_len: int, properties_len: int,
                  magic: int = MESSAGE_MAGIC_V1) -> int:
    """What TOTALSIZE must be for these variable parts (``calMsgLength``)."""
    hosts = host_size(sys_flag, MessageSysFlag.BORNHOST_V6) + host_size(sys_flag, MessageSysFlag.STOREHOST_V6)
    return (FIXED_PART_V4 - 2 * IPV4_HOST_SIZE + hosts + 4 + body_len + topic_length_size(magic) + topic_len
            + 2 + properties_len)


def offset_file_name(offset: int) -> str:
    """``UtilAll.offset2FileName``, shared by CommitLog and ConsumeQueue files."""
    return f"{offset:0{FILE_NAME_DIGITS}d}"


def is_offset_file_name(name: str) -> bool:
    return len(name) == FILE_NAME_DIGITS and name.isdigit()
