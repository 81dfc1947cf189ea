"""The struct fast paths equal the construct schemas: same values, same bytes, same rejections."""

from __future__ import annotations

import struct
from collections.abc import Callable

from construct import ConstructError
from hypothesis import given
from hypothesis import strategies as st

from rocketmq_spec.codec.fast import (
    BinaryHeader,
    decode_rocketmq_header,
    encode_rocketmq_header,
    pack_words,
    unpack_words,
)
from rocketmq_spec.spec.binary_header import RocketMQHeader
from rocketmq_spec.spec.errors import HeaderError
from rocketmq_spec.spec.frame import FrameWords

_text = st.text(max_size=12)
headers = st.builds(
    BinaryHeader,
    code=st.integers(-32768, 32767),
    language=st.integers(0, 255),
    version=st.integers(-32768, 32767),
    opaque=st.integers(-(1 << 31), (1 << 31) - 1),
    flag=st.integers(-(1 << 31), (1 << 31) - 1),
    remark=st.none() | _text,
    ext_fields=st.none() | st.dictionaries(_text, _text, max_size=5),
)


def _schema_parse(data: bytes) -> BinaryHeader:
    parsed = RocketMQHeader.parse(data, header_length=len(data))
    return BinaryHeader(*(parsed[name] for name in BinaryHeader._fields))


@given(headers)
def test_encode_equals_schema_build(header: BinaryHeader) -> None:
    assert encode_rocketmq_header(header) == RocketMQHeader.build(header._asdict())


@given(headers)
def test_decode_equals_schema_parse(header: BinaryHeader) -> None:
    data = encode_rocketmq_header(header)
    assert decode_rocketmq_header(data) == _schema_parse(data)


REJECTED = "rejected"


def _outcome(parse: Callable[[bytes], BinaryHeader], data: bytes) -> BinaryHeader | str:
    """The parse result, or REJECTED for a typed error (or the schema's own stream underflow)."""
    try:
        return parse(data)
    except (HeaderError, ConstructError):
        return REJECTED


@given(headers, st.data())
def test_same_rejections_on_corrupted_headers(header: BinaryHeader, data: st.DataObject) -> None:
    raw = bytearray(encode_rocketmq_header(header))
    for _ in range(data.draw(st.integers(1, 3))):
        position = data.draw(st.integers(0, len(raw) - 1))
        raw[position] = data.draw(st.integers(0, 255))
    cut = bytes(raw[:data.draw(st.integers(0, len(raw)))])
    assert _outcome(decode_rocketmq_header, cut) == _outcome(_schema_parse, cut)


@given(st.binary(max_size=40))
def test_same_rejections_on_arbitrary_bytes(data: bytes) -> None:
    assert _outcome(decode_rocketmq_header, data) == _outcome(_schema_parse, data)


@given(st.integers(-(1 << 31), (1 << 31) - 1), st.integers(0, 255), st.integers(0, (1 << 24) - 1))
def test_words_equal_schema(length: int, serialize_type: int, header_length: int) -> None:
    packed = pack_words(length, serialize_type, header_length)
    assert packed == FrameWords.build({"length": length, "serialize_type": serialize_type,
                                       "header_length": header_length})
    parsed = FrameWords.parse(packed)
    assert unpack_words(packed) == (parsed.length, parsed.serialize_type, parsed.header_length)
    assert unpack_words(b"xx" + packed, 2) == unpack_words(packed)
    assert struct.unpack(">i", packed[:4])[0] == length
