"""rmq-frame: one line per frame, concatenated frames, one-line errors with exit status 1."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from rocketmq_spec.codec.cli.frame import main
from rocketmq_spec.codec.command import RemotingCommand, encode
from rocketmq_spec.spec.frame import SerializeType


def test_decode_json_lines_of_concatenated_frames(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = encode(RemotingCommand(105, version=409, opaque=3, ext_fields={"topic": "T"}))
    second = encode(RemotingCommand(17, opaque=3, flag=1, remark="none", body=b"\x00\xff",
                                    serialize_type=SerializeType.ROCKETMQ))
    path = tmp_path / "two.bin"
    path.write_bytes(first + second)
    assert main(["decode", "--json", str(path)]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["offset"] for line in lines] == [0, len(first)]
    assert lines[0]["code_name"] == "GET_ROUTEINFO_BY_TOPIC"
    assert lines[0]["ext_fields"] == {"topic": "T"} and lines[0]["body_b64"] is None
    assert lines[1]["code_name"] == "TOPIC_NOT_EXIST"
    assert lines[1]["serialize_type"] == "ROCKETMQ" and lines[1]["remark"] == "none"
    assert base64.b64decode(lines[1]["body_b64"]) == b"\x00\xff"


def test_human_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "one.bin"
    path.write_bytes(encode(RemotingCommand(34, body=b"abc")))
    assert main(["decode", str(path)]) == 0
    out = capsys.readouterr().out
    assert "code=34(HEART_BEAT)" in out and "body=3 bytes" in out


@pytest.mark.parametrize("content", [b"\x7f\xff\xff\xff", encode(RemotingCommand(34))[:-1],
                                     b"\x00\x00\x00\x06\x00\x00\x00\x02{x"])
def test_bad_input_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes) -> None:
    path = tmp_path / "bad.bin"
    path.write_bytes(content)
    assert main(["decode", str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and captured.err.startswith("rmq-frame: ")


def test_missing_file_is_bad_input_before_any_decoding(capsys: pytest.CaptureFixture[str],
                                                        tmp_path: Path) -> None:
    good = tmp_path / "good.bin"
    good.write_bytes(encode(RemotingCommand(34)))
    assert main(["decode", str(good), str(tmp_path / "absent.bin")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"rmq-frame: file {tmp_path / 'absent.bin'} does not exist\n"
    assert main(["decode", str(tmp_path)]) == 2
