"""``rmq-conformance coverage``: every clause with the cases that judge it, and whether each can fail.

A case judges its clause only if it can fail (:mod:`rocketmq_spec.conformance.can_fail` reads that from its
source). A clause that no case can judge says why in ``unjudged.toml`` (``[[unjudged]]`` rows of clause and
reason): what no wire exchange or store file shows, or what the reference broker does not do. The report keeps
those apart from clauses that simply lack a case, and names a row whose clause a case now judges. A mutation
report (``python -m rocketmq_spec.mutation report --json``) adds the evidence of a run: the cases
that failed against some mutant of the reference broker.
"""

from __future__ import annotations

import contextlib
import io
import json
import tomllib
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pytest

from rocketmq_spec.conformance.can_fail import failing_functions
from rocketmq_spec.conformance.case import spec_of
from rocketmq_spec.spec.clauses import Level, all_clauses, load_all
from rocketmq_spec.spec.cli import BadInput, Parser, require_file

PACKAGE = Path(__file__).resolve().parent
CASES_DIR = PACKAGE / "cases"
UNJUDGED = PACKAGE / "unjudged.toml"

@dataclass(frozen=True)
class CaseEntry:
    case: str
    """The pytest node id, relative to the project."""
    clause: str
    level: str
    can_fail: bool
    seen_failing: bool | None = None
    """Failed against some mutant in the given mutation report; None without one."""


@dataclass
class ClauseEntry:
    clause: str
    level: str
    text: str
    cases: list[CaseEntry] = field(default_factory=list)
    unjudged_reason: str = ""
    """Why no case can judge the clause (``unjudged.toml``); empty when none is given."""

    @property
    def judged(self) -> bool:
        return any(case.can_fail for case in self.cases)


class _Collector:
    """Records every collected case before the conformance plugin deselects those lacking a target."""

    def __init__(self) -> None:
        self.items: list[pytest.Item] = []

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        self.items = list(items)


def collect_cases(project: Path) -> list[tuple[str, Any, str]]:
    """(node id, case spec, function name) of every case of the suite, slow ones included."""
    collector = _Collector()
    with contextlib.redirect_stdout(io.StringIO()):
        code = pytest.main([str(CASES_DIR), "-p", "rocketmq_spec.conformance.plugin", "--collect-only", "-q",
                            "-p", "no:cacheprovider", "-m", "slow or not slow", "-W", "ignore",
                            "--rootdir", str(project)], plugins=[collector])
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        raise RuntimeError(f"collecting the cases failed (pytest exit {int(code)})")
    found = []
    for item in collector.items:
        spec = spec_of(item)
        if spec is not None:
            found.append((item.nodeid, spec, getattr(item, "originalname", item.name)))
    return found


def mutation_failures(report: Path | None) -> set[str] | None:
    """Cases that failed against some mutant, from a mutation report's ``kills``."""
    if report is None:
        return None
    kills = json.loads(report.read_text(encoding="utf-8")).get("kills", [])
    return {case for kill in kills for case in kill.get("by", [])}


def load_unjudged(path: Path = UNJUDGED) -> dict[str, str]:
    """Clause -> why no case can judge it; a clause the spec does not have is refused, so a mistyped or
    retired ID cannot hide a gap."""
    rows = tomllib.loads(path.read_text(encoding="utf-8")).get("unjudged", [])
    reasons = {row["clause"]: row["reason"] for row in rows}
    known = {c.id for c in all_clauses()}
    unknown = sorted(set(reasons) - known)
    if unknown:
        raise ValueError(f"{path.name} names clauses the spec does not have: {', '.join(unknown)}")
    return reasons


def coverage(project: Path, mutation_report: Path | None = None,
             unjudged: Path = UNJUDGED) -> list[ClauseEntry]:
    load_all()
    failing = failing_functions([*CASES_DIR.glob("*.py"), *PACKAGE.glob("*.py")])
    seen = mutation_failures(mutation_report)
    reasons = load_unjudged(unjudged)
    clauses = {c.id: ClauseEntry(c.id, c.level.value, c.text, unjudged_reason=reasons.get(c.id, ""))
               for c in all_clauses()}
    for node, spec, function in collect_cases(project):
        entry = CaseEntry(node, spec.clause.id, spec.level.value, function in failing,
                          None if seen is None else node in seen)
        clauses[spec.clause.id].cases.append(entry)
    return sorted(clauses.values(), key=lambda c: c.clause)


def summary(clauses: Sequence[ClauseEntry]) -> dict[str, Any]:
    binding = [c for c in clauses if c.level in (Level.MUST.value, Level.SHOULD.value)]
    open_ = [c for c in binding if not c.judged]
    cases = [case for c in clauses for case in c.cases]
    return {"clauses": len(clauses), "must_should": len(binding),
            "must_should_judged": sum(c.judged for c in binding),
            "must_should_unjudged": [c.clause for c in open_ if not c.unjudged_reason],
            "must_should_no_case_can_judge": [c.clause for c in open_ if c.unjudged_reason],
            "reasons_of_judged_clauses": [c.clause for c in clauses if c.judged and c.unjudged_reason],
            "cases": len(cases), "cases_that_cannot_fail": [c.case for c in cases if not c.can_fail],
            "cases_seen_failing": sum(bool(c.seen_failing) for c in cases)}


def as_json(clauses: Sequence[ClauseEntry]) -> str:
    return json.dumps({"summary": summary(clauses),
                       "clauses": [{**asdict(c), "judged": c.judged} for c in clauses]}, indent=2)


def as_text(clauses: Sequence[ClauseEntry]) -> str:
    lines = []
    for entry in clauses:
        mark = "judged" if entry.judged else ("no case" if not entry.cases else "NOT JUDGED")
        if entry.unjudged_reason:
            mark += f"; {UNJUDGED.name} says no case can: {entry.unjudged_reason}"
        lines.append(f"{entry.clause} {entry.level} [{mark}]")
        for case in entry.cases:
            flags = [] if case.can_fail else ["CANNOT FAIL"]
            if case.seen_failing:
                flags.append("failed against a mutant")
            lines.append(f"    {case.case}" + (f"  ({', '.join(flags)})" if flags else ""))
    totals = summary(clauses)
    lines.append(f"{totals['must_should_judged']} of {totals['must_should']} MUST/SHOULD clauses judged by a "
                 f"case that can fail, {len(totals['must_should_no_case_can_judge'])} that no case can judge "
                 f"(why: {UNJUDGED.name}), {len(totals['must_should_unjudged'])} without a case; "
                 f"{totals['cases']} cases, {len(totals['cases_that_cannot_fail'])} that cannot fail")
    if totals["reasons_of_judged_clauses"]:
        lines.append(f"judged now, so out of date in {UNJUDGED.name}: "
                     + ", ".join(totals["reasons_of_judged_clauses"]))
    return "\n".join(lines)


def main(argv: Sequence[str]) -> int:
    """``rmq-conformance coverage``: the report on standard output, and as JSON with ``--json``."""
    parser = Parser(prog="rmq-conformance coverage",
                    description="every clause with the cases that judge it and whether each can fail")
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the report as JSON")
    parser.add_argument("--mutation", type=Path, metavar="FIGURES_JSON",
                        help="a mutation report (python -m rocketmq_spec.mutation report "
                             "--json): mark the cases seen failing against a mutant")
    args = parser.parse_args(argv)
    if args.mutation is not None:
        require_file(args.mutation, "mutation report")
    try:
        clauses = coverage(PACKAGE.parent, args.mutation)
    except (RuntimeError, ValueError, KeyError, tomllib.TOMLDecodeError) as exc:
        raise BadInput(str(exc)) from None
    print(as_text(clauses))
    if args.json is not None:
        args.json.write_text(as_json(clauses), encoding="utf-8")
    return 0
