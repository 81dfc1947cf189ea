"""Writes ``rocketmq_spec/spec/enums.py``: the code tables as ``enum.IntEnum`` classes a type checker sees.

The tables (``codes.REQUEST_CODES``, ``codes.RESPONSE_CODES``, ``grpc_codes.CODE``) are the source: each
row says in which releases a code is declared. An enum built from them at import time would be opaque to
a type checker (``RequestCode.SEND_MESSAGE`` an error, or every use typed ``Any``), so the enums are
written out as classes from the tables instead, and ``python -m rocketmq_spec.spec.enum_source --check``
(run by ``tests/test_spec_enums.py``) fails when the written module no longer matches its tables.

A name whose value moved between releases (5.1.1's controller codes) takes its newest value; a value
declared under two names makes the second an alias of the first, as ``enum`` does.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from rocketmq_spec.spec.cli import Parser, write_or_check

PROG = "python -m rocketmq_spec.spec.enum_source"
MODULE = Path(__file__).with_name("enums.py")

HEADER = '''"""The protocol's code tables as enums, written by ``python -m rocketmq_spec.spec.enum_source``
from ``rocketmq_spec.spec.codes`` (RequestCode, ResponseCode) and ``rocketmq_spec.spec.grpc_codes`` (Code).

Do not edit: change the tables and run the command again (a test fails while this module is stale). Import
the enums from the modules of their tables.
"""

from __future__ import annotations

import enum
'''


def _members(rows: Iterable[tuple[str, int]]) -> dict[str, int]:
    newest: dict[str, int] = {}
    for name, value in rows:
        newest[name] = value
    return newest


def _class(name: str, doc: str, members: dict[str, int]) -> list[str]:
    return ["", "", f"class {name}(enum.IntEnum):", f'    """{doc}"""', "",
            *(f"    {member} = {value}" for member, value in members.items())]


def source() -> str:
    """The text ``enums.py`` must have for the tables as they are."""
    from rocketmq_spec.spec.codes import REQUEST_CODES, RESPONSE_CODES
    from rocketmq_spec.spec.grpc_codes import CODE

    lines = [HEADER.rstrip("\n")]
    lines += _class("RequestCode", "Remoting request codes of every covered release (RequestCode.java).",
                    _members((code.name, code.value) for code in REQUEST_CODES))
    lines += _class("ResponseCode", "Remoting response codes of every covered release (ResponseCode.java).",
                    _members((code.name, code.value) for code in RESPONSE_CODES))
    lines += _class("Code", "The outcome of a gRPC call (``apache.rocketmq.v2.Code``).",
                    _members((value.name, value.number) for value in CODE.values))
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = Parser(prog=PROG, description="Write or check rocketmq_spec/spec/enums.py.")
    parser.add_argument("--check", action="store_true", help="exit 1 if enums.py is stale")
    args = parser.parse_args(argv)
    return write_or_check(PROG, MODULE, source(), check=args.check, regenerate=PROG)


if __name__ == "__main__":
    sys.exit(main())
