"""fastjson reading (unquoted integer keys) and writing (compact and TAB-indented pretty layouts)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codec.fastjson import MAX_DEPTH, dumps, loads
from spec.errors import BodyError


def test_unquoted_integer_keys() -> None:
    assert loads('{"offsetTable":{0:9,1:7,-1:3}}') == {"offsetTable": {0: 9, 1: 7, -1: 3}}
    assert loads(b'{"brokerAddrs":{0:"127.0.0.1:10911"}}') == {"brokerAddrs": {0: "127.0.0.1:10911"}}


def test_compact_layout() -> None:
    assert dumps({"stringList": ["a", "o", "e"]}) == '{"stringList":["a","o","e"]}'
    doc = {"t": {0: 9, 1: 7}, "b": True, "n": None, "f": 1.5}
    assert dumps(doc) == '{"t":{0:9,1:7},"b":true,"n":null,"f":1.5}'


def test_pretty_layout() -> None:
    doc = {"offsetTable": {"T@G": {0: 9, 1: 7}, "E": {}}, "list": [1, "x"]}
    assert dumps(doc, pretty=True) == (
        '{\n\t"offsetTable":{\n\t\t"T@G":{0:9,1:7\n\t\t},\n\t\t"E":{}\n\t},\n\t"list":[\n\t\t1,\n\t\t"x"\n\t]\n}')


@pytest.mark.parametrize("bad", ["", "{", '{"a":}', "[1,", "{1.5:2}", '"x', "1 2", "tru",
                                 "[" * (MAX_DEPTH + 2), b"\xff"])
def test_malformed_text_is_a_body_error(bad: str | bytes) -> None:
    with pytest.raises(BodyError):
        loads(bad)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text() | st.integers(), inner, max_size=4),
    max_leaves=20,
)


@given(json_values, st.booleans())
def test_round_trip(value: object, pretty: bool) -> None:
    assert loads(dumps(value, pretty=pretty)) == value
