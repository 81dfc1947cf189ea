"""Golden proof: every captured frame decodes to what its INDEX says, and re-encodes like Java.

Java 4.9.8 frames (both serializations) must re-encode byte for byte. Frames of other clients are decoded
and compared with their INDEX entries; their JSON headers re-encode to an equal command in Java's key
order (they are not byte-identical: those clients order keys their own way).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest

from rocketmq_spec.codec.command import RemotingCommand, decode, encode, java_hashmap_order
from rocketmq_spec.spec.frame import SerializeType
from rocketmq_spec.spec.golden import CLIENT_FRAMES, JAVA_FRAMES
from rocketmq_spec.spec.json_header import JSON_HEADER_FIELDS


def _java_entries() -> list[Any]:
    index = json.loads((JAVA_FRAMES / "INDEX.json").read_text())
    return [pytest.param(entry, id=entry["file"]) for entry in index["frames"]]


def _client_entries() -> list[Any]:
    params = []
    for index in sorted(CLIENT_FRAMES.glob("*/*/INDEX.json")):
        for entry in json.loads(index.read_text()):
            path = index.parent / entry["file"]
            params.append(pytest.param(path, entry, id=str(path.relative_to(CLIENT_FRAMES))))
    return params


def _header_json(frame: bytes) -> dict[str, Any]:
    header_length = struct.unpack_from(">I", frame, 4)[0] & 0xFFFFFF
    parsed: dict[str, Any] = json.loads(frame[8:8 + header_length])
    return parsed


def _fields(cmd: RemotingCommand) -> dict[str, Any]:
    return {"code": cmd.code, "flag": cmd.flag, "opaque": cmd.opaque, "language": cmd.language,
            "version": cmd.version, "remark": cmd.remark, "extFields": cmd.ext_fields,
            "serializeType": cmd.serialize_type.name}


@pytest.mark.parametrize("entry", _java_entries())
def test_java_frame(entry: dict[str, Any]) -> None:
    frame = (JAVA_FRAMES / entry["file"]).read_bytes()
    cmd = decode(frame)
    assert _fields(cmd) == {key: entry[key] for key in _fields(cmd)}
    assert len(cmd.body or b"") == entry["bodyLength"]
    assert (cmd.is_response, cmd.is_oneway) == (entry["isResponse"], entry["isOneway"])
    assert encode(cmd) == frame
    if cmd.serialize_type is SerializeType.JSON:
        assert list(_header_json(frame)) == entry["headerJsonKeys"]
        if cmd.ext_fields:
            assert list(java_hashmap_order(cmd.ext_fields)) == list(cmd.ext_fields)


def _as_java_string(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


@pytest.mark.parametrize(("path", "entry"), _client_entries())
def test_client_frame(path: Path, entry: dict[str, Any]) -> None:
    frame = path.read_bytes()
    cmd = decode(frame)
    raw_ext = json.loads(entry["rawHeaderJson"]).get("extFields")
    # The INDEX writes {} where the raw header says "extFields":null; the bytes decide.
    expected_ext = None if raw_ext is None else {k: _as_java_string(v) for k, v in entry["extFields"].items()}
    expected = {**{key: entry[key] for key in ("code", "flag", "opaque", "language", "version", "remark",
                                               "serializeType")}, "extFields": expected_ext}
    assert _fields(cmd) == expected
    assert len(cmd.body or b"") == entry["bodyLen"]
    assert cmd.is_oneway == entry["oneway"]
    again = encode(cmd)
    assert decode(again) == cmd
    written = [f.key for f in JSON_HEADER_FIELDS if f.key in _header_json(again)]
    assert list(_header_json(again)) == written
