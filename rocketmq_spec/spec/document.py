"""Renders the protocol document (``docs/PROTOCOL.md``) from the schemas themselves.

The document is generated, never edited by hand, so it cannot drift from the code: a test regenerates it
and fails when the checked-in copy is stale (``rmq-spec-doc --check``). Each spec module becomes a section
holding its docstring, its ``construct`` structures as field tables, its enumerations, its declarative
tables (module-level tuples of dataclass rows) and the clauses it declares.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import inspect
import pkgutil
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import ModuleType

import construct

from rocketmq_spec import spec
from rocketmq_spec.spec.clauses import Clause, all_clauses
from rocketmq_spec.spec.cli import Parser, add_version, write_or_check

PROG = "rmq-spec-doc"
DOCUMENT_PATH = Path(__file__).resolve().parents[2] / "docs" / "PROTOCOL.md"
"""The document in the checkout this module was imported from (the tests' copy)."""
CHECKOUT_DOCUMENT = Path("docs") / "PROTOCOL.md"
"""What the command writes or checks: relative to the working directory, so it finds the checkout's
document whether the project is installed editable or as a wheel (``tox -e doc``)."""

_NOT_SECTIONS = {"clauses", "errors", "document", "cli", "golden", "enum_source", "enums"}
"""Modules that hold machinery rather than protocol content."""

_READING_ORDER = ("frame", "language", "version", "releases", "codes", "binary_header", "json_header",
                  "header_fields",
                  "headers", "bodies", "batch", "properties", "message_id", "sysflag", "hashing", "commitlog",
                  "consumequeue", "indexfile", "checkpoint", "store_layout", "behaviour", "admin_headers",
                  "admin_bodies", "admin", "ha", "controller", "controller_rules",
                  "ha_autoswitch", "epoch_file", "broker_identity", "pop", "timer", "auth", "auth_resource",
                  "grpc_schema",
                  "grpc_definition",
                  "grpc_service", "grpc_codes", "grpc_rpcs", "client", "client_producer", "client_consumer",
                  "client_grpc")
"""Wire before store, as a reader meets them; modules not listed follow in alphabetical order."""


def _reading_key(name: str) -> tuple[int, str]:
    return (_READING_ORDER.index(name) if name in _READING_ORDER else len(_READING_ORDER), name)


def _cell(value: object) -> str:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        # a nested record (a body field's bean) is named by its first field; its rows have their own table
        value = getattr(value, dataclasses.fields(value)[0].name)
    text = "" if value is None else str(value.name if isinstance(value, enum.Enum) else value)
    return text.replace("|", "\\|").replace("\n", " ")


def _table(columns: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return [*lines, ""]


def _width(subcon: construct.Construct) -> str:
    try:
        return str(subcon.sizeof())
    except (construct.SizeofError, KeyError, AttributeError):
        return "var"


def _struct_rows(struct: construct.Struct) -> list[tuple[str, str, str]]:
    return [(sc.name or "", _width(sc), sc.docs or "") for sc in struct.subcons]


def _is_row_table(value: object) -> bool:
    return (isinstance(value, tuple | list) and len(value) > 0
            and all(dataclasses.is_dataclass(v) and not isinstance(v, type) for v in value)
            and len({type(v) for v in value}) == 1)


def _row_table(rows: Sequence[object]) -> list[str]:
    fields = [f.name for f in dataclasses.fields(rows[0])  # type: ignore[arg-type]
              if f.repr and not isinstance(getattr(rows[0], f.name), tuple | list | dict)]
    return _table(fields, ([getattr(r, name) for name in fields] for r in rows))


def _record_with_tables(name: str, record: object) -> list[str]:
    """A declarative record (a header spec, say) whose tuple-of-rows attributes are its tables."""
    parts = [(f.name, getattr(record, f.name)) for f in dataclasses.fields(record)]  # type: ignore[arg-type]
    tables = [(attr, value) for attr, value in parts if _is_row_table(value)]
    if not tables:
        return []
    scalars = ", ".join(f"{attr} `{value}`" for attr, value in parts
                        if isinstance(value, str | int) and not isinstance(value, bool) and value != "")
    lines = [f"### `{name}`", ""] + ([scalars, ""] if scalars else [])
    for _, rows in tables:
        lines += _row_table(rows)
    return lines


def _row_tables(module: ModuleType) -> Iterable[Sequence[object]]:
    """The module's row tables, and those inside its records (an enum's values, a message's fields)."""
    for value in vars(module).values():
        if _is_row_table(value):
            yield value
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            yield from (v for v in vars(value).values() if _is_row_table(v))


def _defined_here(module: ModuleType, value: object) -> bool:
    return getattr(value, "__module__", module.__name__) == module.__name__


def _section(module: ModuleType, clauses: list[Clause]) -> list[str]:
    short = module.__name__.split(".")[-1]
    doc = inspect.getdoc(module) or ""
    title, _, rest = doc.partition("\n")
    lines = [f"## {short}: {title.rstrip('.')}", "", f"*Schema module `{module.__name__}`.*", ""]
    if rest.strip():
        lines += [rest.strip(), ""]
    tabulated = {(getattr(row, "name", None), getattr(row, "value", getattr(row, "number", None)))
                 for table in _row_tables(module) for row in table}
    for name, value in vars(module).items():
        if name.startswith("_"):
            continue
        if isinstance(value, construct.Struct):
            lines += [f"### `{name}`", ""]
            lines += _table(("field", "width (bytes)", "meaning"), _struct_rows(value))
        elif (inspect.isclass(value) and issubclass(value, enum.Enum) and value is not enum.Enum
              and _defined_here(module, value) and len(value) > 0
              # an enum built from a table of the same module would only repeat that table
              and not {(m.name, m.value) for m in value} <= tabulated):
            lines += [f"### `{name}`", ""]
            if value.__doc__ and value.__doc__ != enum.Enum.__doc__:
                lines += [inspect.cleandoc(value.__doc__), ""]
            lines += _table(("name", "value"), ((m.name, m.value) for m in value))
        elif _is_row_table(value):
            lines += [f"### `{name}`", ""]
            lines += _row_table(value)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            lines += _record_with_tables(name, value)
    mine = [c for c in clauses if c.module == module.__name__]
    if mine:
        lines += ["### Clauses", ""]
        lines += _table(("id", "level", "requirement", "source"),
                        ((f"`{c.id}`", c.level.value, c.text, c.source) for c in mine))
    return lines


def section_modules() -> list[ModuleType]:
    """The spec modules that are sections of the document, in reading order."""
    return [importlib.import_module(f"rocketmq_spec.spec.{info.name}")
            for info in sorted(pkgutil.iter_modules(spec.__path__), key=lambda i: _reading_key(i.name))
            if info.name not in _NOT_SECTIONS]


def render() -> str:
    """The whole document as Markdown; deterministic for a given tree of spec modules."""
    clauses = all_clauses()
    modules = section_modules()
    lines = [
        "# Apache RocketMQ classic protocol, store formats and gRPC protocol",
        "",
        "Generated from the `rocketmq_spec.spec` package by `rmq-spec-doc`; do not edit by hand. Every",
        "requirement has a clause ID that the conformance suite, the fuzzers and the Spark verification job",
        "report against.",
        "Integers are big-endian and strings UTF-8 unless a table says otherwise; the grpc_* sections are",
        "protobuf messages (proto3), whose fields are numbered rather than laid out.",
        "",
        "## Contents",
        "",
    ]
    lines += [f"- `{m.__name__}`: {(inspect.getdoc(m) or '').partition(chr(10))[0]}" for m in modules]
    lines += ["", f"{len(clauses)} clauses in all.", ""]
    for module in modules:
        lines += _section(module, clauses)
    return "\n".join(lines).rstrip() + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = Parser(prog=PROG, description="Write or check docs/PROTOCOL.md.")
    add_version(parser)
    parser.add_argument("--check", action="store_true", help="exit 1 if the checked-in document is stale")
    parser.add_argument("--output", type=Path, default=CHECKOUT_DOCUMENT,
                        help=f"the document (default {CHECKOUT_DOCUMENT}, run from the checkout's root)")
    args = parser.parse_args(argv)
    return write_or_check(PROG, args.output, render(), check=args.check, regenerate=PROG)


if __name__ == "__main__":
    sys.exit(main())
