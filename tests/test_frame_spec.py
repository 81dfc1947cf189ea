"""Frame words, limits and the ROCKETMQ header schema."""

from __future__ import annotations

import pytest

from rocketmq_spec.spec.binary_header import FIXED_PART_SIZE, RocketMQHeader
from rocketmq_spec.spec.errors import FrameError, HeaderError
from rocketmq_spec.spec.frame import (
    FRAME_MAX_LENGTH,
    MAX_LENGTH_VALUE,
    Frame,
    FrameWords,
    SerializeType,
    check_length,
    check_type_word,
)


def test_limit_is_netty_default() -> None:
    assert FRAME_MAX_LENGTH == 16 * 1024 * 1024
    assert MAX_LENGTH_VALUE == 16777212


@pytest.mark.parametrize("length", [4, 100, MAX_LENGTH_VALUE])
def test_length_accepted(length: int) -> None:
    check_length(length)


@pytest.mark.parametrize(("length", "clause"), [
    (MAX_LENGTH_VALUE + 1, "RMQ-FRAME-MAX-LENGTH"), (-1, "RMQ-FRAME-MIN-LENGTH"),
    (3, "RMQ-FRAME-MIN-LENGTH"), (-(1 << 31), "RMQ-FRAME-MIN-LENGTH"),
])
def test_length_rejected(length: int, clause: str) -> None:
    with pytest.raises(FrameError) as info:
        check_length(length)
    assert info.value.clause == clause
    assert info.value.seen == length


def test_type_word_checks() -> None:
    assert check_type_word(30, 1, 26) is SerializeType.ROCKETMQ
    with pytest.raises(FrameError, match="header length beyond"):
        check_type_word(30, 0, 27)
    with pytest.raises(FrameError, match="unknown serialize type") as info:
        check_type_word(30, 2, 5)
    assert info.value.seen == 2


def test_frame_schema_layout() -> None:
    data = bytes.fromhex("0000000c 01000003 aabbcc 1122334455".replace(" ", ""))
    words = FrameWords.parse(data)
    assert (words.length, words.serialize_type, words.header_length) == (12, 1, 3)
    frame = Frame.parse(data)
    assert frame.header == bytes.fromhex("aabbcc")
    assert frame.body == bytes.fromhex("1122334455")
    assert Frame.build(frame) == data


def test_heart_beat_worked_example() -> None:
    header = RocketMQHeader.build({"code": 34, "language": 0, "version": 409, "opaque": 1, "flag": 0,
                                   "remark": None, "ext_fields": None})
    assert header == bytes.fromhex("0022" "00" "0199" "00000001" "00000000" "00000000" "00000000")
    assert len(header) == FIXED_PART_SIZE


def test_empty_strings_decode_as_null() -> None:
    entry_empty_value = bytes.fromhex("0001") + b"k" + bytes(4)
    data = (bytes.fromhex("000a" "00" "0000" "00000000" "00000000") + bytes(4)
            + len(entry_empty_value).to_bytes(4, "big") + entry_empty_value)
    parsed = RocketMQHeader.parse(data, header_length=len(data))
    assert parsed.remark is None
    assert parsed.ext_fields == {}


def test_empty_map_decodes_as_null_and_round_trips() -> None:
    fields = {"code": 1, "language": 3, "version": -2, "opaque": -7, "flag": 3, "remark": "é",
              "ext_fields": {"a": "1", "ключ": "значение"}}
    data = RocketMQHeader.build(fields)
    parsed = RocketMQHeader.parse(data, header_length=len(data))
    assert {k: parsed[k] for k in fields} == fields
    empty = RocketMQHeader.build({**fields, "ext_fields": {}})
    assert RocketMQHeader.parse(empty, header_length=len(empty)).ext_fields is None


@pytest.mark.parametrize("remark_length", [-1, 1000])
def test_remark_length_outside_header(remark_length: int) -> None:
    data = bytes(13) + remark_length.to_bytes(4, "big", signed=True) + bytes(8)
    with pytest.raises(HeaderError) as info:
        RocketMQHeader.parse(data, header_length=len(data))
    assert info.value.clause == "RMQ-HDR-BIN-LENGTH-BOUND"
    assert info.value.seen == remark_length


def test_code_outside_int16_is_not_encodable() -> None:
    with pytest.raises(HeaderError, match="16-bit") as info:
        RocketMQHeader.build({"code": 200050, "language": 0, "version": 0, "opaque": 0, "flag": 0,
                              "remark": None, "ext_fields": None})
    assert info.value.clause == "RMQ-HDR-BIN-CODE-WIDTH"
