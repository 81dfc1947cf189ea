"""The run's HTML page: a summary matrix at the top, failures first, then every case, filterable.

The matrix has an area per row and a verdict per column, failing verdicts and failing areas first; each
count links to the cases it counts. Below it, what each verdict means. Case rows come failures first and
carry their clause (a link into the clause page), level and area, what the case expected beside what the
target did, and the frames. Each verdict has its own colour and its text is always written out, so the
page stays readable in a text browser and its verdicts can be checked from the rendered DOM.

The page stays small enough to open on any machine: a value longer than :data:`VALUE_CHARS` is cut, and a
case's frames are folded (shown on a click, and only for cases that did not pass); the whole of both is
in the case's JSON file, which every row links to. On a narrow screen each case row becomes a card.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from rocketmq_spec.conformance.recorder import Record
from rocketmq_spec.conformance.report import clause_page
from rocketmq_spec.conformance.report.html_page import (
    CLAUSE_PAGE,
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
from rocketmq_spec.conformance.report.json_files import CASES_DIR, file_name
from rocketmq_spec.conformance.report.matrix import by_area, conforms
from rocketmq_spec.conformance.result import CaseResult
from rocketmq_spec.conformance.verdict import Verdict

TOTAL = "total"
VALUE_CHARS = 240
"""Characters of an expected or observed value shown inline; the rest is in the case's JSON."""
FRAME_LINES = 40
"""Lines of a folded hex log; the rest is in the case's JSON."""
FRAME_CHARS = 120
"""Characters of one hex log line (60 bytes) shown."""
OBSERVATIONS_SHOWN = 12
"""Observations of one case listed inline (those that did not hold first; a third of that in a passing
case); the rest are in its JSON."""
NOT_JUDGED = "(recorded, not judged)"


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
    return (f'<div class="scroll"><table id="matrix"><tr><th>area</th>{head}<th>cases</th></tr>{rows}'
            f"{total_row}</table></div>")


def _json_link(result: CaseResult, text: str) -> str:
    return f'<a href="{CASES_DIR}/{e(file_name(result.case_id))}">{e(text)}</a>'


def value(result: CaseResult, shown: object) -> str:
    """A value as text, cut after :data:`VALUE_CHARS` characters (a third of that in a passing case) with
    a link to the whole of it."""
    text = shown if isinstance(shown, str) else json.dumps(shown, ensure_ascii=False)
    limit = VALUE_CHARS // 3 if result.verdict is Verdict.PASS else VALUE_CHARS
    if len(text) <= limit:
        return e(text)
    return (f"{e(text[:limit])}<span class=\"cut\">… ({len(text):,} characters: "
            f"{_json_link(result, 'the whole value')})</span>")


def _expected_actual(result: CaseResult) -> str:
    """Two cells: what the case expected, what the target did (the failing pair, else every observation).
    A value recorded without a judgement (a size, a timing) has no expectation."""
    expected_value, seen = result.expected_and_seen()
    if expected_value is not None or seen is not None:
        return (f'<td class="v" data-label="expected">{value(result, expected_value)}</td>'
                f'<td class="v" data-label="actual">{value(result, seen)}</td>')
    expected, actual = [], []
    # the observations that did not hold first; a case of hundreds of observations shows a few
    ordered = sorted(result.observations, key=lambda o: bool(o["ok"]) and not o.get("tolerated"))
    shown = OBSERVATIONS_SHOWN // 3 if result.verdict is Verdict.PASS else OBSERVATIONS_SHOWN
    for o in ordered[:shown]:
        judged = not (o["ok"] and o["expected"] is None)
        wanted = value(result, o["expected"]) if judged else NOT_JUDGED
        expected.append(f"<div>{e(o['what'])}: {wanted}</div>")
        tolerated = f" (tolerated: {e(o['tolerated'])})" if o.get("tolerated") else ""
        actual.append(f"<div>{e(o['what'])}: {value(result, o['actual'])}{tolerated}</div>")
    if len(ordered) > shown:
        rest = f"<div>{_json_link(result, f'{len(ordered) - shown} more observations')}</div>"
        expected.append(rest)
        actual.append(rest)
    return (f'<td class="v" data-label="expected">{"".join(expected)}</td>'
            f'<td class="v" data-label="actual">{"".join(actual)}</td>')


def _frames(result: CaseResult) -> str:
    """The hex log: folded behind a click where the case did not pass, a link to the JSON where it did."""
    if not result.frames:
        return ""
    connections = len({f["conn"] for f in result.frames})
    count = f"{len(result.frames)} log lines on {connections} connection(s)"
    if result.verdict is Verdict.PASS:
        return f"<p>{_json_link(result, count)}</p>"
    lines = [Record.from_json(f).line() for f in result.frames[:FRAME_LINES]]
    shown = "\n".join(line if len(line) <= FRAME_CHARS else line[:FRAME_CHARS] + " …" for line in lines)
    rest = len(result.frames) - FRAME_LINES
    more = f"{rest} more lines, and every byte" if rest > 0 else "Every byte"
    more = f"<p>{more}: {_json_link(result, 'the case JSON')}</p>"
    return f'<details class="frames"><summary>{count}</summary><pre>{e(shown)}</pre>{more}</details>'


def _details(result: CaseResult) -> str:
    notes = "".join(f"<p>{label}: {e(text)}</p>" for label, text in
                    (("Java", result.java_note), ("known deviation", result.deviation)) if text)
    return f"{notes}{_frames(result)}"


def case_row(result: CaseResult) -> str:
    attributes = row_attributes(verdict=result.verdict.value, level=result.level, area=result.area)
    return (f'<tr id="{e(result.case_id)}"{attributes}>{verdict_cell(result.verdict)}'
            f'<td class="id" data-label="case">{e(result.case_id)}</td>'
            f'<td class="c" data-label="clause">{clause_link(result.clause_id)}</td>'
            f'<td class="k" data-label="level">{e(result.level)}</td>'
            f'<td class="k" data-label="area">{e(result.area)}</td>'
            f'<td class="text" data-label="requirement">{e(result.requirement)}</td>'
            f"{_expected_actual(result)}"
            f'<td data-label="message">{e(result.message)}{_details(result)}</td>'
            f'<td class="n" data-label="seconds">{result.duration:.3f}</td></tr>')


def severity_key(result: CaseResult) -> tuple[int, str, str]:
    return SEVERITY_ORDER.index(result.verdict), result.area, result.case_id


def filters(results: Sequence[CaseResult]) -> str:
    present = {r.verdict for r in results}
    return filter_form({
        "verdict": [v.value for v in SEVERITY_ORDER if v in present],
        "level": sorted({r.level for r in results}),
        "area": sorted({r.area for r in results}),
    }, checkboxes=("verdict",))


def outcome(results: Sequence[CaseResult], *, strict: bool) -> str:
    """The run in one sentence: whether the target conforms, over the cases the run could judge."""
    errors = sum(r.verdict is Verdict.ERROR for r in results)
    judged = [r for r in results if r.verdict is not Verdict.ERROR]
    verdict = "conforms" if conforms(judged, strict=strict) else "does not conform"
    if not errors:
        return f"{len(results)} cases; the target {verdict}{' (strict)' if strict else ''}."
    return (f"{len(results)} cases, {errors} of them not judged because of errors of the run itself; over "
            f"the {len(judged)} judged, the target {verdict}{' (strict)' if strict else ''}.")


def _errors(results: Sequence[CaseResult]) -> str:
    errors = [r for r in results if r.verdict is Verdict.ERROR]
    if not errors:
        return ""
    return (f'<p class="errors"><strong>{len(errors)} error(s) of the run</strong>: the suite could not '
            f"judge {filter_link('these cases', verdict=Verdict.ERROR.value)} (its own port, lock or fixture "
            "failed). They say nothing about the target; rerun them.</p>")


def render(results: Sequence[CaseResult], title: str, *, strict: bool = False, profile: str = "",
           related: Sequence[tuple[str, str]] = ()) -> str:
    """The page. ``profile``: the line naming the profile applied and how it was chosen; ``related``:
    (link, text) pairs of other pages of the run (its store report, say)."""
    rows = "".join(case_row(r) for r in sorted(results, key=severity_key))
    links = [f'<a href="{CLAUSE_PAGE}">protocol clauses</a>', '<a href="index.json">index.json</a>',
             *(f'<a href="{e(href)}">{e(text)}</a>' for href, text in related)]
    profile_line = f'<p class="meta">{e(profile)}</p>' if profile else ""
    body = (f'<p class="meta">{outcome(results, strict=strict)} See also: {" · ".join(links)}.</p>'
            f"{profile_line}{_errors(results)}{summary_matrix(results)}{LEGEND}{filters(results)}"
            '<table id="cases" class="cases"><tr><th>verdict</th><th>case</th><th>clause</th><th>level</th>'
            "<th>area</th><th>requirement</th><th>expected</th><th>actual</th><th>message</th><th>s</th>"
            f"</tr>{rows}</table>")
    return page(title, body)


def write(path: Path, results: Sequence[CaseResult], title: str, *, strict: bool = False,
          profile: str = "", related: Sequence[tuple[str, str]] = ()) -> Path:
    """The report page and, beside it, the clause page its links lead to."""
    path.write_text(render(results, title, strict=strict, profile=profile, related=related), encoding="utf-8")
    clause_page.write(path.parent)
    return path
