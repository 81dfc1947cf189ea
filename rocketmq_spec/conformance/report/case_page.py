"""``cases/<case>.html``: one page per case that did not pass, what its row on the report links to.

The page reads top to bottom as the case went: the clause and what the case requires, the verdict and
its message, what was expected beside what the target did, every observation (those that did not hold
first), and the frames as a hex log. Values and frames are cut where they would make the page unwieldy;
the case's JSON beside the page holds every byte.
"""

from __future__ import annotations

import json
from pathlib import Path

from rocketmq_spec.conformance.recorder import Record
from rocketmq_spec.conformance.report.html_page import CLAUSE_PAGE, LEGEND, clause_link, e, page, verdict_cell
from rocketmq_spec.conformance.report.json_files import CASES_DIR, file_stem
from rocketmq_spec.conformance.result import CaseResult

VALUE_CHARS = 2000
"""Characters of one value shown; the rest is in the case's JSON."""
OBSERVATIONS_SHOWN = 200
FRAME_LINES = 400
FRAME_CHARS = 160
"""Characters of one hex log line (80 bytes) shown."""

_STYLE = """<style>
table.case th { width: 9em; }
table.case td, table.obs td { overflow-wrap: anywhere; }
table.obs td.ok { white-space: nowrap; }
pre.hex { background: #fafafa; border: 1px solid #ddd; padding: .5em; }
</style>"""


def href(case_id: str) -> str:
    """The page's address relative to the report's ``index.html``."""
    return f"{CASES_DIR}/{file_stem(case_id)}.html"


def _value(shown: object) -> str:
    text = shown if isinstance(shown, str) else json.dumps(shown, ensure_ascii=False)
    if len(text) <= VALUE_CHARS:
        return e(text)
    return f'{e(text[:VALUE_CHARS])}<span class="cut">… ({len(text):,} characters in the JSON)</span>'


def _observations(result: CaseResult) -> str:
    if not result.observations:
        return ""
    ordered = sorted(result.observations, key=lambda o: bool(o["ok"]) and not o.get("tolerated"))
    rows = "".join(
        f"<tr><td>{e(o['what'])}</td><td>{_value(o['expected'])}</td><td>{_value(o['actual'])}</td>"
        f'<td class="ok">{"held" if o["ok"] else "did not hold"}</td>'
        f'<td>{e(o.get("tolerated") or "")}</td></tr>' for o in ordered[:OBSERVATIONS_SHOWN])
    more = (f"<p>{len(ordered) - OBSERVATIONS_SHOWN} more in the JSON.</p>"
            if len(ordered) > OBSERVATIONS_SHOWN else "")
    return (f"<h2>Observations ({len(ordered)})</h2><table class=\"obs\"><tr><th>what</th><th>expected</th>"
            f"<th>actual</th><th></th><th>tolerated by the profile</th></tr>{rows}</table>{more}")


def _frames(result: CaseResult) -> str:
    if not result.frames:
        return ""
    connections = len({f["conn"] for f in result.frames})
    lines = [Record.from_json(f).line() for f in result.frames[:FRAME_LINES]]
    shown = "\n".join(line if len(line) <= FRAME_CHARS else line[:FRAME_CHARS] + " …" for line in lines)
    rest = len(result.frames) - FRAME_LINES
    more = f"<p>{rest} more lines in the JSON.</p>" if rest > 0 else ""
    return (f"<h2>Frames ({len(result.frames)} log lines on {connections} connection(s))</h2>"
            f'<pre class="hex">{e(shown)}</pre>{more}')


def render(result: CaseResult, clauses: str = CLAUSE_PAGE) -> str:
    """The page; ``clauses``: the clause page's address relative to the report's ``index.html``."""
    expected, seen = result.expected_and_seen()
    clause = f"{clause_link(result.clause_id, f'../{clauses}')} ({e(result.level)})"
    facts = [("verdict", None), ("clause", clause),
             ("clause text", e(result.clause_text)), ("area", e(result.area)),
             ("requirement", e(result.requirement)), ("message", e(result.message)),
             ("expected", _value(expected)), ("actual", _value(seen)),
             ("Java", e(result.java_note)), ("known deviation", e(result.deviation)),
             ("seconds", f"{result.duration:.3f}")]
    cells = ((name, verdict_cell(result.verdict) if text is None else f"<td>{text}</td>")
             for name, text in facts if text != "")
    rows = "".join(f"<tr><th>{name}</th>{cell}</tr>" for name, cell in cells)
    links = (f'<p class="meta"><a href="../index.html#{e(result.case_id)}">the report</a> · '
             f'<a href="{e(file_stem(result.case_id))}.json">every byte (JSON)</a></p>')
    body = f'{links}<table class="case">{rows}</table>{_observations(result)}{_frames(result)}{LEGEND}'
    return page(result.case_id, _STYLE + body, filters=False)


def write(directory: Path, result: CaseResult, clauses: str = CLAUSE_PAGE) -> Path:
    """The page, under ``cases/`` of the report directory ``directory``."""
    path = directory / href(result.case_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(result, clauses), encoding="utf-8")
    return path
