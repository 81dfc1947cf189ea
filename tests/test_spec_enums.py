"""The enum classes of ``rocketmq_spec.spec.enums`` are their tables, written out for the type checker."""

from __future__ import annotations

import enum
from pathlib import Path

import pytest

from rocketmq_spec.spec import enum_source
from rocketmq_spec.spec.codes import REQUEST_CODES, RESPONSE_CODES, RequestCode, ResponseCode
from rocketmq_spec.spec.grpc_codes import CODE, Code


def test_the_written_module_is_current() -> None:
    assert enum_source.MODULE.read_text(encoding="utf-8") == enum_source.source(), (
        "regenerate with: python -m rocketmq_spec.spec.enum_source")


def test_the_check_fails_on_a_stale_module(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The command the test above stands for exits 1 on a module that no longer matches, and writing it
    makes it current."""
    copy = tmp_path / "enums.py"
    copy.write_text(enum_source.source().replace("SEND_MESSAGE = 10", "SEND_MESSAGE = 11"), encoding="utf-8")
    monkeypatch.setattr(enum_source, "MODULE", copy)
    assert enum_source.main(["--check"]) == 1
    assert enum_source.main([]) == 0
    assert enum_source.main(["--check"]) == 0


def _functional(name: str, rows: list[tuple[str, int]]) -> type[enum.IntEnum]:
    """What building the enum from the table at import time gives (newest value per name)."""
    return enum.IntEnum(name, list(dict(rows).items()))  # type: ignore[return-value]


def _members(cls: type[enum.IntEnum]) -> list[tuple[str, int, str]]:
    """Every name with its value and the member it resolves to (an alias resolves to the first name)."""
    return [(name, int(member), member.name) for name, member in cls.__members__.items()]


def test_the_enums_hold_every_row_of_their_tables() -> None:
    assert _members(RequestCode) == _members(
        _functional("RequestCode", [(code.name, code.value) for code in REQUEST_CODES]))
    assert _members(ResponseCode) == _members(
        _functional("ResponseCode", [(code.name, code.value) for code in RESPONSE_CODES]))
    assert _members(Code) == _members(
        _functional("Code", [(value.name, value.number) for value in CODE.values]))
