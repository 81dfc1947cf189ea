"""The run's HTML page: a summary matrix at the top, failures first, then every case, filterable.

The page opens with one sentence on the outcome: it says plainly when the target conforms only because
its profile tolerated broken MUSTs as known deviations, and how many cases were UNSUPPORTED. The matrix
has an area per row and a verdict per column, failing verdicts and failing areas first; each count links
to the cases it counts. Below it, what each verdict means. Case rows come failures first and carry their
clause (a link into the clause page), level and area; a case that did not pass shows what it expected
beside what the target did and its message, and its id links to its own page (``report.case_page``) with
every observation and its frames. A passing row shows what the case required. Each verdict has its own
colour and its text is always written out, so the page stays readable in a text browser and its verdicts
can be checked from the rendered DOM.

The page stays small enough to open on any machine, however many cases pass: a value longer than
:data:`VALUE_CHARS` is cut, and frames are only on the case pages. On a narrow screen each case row
becomes a card.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from rocketmq_spec.conformance.report import case_page, clause_page
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
from rocketmq_spec.conformance.report.json_files import has_file
from rocketmq_spec.conformance.report.matrix import by_area, conforms
from rocketmq_spec.conformance.result import CaseResult
from rocketmq_spec.conformance.verdict import Verdict

TOTAL = "total"
VALUE_CHARS = 240
"""Characters of an expected or observed value shown inline; the rest is on the case's page."""
OBSERVATIONS_SHOWN = 12
"""Observations of one case listed inline (those that did not hold first); the rest are on its page."""
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


def _case_link(result: CaseResult, text: str) -> str:
    return f'<a href="{e(case_page.href(result.case_id))}">{e(text)}</a>'


def value(result: CaseResult, shown: object) -> str:
    """A value as text, cut after :data:`VALUE_CHARS` characters with a link to the case's page."""
    text = shown if isinstance(shown, str) else json.dumps(shown, ensure_ascii=False)
    if len(text) <= VALUE_CHARS:
        return e(text)
    return (f"{e(text[:VALUE_CHARS])}<span class=\"cut\">… ({len(text):,} characters: "
            f"{_case_link(result, 'the whole value')})</span>")


def _expected_actual(result: CaseResult) -> str:
    """What the case expected beside what the target did (the failing pair, else the observations, those
    that did not hold first). A value recorded without a judgement (a size, a timing) has no
    expectation."""
    expected_value, seen = result.expected_and_seen()
    if expected_value is not None or seen is not None:
        expected, actual = [value(result, expected_value)], [value(result, seen)]
    else:
        expected, actual = [], []
        ordered = sorted(result.observations, key=lambda o: bool(o["ok"]) and not o.get("tolerated"))
        for o in ordered[:OBSERVATIONS_SHOWN]:
            judged = not (o["ok"] and o["expected"] is None)
            wanted = value(result, o["expected"]) if judged else NOT_JUDGED
            expected.append(f"<div>{e(o['what'])}: {wanted}</div>")
            tolerated = f" (tolerated: {e(o['tolerated'])})" if o.get("tolerated") else ""
            actual.append(f"<div>{e(o['what'])}: {value(result, o['actual'])}{tolerated}</div>")
        if len(ordered) > OBSERVATIONS_SHOWN:
            more = f"{len(ordered) - OBSERVATIONS_SHOWN} more observations"
            rest = f"<div>{_case_link(result, more)}</div>"
            expected.append(rest)
            actual.append(rest)
    if not expected:
        return ""
    return (f'<div class="ea"><div class="v"><b>expected</b> {"".join(expected)}</div>'
            f'<div class="v"><b>actual</b> {"".join(actual)}</div></div>')


def _message(result: CaseResult) -> str:
    """What happened, what was expected beside what the target did, the Java note and the profile's
    citation; a passing case's requirement."""
    if result.verdict is Verdict.PASS:
        return f'<td class="m req">{e(result.requirement)}</td>'
    notes = "".join(f"<p>{label}: {e(text)}</p>" for label, text in
                    (("Java", result.java_note), ("known deviation", result.deviation)) if text)
    return f'<td class="m">{e(result.message)}{_expected_actual(result)}{notes}</td>'


def case_row(result: CaseResult, clauses: str = CLAUSE_PAGE) -> str:
    attributes = row_attributes(verdict=result.verdict.value, level=result.level, area=result.area)
    name = _case_link(result, result.case_id) if has_file(result) else e(result.case_id)
    return (f'<tr id="{e(result.case_id)}"{attributes}>{verdict_cell(result.verdict)}'
            f'<td class="id">{name}</td><td class="c">{clause_link(result.clause_id, clauses)}</td>'
            f'<td class="k">{e(result.level)}</td><td class="k">{e(result.area)}</td>'
            f"{_message(result)}</tr>")


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
    """The run in one or two sentences: how many cases of each verdict, and whether the target conforms
    over the cases the run could judge, saying so when that holds only because a profile tolerated MUSTs
    the target breaks."""
    errors = sum(r.verdict is Verdict.ERROR for r in results)
    judged = [r for r in results if r.verdict is not Verdict.ERROR]
    tolerated = sum(r.verdict is Verdict.NON_STRICT and bool(r.deviation) and r.level == "MUST"
                    for r in judged)
    mode = " (strict)" if strict else ""
    if not conforms(judged, strict=strict):
        verdict = f"the target does not conform{mode}."
    elif tolerated:
        verdict = (f"the target breaks {tolerated} MUST(s) that its profile tolerates as known, cited "
                   f"deviations (NON-STRICT): it conforms{mode} only under that profile.")
    else:
        verdict = f"the target conforms{mode}."
    counts = Counter(r.verdict for r in results)
    listed = ", ".join(f"{counts[v]} {v.value}" for v in SEVERITY_ORDER if counts[v])
    absent = (f" {counts[Verdict.UNSUPPORTED]} UNSUPPORTED: features the target answered it does not have."
              if counts[Verdict.UNSUPPORTED] else "")
    if not errors:
        return f"{len(results)} cases ({listed}); {verdict}{absent}"
    return (f"{len(results)} cases ({listed}), {errors} of them not judged because of errors of the run "
            f"itself; over the {len(judged)} judged, {verdict}{absent}")


def _errors(results: Sequence[CaseResult]) -> str:
    errors = [r for r in results if r.verdict is Verdict.ERROR]
    if not errors:
        return ""
    return (f'<p class="errors"><strong>{len(errors)} error(s) of the run</strong>: the suite could not '
            f"judge {filter_link('these cases', verdict=Verdict.ERROR.value)} (its own port, lock or fixture "
            "failed). They say nothing about the target; rerun them.</p>")


def render(results: Sequence[CaseResult], title: str, *, strict: bool = False, profile: str = "",
           related: Sequence[tuple[str, str]] = (), clauses: str = CLAUSE_PAGE) -> str:
    """The page. ``profile``: the line naming the profile applied and how it was chosen; ``related``:
    (link, text) pairs of other pages of the run (its store report, say); ``clauses``: the address of
    the clause page."""
    rows = "".join(case_row(r, clauses) for r in sorted(results, key=severity_key))
    links = [f'<a href="{e(clauses)}">protocol clauses</a>', '<a href="index.json">index.json</a>',
             *(f'<a href="{e(href)}">{e(text)}</a>' for href, text in related)]
    profile_line = f'<p class="meta">{e(profile)}</p>' if profile else ""
    body = (f'<p class="meta">{outcome(results, strict=strict)} See also: {" · ".join(links)}.</p>'
            f"{profile_line}{_errors(results)}{summary_matrix(results)}{LEGEND}{filters(results)}"
            '<table id="cases" class="cases run"><tr><th>verdict</th><th>case</th><th>clause</th>'
            "<th>level</th><th>area</th><th>message, and what was expected beside what the target did "
            "(of a passing case: its requirement)</th>"
            f"</tr>{rows}</table>")
    return page(title, body)


def write(path: Path, results: Sequence[CaseResult], title: str, *, strict: bool = False,
          profile: str = "", related: Sequence[tuple[str, str]] = (), clauses: str = CLAUSE_PAGE) -> Path:
    """The report page and the page of each case that did not pass; and, unless ``clauses`` names one
    elsewhere (the store report of a run links to its wire report's), the clause page beside it."""
    path.write_text(render(results, title, strict=strict, profile=profile, related=related, clauses=clauses),
                    encoding="utf-8")
    if clauses == CLAUSE_PAGE:
        clause_page.write(path.parent)
    for result in results:
        if has_file(result):
            case_page.write(path.parent, result, clauses)
    return path
