"""``rmq-frame``: decode captured RemotingCommand frames for people and scripts.

A file may hold one frame or many concatenated (a raw dump of one direction of a connection); each frame
becomes one line. A file that is missing (or not a file) is bad input: one line on stderr and exit status
2, before any file is decoded. A file holding bytes that are not frames is what the tool is for: the
frames before them are printed, the problem is one line on stderr naming the clause, the other files are
still decoded, and the exit status is 1. Never a traceback.
"""

from __future__ import annotations

import base64
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.framing import FrameDecoder, FrameRejected
from rocketmq_spec.spec.cli import BadInput, Parser, add_version, fail, one_line, require_file
from rocketmq_spec.spec.codes import code_name
from rocketmq_spec.spec.errors import FrameError, RocketMQSpecError
from rocketmq_spec.spec.frame import FRAME_LENGTH


def frames_in(data: bytes) -> Iterator[tuple[int, RemotingCommand]]:
    """(offset, command) of each concatenated frame; trailing bytes that start no full frame are an error."""
    decoder = FrameDecoder()
    offset = 0
    for event in decoder.receive_data(data):
        if isinstance(event, FrameRejected):
            raise event.error
        yield offset, event.command
        offset += len(event.frame)
    if decoder.buffered:
        raise FrameError("file ends inside a frame", expected="a complete frame",
                         seen=f"{decoder.buffered} bytes", clause=FRAME_LENGTH.id, offset=offset)


def describe(cmd: RemotingCommand) -> dict[str, Any]:
    """The fields of a command as JSON-ready values, the body in base64 so any bytes survive."""
    return {
        "serialize_type": cmd.serialize_type.name,
        "code": cmd.code,
        "code_name": code_name(cmd.code, is_response=cmd.is_response),
        "language": cmd.language,
        "version": cmd.version,
        "opaque": cmd.opaque,
        "flag": cmd.flag,
        "is_response": cmd.is_response,
        "is_oneway": cmd.is_oneway,
        "remark": cmd.remark,
        "ext_fields": cmd.ext_fields,
        "body_b64": None if cmd.body is None else base64.b64encode(cmd.body).decode("ascii"),
    }


def _human(where: str, fields: dict[str, Any]) -> str:
    kind = "response" if fields["is_response"] else ("oneway" if fields["is_oneway"] else "request")
    body = fields["body_b64"]
    body_size = 0 if body is None else len(base64.b64decode(body))
    return (f"{where} {fields['serialize_type']} {kind} code={fields['code']}({fields['code_name']}) "
            f"opaque={fields['opaque']} flag={fields['flag']} language={fields['language']} "
            f"version={fields['version']} remark={fields['remark']!r} ext_fields={fields['ext_fields']} "
            f"body={body_size} bytes")


def _decode_file(path: str, as_json: bool) -> None:
    data = Path(path).read_bytes()
    for offset, cmd in frames_in(data):
        fields = describe(cmd)
        if as_json:
            print(json.dumps({"file": path, "offset": offset, **fields}, ensure_ascii=False))
        else:
            print(_human(f"{path}@{offset}", fields))


def main(argv: Sequence[str] | None = None) -> int:
    parser = Parser(prog="rmq-frame", description="Decode RocketMQ remoting frames.")
    add_version(parser)
    commands = parser.add_subparsers(dest="command", required=True)
    decode = commands.add_parser("decode", help="print every frame of each file")
    decode.add_argument("files", nargs="+", metavar="FILE")
    decode.add_argument("--json", action="store_true", help="one JSON object per frame")
    args = parser.parse_args(argv)
    try:
        for path in args.files:
            require_file(Path(path))
    except BadInput as exc:
        return fail("rmq-frame", exc)
    status = 0
    for path in args.files:
        try:
            _decode_file(path, args.json)
        except (OSError, RocketMQSpecError) as exc:
            where = "" if isinstance(exc, OSError) else f"{path}: "
            print(f"rmq-frame: {where}{one_line(exc)}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
