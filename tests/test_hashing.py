"""Java string hash, masked CRC32 and index key hash against values computed on a JDK."""

from __future__ import annotations

import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketmq_spec.spec.hashing import (
    INT32_MIN,
    index_key_hash,
    java_string_hash,
    masked_crc32,
    tags_code,
    to_int32,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("", 0), ("TagA", 2598919), ("*", 42), ("TopicTest#KEY1", -1656969516),
     ("polygenelubricants", INT32_MIN), ("\U0001F600", 0xD83D * 31 + 0xDE00)],
)
def test_java_string_hash_vectors(text: str, expected: int) -> None:
    assert java_string_hash(text) == expected


@given(st.text())
def test_java_string_hash_matches_the_definition(text: str) -> None:
    units = [int.from_bytes(text.encode("utf-16-be", "surrogatepass")[i:i + 2], "big")
             for i in range(0, 2 * len(text.encode("utf-16-le", "surrogatepass")) // 2, 2)]
    h = 0
    for unit in units:
        h = to_int32(31 * h + unit)
    assert java_string_hash(text) == h
    assert -(2**31) <= h < 2**31


@pytest.mark.parametrize(("data", "expected"),
                         [(b"", 0), (b"a", 1756872259), (b"Hello RocketMQ", 1774740973)])
def test_masked_crc32_vectors(data: bytes, expected: int) -> None:
    assert masked_crc32(data) == expected


@given(st.binary())
def test_masked_crc32_is_crc32_without_sign_bit(data: bytes) -> None:
    assert masked_crc32(data) == zlib.crc32(data) % 2**31


def test_index_key_hash_maps_min_value_to_zero() -> None:
    assert index_key_hash("polygenelubricants") == 0
    assert index_key_hash("TopicTest#KEY1") == 1656969516
    assert index_key_hash("TopicTest#KEY1") % 5_000_000 == 1969516


def test_tags_code_is_zero_without_tags() -> None:
    assert tags_code(None) == 0
    assert tags_code("") == 0
    assert tags_code("TagA") == 2598919
