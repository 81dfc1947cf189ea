"""The ``.proto`` text of ``apache.rocketmq.v2``, written from the spec's tables.

The project compiles this text, not a copy of Apache's files: a field, an enum value or an RPC exists in the
generated code only because a row of ``rocketmq_spec.spec.grpc_*`` declares it. ``render`` is deterministic,
so a test can regenerate the files and compare them with the checked-in ones. """

from __future__ import annotations

from collections.abc import Iterable

from rocketmq_spec.spec.grpc_codes import CODE
from rocketmq_spec.spec.grpc_definition import DEFINITION_ENUMS, DEFINITION_MESSAGES
from rocketmq_spec.spec.grpc_rpcs import RPCS
from rocketmq_spec.spec.grpc_schema import (
    PACKAGE,
    PROTO_RELEASES,
    SERVICE,
    File,
    Label,
    ProtoEnum,
    ProtoMessage,
    release_key,
)
from rocketmq_spec.spec.grpc_service import SERVICE_MESSAGES

PROTO_DIR = "rocketmq_spec/codec/grpc/v2"
"""Where the emitted files live, relative to the project root (also their import path)."""

NEWEST = PROTO_RELEASES[-1]


def proto_path(file: File) -> str:
    return f"{PROTO_DIR}/{file.value}.proto"


def _in(since: str, release: str) -> bool:
    return release_key(since) <= release_key(release)


def _enum(enum: ProtoEnum, release: str, indent: str) -> list[str]:
    lines = [f"{indent}// {enum.meaning}", f"{indent}enum {enum.name} {{"]
    lines += [f"{indent}  {v.name} = {v.number};" for v in enum.values if _in(v.since, release)]
    return [*lines, f"{indent}}}"]


def _field_line(label: Label, type_: str, name: str, number: int, indent: str) -> str:
    prefix = f"{label.value} " if label is not Label.SINGULAR else ""
    return f"{indent}{prefix}{type_} {name} = {number};"


def _message(message: ProtoMessage, nested: Iterable[ProtoEnum], release: str) -> list[str]:
    lines = [f"// {message.meaning}"] if message.meaning else []
    lines.append(f"message {message.name} {{")
    for enum in nested:
        lines += _enum(enum, release, "  ")
    fields = message.present_in(release)
    emitted_oneofs: set[str] = set()
    for field in fields:
        if not field.oneof:
            lines.append(_field_line(field.label, field.type, field.name, field.number, "  "))
        elif field.oneof not in emitted_oneofs:
            emitted_oneofs.add(field.oneof)
            lines.append(f"  oneof {field.oneof} {{")
            lines += [_field_line(Label.SINGULAR, f.type, f.name, f.number, "    ")
                      for f in fields if f.oneof == field.oneof]
            lines.append("  }")
    return [*lines, "}"]


def _service(release: str) -> list[str]:
    lines = [f"service {SERVICE} {{"]
    for rpc in RPCS:
        if _in(rpc.since, release):
            request = f"stream {rpc.request}" if rpc.client_streaming else rpc.request
            response = f"stream {rpc.response}" if rpc.server_streaming else rpc.response
            lines.append(f"  // {rpc.meaning}")
            lines.append(f"  rpc {rpc.name}({request}) returns ({response}) {{}}")
    return [*lines, "}"]


def render(file: File, release: str = NEWEST) -> str:
    """The ``.proto`` file ``file`` as of the rocketmq-apis release ``release``."""
    lines = [
        "// Generated from the spec tables (spec.grpc_*) by `python -m rocketmq_spec.codec.grpc.generate`: "
        "do not edit.",
        f"// rocketmq-apis release {release}.",
        'syntax = "proto3";',
        "",
        'import "google/protobuf/timestamp.proto";',
        'import "google/protobuf/duration.proto";',
    ]
    if file is File.SERVICE:
        lines.append(f'import "{proto_path(File.DEFINITION)}";')
    lines += ["", f"package {PACKAGE};", ""]
    enums = [*DEFINITION_ENUMS, CODE] if file is File.DEFINITION else []
    for enum in enums:
        if not enum.parent and _in(enum.since, release):
            lines += [*_enum(enum, release, ""), ""]
    messages = DEFINITION_MESSAGES if file is File.DEFINITION else SERVICE_MESSAGES
    for message in messages:
        if _in(message.since, release):
            nested = [e for e in enums if e.parent == message.name and _in(e.since, release)]
            lines += [*_message(message, nested, release), ""]
    if file is File.SERVICE:
        lines += _service(release)
    return "\n".join(lines).rstrip() + "\n"
