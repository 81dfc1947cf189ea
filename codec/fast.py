"""Hand-written struct paths for the hottest remoting work: frame words and the ROCKETMQ header.

The construct schemas in ``spec`` are the definition; these functions do the same job several times
faster for the broker's per-frame path and are held equal to the schemas by property tests
(``tests/test_frame_fastpath.py``), including which inputs they reject.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from spec.binary_header import (
    FIXED_PART_SIZE,
    HDR_MAP_ENTRY,
    HDR_TEXT_UTF8,
    check_int16,
    check_length_within,
)
from spec.errors import HeaderError
from spec.frame import HEADER_LENGTH_MASK

_WORDS = struct.Struct(">iI")
_FIXED = struct.Struct(">hBhii")
"""code, language, version, opaque, flag: the fixed part before the two length-prefixed blocks."""
_INT32 = struct.Struct(">i")
_INT16 = struct.Struct(">h")


class BinaryHeader(NamedTuple):
    code: int
    language: int
    version: int
    opaque: int
    flag: int
    remark: str | None
    ext_fields: dict[str, str] | None


def unpack_words(data: bytes | bytearray | memoryview, offset: int = 0) -> tuple[int, int, int]:
    """(length, serialize type, header length) of the frame starting at ``offset``."""
    length, word = _WORDS.unpack_from(data, offset)
    return length, word >> 24, word & HEADER_LENGTH_MASK


def pack_words(length: int, serialize_type: int, header_length: int) -> bytes:
    return _WORDS.pack(length, serialize_type << 24 | header_length)


def decode_rocketmq_header(data: bytes) -> BinaryHeader:
    """Same result and same rejections as ``RocketMQHeader.parse(data, header_length=len(data))``."""
    limit = len(data)
    if limit < _FIXED.size:
        _truncated(FIXED_PART_SIZE, limit)
    code, language, version, opaque, flag = _FIXED.unpack_from(data)
    position = _FIXED.size
    remark, position = _read_text(data, position, _INT32, "remark")
    if limit < position + 4:
        _truncated(position + 4, limit)
    (map_length,) = _INT32.unpack_from(data, position)
    check_length_within("extFields", map_length, limit)
    position += 4
    end = position + map_length
    if end > limit:
        _truncated(end, limit)
    ext_fields: dict[str, str] | None = None
    if map_length:
        ext_fields = {}
        block = data[:end]
        while position < end:
            key, position = _read_text(block, position, _INT16, "extFields key")
            value, position = _read_text(block, position, _INT32, "extFields value")
            if key is not None and value is not None:
                ext_fields[key] = value
    return BinaryHeader(code, language, version, opaque, flag, remark, ext_fields)


def encode_rocketmq_header(header: BinaryHeader) -> bytes:
    """Same bytes as ``RocketMQHeader.build``; null or empty map entries are skipped."""
    check_int16("code", header.code)
    check_int16("version", header.version)
    remark = header.remark.encode("utf-8") if header.remark else b""
    entries = []
    for key, value in (header.ext_fields or {}).items():
        if key and value:
            raw_key, raw_value = key.encode("utf-8"), value.encode("utf-8")
            entries += [_INT16.pack(len(raw_key)), raw_key, _INT32.pack(len(raw_value)), raw_value]
    block = b"".join(entries)
    return b"".join((_FIXED.pack(header.code, header.language, header.version, header.opaque, header.flag),
                     _INT32.pack(len(remark)), remark, _INT32.pack(len(block)), block))


def _read_text(data: bytes, position: int, prefix: struct.Struct, field: str) -> tuple[str | None, int]:
    if len(data) < position + prefix.size:
        _truncated(position + prefix.size, len(data))
    (length,) = prefix.unpack_from(data, position)
    check_length_within(field, length, len(data))
    start = position + prefix.size
    if len(data) < start + length:
        _truncated(start + length, len(data))
    raw = data[start:start + length]
    try:
        return (raw.decode("utf-8") if length else None), start + length
    except UnicodeDecodeError as exc:
        raise HeaderError("string is not UTF-8", expected="UTF-8", seen=raw[exc.start:exc.end],
                          clause=HDR_TEXT_UTF8.id) from None


def _truncated(needed: int, available: int) -> None:
    raise HeaderError("ROCKETMQ header truncated", expected=f">= {needed} bytes", seen=available,
                      clause=HDR_MAP_ENTRY.id)
