"""The ROCKETMQ binary header (serialize type 1): a fixed 21-byte part, the remark, the extFields map.

Every string is a signed length followed by UTF-8 bytes, and a zero length stands for null, so an empty
remark or an empty map value cannot be told apart from an absent one. Lengths are judged against the
header length before anything is read, which is what keeps a hostile peer from making a receiver allocate
more than the frame it already buffered. Parse with ``RocketMQHeader.parse(data, header_length=len(data))``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from construct import (
    Adapter,
    Construct,
    GreedyBytes,
    Int8ub,
    Int16sb,
    Int32sb,
    Prefixed,
    Struct,
)
from construct.core import stream_iseof

from rocketmq_spec.spec.clauses import Level, clause
from rocketmq_spec.spec.errors import HeaderError

_SOURCE = "remoting/src/main/java/org/apache/rocketmq/remoting/protocol/RocketMQSerializable.java"

FIXED_PART_SIZE = 21
"""code 2 + language 1 + version 2 + opaque 4 + flag 4 + remark length 4 + extFields length 4."""

INT16_RANGE = range(-(1 << 15), 1 << 15)

HDR_FIXED_PART = clause(
    "RMQ-HDR-BIN-FIXED", Level.MUST,
    "A ROCKETMQ header starts with code int16, language byte, version int16, opaque int32, flag int32: "
    "with the two length words it is 21 bytes when remark and extFields are absent.",
    source=_SOURCE)
HDR_CODE_WIDTH = clause(
    "RMQ-HDR-BIN-CODE-WIDTH", Level.MUST,
    "code and version are written as signed 16-bit values; a value outside int16 cannot be encoded.",
    source=_SOURCE)
HDR_EMPTY_IS_NULL = clause(
    "RMQ-HDR-BIN-EMPTY-NULL", Level.MUST,
    "A string of length 0 (remark, map key or value) decodes as null; an encoder writes null as length 0 "
    "and skips map entries whose key or value is null.",
    source=_SOURCE)
HDR_LENGTH_BOUND = clause(
    "RMQ-HDR-BIN-LENGTH-BOUND", Level.MUST,
    "The remark length, the extFields length and every map key and value length are non-negative and "
    "not greater than the header length; otherwise the header is undecodable.",
    source=_SOURCE)
HDR_TEXT_UTF8 = clause(
    "RMQ-HDR-BIN-UTF8", Level.MUST,
    "remark, map keys and map values are UTF-8.",
    source=_SOURCE)
HDR_MAP_ENTRY = clause(
    "RMQ-HDR-BIN-MAP-ENTRY", Level.MUST,
    "The extFields block is a sequence of entries, each int16 key length, key, int32 value length, "
    "value, that exactly fills the block; a block of length 0 decodes as a null map.",
    source=_SOURCE)


class _Checked(Adapter):
    """Runs a rule on a value in both directions, so schema violations surface as typed errors."""

    def __init__(self, subcon: Construct, rule: Callable[[int, Any], None]) -> None:
        super().__init__(subcon)
        self.rule = rule

    def _decode(self, obj: int, context: Any, path: str) -> int:
        self.rule(obj, context)
        return obj

    def _encode(self, obj: int, context: Any, path: str) -> int:
        self.rule(obj, context)
        return obj


def check_int16(field: str, value: int) -> None:
    """Refuse what the 16-bit field cannot hold, where Java's ``(short)`` cast would silently wrap it."""
    if value not in INT16_RANGE:
        raise HeaderError(f"{field} does not fit the 16-bit ROCKETMQ field",
                          expected=f"{INT16_RANGE.start}..{INT16_RANGE.stop - 1}", seen=value,
                          clause=HDR_CODE_WIDTH.id)


def check_length_within(field: str, length: int, limit: int | None) -> None:
    """Judge a length word against the header length before reading (or allocating) what it announces."""
    if length < 0 or (limit is not None and length > limit):
        raise HeaderError(f"{field} length outside the header", expected=f"0..{limit}", seen=length,
                          clause=HDR_LENGTH_BOUND.id)


def _fits_int16(field: str) -> Callable[[int, Any], None]:
    def rule(value: int, context: Any) -> None:
        check_int16(field, value)
    return rule


def _within_header(field: str) -> Callable[[int, Any], None]:
    def rule(length: int, context: Any) -> None:
        check_length_within(field, length, getattr(context._params, "header_length", None))
    return rule


class _NullableText(Adapter):
    """UTF-8 text where the empty encoding means null."""

    def _decode(self, obj: bytes, context: Any, path: str) -> str | None:
        try:
            return obj.decode("utf-8") if obj else None
        except UnicodeDecodeError as exc:
            raise HeaderError("string is not UTF-8", expected="UTF-8", seen=obj[exc.start:exc.end],
                              clause=HDR_TEXT_UTF8.id) from None

    def _encode(self, obj: str | None, context: Any, path: str) -> bytes:
        # Java's String.getBytes(UTF_8): an unpaired surrogate is written as "?"
        return obj.encode("utf-8", "replace") if obj else b""


def _text(length_field: Construct, field: str) -> Construct:
    return _NullableText(Prefixed(_Checked(length_field, _within_header(field)), GreedyBytes))


MapEntry = Struct(
    "key" / _text(Int16sb, "extFields key") * "int16 length + UTF-8 key; length 0 is a null key",
    "value" / _text(Int32sb, "extFields value") * "int32 length + UTF-8 value; length 0 is a null value",
)


class _Entries(Construct):
    """Entries until the block ends; a truncated last entry is an error rather than the end of the map."""

    def __init__(self, entry: Construct) -> None:
        super().__init__()
        self.entry = entry

    def _parse(self, stream: Any, context: Any, path: str) -> list[Any]:
        entries = []
        while not stream_iseof(stream):
            entries.append(self.entry._parsereport(stream, context, path))
        return entries

    def _build(self, obj: list[Any], stream: Any, context: Any, path: str) -> list[Any]:
        for entry in obj:
            self.entry._build(entry, stream, context, path)
        return obj


class _ExtFieldsMap(Adapter):
    """Entry list ⇄ dict; null keys or values are dropped, as Java's encoder skips them."""

    def _decode(self, obj: list[Any], context: Any, path: str) -> dict[str, str] | None:
        if not obj:
            return None
        return {e.key: e.value for e in obj if e.key is not None and e.value is not None}

    def _encode(self, obj: dict[str, str] | None, context: Any, path: str) -> list[dict[str, str]]:
        return [{"key": k, "value": v} for k, v in (obj or {}).items() if k is not None and v is not None]


RocketMQHeader = Struct(
    "code" / _Checked(Int16sb, _fits_int16("code")) * "request code, or response code on responses",
    "language" / Int8ub * "LanguageCode byte of the sender",
    "version" / _Checked(Int16sb, _fits_int16("version")) * "MQVersion ordinal of the sender (409 = 4.9.8)",
    "opaque" / Int32sb * "request id; a response repeats its request's",
    "flag" / Int32sb * "bit 0 response, bit 1 oneway",
    "remark" / _text(Int32sb, "remark") * "int32 length + UTF-8 text; length 0 is null",
    "ext_fields" / _ExtFieldsMap(Prefixed(_Checked(Int32sb, _within_header("extFields")),
                                          _Entries(MapEntry)))
    * "int32 block length + map entries; length 0 is a null map",
)
"""The whole ROCKETMQ header (serialize type 1)."""
