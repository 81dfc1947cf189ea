"""Declaring a case: the clause it checks, the requirement in one sentence, and its level.

A case is an ordinary pytest function carrying the ``rmq_case`` marker, so that pytest-xdist, ``-k`` and
``-m`` work unchanged. Tables of similar checks become ``parametrize`` rows that each carry their own
clause and requirement, which keeps one meaningful check per row instead of one copied function per row.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pytest

from rocketmq_spec.spec.clauses import Clause, Level, get

MARKER = "rmq_case"
WAITS_MARKER = "rmq_waits_on_target"

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class CaseSpec:
    clause: Clause
    requirement: str
    level: Level
    java_note: str = ""
    """Where Apache RocketMQ departs from the documented protocol, with the Java source that shows it."""


def declare(clause_id: str, requirement: str, *, level: Level | None = None, java_note: str = "") -> CaseSpec:
    """Resolve the clause now, so that a mistyped ID fails at import rather than in a report."""
    found = get(clause_id)
    return CaseSpec(found, requirement, level or found.level, java_note)


def case(clause_id: str, requirement: str, *, level: Level | None = None,
         java_note: str = "") -> pytest.MarkDecorator:
    """Mark a test function as a conformance case of ``clause_id``."""
    return getattr(pytest.mark, MARKER)(declare(clause_id, requirement, level=level, java_note=java_note))


@dataclass(frozen=True)
class Row:
    """One row of a data-driven case: its own id, clause and requirement plus the data it feeds in."""

    id: str
    clause_id: str
    requirement: str
    data: Any = None
    level: Level | None = None
    java_note: str = ""
    marks: Sequence[pytest.MarkDecorator] = field(default_factory=tuple)


def waits_on_target(function: F) -> F:
    """Marks a case that waits on a timer of the target's (a transaction check-back pass, say): such cases
    run first, so the other cases fill their wait rather than follow it."""
    marked: F = getattr(pytest.mark, WAITS_MARKER)(function)
    return marked


def table(argname: str, rows: Sequence[Row]) -> Callable[[F], F]:
    """Parametrize ``argname`` with each row's data; every row becomes a case with its own clause."""
    params = [
        pytest.param(row.data, id=row.id,
                     marks=(case(row.clause_id, row.requirement, level=row.level, java_note=row.java_note),
                            *row.marks))
        for row in rows
    ]
    return pytest.mark.parametrize(argname, params)


def spec_of(item: pytest.Item) -> CaseSpec | None:
    """The declaration of a collected case; the row's marker wins over a function-level one."""
    marker = item.get_closest_marker(MARKER)
    return None if marker is None else marker.args[0]
