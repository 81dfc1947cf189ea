"""Properties of the custom header codec over every header of ``rocketmq_spec.spec.headers``, and of the JSON
bodies over every bean table of ``rocketmq_spec.spec.bodies``."""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketmq_spec.codec.bodies import decode_body, encode_body
from rocketmq_spec.codec.command import RemotingCommand, decode, encode
from rocketmq_spec.codec.custom_header import decode_header, encode_header
from rocketmq_spec.fuzz.profiles import fuzz_settings
from rocketmq_spec.fuzz.strategies import bodies as body_strategies
from rocketmq_spec.fuzz.strategies.headers import (
    HeaderValues,
    client_forms,
    header_specs,
    header_values,
    required_fields,
    specs_and_values,
)
from rocketmq_spec.fuzz.strategies.primitives import texts
from rocketmq_spec.spec.bodies import BodySpec
from rocketmq_spec.spec.errors import BodyError, HeaderError, RocketMQSpecError
from rocketmq_spec.spec.frame import SerializeType
from rocketmq_spec.spec.golden import JAVA_FRAMES
from rocketmq_spec.spec.headers import GET_MAX_OFFSET_REQUEST, FieldType, HeaderSpec
from tests.test_command_bodies import _BODY_OF as JAVA_BODY_TABLES

JAVA_INT_RANGES = {FieldType.INT: range(-(1 << 31), 1 << 31), FieldType.LONG: range(-(1 << 63), 1 << 63)}
JAVA_NUMBER = re.compile(r"[+-]?\d+")
"""``Integer.parseInt``'s grammar: an optional sign, then digits (``Character.digit`` accepts every
Unicode decimal digit, as ``\\d`` does); no spaces, no underscores."""
NUMBER_LIKE = "0123456789+-_ \t\u0663e."
"""Characters near the grammar's edge: separators, whitespace, a non-ASCII digit, exponent and point."""


def java_parse_number(kind: FieldType, raw: str) -> int | None:
    """What ``Integer.parseInt`` / ``Long.parseLong`` return, or None where they throw."""
    if not JAVA_NUMBER.fullmatch(raw):
        return None
    value = int(raw)
    return value if value in JAVA_INT_RANGES[kind] else None


@fuzz_settings()
@given(specs_and_values())
def test_encode_then_decode_is_identity(spec_values: tuple[HeaderSpec, HeaderValues]) -> None:
    spec, values = spec_values
    assert decode_header(spec, encode_header(spec, values)) == values


@fuzz_settings()
@given(specs_and_values())
def test_decode_then_encode_is_identity_on_java_strings(spec_values: tuple[HeaderSpec, HeaderValues]) -> None:
    spec, values = spec_values
    ext = encode_header(spec, values)
    assert encode_header(spec, decode_header(spec, ext)) == ext


@fuzz_settings()
@given(st.data())
def test_decoding_tolerates_what_clients_send_in_json_headers(data: st.DataObject) -> None:
    """"0"/"1" and capitalised booleans, raw JSON numbers and booleans (which the command codec turns
    into the strings fastjson would), and keys the header does not know, all in a real frame."""
    spec = data.draw(st.sampled_from(header_specs()))
    values = data.draw(header_values(spec))
    ext = data.draw(client_forms(spec, values))
    header = json.dumps({"code": 10, "extFields": ext, "flag": 0, "language": "CPP", "opaque": 1,
                         "serializeTypeCurrentRPC": "JSON", "version": 0}).encode()
    frame = (4 + len(header)).to_bytes(4, "big") + len(header).to_bytes(4, "big") + header
    assert decode_header(spec, decode(frame).ext_fields) == values


@fuzz_settings()
@given(specs_and_values(), st.sampled_from(list(SerializeType)))
def test_headers_survive_a_frame_in_either_serialization(spec_values: tuple[HeaderSpec, HeaderValues],
                                                         serialize_type: SerializeType) -> None:
    """A ROCKETMQ header reads an empty string as null, so an empty optional string arrives absent and an
    empty required one makes the header incomplete; everything else arrives as sent."""
    spec, values = spec_values
    cmd = RemotingCommand.request(10, encode_header(spec, values))
    cmd.serialize_type = serialize_type
    received = decode(encode(cmd)).ext_fields
    if serialize_type is SerializeType.JSON:
        assert decode_header(spec, received) == values
        return
    empty = {f.key for f in spec.fields if values.get(f.key) == ""}
    if any(f.required and f.key in empty for f in spec.fields):
        with pytest.raises(HeaderError):
            decode_header(spec, received)
    else:
        assert decode_header(spec, received) == {k: v for k, v in values.items() if k not in empty}


@fuzz_settings()
@given(st.data())
def test_a_missing_required_field_raises_a_header_error_naming_it(data: st.DataObject) -> None:
    spec = data.draw(st.sampled_from([s for s in header_specs() if required_fields(s)]))
    values = data.draw(header_values(spec))
    missing = data.draw(st.sampled_from(required_fields(spec)))
    ext = encode_header(spec, values)
    del ext[missing.name]
    with pytest.raises(HeaderError, match=re.escape(missing.name)) as info:
        decode_header(spec, ext)
    assert info.value.expected == missing.name
    assert info.value.clause == "RMQ-CMD-REQUIRED"


@fuzz_settings()
@given(st.data())
def test_arbitrary_strings_decode_as_java_parses_them_or_raise_a_header_error(data: st.DataObject) -> None:
    """A numeric field takes exactly what ``parseInt``/``parseLong`` accept; anything else is refused with
    a HeaderError (Java would silently leave the field at its default)."""
    spec = data.draw(st.sampled_from(header_specs()))
    values = data.draw(header_values(spec))
    ext = encode_header(spec, values)
    numeric = [f for f in spec.fields if f.type in JAVA_INT_RANGES]
    if not numeric:
        return
    field = data.draw(st.sampled_from(numeric))
    ext[field.name] = data.draw(st.one_of(texts(max_size=8), st.text(NUMBER_LIKE, max_size=21)))
    expected = java_parse_number(field.type, ext[field.name])
    if expected is None and ext[field.name] != "":
        with pytest.raises(HeaderError):
            decode_header(spec, ext)
    elif expected is not None:
        assert decode_header(spec, ext)[field.key] == expected


@pytest.mark.parametrize("raw", ["0_0", "1_000", " 7", "7 ", "\t-1"])
def test_regression_numbers_java_refuses_are_header_errors(raw: str) -> None:
    """Bug found by the property above: Python's ``int`` read "0_0" as 0 and " 7" as 7, which
    ``Integer.parseInt`` refuses, so the codec accepted numbers no Java receiver would."""
    with pytest.raises(HeaderError, match="queueId"):
        decode_header(GET_MAX_OFFSET_REQUEST, {"topic": "t", "queueId": raw})


@fuzz_settings()
@given(st.sampled_from(header_specs()), st.dictionaries(texts(max_size=4), texts(max_size=8), max_size=16))
def test_decode_raises_only_header_errors_on_arbitrary_maps(spec: HeaderSpec, ext: dict[str, str]) -> None:
    with contextlib.suppress(HeaderError):
        decode_header(spec, ext)


# --- JSON bodies ---------------------------------------------------------------------------------------

@fuzz_settings()
@given(body_strategies.specs_and_values())
def test_body_encode_then_decode_is_identity(spec_value: tuple[BodySpec, dict[str, Any]]) -> None:
    spec, value = spec_value
    assert decode_body(spec, encode_body(spec, value)) == value


@fuzz_settings()
@given(body_strategies.specs_and_values())
def test_body_decode_then_encode_is_identity_on_canonical_bytes(spec_value: tuple[BodySpec, dict[str, Any]],
                                                                ) -> None:
    spec, value = spec_value
    data = encode_body(spec, value)
    assert encode_body(spec, decode_body(spec, data)) == data


def _golden_bodies() -> list[tuple[BodySpec, bytes]]:
    """Java-written bodies of the golden frames that have a table (the same selection as the golden
    round-trip test)."""
    found = []
    for entry in json.loads((JAVA_FRAMES / "INDEX.json").read_text())["frames"]:
        name = entry.get("requestCodeName") if entry["isResponse"] else entry["codeName"]
        spec = JAVA_BODY_TABLES.get((name, entry["isResponse"]))
        if spec is not None and entry["bodyLength"] and not (entry["isResponse"] and entry["code"] != 0):
            body = decode((JAVA_FRAMES / entry["file"]).read_bytes()).body
            assert body is not None
            found.append((spec, body))
    return found


GOLDEN_BODIES = _golden_bodies()


def test_golden_bodies_are_found() -> None:
    assert {spec.java_class for spec, _ in GOLDEN_BODIES} >= {"HeartbeatData", "TopicRouteData"}


@fuzz_settings()
@given(st.sampled_from(GOLDEN_BODIES), st.data())
def test_golden_bodies_mutated_in_values_re_encode_byte_for_byte(golden: tuple[BodySpec, bytes],
                                                                 data: st.DataObject) -> None:
    spec, body = golden
    mutated = body_strategies.mutate_scalars(data, decode_body(spec, body))
    encoded = encode_body(spec, mutated)
    assert decode_body(spec, encoded) == mutated
    assert encode_body(spec, decode_body(spec, encoded)) == encoded


@fuzz_settings()
@given(st.sampled_from(body_strategies.body_specs()), st.binary(max_size=256))
def test_body_decode_raises_only_body_errors_on_arbitrary_bytes(spec: BodySpec, data: bytes) -> None:
    with contextlib.suppress(BodyError):
        decode_body(spec, data)


@fuzz_settings()
@given(st.data())
def test_body_decode_raises_only_typed_errors_on_mutated_canonical_bodies(data: st.DataObject) -> None:
    spec, value = data.draw(body_strategies.specs_and_values())
    encoded = bytearray(encode_body(spec, value))
    if encoded:
        position = data.draw(st.integers(0, len(encoded) - 1))
        encoded[position] = data.draw(st.integers(0, 255))
    with contextlib.suppress(RocketMQSpecError):
        decode_body(spec, bytes(encoded))
