"""offsetMsgId and UNIQ_KEY layouts, against ids written by the 4.9.8 Java client and broker."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketmq_spec.spec.errors import SpecViolation
from rocketmq_spec.spec.message_id import (
    OffsetMsgId,
    UniqKey,
    decode_offset_msg_id,
    decode_uniq_key,
    encode_offset_msg_id,
    encode_uniq_key,
    uniq_key_time_diff,
)


def test_golden_offset_msg_id() -> None:
    assert decode_offset_msg_id("7F00000100002A9F0000000000000000") == OffsetMsgId("127.0.0.1", 10911, 0)
    assert encode_offset_msg_id("127.0.0.1", 10911, 34391) == "7F00000100002A9F0000000000008657"


def test_ipv6_offset_msg_id_is_56_hex_chars() -> None:
    text = encode_offset_msg_id("::1", 9103, 123456)
    assert len(text) == 56
    assert text == text.upper()
    assert decode_offset_msg_id(text) == OffsetMsgId("::1", 9103, 123456)


@given(st.ip_addresses(), st.integers(0, 65535), st.integers(0, 2**63 - 1))
def test_offset_msg_id_round_trip(ip: object, port: int, offset: int) -> None:
    text = encode_offset_msg_id(str(ip), port, offset)
    assert decode_offset_msg_id(text) == OffsetMsgId(str(ip), port, offset)


@pytest.mark.parametrize("bad", ["", "7F000001", "ZZ00000100002A9F0000000000000000"])
def test_bad_offset_msg_id(bad: str) -> None:
    with pytest.raises(SpecViolation):
        decode_offset_msg_id(bad)


def test_golden_uniq_key_fields() -> None:
    key = decode_uniq_key("C0000202725F5FFD2B276DF04EF50000")
    assert key.ip == "192.0.2.2"
    assert key.counter == 0
    assert decode_uniq_key("C0000202725F5FFD2B276DF04FE20025").counter == 0x25
    assert encode_uniq_key(key) == "C0000202725F5FFD2B276DF04EF50000"


@given(st.ip_addresses(), st.integers(0, 65535), st.integers(-(2**31), 2**31 - 1),
       st.integers(-(2**31), 2**31 - 1), st.integers(0, 65535))
def test_uniq_key_round_trip(ip: object, pid: int, loader: int, diff: int, counter: int) -> None:
    key = UniqKey(str(ip), pid, loader, diff, counter)
    text = encode_uniq_key(key)
    assert len(text) in (32, 56)
    assert decode_uniq_key(text) == key


def test_uniq_key_time_wraps_as_the_java_cast_does() -> None:
    """Past 2^31 ms into a month (the 25th day) the Java client's (int) cast turns the field negative;
    the suite's producers must write the same, not fail to build the key."""
    month_start = 1_793_491_200_000  # 2026-11-01T00:00:00Z
    late = month_start + 24 * 86_400_000 + 21 * 3_600_000  # 2026-11-25T21:00Z
    diff = uniq_key_time_diff(late, month_start)
    assert diff == late - month_start - 2**32 < 0
    key = UniqKey("192.0.2.2", 1, 2, diff, 3)
    assert decode_uniq_key(encode_uniq_key(key)).time_diff_ms == diff
    assert uniq_key_time_diff(month_start + 5_000, month_start) == 5_000
    assert uniq_key_time_diff(month_start - 999_999, month_start) == 0
    assert uniq_key_time_diff(month_start - 1_000_000, month_start) == -1_000_000
