"""The gRPC interface generated from the spec's tables: up to date, and equal to Apache's own build.

Apache publishes the interface as rocketmq-apis; the rocketmq-proto jar of a provisioned release carries
its compiled descriptors. A small Java program of the project prints them, and every message, field
(number, type, label, oneof), enum value and RPC must match the spec's tables at the proto release that
Apache release is built against: 2.0.4 for 5.3.3, 2.1.2 for 5.5.0.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import descriptor_pb2

from rocketmq_spec.apache.maven import ProvisionError, resolve
from rocketmq_spec.apache.releases import release
from rocketmq_spec.codec.grpc import generate
from rocketmq_spec.codec.grpc.emit import proto_path, render
from rocketmq_spec.spec.grpc_schema import PROTO_OF_RELEASE, File
from tests import process_tree

JAVA_DUMP = Path(__file__).resolve().parents[1] / "interop" / "java" / "DumpProtoDescriptors.java"


def test_checked_in_code_is_generated_from_the_tables() -> None:
    assert generate.stale_outputs() == []


def _shape(file: descriptor_pb2.FileDescriptorProto) -> dict[str, Any]:
    """What the wire depends on: names and numbers, not file names, options or comments."""
    def message(m: descriptor_pb2.DescriptorProto) -> Any:
        oneofs = [o.name for o in m.oneof_decl]
        fields = sorted((f.name, f.number, f.label, f.type, f.type_name, f.proto3_optional,
                         "" if not f.HasField("oneof_index") or f.proto3_optional else oneofs[f.oneof_index])
                        for f in m.field)
        return fields, sorted(enum(e) for e in m.enum_type), sorted(m.name for m in m.nested_type)

    def enum(e: descriptor_pb2.EnumDescriptorProto) -> Any:
        return e.name, sorted((v.name, v.number) for v in e.value)

    return {
        "package": file.package,
        "messages": {m.name: message(m) for m in file.message_type},
        "enums": sorted(enum(e) for e in file.enum_type),
        "services": {s.name: sorted((m.name, m.input_type, m.output_type, m.client_streaming,
                                     m.server_streaming) for m in s.method) for s in file.service},
    }


def _ours(release: str, tmp_path: Path) -> dict[str, descriptor_pb2.FileDescriptorProto]:
    from grpc_tools import protoc

    for file in File:
        target = tmp_path / proto_path(file)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render(file, release), encoding="utf-8")
    out = tmp_path / "set.pb"
    include = Path(protoc.__file__).parent / "_proto"
    assert protoc.main(["protoc", f"-I{tmp_path}", f"-I{include}", f"--descriptor_set_out={out}",
                        *(proto_path(f) for f in File)]) == 0
    files = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file
    return {f.name.rsplit("/", 1)[-1].removesuffix(".proto"): f for f in files}


def _apache(version: str) -> dict[str, descriptor_pb2.FileDescriptorProto]:
    try:
        classpath = resolve(release(version), progress=False)
    except ProvisionError as exc:
        pytest.skip(f"Apache RocketMQ {version} cannot be provisioned here: {exc}")
    out = process_tree.run(["java", "-Xmx256m", "-cp", ":".join(map(str, classpath)), str(JAVA_DUMP)],
                           capture_output=True, text=True, timeout=120, check=True).stdout
    parsed = dict(line.split(" ", 1) for line in out.splitlines())
    return {name: descriptor_pb2.FileDescriptorProto.FromString(base64.b64decode(data))
            for name, data in parsed.items()}


@pytest.mark.parametrize("version", ["5.3.3", "5.5.0"])
def test_tables_equal_apaches_compiled_interface(version: str, tmp_path: Path) -> None:
    ours, theirs = _ours(PROTO_OF_RELEASE[version], tmp_path), _apache(version)
    for name in ("definition", "service"):
        mine, apache = _shape(ours[name]), _shape(theirs[name])
        assert mine["package"] == apache["package"]
        assert mine["enums"] == apache["enums"], name
        assert set(mine["messages"]) == set(apache["messages"]), name
        for message, shape in apache["messages"].items():
            assert mine["messages"][message] == shape, message
        assert mine["services"] == apache["services"]
