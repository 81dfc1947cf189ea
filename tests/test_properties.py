"""The properties string: Java's acceptance rules, round trips and Java HashMap order."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketmq_spec.spec.properties import (
    PROPERTIES_SINCE_5,
    RESERVED_KEYS,
    SYSTEM_KEYS,
    encode_properties,
    java_hashmap_order,
    parse_properties,
    split_keys,
)

names = st.text(st.characters(blacklist_characters="\u0001\u0002"), min_size=1)
values = st.text(st.characters(blacklist_characters="\u0002"), min_size=1)


@pytest.mark.parametrize("text", ["", " ", "aaa", "k1\u0001", "\u0001v1", "\u0001", "\u0002\u0002"])
def test_malformed_segments_are_dropped(text: str) -> None:
    assert parse_properties(text) == {}


def test_java_decoder_vectors() -> None:
    assert parse_properties("k1\u0001v1") == {"k1": "v1"}
    assert parse_properties("a\u0001b\u0001c\u0002\u0001x\u0002k\u0001") == {"a": "b\u0001c"}
    assert parse_properties("k\u00011\u0002k\u00012") == {"k": "2"}


def test_encoding_skips_null_values_and_has_no_trailing_separator() -> None:
    assert encode_properties({"A": "1", "B": None, "C": "3"}) == "A\u00011\u0002C\u00013"
    assert encode_properties({}) == ""


@given(st.dictionaries(names, values))
def test_round_trip(props: dict[str, str]) -> None:
    assert parse_properties(encode_properties(props)) == props


def test_split_keys_ignores_empty_tokens() -> None:
    assert split_keys("k1  k2 k3 ") == ["k1", "k2", "k3"]
    assert split_keys(None) == []


def test_reserved_and_system_keys() -> None:
    assert {"UNIQ_KEY", "TAGS", "KEYS", "WAIT", "CLUSTER"} <= SYSTEM_KEYS
    assert "TRAN_PREPARED_QUEUE_OFFSET" in RESERVED_KEYS - SYSTEM_KEYS
    assert len(RESERVED_KEYS - SYSTEM_KEYS - {row.key for row in PROPERTIES_SINCE_5}) == 4
    assert {"POP_CK", "TIMER_DELIVER_MS", "__CRC32#"} <= RESERVED_KEYS - SYSTEM_KEYS


def test_java_hashmap_order_buckets() -> None:
    # (h ^ h >>> 16) & 15: KEYS 7, UNIQ_KEY 12, CLUSTER 12, WAIT 13, TAGS 14; a shared bucket keeps
    # insertion order. This is the order of a plain send's stored properties in the golden store.
    assert java_hashmap_order(["TAGS", "UNIQ_KEY", "CLUSTER", "KEYS", "WAIT"]) == [
        "KEYS", "UNIQ_KEY", "CLUSTER", "WAIT", "TAGS"]
    assert java_hashmap_order(["TAGS", "CLUSTER", "UNIQ_KEY"])[:2] == ["CLUSTER", "UNIQ_KEY"]


def test_java_hashmap_capacity_grows_with_peak_size() -> None:
    # 16 buckets put k16 first; after growing to 32 buckets (13 entries) k0 comes first
    assert java_hashmap_order(["k0", "k16"]) == ["k16", "k0"]
    assert java_hashmap_order(["k0", "k16"], peak_size=13) == ["k0", "k16"]


@given(st.lists(names, unique=True))
def test_java_hashmap_order_is_a_permutation(keys: list[str]) -> None:
    assert sorted(java_hashmap_order(keys)) == sorted(keys)
