"""The session's figures: mutants killed, survived and equivalent, each survivor with its mutated line.

Reviewed survivors are listed in ``reviewed.toml`` beside this module, each matched by what it changes
(module, enclosing definition, operator, the original and the mutated text), never by line number: the
equivalent ones with why no client could tell them from the original, the gaps of the suite with what a
case would have to do. The score is killed / (killed + survivors that are not equivalent); mutants no case
runs count as survivors (a case is missing for them too), and so do the reviewed gaps.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from cosmic_ray.work_db import WorkDB, use_db
from cosmic_ray.work_item import TestOutcome, WorkerOutcome

from rocketmq_spec.mutation.scope import out_of_reach
from rocketmq_spec.mutation.session import DATABASE, UNCOVERED, Mutant, describe, pristine

REVIEWED = Path(__file__).with_name("reviewed.toml")
FAILED_CASE = re.compile(r"^(?:FAILED|ERROR) (\S+::\S+)", re.MULTILINE)


@dataclass(frozen=True)
class Reviewed:
    """One reviewed survivor: what it changes and the verdict's reason."""

    module: str
    definition: str
    operator: str
    original: str
    mutated: str
    why: str

    @property
    def key(self) -> Key:
        return self.module, self.definition, self.operator, self.original, self.mutated


Key = tuple[str, str, str, str, str]


def load_reviewed(verdict: str, path: Path = REVIEWED) -> dict[Key, Reviewed]:
    """The reviewed survivors of one verdict (``equivalent`` or ``missing-case``), by what they change."""
    entries = tomllib.loads(path.read_text(encoding="utf-8")).get(verdict, [])
    found = [Reviewed(**entry) for entry in entries]
    return {e.key: e for e in found}


@dataclass
class Figures:
    killed: list[dict[str, Any]] = field(default_factory=list)
    survived: list[dict[str, Any]] = field(default_factory=list)
    equivalent: list[dict[str, Any]] = field(default_factory=list)
    unreachable: list[dict[str, Any]] = field(default_factory=list)
    """Survivors in definitions no suite run reaches (``scope.OUT_OF_REACH``)."""
    pending: int = 0
    unused_reviewed: list[dict[str, str]] = field(default_factory=list)

    @property
    def score(self) -> float | None:
        """Killed of the non-equivalent mutants the suite can reach."""
        judged = len(self.killed) + len(self.survived)
        return len(self.killed) / judged if judged else None

    @property
    def score_with_unreachable(self) -> float | None:
        judged = len(self.killed) + len(self.survived) + len(self.unreachable)
        return len(self.killed) / judged if judged else None

    def as_json(self) -> dict[str, Any]:
        return {"killed": len(self.killed), "survived": len(self.survived),
                "equivalent": len(self.equivalent), "unreachable": len(self.unreachable),
                "pending": self.pending, "score": self.score,
                "score_with_unreachable": self.score_with_unreachable, "survivors": self.survived,
                "equivalents": self.equivalent, "unreachables": self.unreachable, "kills": self.killed,
                "unused_reviewed": self.unused_reviewed}


def _row(mutant: Mutant, **extra: Any) -> dict[str, Any]:
    return {"module": mutant.module, "line": mutant.first_line, "definition": mutant.definition,
            "operator": mutant.operator, "original": mutant.original, "mutated": mutant.mutated, **extra}


def figures(out: Path, equivalents: dict[Key, Reviewed] | None = None,
            gaps: dict[Key, Reviewed] | None = None) -> Figures:
    """Classify every finished mutant of the session in ``out``."""
    listed = load_reviewed("equivalent") if equivalents is None else equivalents
    known = load_reviewed("missing-case") if gaps is None else gaps
    out = out.resolve()  # work items name their modules by absolute path
    tree = pristine(out)
    result = Figures()
    used = set()
    with use_db(str(out / DATABASE), WorkDB.Mode.open) as db:
        result.pending = sum(1 for _ in db.pending_work_items)
        for item, outcome in db.completed_work_items:
            if outcome.worker_outcome is not WorkerOutcome.NORMAL:
                continue
            described = describe(item, tree)
            if described is None:
                continue
            mutant = described[0]
            if outcome.test_outcome is not TestOutcome.SURVIVED:
                result.killed.append(_row(mutant, by=FAILED_CASE.findall(outcome.output or "")))
            elif mutant.key in listed:
                used.add(mutant.key)
                result.equivalent.append(_row(mutant, why=listed[mutant.key].why))
            elif (reach := out_of_reach(mutant.module, mutant.definition)) is not None:
                result.unreachable.append(_row(mutant, why=reach.why))
            else:
                used.add(mutant.key)
                gap = known.get(mutant.key)
                result.survived.append(_row(mutant, uncovered=outcome.output == UNCOVERED,
                                            missing_case=gap.why if gap else None))
    result.unused_reviewed = [asdict(e) for key, e in (listed | known).items() if key not in used]
    for rows in (result.killed, result.survived, result.equivalent, result.unreachable):
        rows.sort(key=lambda r: (r["module"], r["line"], r["operator"]))
    return result


def text(result: Figures) -> str:
    def percent(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.1%}"

    lines = [f"mutants: {len(result.killed)} killed, {len(result.survived)} survived, "
             f"{len(result.equivalent)} equivalent, {len(result.unreachable)} out of the suite's reach, "
             f"{result.pending} pending; killed of the non-equivalent the suite reaches: "
             f"{percent(result.score)} ({percent(result.score_with_unreachable)} counting those out of "
             "reach)"]
    for row in result.survived:
        why = " (no case runs it)" if row["uncovered"] else ""
        if row["missing_case"]:
            why += f"; missing case: {row['missing_case']}"
        lines.append(f"SURVIVED {row['module']}:{row['line']} {row['definition']} [{row['operator']}]: "
                     f"{row['original']!r} -> {row['mutated']!r}{why}")
    for row in result.equivalent:
        lines.append(f"EQUIVALENT {row['module']}:{row['line']} {row['definition']}: {row['why']}")
    for row in result.unreachable:
        lines.append(f"OUT OF REACH {row['module']}:{row['line']} {row['definition']}: "
                     f"{row['original']!r} -> {row['mutated']!r}")
    return "\n".join(lines)


def write(result: Figures, path: Path) -> None:
    path.write_text(json.dumps(result.as_json(), indent=2), encoding="utf-8")
