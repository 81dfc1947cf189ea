"""Message IDs: the broker's offsetMsgId (store host + commitlog offset) and the producer's UNIQ_KEY.

Both are raw bytes rendered as upper-case hex. The offsetMsgId is decodable to a physical position, which
is how VIEW_MESSAGE_BY_ID finds a record; UNIQ_KEY is opaque to the broker but indexed, so its layout
matters only to tools that want the producer's IP, pid or send time back.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from construct import Bytes, Int16ub, Int32sb, Int64sb, Struct

from rocketmq_spec.spec.clauses import Level, clause
from rocketmq_spec.spec.errors import SpecViolation

IPV4_LEN = 4
IPV6_LEN = 16

OFFSET_MSG_ID_V4 = Struct(
    "ip" / Bytes(IPV4_LEN) * "store host IPv4 address",
    "port" / Int32sb * "store host port",
    "offset" / Int64sb * "commitlog physical offset of the record",
)
OFFSET_MSG_ID_V6 = Struct(
    "ip" / Bytes(IPV6_LEN) * "store host IPv6 address (STOREHOSTADDRESS_V6_FLAG set)",
    "port" / Int32sb * "store host port",
    "offset" / Int64sb * "commitlog physical offset of the record",
)
OFFSET_MSG_ID_V4_HEX_LEN = 2 * OFFSET_MSG_ID_V4.sizeof()
OFFSET_MSG_ID_V6_HEX_LEN = 2 * OFFSET_MSG_ID_V6.sizeof()

UNIQ_KEY_TAIL = Struct(
    "pid" / Int16ub * "low 16 bits of the producer process id",
    "class_loader_hash" / Int32sb * "hashCode of the producer's class loader",
    "time_diff" / Int32sb * "milliseconds since the start of the producer's local month, cast to int "
                            "(RMQ-MSGID-UNIQ-TIME)",
    "counter" / Int16ub * "low 16 bits of a per-process counter",
)

RMQ_MSGID_OFFSET = clause(
    "RMQ-MSGID-OFFSET", Level.MUST,
    "An offsetMsgId is the upper-case hex of store IP (4 or 16 bytes), store port (int32) and commitlog "
    "offset (int64): 32 hex characters for IPv4, 56 for IPv6.",
    source="common/src/main/java/org/apache/rocketmq/common/message/MessageDecoder.java (createMessageId)",
)
RMQ_MSGID_DECODE = clause(
    "RMQ-MSGID-DECODE", Level.MUST,
    "A reader takes a 32-character offsetMsgId as IPv4 and any other length as IPv6.",
    source="common/src/main/java/org/apache/rocketmq/common/message/MessageDecoder.java (decodeMessageId)",
)
RMQ_MSGID_UNIQ_KEY = clause(
    "RMQ-MSGID-UNIQ-KEY", Level.SHOULD,
    "A UNIQ_KEY is the upper-case hex of producer IP (4 or 16 bytes), pid (2), class-loader hash (4), "
    "milliseconds into the month (4) and counter (2).",
    source="common/src/main/java/org/apache/rocketmq/common/message/MessageClientIDSetter.java",
)

RMQ_MSGID_UNIQ_TIME = clause(
    "RMQ-MSGID-UNIQ-TIME", Level.SHOULD,
    "A UNIQ_KEY's time field is (int)(now - start of the local month) in milliseconds: past 2^31 ms (the "
    "25th day) it wraps negative, and a difference in (-1000000, 0), a clock stepped back, is written as 0.",
    source="common/src/main/java/org/apache/rocketmq/common/message/MessageClientIDSetter.java",
)

_CLOCK_STEP_BACK_MS = 1_000_000
"""How far back the clock may step before the Java client stops clamping the difference to 0."""


def uniq_key_time_diff(now_ms: int, month_start_ms: int) -> int:
    """The time field as the Java client writes it: a month holds more milliseconds than an int, and the
    client casts rather than checks, so late in a month the field is negative and decoders must accept it."""
    diff = (now_ms - month_start_ms + 2**31) % 2**32 - 2**31
    return 0 if -_CLOCK_STEP_BACK_MS < diff < 0 else diff


@dataclass(frozen=True)
class OffsetMsgId:
    host: str
    port: int
    offset: int


def encode_offset_msg_id(host: str, port: int, offset: int) -> str:
    """The ID the broker hands back for a stored record; the IP version follows the address."""
    ip = ipaddress.ip_address(host)
    schema = OFFSET_MSG_ID_V6 if ip.version == 6 else OFFSET_MSG_ID_V4
    return schema.build({"ip": ip.packed, "port": port, "offset": offset}).hex().upper()


def _unhex(text: str, clause_id: str) -> bytes:
    try:
        return bytes.fromhex(text)
    except ValueError:
        raise SpecViolation("message id is not hex", expected="hex digits", seen=text,
                            clause=clause_id) from None


def decode_offset_msg_id(text: str) -> OffsetMsgId:
    if len(text) not in (OFFSET_MSG_ID_V4_HEX_LEN, OFFSET_MSG_ID_V6_HEX_LEN):
        raise SpecViolation("offsetMsgId has the wrong length",
                            expected=[OFFSET_MSG_ID_V4_HEX_LEN, OFFSET_MSG_ID_V6_HEX_LEN], seen=len(text),
                            clause=RMQ_MSGID_DECODE.id)
    schema = OFFSET_MSG_ID_V4 if len(text) == OFFSET_MSG_ID_V4_HEX_LEN else OFFSET_MSG_ID_V6
    parsed = schema.parse(_unhex(text, RMQ_MSGID_DECODE.id))
    return OffsetMsgId(str(ipaddress.ip_address(parsed.ip)), parsed.port, parsed.offset)


@dataclass(frozen=True)
class UniqKey:
    ip: str
    pid: int
    class_loader_hash: int
    time_diff_ms: int
    """Milliseconds between the start of the producer's local month and the send."""
    counter: int


UNIQ_KEY_V4_HEX_LEN = 2 * (IPV4_LEN + UNIQ_KEY_TAIL.sizeof())
UNIQ_KEY_V6_HEX_LEN = 2 * (IPV6_LEN + UNIQ_KEY_TAIL.sizeof())


def decode_uniq_key(text: str) -> UniqKey:
    if len(text) not in (UNIQ_KEY_V4_HEX_LEN, UNIQ_KEY_V6_HEX_LEN):
        raise SpecViolation("UNIQ_KEY has the wrong length",
                            expected=[UNIQ_KEY_V4_HEX_LEN, UNIQ_KEY_V6_HEX_LEN], seen=len(text),
                            clause=RMQ_MSGID_UNIQ_KEY.id)
    raw = _unhex(text, RMQ_MSGID_UNIQ_KEY.id)
    ip_len = IPV4_LEN if len(text) == UNIQ_KEY_V4_HEX_LEN else IPV6_LEN
    tail = UNIQ_KEY_TAIL.parse(raw[ip_len:])
    return UniqKey(str(ipaddress.ip_address(raw[:ip_len])), tail.pid, tail.class_loader_hash, tail.time_diff,
                   tail.counter)


def encode_uniq_key(key: UniqKey) -> str:
    tail = UNIQ_KEY_TAIL.build({"pid": key.pid, "class_loader_hash": key.class_loader_hash,
                                "time_diff": key.time_diff_ms, "counter": key.counter})
    return (ipaddress.ip_address(key.ip).packed + tail).hex().upper()
