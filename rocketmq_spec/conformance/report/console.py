"""The summary printed at the end of a run: a verdict table per area and the cases that need a look."""

from __future__ import annotations

from collections.abc import Sequence

from rocketmq_spec.conformance.report.matrix import by_area
from rocketmq_spec.conformance.result import CaseResult
from rocketmq_spec.conformance.verdict import VERDICT_ORDER, Verdict

_DETAIL_VERDICTS = (Verdict.FAIL, Verdict.CRASH, Verdict.ERROR, Verdict.NON_STRICT)
"""Verdicts whose cases are listed one by one below the table."""


def summary(results: Sequence[CaseResult]) -> str:
    table = by_area(results)
    headers = ["area", *(v.value for v in VERDICT_ORDER)]
    rows = [[area, *(str(counts[v]) for v in VERDICT_ORDER)] for area, counts in table.items()]
    widths = [max(len(row[i]) for row in [headers, *rows]) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        padded = [cell.rjust(w) for cell, w in zip(cells, widths, strict=True)]
        padded[0] = cells[0].ljust(widths[0])
        return "  ".join(padded)

    out = [line(headers), line(["-" * w for w in widths])]
    out += [line(row) for row in rows[:-1]]
    out += [line(["-" * w for w in widths]), line(rows[-1])]
    for result in results:
        if result.verdict in _DETAIL_VERDICTS:
            row = f"; policy row {result.basis}" if result.basis else ""
            where = f"[{result.clause_id} {result.level}{row}]"
            out.append(f"{result.verdict.value:<10} {result.case_id}  {where}")
            out.append(f"           {result.message}")
            expected, seen = result.expected_and_seen()
            if expected is not None or seen is not None:
                out.append(f"           expected {expected!r}, actual {seen!r}")
            if result.deviation:
                out.append(f"           known deviation: {result.deviation}")
    return "\n".join(out)
