"""RemotingCommand encode/decode in both serializations, and the tolerant JSON reading."""

from __future__ import annotations

import json
import struct

import pytest

from rocketmq_spec.codec.command import (
    RemotingCommand,
    decode,
    decode_payload,
    encode,
    java_hashmap_order,
    json_header_text,
)
from rocketmq_spec.spec.errors import FrameError, HeaderError
from rocketmq_spec.spec.frame import SerializeType


def _json_frame(header: dict[str, object] | str, body: bytes = b"") -> bytes:
    text = header if isinstance(header, str) else json.dumps(header)
    raw = text.encode()
    return struct.pack(">iI", 4 + len(raw) + len(body), len(raw)) + raw + body


@pytest.mark.parametrize("serialize_type", list(SerializeType))
def test_round_trip(serialize_type: SerializeType) -> None:
    cmd = RemotingCommand(310, language="CPP", version=409, opaque=-5, flag=2, remark="naïve\n",
                          ext_fields={"b": "2", "a": ""}, body=b"\x00\x01", serialize_type=serialize_type)
    back = decode(encode(cmd))
    if serialize_type is SerializeType.ROCKETMQ:
        assert back.ext_fields == {"b": "2"}
    else:
        assert back == cmd


def test_json_header_key_order_and_null_omission() -> None:
    frame = encode(RemotingCommand(34, version=409, opaque=7, ext_fields={}))
    header = frame[8:]
    assert header == (b'{"code":34,"extFields":{},"flag":0,"language":"JAVA","opaque":7,'
                      b'"serializeTypeCurrentRPC":"JSON","version":409}')


def test_json_header_strings_escaped_as_fastjson_writes_them() -> None:
    # fastjson 1.2.69: short escapes for the usual seven, upper-case \uXXXX for the other C0 controls,
    # DEL, the C1 controls and U+2028/U+2029, everything else ('/' and other non-ASCII text) raw
    tricky = 'a"\\/\b\t\n\f\r\x00\x0b\x1f\x7f\x85\x9f\xa0\u2028\u2029é€😀'
    escaped = ('a\\"\\\\/\\b\\t\\n\\f\\r\\u0000\\u000B\\u001F\\u007F\\u0085\\u009F\xa0'
               '\\u2028\\u2029é€😀')
    frame = encode(RemotingCommand(310, remark=tricky, ext_fields={tricky: tricky}))
    header = frame[8:].decode("utf-8")
    assert header == (f'{{"code":310,"extFields":{{"{escaped}":"{escaped}"}},"flag":0,"language":"JAVA",'
                      f'"opaque":0,"remark":"{escaped}","serializeTypeCurrentRPC":"JSON","version":0}}')
    assert decode(frame).remark == tricky


def test_json_header_escaped_backslash_before_hex_digits_stays_literal() -> None:
    frame = encode(RemotingCommand(310, remark="\\u001f\x1f"))
    assert b'"remark":"\\\\u001f\\u001F"' in frame
    assert decode(frame).remark == "\\u001f\x1f"


def test_request_and_response_helpers() -> None:
    req = RemotingCommand.request(105, {"topic": "T"}, opaque=9, serialize_type=SerializeType.ROCKETMQ)
    assert not req.is_response and not req.is_oneway
    resp = req.response(17, remark="no route")
    assert (resp.opaque, resp.flag, resp.serialize_type) == (9, 1, SerializeType.ROCKETMQ)
    assert resp.is_response
    assert RemotingCommand.request(15, oneway=True).is_oneway


def test_json_defaults_and_unknown_keys() -> None:
    cmd = decode(_json_frame({"code": 10, "whatever": [1]}))
    assert (cmd.language, cmd.version, cmd.flag, cmd.opaque, cmd.remark, cmd.ext_fields) == (
        "JAVA", 0, 0, 0, None, None)


def test_json_ext_values_normalised_like_fastjson() -> None:
    raw = '{"code":310,"extFields":{"d":4,"g":1795334412384,"k":false,"t":true,"x":1.50,"n":null}}'
    cmd = decode(_json_frame(raw))
    assert cmd.ext_fields == {"d": "4", "g": "1795334412384", "k": "false", "t": "true", "x": "1.50"}


def test_json_language_ordinal_and_unknown_name_kept() -> None:
    assert decode(_json_frame({"code": 1, "language": 12})).language == "RUST"
    assert decode(_json_frame({"code": 1, "language": 99})).language == 99
    assert decode(_json_frame({"code": 1, "language": "COBOL"})).language == "COBOL"


def test_unknown_language_byte_kept_and_reencoded() -> None:
    cmd = RemotingCommand(1, language=42, serialize_type=SerializeType.ROCKETMQ)
    frame = encode(cmd)
    assert decode(frame).language == 42
    assert encode(decode(frame)) == frame
    with pytest.raises(HeaderError):
        encode(RemotingCommand(1, language="COBOL", serialize_type=SerializeType.ROCKETMQ))


@pytest.mark.parametrize("header", ['{"code":"10"}', "[1]", "{", '{"code":1,"extFields":{"a":{}}}',
                                    '{"code":1,"opaque":4294967296}', '{"code":1,"remark":5}'])
def test_bad_json_headers(header: str) -> None:
    with pytest.raises(HeaderError):
        decode(_json_frame(header))


def test_truncated_rocketmq_header() -> None:
    frame = encode(RemotingCommand(1, ext_fields={"k": "v"}, serialize_type=SerializeType.ROCKETMQ))
    header_length = struct.unpack_from(">I", frame, 4)[0] & 0xFFFFFF
    cut = frame[4:8 + header_length - 1]
    payload = struct.pack(">I", 1 << 24 | (header_length - 1)) + cut[4:]
    with pytest.raises(HeaderError):
        decode_payload(payload)


def test_length_word_must_match_frame() -> None:
    frame = encode(RemotingCommand(1))
    with pytest.raises(FrameError, match="disagrees"):
        decode(frame + b"x")
    with pytest.raises(FrameError):
        decode(frame[:3])


def test_empty_body_decodes_as_none() -> None:
    assert decode(encode(RemotingCommand(1, body=b""))).body is None


def test_java_hashmap_order() -> None:
    # Java 4.9.8 REGISTER_BROKER request (golden frame json/000001): header fields are put in declaration
    # order, and brokerId/bodyCrc32 share a bucket, so the tie keeps insertion order.
    declared = ["brokerName", "brokerAddr", "clusterName", "haServerAddr", "brokerId", "compressed",
                "bodyCrc32"]
    on_wire = ["brokerId", "bodyCrc32", "clusterName", "brokerAddr", "haServerAddr", "compressed",
               "brokerName"]
    assert list(java_hashmap_order({k: "" for k in declared})) == on_wire


def test_json_header_text_is_the_header_as_written() -> None:
    frame = encode(RemotingCommand(106, opaque=7, body=b"body"))
    header = json_header_text(frame)
    assert header is not None and json.loads(header)["opaque"] == 7 and "body" not in header
    assert json_header_text(encode(RemotingCommand(106, serialize_type=SerializeType.ROCKETMQ))) is None
