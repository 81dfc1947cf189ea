"""The run's HTML page: a summary matrix at the top, failures first, then every case, filterable.

The matrix has an area per row and a verdict per column, failing verdicts and failing areas first; each
count links to the cases it counts. Case rows come failures first and carry their clause (a link into
the clause page), level and area, what the case expected beside what the target did, and the frames.
Each verdict has its own colour and its text is always written out, so the page stays readable in a text
browser and its verdicts can be checked from the rendered DOM.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from conformance.report import clause_page
from conformance.report.html_page import (
    CLAUSE_PAGE,
    SEVERITY_ORDER,
    clause_link,
    e,
    filter_form,
    filter_link,
    page,
    row_attributes,
    verdict_cell,
)
from conformance.report.matrix import by_area, conforms
from conformance.result import CaseResult
from conformance.verdict import Verdict

TOTAL = "total"


def _area_rank(counts: dict[Verdict, int]) -> tuple[int, ...]:
    """Areas with the most severe verdicts first: compared column by column in severity order."""
    return tuple(-counts.get(v, 0) for v in SEVERITY_ORDER)


def summary_matrix(results: Sequence[CaseResult]) -> str:
    table = by_area(results)
    total = table.pop(TOTAL)
    head = "".join(f'<th class="verdict v-{v.name}">{v.value}</th>' for v in SEVERITY_ORDER)

    def row(area: str, counts: dict[Verdict, int], css: str = "") -> str:
        cells = []
        for verdict in SEVERITY_ORDER:
            n = counts.get(verdict, 0)
            criteria = {"verdict": verdict.value, **({} if area == TOTAL else {"area": area})}
            cells.append(f'<td class="n">{filter_link(str(n), **criteria)}</td>' if n else
                         '<td class="n zero">0</td>')
        name = filter_link(e(area), area=area) if area != TOTAL else TOTAL
        return f'<tr{css}><th>{name}</th>{"".join(cells)}<td class="n">{sum(counts.values())}</td></tr>'

    rows = "".join(row(area, counts) for area, counts in sorted(table.items(),
                                                                key=lambda kv: (_area_rank(kv[1]), kv[0])))
    total_row = row(TOTAL, total, ' class="total"')
    return f'<table id="matrix"><tr><th>area</th>{head}<th>cases</th></tr>{rows}{total_row}</table>'



def _expected_actual(result: CaseResult) -> str:
    """Two cells: what the case expected, what the target did (the failing pair, else every observation)."""
    if result.expected is not None or result.actual is not None:
        return f"<td>{e(result.expected)}</td><td>{e(result.actual)}</td>"
    expected = "".join(f"<div>{e(o['what'])}: {e(o['expected'])}</div>" for o in result.observations)
    actual = "".join(f"<div>{e(o['what'])}: {e(o['actual'])}"
                     + (f" (tolerated: {e(o['tolerated'])})" if o.get("tolerated") else "") + "</div>"
                     for o in result.observations)
    return f"<td>{expected}</td><td>{actual}</td>"


def _details(result: CaseResult) -> str:
    notes = "".join(f"<p>{label}: {e(text)}</p>" for label, text in
                    (("Java", result.java_note), ("known deviation", result.deviation)) if text)
    log = e(result.hex_log()) if result.frames else "(no frames)"
    return (f"<details><summary>clause and frames</summary>{notes}<pre>{e(result.clause_text)}</pre>"
            f"<pre>{log}</pre></details>")


def case_row(result: CaseResult) -> str:
    attributes = row_attributes(verdict=result.verdict.value, level=result.level, area=result.area)
    return (f'<tr id="{e(result.case_id)}"{attributes}>{verdict_cell(result.verdict)}'
            f'<td class="id">{e(result.case_id)}</td><td>{clause_link(result.clause_id)}</td>'
            f'<td class="k">{e(result.level)}</td><td class="k">{e(result.area)}</td>'
            f'<td class="text">{e(result.requirement)}</td>{_expected_actual(result)}'
            f'<td>{e(result.message)}{_details(result)}</td><td class="n">{result.duration:.3f}</td></tr>')


def severity_key(result: CaseResult) -> tuple[int, str, str]:
    return SEVERITY_ORDER.index(result.verdict), result.area, result.case_id


def filters(results: Sequence[CaseResult]) -> str:
    present = {r.verdict for r in results}
    return filter_form({
        "verdict": [v.value for v in SEVERITY_ORDER if v in present],
        "level": sorted({r.level for r in results}),
        "area": sorted({r.area for r in results}),
    }, checkboxes=("verdict",))


def render(results: Sequence[CaseResult], title: str, *, strict: bool = False, profile: str = "") -> str:
    """``profile``: the line naming the profile applied and how it was chosen."""
    rows = "".join(case_row(r) for r in sorted(results, key=severity_key))
    outcome = "conforms" if conforms(results, strict=strict) else "does not conform"
    profile_line = f'<p class="meta">{e(profile)}</p>' if profile else ""
    body = (f'<p class="meta">{len(results)} cases; the target {outcome}'
            f"{' (strict)' if strict else ''}. Clause texts: <a href=\"{CLAUSE_PAGE}\">protocol "
            f"clauses</a>.</p>{profile_line}{summary_matrix(results)}{filters(results)}"
            '<table id="cases" class="cases"><tr><th>verdict</th><th>case</th><th>clause</th><th>level</th>'
            "<th>area</th><th>requirement</th><th>expected</th><th>actual</th><th>message</th><th>s</th>"
            f"</tr>{rows}</table>")
    return page(title, body)


def write(path: Path, results: Sequence[CaseResult], title: str, *, strict: bool = False,
          profile: str = "") -> Path:
    """The report page and, beside it, the clause page its links lead to."""
    path.write_text(render(results, title, strict=strict, profile=profile), encoding="utf-8")
    clause_page.write(path.parent)
    return path
