"""``protocol.html``: every clause of the protocol document, each addressable by its ID.

Report pages link each case to ``protocol.html#<clause id>``. The page holds the clause tables of
``docs/PROTOCOL.md`` (same sections, same order, built from the same ``rocketmq_spec.spec`` modules), so the
link works wherever the report is opened, with or without a checkout beside it. """

from __future__ import annotations

import inspect
from pathlib import Path

from rocketmq_spec.conformance.report.html_page import CLAUSE_PAGE, LEGEND, e, page
from rocketmq_spec.spec.clauses import all_clauses
from rocketmq_spec.spec.document import section_modules

TITLE = "RocketMQ protocol clauses"

_STYLE = "<style>tr:target { background: #fff3c4; outline: 2px solid #e0a800; }</style>"


def render() -> str:
    clauses = all_clauses()
    sections = []
    for module in section_modules():
        mine = [c for c in clauses if c.module == module.__name__]
        if not mine:
            continue
        short = module.__name__.split(".")[-1]
        title = (inspect.getdoc(module) or "").partition("\n")[0].rstrip(".")
        rows = "".join(f'<tr id="{e(c.id)}"><td><a href="#{e(c.id)}">{e(c.id)}</a></td>'
                       f"<td>{c.level.value}</td><td>{e(c.text)}</td><td>{e(c.source)}</td></tr>"
                       for c in mine)
        sections.append(f'<h2 id="section-{e(short)}">{e(short)}: {e(title)}</h2><table class="cases">'
                        f"<tr><th>id</th><th>level</th><th>requirement</th><th>source</th></tr>{rows}</table>")
    intro = (f'<p class="meta">{len(clauses)} clauses, as in <code>docs/PROTOCOL.md</code> (generated from '
             "the <code>spec</code> package by <code>rmq-spec-doc</code>).</p>")
    return page(TITLE, _STYLE + intro + LEGEND + "".join(sections), filters=False)


def write(directory: Path) -> Path:
    path = directory / CLAUSE_PAGE
    path.write_text(render(), encoding="utf-8")
    return path
