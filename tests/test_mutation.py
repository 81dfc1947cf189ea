"""Mutation testing of the suite in its short form (``tox -e mutation`` is the full one): a few mutants of
one small module of the reference broker, judged by the name server cases that run its lines.

Each mutant really runs: it is written into a copy of the project, the broker of that copy is started and
the cases covering the mutated lines run against it; the figures come from Cosmic Ray's session database.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rocketmq_spec.conformance.can_fail import failing_functions
from rocketmq_spec.mutation import report
from rocketmq_spec.mutation.__main__ import main
from rocketmq_spec.mutation.report import Reviewed
from rocketmq_spec.mutation.session import changed_lines
from tests.golden import PROJECT_ROOT

MODULE = "rocketmq_spec/reference_broker/namesrv/kv.py"
CASES = "rocketmq_spec/conformance/cases/test_namesrv.py"
SAMPLE = 3


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("mutation") / "session"
    figures = out.parent / "figures.json"
    assert main(["run", "--project", str(PROJECT_ROOT), "--out", str(out), "--modules", MODULE,
                 "--cases", CASES, "--sample", str(SAMPLE), "--json", str(figures)]) == 0
    return out


def test_every_sampled_mutant_is_judged_with_its_line(session: Path) -> None:
    figures = json.loads((session.parent / "figures.json").read_text())
    judged = ("killed", "survived", "equivalent", "unreachable")
    assert sum(figures[outcome] for outcome in judged) == SAMPLE
    assert figures["pending"] > 0  # the rest of the module is left for a later run
    assert figures["killed"] >= 1, figures
    for row in figures["kills"]:
        assert row["by"] and all(case.startswith(CASES) for case in row["by"])
    for row in figures["survivors"] + figures["kills"] + figures["unreachables"]:
        assert row["module"] == MODULE and row["line"] > 0 and row["original"] != row["mutated"]


def test_a_listed_equivalent_mutant_is_not_counted_as_a_survivor(session: Path) -> None:
    """A survivor out of the suite's reach is a survivor too: listing it as equivalent moves it."""
    result = report.figures(session, equivalents={}, gaps={})
    rows = result.survived + result.unreachable
    if not rows:
        pytest.skip("every sampled mutant was killed")
    row = rows[0]
    listed = Reviewed(row["module"], row["definition"], row["operator"], row["original"], row["mutated"],
                      "for the test")
    again = report.figures(session, equivalents={listed.key: listed}, gaps={})
    assert len(again.equivalent) == 1
    assert len(again.survived) + len(again.unreachable) == len(rows) - 1
    assert again.unused_reviewed == []
    if result.survived and row in result.survived:
        gap = report.figures(session, equivalents={}, gaps={listed.key: listed})
        assert len(gap.survived) == len(result.survived) and gap.score == result.score
        assert [r["missing_case"] for r in gap.survived if r["line"] == row["line"]] == ["for the test"]


def test_a_case_that_only_notes_cannot_fail(tmp_path: Path) -> None:
    source = tmp_path / "cases.py"
    source.write_text(
        "def helper(check):\n    check.equal('x', 1, 2)\n\n"
        "def test_judges(check):\n    helper(check)\n\n"
        "def test_notes(check):\n    check.note('x', 1)\n    raise Info('nothing to judge')\n")
    assert failing_functions([source]) >= {"helper", "test_judges"}
    assert "test_notes" not in failing_functions([source])


def test_a_mutant_of_a_module_edited_after_planning_is_described_where_it_changes() -> None:
    source, mutated = "a = 1\nb = 2\nc = 3\n", "a = 1\nb = 2\nc = 4\n"
    assert changed_lines(source, mutated, 3, 3) == (3, 3)
    assert changed_lines(source, mutated, 1, 1) == (3, 3)  # planned at line 1, the module grew since
