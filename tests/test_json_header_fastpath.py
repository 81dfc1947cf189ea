"""The JSON header's per-frame path held to the spec's tables.

``rocketmq_spec.codec.command`` writes a header through one reused C encoder and reads it with one reused
decoder and a whole-header type check, which is only sound if it agrees with the rules the tables state: key
order and null omission (``JSON_HEADER_FIELDS``), fastjson's escapes (``SHORT_ESCAPES``, ``HEX_ESCAPED``), the
defaults, int32 fields and extFields normalisation, and which headers are refused under which clause. The
references below are built from those tables alone, character by character. """

from __future__ import annotations

import decimal
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketmq_spec.codec.command import RemotingCommand, decode_payload, encode
from rocketmq_spec.codec.fast import pack_words
from rocketmq_spec.spec.errors import HeaderError
from rocketmq_spec.spec.frame import LENGTH_FIELD_SIZE, SerializeType
from rocketmq_spec.spec.json_header import (
    DEFAULT_LANGUAGE,
    HDR_JSON_DEFAULTS,
    HDR_JSON_EXT_STRINGS,
    HDR_JSON_KEYS,
    JSON_HEADER_FIELDS,
)
from rocketmq_spec.spec.language import LANGUAGE_BY_NAME, language_name
from tests.test_fastjson import _ESCAPE_PRONE, _fastjson_string

INT32 = st.integers(-(1 << 31), (1 << 31) - 1)
LANGUAGES = st.sampled_from(["JAVA", "CPP", "PYTHON", "GO", "OTHER"]) | _ESCAPE_PRONE | INT32


def _reference_value(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ",".join(f"{_fastjson_string(k)}:{_fastjson_string(v)}" for k, v in value.items()) + "}"
    return _fastjson_string(value) if isinstance(value, str) else str(value)


def _reference_header(cmd: RemotingCommand) -> bytes:
    """The header as the table says a Java peer writes it."""
    values = {"code": cmd.code, "extFields": cmd.ext_fields, "flag": cmd.flag, "language": cmd.language,
              "opaque": cmd.opaque, "remark": cmd.remark, "serializeTypeCurrentRPC": "JSON",
              "version": cmd.version}
    entries = [f"{_fastjson_string(field.key)}:{_reference_value(values[field.key])}"
               for field in JSON_HEADER_FIELDS if not (field.omitted_when_null and values[field.key] is None)]
    return ("{" + ",".join(entries) + "}").encode("utf-8")


commands = st.builds(
    RemotingCommand, code=INT32, language=LANGUAGES, version=INT32, opaque=INT32, flag=INT32,
    remark=st.none() | _ESCAPE_PRONE, ext_fields=st.none() | st.dictionaries(_ESCAPE_PRONE, _ESCAPE_PRONE),
    body=st.none() | st.binary(min_size=1, max_size=16))


@given(commands)
def test_encoded_header_is_the_tables_header(cmd: RemotingCommand) -> None:
    frame = encode(cmd)
    header = _reference_header(cmd)
    assert frame[LENGTH_FIELD_SIZE + 4:LENGTH_FIELD_SIZE + 4 + len(header)] == header
    assert len(frame) == LENGTH_FIELD_SIZE + 4 + len(header) + len(cmd.body or b"")
    decoded = decode_payload(frame[LENGTH_FIELD_SIZE:])
    assert decoded == RemotingCommand(cmd.code, language_name(cmd.language), cmd.version, cmd.opaque,
                                      cmd.flag, cmd.remark, cmd.ext_fields, cmd.body)


def _reference_decode(obj: Any) -> RemotingCommand | str:
    """What RMQ-HDR-JSON-KEYS, -DEFAULTS and -EXT-STRINGS make of a parsed header: the command, or the
    clause a refusal cites (checked in this order: the object, the four ints, language, remark, extFields)."""
    if not isinstance(obj, dict):
        return HDR_JSON_KEYS.id
    ints = [obj.get(key, 0) for key in ("code", "flag", "opaque", "version")]
    if any(type(value) is not int or not -(1 << 31) <= value < (1 << 31) for value in ints):
        return HDR_JSON_DEFAULTS.id
    language, remark, ext = obj.get("language", DEFAULT_LANGUAGE), obj.get("remark"), obj.get("extFields")
    if type(language) not in (str, int):
        return LANGUAGE_BY_NAME.id
    if remark is not None and type(remark) is not str:
        return HDR_JSON_KEYS.id
    fields = None
    if ext is not None:
        if type(ext) is not dict:
            return HDR_JSON_EXT_STRINGS.id
        texts = {str: str, bool: lambda b: "true" if b else "false", int: str, decimal.Decimal: str}
        if any(value is not None and type(value) not in texts for value in ext.values()):
            return HDR_JSON_EXT_STRINGS.id
        fields = {k: texts[type(v)](v) for k, v in ext.items() if v is not None}  # type: ignore[operator]
    code, flag, opaque, version = ints
    return RemotingCommand(code, language_name(language), version, opaque, flag, remark, fields)


_SCALARS = (st.none() | st.booleans() | INT32 | st.integers() | st.text(max_size=8)
            | st.floats(allow_nan=False, allow_infinity=False))
_HEADER_KEYS = st.sampled_from([f.key for f in JSON_HEADER_FIELDS] + ["extra"])
_HEADER_VALUES = _SCALARS | st.lists(_SCALARS, max_size=2) | st.dictionaries(
    st.text(max_size=4), _SCALARS | st.lists(_SCALARS, max_size=1), max_size=3)


@given(st.dictionaries(_HEADER_KEYS, _HEADER_VALUES) | _SCALARS)
def test_decoded_header_follows_the_clauses(obj: Any) -> None:
    header = json.dumps(obj).encode()
    payload = pack_words(0, SerializeType.JSON, len(header))[LENGTH_FIELD_SIZE:] + header
    expected = _reference_decode(json.loads(header, parse_float=decimal.Decimal))
    if isinstance(expected, str):
        with pytest.raises(HeaderError) as refused:
            decode_payload(payload)
        assert refused.value.clause == expected
    else:
        assert decode_payload(payload) == expected
