"""A static HTML page with the case matrix: one file, no scripts, readable from a CI artifact.

Each verdict has its own colour and its text is always written out, so the page stays readable in a
text browser and its verdicts can be checked from the rendered DOM.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from conformance.report.matrix import by_area
from conformance.result import CaseResult
from conformance.verdict import VERDICT_ORDER, Verdict

_COLOURS = {
    Verdict.PASS: "#2e7d32", Verdict.FAIL: "#c62828", Verdict.NON_STRICT: "#ef6c00",
    Verdict.UNSUPPORTED: "#757575", Verdict.INFO: "#1565c0", Verdict.CRASH: "#6a1b9a",
}

_STYLE = """
body { font-family: sans-serif; margin: 1.5em; }
table { border-collapse: collapse; margin-bottom: 1.5em; }
th, td { border: 1px solid #ccc; padding: 3px 7px; text-align: left; vertical-align: top; font-size: 90%; }
th { background: #f0f0f0; }
td.n { text-align: right; white-space: nowrap; }
#cases { width: 100%; }
#cases td { overflow-wrap: anywhere; }
.verdict { color: #fff; font-weight: bold; white-space: nowrap; }
pre { margin: 0; font-size: 85%; white-space: pre-wrap; word-break: break-all; }
""" + "\n".join(
    f".v-{v.name} {{ background: {c}; }}" for v, c in _COLOURS.items())


def _e(value: Any) -> str:
    return html.escape(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))


def _verdict_cell(verdict: Verdict) -> str:
    return f'<td class="verdict v-{verdict.name}" data-verdict="{verdict.value}">{verdict.value}</td>'


def _matrix(results: Sequence[CaseResult]) -> str:
    head = "".join(f"<th>{v.value}</th>" for v in VERDICT_ORDER)
    rows = "".join(
        f"<tr><th>{_e(area)}</th>" + "".join(f'<td class="n">{counts[v]}</td>' for v in VERDICT_ORDER)
        + "</tr>" for area, counts in by_area(results).items())
    return f'<table id="matrix"><tr><th>area</th>{head}</tr>{rows}</table>'


def _observed(result: CaseResult) -> str:
    """What the case expected beside what the target did: the failing pair, else every observation."""
    if result.expected is not None or result.actual is not None:
        return f"expected {_e(result.expected)}<br>actual {_e(result.actual)}"
    return "".join(
        f"<div>{_e(o['what'])}: expected {_e(o['expected'])}, actual {_e(o['actual'])}"
        + (f" (tolerated: {_e(o['tolerated'])})" if o.get("tolerated") else "") + "</div>"
        for o in result.observations)


def _details(result: CaseResult) -> str:
    notes = "".join(f"<p>{label}: {_e(text)}</p>" for label, text in
                    (("Java", result.java_note), ("known deviation", result.deviation)) if text)
    log = _e(result.hex_log()) if result.frames else "(no frames)"
    return (f"<details><summary>clause and frames</summary>{notes}<pre>{_e(result.clause_text)}</pre>"
            f"<pre>{log}</pre></details>")


def _case_row(result: CaseResult) -> str:
    return (f'<tr id="{_e(result.case_id)}"><td>{_e(result.case_id)}</td><td>{_e(result.clause_id)}</td>'
            f"<td>{_e(result.level)}</td><td>{_e(result.requirement)}</td>{_verdict_cell(result.verdict)}"
            f"<td>{_e(result.message)}{_observed(result)}"
            f'{_details(result)}</td><td class="n">{result.duration:.3f}</td></tr>')


def render(results: Sequence[CaseResult], title: str) -> str:
    rows = "".join(_case_row(r) for r in sorted(results, key=lambda r: (r.area, r.case_id)))
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>'
            f"<style>{_STYLE}</style></head><body><h1>{_e(title)}</h1>{_matrix(results)}"
            '<table id="cases"><tr><th>case</th><th>clause</th><th>level</th><th>requirement</th>'
            f"<th>verdict</th><th>expected / actual</th><th>s</th></tr>{rows}</table></body></html>")


def write(path: Path, results: Sequence[CaseResult], title: str) -> Path:
    path.write_text(render(results, title), encoding="utf-8")
    return path
