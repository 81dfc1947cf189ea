"""The comparison page of two reports: the same cases side by side, cases whose verdicts differ first.

Made for runs against two targets (the reference broker and Apache RocketMQ 4.9.8, say) or two runs of
one target. The summary gives each side's verdict counts and how many cases moved from one verdict to
another; rows carry both verdicts with what each target did, and filter by change, area and level.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from rocketmq_spec.conformance.report import clause_page, json_files
from rocketmq_spec.conformance.report.html_page import (
    LEGEND,
    SEVERITY_ORDER,
    clause_link,
    e,
    filter_form,
    filter_link,
    page,
    row_attributes,
    verdict_cell,
)
from rocketmq_spec.conformance.result import CaseResult

ABSENT = "absent"
"""A case one report has and the other lacks (a selection, a slow case, a newer suite)."""
DIFFERS, SAME = "differs", "same"


@dataclass(frozen=True)
class Side:
    label: str
    results: dict[str, CaseResult]


@dataclass(frozen=True)
class Pair:
    case_id: str
    a: CaseResult | None
    b: CaseResult | None

    @property
    def any(self) -> CaseResult:
        found = self.a or self.b
        assert found is not None
        return found

    def verdict(self, side: CaseResult | None) -> str:
        return side.verdict.value if side else ABSENT

    @property
    def transition(self) -> str:
        return f"{self.verdict(self.a)} → {self.verdict(self.b)}"

    @property
    def differs(self) -> bool:
        return self.verdict(self.a) != self.verdict(self.b)

    def sort_key(self) -> tuple[bool, int, str, str]:
        worst = min(SEVERITY_ORDER.index(r.verdict) for r in (self.a, self.b) if r is not None)
        return not self.differs, worst, self.any.area, self.case_id


def load(directory: Path, label: str | None = None) -> Side:
    """A report directory (its ``index.json`` and case files), labelled by its target unless told."""
    meta, results = json_files.read(directory)
    described = ", ".join(f"{key} {meta[key]}" for key in ("namesrv", "broker", "store") if meta.get(key))
    return Side(label or described or directory.name, {r.case_id: r for r in results})


def pairs(a: Side, b: Side) -> list[Pair]:
    return sorted((Pair(case, a.results.get(case), b.results.get(case))
                   for case in a.results.keys() | b.results.keys()), key=Pair.sort_key)


def _summary(a: Side, b: Side, matched: list[Pair]) -> str:
    counts = [Counter(r.verdict for r in side.results.values()) for side in (a, b)]
    rows = "".join(f'<tr><th class="verdict v-{v.name}">{v.value}</th>'
                   + "".join(f'<td class="n">{c[v]}</td>' for c in counts) + "</tr>" for v in SEVERITY_ORDER)
    totals = "".join(f'<td class="n">{len(side.results)}</td>' for side in (a, b))
    verdicts = (f'<table id="sides"><tr><th>verdict</th><th>A: {e(a.label)}</th><th>B: {e(b.label)}</th></tr>'
                f'{rows}<tr class="total"><th>cases</th>{totals}</tr></table>')
    moves = Counter(p.transition for p in matched if p.differs)
    move_rows = "".join(f'<tr><td>{filter_link(e(t), transition=t)}</td><td class="n">{n}</td></tr>'
                        for t, n in sorted(moves.items(), key=lambda kv: (-kv[1], kv[0])))
    changes = (f'<table id="changes"><tr><th>A → B</th><th>cases</th></tr>{move_rows}</table>' if moves
               else "<p>Every case has the same verdict in both reports.</p>")
    return (f'<p class="meta">{len(matched)} cases; <strong id="differing">{sum(moves.values())}</strong> '
            f"with different verdicts, listed first.</p>{verdicts}{changes}")


def _outcome(result: CaseResult | None) -> str:
    if result is None:
        return "<td></td>"
    seen = f"<br>actual {e(result.actual)}" if result.actual is not None else ""
    return f"<td>{e(result.message)}{seen}</td>"


def _side_verdict(result: CaseResult | None) -> str:
    return verdict_cell(result.verdict) if result else f'<td class="verdict v-absent">{ABSENT}</td>'


def _row(pair: Pair) -> str:
    case = pair.any
    attributes = row_attributes(change=DIFFERS if pair.differs else SAME, transition=pair.transition,
                                level=case.level, area=case.area)
    return (f'<tr id="{e(pair.case_id)}"{attributes}><td class="id">{e(pair.case_id)}</td>'
            f'<td>{clause_link(case.clause_id)}</td><td class="k">{e(case.level)}</td>'
            f'<td class="k">{e(case.area)}</td>'
            f"{_side_verdict(pair.a)}{_side_verdict(pair.b)}{_outcome(pair.a)}{_outcome(pair.b)}</tr>")


def render(a: Side, b: Side) -> str:
    matched = pairs(a, b)
    cases = [p.any for p in matched]
    form = filter_form({
        "change": [DIFFERS, SAME],
        "transition": sorted({p.transition for p in matched if p.differs}),
        "level": sorted({c.level for c in cases}),
        "area": sorted({c.area for c in cases}),
    }, checkboxes=("change",))
    rows = "".join(_row(p) for p in matched)
    table = ('<table id="cases" class="cases"><tr><th>case</th><th>clause</th><th>level</th><th>area</th>'
             f"<th>A</th><th>B</th><th>A: message</th><th>B: message</th></tr>{rows}</table>")
    style = '<style>.v-absent { background: #bdbdbd; }</style>'
    title = f"RocketMQ conformance: {a.label} vs {b.label}"
    return page(title, style + _summary(a, b, matched) + LEGEND + form + table)


def write(path: Path, a: Side, b: Side) -> Path:
    """The comparison page and, beside it, the clause page its links lead to."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(a, b), encoding="utf-8")
    clause_page.write(path.parent)
    return path
