"""fastjson reading (unquoted integer keys) and writing (compact and TAB-indented pretty layouts)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketmq_spec.codec.fastjson import MAX_DEPTH, dumps, dumps_string_keyed, loads
from rocketmq_spec.spec.errors import BodyError
from rocketmq_spec.spec.json_header import HEX_ESCAPED, SHORT_ESCAPES


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


def _fastjson_string(text: str) -> str:
    """fastjson's escaping rule, character by character, straight from the spec's tables."""
    def escape(char: str) -> str:
        if char in SHORT_ESCAPES:
            return SHORT_ESCAPES[char]
        return f"\\u{ord(char):04X}" if any(ord(char) in span for span in HEX_ESCAPED) else char
    return '"' + "".join(escape(char) for char in text) + '"'


# every escaped range, its neighbours, and characters whose escapes could be misread
_ESCAPE_PRONE = st.text(st.characters(codec="utf-8") | st.sampled_from(
    ["\\", "u", "0", "1", "a", "f", "/", '"', "\x1f", "\x20", "\x7e", "\x7f", "\x9f", "\xa0",
     "\u2027", "\u2028", "\u2029", "\u202a"]))


@given(_ESCAPE_PRONE)
def test_strings_escaped_as_fastjson(text: str) -> None:
    assert dumps_string_keyed(text) == _fastjson_string(text)
    assert dumps({text: [text]}) == f"{{{_fastjson_string(text)}:[{_fastjson_string(text)}]}}"
    assert loads(dumps_string_keyed(text)) == text
