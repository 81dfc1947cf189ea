"""Verdict tables: counts per area for one run (what every report format starts with), and the case ×
run matrix that compares runs — two targets, or repeated runs of one target."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rocketmq_spec.conformance.result import CaseResult
from rocketmq_spec.conformance.verdict import VERDICT_ORDER, Verdict


def by_area(results: Iterable[CaseResult]) -> dict[str, Counter[Verdict]]:
    """Verdict counts per area, areas sorted by name; the key ``"total"`` is added last."""
    table: dict[str, Counter[Verdict]] = {}
    for result in results:
        table.setdefault(result.area, Counter())[result.verdict] += 1
    ordered = dict(sorted(table.items()))
    ordered["total"] = sum(ordered.values(), Counter())
    return ordered


def totals(results: Iterable[CaseResult]) -> dict[str, int]:
    counts = Counter(r.verdict for r in results)
    return {v.value: counts[v] for v in VERDICT_ORDER}


def is_failure(result: CaseResult, *, strict: bool) -> bool:
    """FAIL and CRASH break conformance; under ``strict`` so does NON-STRICT. An ERROR fails the run
    without saying anything of the target."""
    return (result.verdict.breaks_conformance or result.verdict is Verdict.ERROR
            or (strict and result.verdict is Verdict.NON_STRICT))


def conforms(results: Iterable[CaseResult], *, strict: bool) -> bool:
    return not any(is_failure(r, strict=strict) for r in results)


# -- comparing runs ------------------------------------------------------------------------------------
#
# A run's index.json is all a comparison needs: it names the target and the time, and each case's clause,
# level, verdict and (under a profile) the deviation that set it. Comparing two targets, or ten runs of one
# target, is the same table: one row per case, one column per run.

ABSENT = "—"
"""The cell of a case a run did not report (deselected, or unknown to that version of the suite)."""


class ReportError(ValueError):
    """An index.json that cannot be read as a conformance report."""


@dataclass(frozen=True)
class Report:
    """One run as its index.json records it: what was checked, when, and each case's verdict."""

    label: str
    source: str
    """The index.json path as given, so a generated document says what it was made from."""
    meta: dict[str, Any]
    cases: dict[str, dict[str, Any]]
    """Case id -> its index entry (clause, level, verdict, deviation)."""

    @classmethod
    def load(cls, path: Path, label: str | None = None) -> Report:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            cases = {entry["case"]: entry for entry in data["cases"]}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ReportError(f"{path}: not a conformance index.json ({exc})") from exc
        meta = {k: v for k, v in data.items() if k not in ("cases", "areas")}
        return cls(label or _describe(meta), str(path), meta, cases)

    def verdict(self, case_id: str) -> str:
        entry = self.cases.get(case_id)
        return ABSENT if entry is None else str(entry["verdict"])

    def total(self, verdict: Verdict) -> int:
        return int(self.meta.get("totals", {}).get(verdict.value, 0))

    @property
    def started(self) -> str:
        started = self.meta.get("started")
        if not isinstance(started, int | float):
            return ABSENT
        return datetime.fromtimestamp(started, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _describe(meta: dict[str, Any]) -> str:
    parts = [f"{name} {meta[name]}" for name in ("namesrv", "broker", "store") if meta.get(name)]
    return ", ".join(parts) or "unnamed target"


def case_ids(reports: Sequence[Report]) -> list[str]:
    """Every case any of the runs reported, sorted."""
    return sorted({case for report in reports for case in report.cases})


def differences(reports: Sequence[Report]) -> list[str]:
    """Cases whose verdict is not the same in every run (a case one run lacks counts as different)."""
    return [case for case in case_ids(reports) if len({r.verdict(case) for r in reports}) > 1]


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    return [line(headers), line(["---"] * len(headers)), *(line(row) for row in rows)]


def render_comparison(reports: Sequence[Report], *, title: str = "Conformance results") -> str:
    """The case × run matrix as Markdown: the runs, what differs between them, why any verdict is not
    PASS (with the cited deviation when a profile set it), then every case."""
    if len(reports) < 2:
        raise ReportError("a comparison needs at least two reports")
    out = [f"# {title}", "",
           "Generated by `rmq-conformance compare` from the runs' `index.json`; regenerate it with the same "
           "command instead of editing it.", ""]
    for section in (_runs, _differences, _not_passed, _every_case):
        out += section(reports)
    return "\n".join(out).rstrip() + "\n"


def _labels(reports: Sequence[Report]) -> list[str]:
    return [r.label for r in reports]


def _runs(reports: Sequence[Report]) -> list[str]:
    def row(name: str, cells: Iterable[str]) -> list[str]:
        return [name, *cells]

    rows = [
        row("report", (f"`{r.source}`" for r in reports)),
        row("run started", (r.started for r in reports)),
        *(row(name, (str(r.meta.get(name) or ABSENT) for r in reports)) for name in ("namesrv", "broker")),
        row("profile", (str(r.meta.get("profile", ABSENT)) for r in reports)),
        row("strict", (str(bool(r.meta.get("strict"))).lower() for r in reports)),
        row("cases", (str(len(r.cases)) for r in reports)),
        *(row(v.value, (str(r.total(v)) for r in reports)) for v in VERDICT_ORDER
          if v is not Verdict.ERROR or any(r.total(v) for r in reports)),  # errors of a run, when any
    ]
    return ["## Runs", "", *_table(["", *_labels(reports)], rows), ""]


def _differences(reports: Sequence[Report]) -> list[str]:
    changed = differences(reports)
    if not changed:
        return ["## Differences", "", "Every case has the same verdict in every run.", ""]
    rows = ([f"`{case}`", *(r.verdict(case) for r in reports)] for case in changed)
    return ["## Differences", "", f"{len(changed)} case(s) do not have the same verdict in every run.", "",
            *_table(["case", *_labels(reports)], rows), ""]


def _not_passed(reports: Sequence[Report]) -> list[str]:
    """Why each verdict other than PASS was given: the verdict policy's row it rests on, the case's message
    and, when a target profile set the verdict, the deviation it cites."""
    lines = []
    for report in reports:
        for case, entry in sorted(report.cases.items()):
            if entry["verdict"] == Verdict.PASS.value:
                continue
            why = " ".join(str(entry.get("message", "")).split()) or "no message recorded"
            cited = f" Known deviation: {entry['deviation']}" if entry.get("deviation") else ""
            row = f" (policy row {entry['basis']})" if entry.get("basis") else ""
            lines.append(f"- {report.label}, `{case}`, {entry['verdict']}{row}: {why}.{cited}")
    return ["## Verdicts other than PASS", "", *(lines or ["Every case passed in every run."]), ""]


def _every_case(reports: Sequence[Report]) -> list[str]:
    rows = ([f"`{case}`", *_clause(reports, case), *(r.verdict(case) for r in reports)]
            for case in case_ids(reports))
    return ["## Every case", "", *_table(["case", "clause", "level", *_labels(reports)], rows), ""]


def _clause(reports: Sequence[Report], case: str) -> tuple[str, str]:
    entry = next(r.cases[case] for r in reports if case in r.cases)
    return str(entry.get("clause", ABSENT)), str(entry.get("level", ABSENT))
