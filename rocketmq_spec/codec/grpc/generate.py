"""``python -m rocketmq_spec.codec.grpc.generate``: write the ``.proto`` files from the spec and compile them.

Writes ``rocketmq_spec/codec/grpc/v2/{definition,service}.proto`` (``rocketmq_spec.codec.grpc.emit``) and runs
grpcio-tools' protoc on them, which writes ``*_pb2.py``, ``*_pb2.pyi`` and ``service_pb2_grpc.py`` beside
them. The outputs are checked in; ``--check`` regenerates into a temporary directory and exits 1 when they
differ (the protoc of the pinned grpcio-tools release must be installed: the ``dev`` extra pins it, since
another release writes different code). """

from __future__ import annotations

import filecmp
import sys
import tempfile
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

from rocketmq_spec.codec.grpc.emit import PROTO_DIR, proto_path, render
from rocketmq_spec.spec.cli import Parser, add_version
from rocketmq_spec.spec.grpc_schema import File

PROG = "python -m rocketmq_spec.codec.grpc.generate"
PROJECT_ROOT = Path(__file__).resolve().parents[3]
GRPCIO_TOOLS = "1.85.1"
"""The grpcio-tools release whose protoc wrote the checked-in code (pinned in the dev extra)."""

OUTPUTS = ("definition.proto", "service.proto", "definition_pb2.py", "definition_pb2.pyi",
           "definition_pb2_grpc.py", "service_pb2.py", "service_pb2.pyi", "service_pb2_grpc.py")


class GenerationError(RuntimeError):
    """protoc is missing, is not the pinned release, or refused the emitted text."""


def generate(root: Path) -> list[Path]:
    """Write the proto files under ``root`` and compile them there; returns the files written."""
    try:
        from grpc_tools import protoc  # test and build equipment, in the dev extra only
    except ImportError as exc:
        raise GenerationError(f"grpcio-tools {GRPCIO_TOOLS} is needed (pip install -e '.[dev]')") from exc
    installed = metadata.version("grpcio-tools")
    if installed != GRPCIO_TOOLS:
        raise GenerationError(f"grpcio-tools {GRPCIO_TOOLS} wrote the checked-in code, "
                              f"{installed} is installed")
    out = root / PROTO_DIR
    out.mkdir(parents=True, exist_ok=True)
    for file in File:
        (root / proto_path(file)).write_text(render(file), encoding="utf-8")
    include = Path(protoc.__file__).parent / "_proto"
    status = protoc.main(["protoc", f"-I{root}", f"-I{include}", f"--python_out={root}", f"--pyi_out={root}",
                          f"--grpc_python_out={root}", *(proto_path(f) for f in File)])
    if status != 0:
        raise GenerationError(f"protoc failed with status {status}")
    return [out / name for name in OUTPUTS]


def stale_outputs(root: Path = PROJECT_ROOT) -> list[str]:
    """The outputs whose checked-in copy differs from a fresh generation."""
    with tempfile.TemporaryDirectory(prefix="rmq-proto-") as scratch:
        fresh = Path(scratch)
        generate(fresh)
        return [name for name in OUTPUTS
                if not (root / PROTO_DIR / name).exists()
                or not filecmp.cmp(fresh / PROTO_DIR / name, root / PROTO_DIR / name, shallow=False)]


def main(argv: Sequence[str] | None = None) -> int:
    parser = Parser(prog=PROG, description="Write and compile the apache.rocketmq.v2 proto files.")
    add_version(parser)
    parser.add_argument("--check", action="store_true", help="exit 1 if the checked-in files are stale")
    args = parser.parse_args(argv)
    try:
        if args.check:
            stale = stale_outputs()
            if stale:
                print(f"stale generated files in {PROTO_DIR}: {', '.join(stale)}; run {PROG}",
                      file=sys.stderr)
                return 1
            return 0
        written = generate(PROJECT_ROOT)
    except GenerationError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {len(written)} files in {PROTO_DIR}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
