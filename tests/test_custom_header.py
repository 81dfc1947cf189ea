"""Custom header tables and their extFields mapping, against unit cases and every golden request."""

from __future__ import annotations

import json
from typing import Any

import pytest

from rocketmq_spec.codec.command import decode
from rocketmq_spec.codec.custom_header import decode_header, encode_header
from rocketmq_spec.spec.codes import RequestCode
from rocketmq_spec.spec.errors import HeaderError
from rocketmq_spec.spec.golden import CLIENT_FRAMES, JAVA_FRAMES
from rocketmq_spec.spec.headers import (
    END_TRANSACTION_REQUEST,
    REGISTER_BROKER_REQUEST,
    SEND_MESSAGE_REQUEST,
    SEND_MESSAGE_REQUEST_V2,
    header_for,
)
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC


def test_v2_short_names_map_to_v1_fields() -> None:
    short = {f.name: f.key for f in SEND_MESSAGE_REQUEST_V2.fields}
    assert short["a"] == "producerGroup" and short["i"] == "properties"
    assert short["l"] == "maxReconsumeTimes" and short["m"] == "batch" and short["n"] == "bname"
    v1 = {f.name: (f.type, f.required) for f in SEND_MESSAGE_REQUEST.fields}
    assert {f.key: (f.type, f.required) for f in SEND_MESSAGE_REQUEST_V2.fields} == v1


def test_registry() -> None:
    assert header_for(RequestCode.SEND_BATCH_MESSAGE, False) is SEND_MESSAGE_REQUEST_V2
    assert header_for(RequestCode.SEND_MESSAGE_V2, True) is header_for(RequestCode.SEND_MESSAGE, True)
    assert header_for(RequestCode.HEART_BEAT, False) is None


def test_tolerant_decoding() -> None:
    values = decode_header(REGISTER_BROKER_REQUEST, {
        "brokerName": "b", "brokerAddr": "1.2.3.4:10911", "clusterName": "c", "haServerAddr": "h",
        "brokerId": "0", "compressed": "1", "bodyCrc32": "-5", "AccessKey": "", "Signature": ""})
    assert values == {"brokerName": "b", "brokerAddr": "1.2.3.4:10911", "clusterName": "c",
                      "haServerAddr": "h", "brokerId": 0, "compressed": False, "bodyCrc32": -5}
    assert decode_header(REGISTER_BROKER_REQUEST, {**{k: "x" for k in (
        "brokerName", "brokerAddr", "clusterName", "haServerAddr")}, "brokerId": "1",
        "compressed": "TRUE"})["compressed"] is True


def test_missing_required_field_is_named() -> None:
    with pytest.raises(HeaderError, match="lacks required field msgId") as info:
        decode_header(END_TRANSACTION_REQUEST, {"producerGroup": "g", "tranStateTableOffset": "1",
                                                "commitLogOffset": "2", "commitOrRollback": "8"})
    assert info.value.clause == "RMQ-CMD-REQUIRED"
    with pytest.raises(HeaderError, match="producerGroup"):
        decode_header(END_TRANSACTION_REQUEST, None)


@pytest.mark.parametrize("bad", ["x", "2147483648", "1.5"])
def test_bad_integer(bad: str) -> None:
    spec = header_for(RequestCode.GET_MAX_OFFSET, False)
    assert spec is not None
    with pytest.raises(HeaderError, match="queueId"):
        decode_header(spec, {"topic": "t", "queueId": bad})


def test_encode_like_java() -> None:
    ext = encode_header(SEND_MESSAGE_REQUEST_V2, {
        "producerGroup": "p", "topic": "t", "defaultTopic": DEFAULT_TOPIC, "defaultTopicQueueNums": 4,
        "queueId": 1, "sysFlag": 0, "bornTimestamp": 1700000000000, "flag": 0, "unitMode": False,
        "batch": True, "properties": None})
    assert ext == {"a": "p", "b": "t", "c": DEFAULT_TOPIC, "d": "4", "e": "1", "f": "0", "g": "1700000000000",
                   "h": "0", "k": "false", "m": "true"}
    with pytest.raises(HeaderError):
        encode_header(SEND_MESSAGE_REQUEST_V2, {"nope": 1})
    with pytest.raises(HeaderError, match="producerGroup"):
        encode_header(SEND_MESSAGE_REQUEST_V2, {"topic": "t"})


def _golden_headers() -> list[Any]:
    params = []
    for entry in json.loads((JAVA_FRAMES / "INDEX.json").read_text())["frames"]:
        request_code = entry.get("requestCode", entry["code"])
        spec = header_for(request_code, entry["isResponse"])
        if spec is not None and not (entry["isResponse"] and entry["code"] != 0):
            params.append(pytest.param(JAVA_FRAMES / entry["file"], spec, id=entry["file"]))
    for index in sorted(CLIENT_FRAMES.glob("*/*/INDEX.json")):
        for entry in json.loads(index.read_text()):
            spec = header_for(entry["code"], False)
            if spec is not None:
                path = index.parent / entry["file"]
                params.append(pytest.param(path, spec, id=str(path.relative_to(CLIENT_FRAMES))))
    return params


@pytest.mark.parametrize(("path", "spec"), _golden_headers())
def test_golden_custom_headers(path: Any, spec: Any) -> None:
    ext_fields = decode(path.read_bytes()).ext_fields or {}
    values = decode_header(spec, ext_fields)
    wire = encode_header(spec, values)
    assert decode_header(spec, {**ext_fields, **wire}) == values
    if path.is_relative_to(JAVA_FRAMES):
        assert {k: ext_fields[k] for k in wire} == wire
