"""What every HTML page of a report shares: the page frame, colours, verdict cells, clause links, filters.

Pages are single static files that open from a CI artifact. Their only script applies the filters: a
filter is written in the address (``index.html#verdict=FAIL,CRASH&area=frame``), so a filtered view
can be linked to and a page without scripts still shows every row.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rocketmq_spec.conformance.verdict import Verdict

CLAUSE_PAGE = "protocol.html"
"""The clause page written beside every report page; case rows link to ``protocol.html#<clause id>``."""

SEVERITY_ORDER: tuple[Verdict, ...] = (Verdict.ERROR, Verdict.CRASH, Verdict.FAIL, Verdict.NON_STRICT,
                                       Verdict.UNSUPPORTED, Verdict.INFO, Verdict.PASS)
"""Failures first: the order of summary columns and of case rows."""

MEANINGS = {
    Verdict.ERROR: "the suite could not judge the case: a fault of the run itself (a local port it could not "
                   "bind, a fixture that broke), not of the target; rerun it",
    Verdict.CRASH: "the target stopped answering during or after the case",
    Verdict.FAIL: "the target broke a MUST of the clause",
    Verdict.NON_STRICT: "a SHOULD was not met, or the target was lenient where the spec allows it (or, under "
                        "a target profile, a known and cited deviation)",
    Verdict.UNSUPPORTED: "the target answered that it does not support the request: the feature is absent, "
                         "not broken",
    Verdict.INFO: "a property of the target, recorded without judging it",
    Verdict.PASS: "the target did what the clause requires",
}
"""What each verdict means, in the legend every page carries."""

COLOURS = {
    Verdict.PASS: "#2e7d32", Verdict.FAIL: "#c62828", Verdict.NON_STRICT: "#ef6c00",
    Verdict.UNSUPPORTED: "#757575", Verdict.INFO: "#1565c0", Verdict.CRASH: "#6a1b9a",
    Verdict.ERROR: "#37474f",
}

_STYLE = """
body { font-family: sans-serif; margin: 1.5em; }
table { border-collapse: collapse; margin-bottom: 1.5em; }
th, td { border: 1px solid #ccc; padding: 3px 7px; text-align: left; vertical-align: top; font-size: 90%; }
th { background: #f0f0f0; }
td.n { text-align: right; white-space: nowrap; }
td.n a { color: inherit; display: block; }
td.zero { color: #bbb; }
tr.total th, tr.total td { font-weight: bold; border-top: 2px solid #888; }
table.cases { width: 100%; }
table.cases td { overflow-wrap: anywhere; }
table.cases td.k { overflow-wrap: normal; white-space: nowrap; }
table.cases td.id { min-width: 12em; }
table.cases td.text { min-width: 12em; }
table.cases td.m { width: 55%; }
table.cases td.verdict, table.cases td.k, table.cases td.c { width: 1%; }
table.cases td.req { color: #555; }
table.cases td.c { white-space: nowrap; }
table.cases td p { margin: .3em 0 0 0; }
div.ea { display: grid; grid-template-columns: 1fr 1fr; gap: .6em; margin-top: .3em; }
div.ea div.v { background: #f6f6f6; padding: 2px 5px; overflow-wrap: anywhere; }
.verdict { color: #fff; font-weight: bold; white-space: nowrap; }
.verdict a { color: #fff; }
#filters { background: #f7f7f7; border: 1px solid #ddd; padding: .5em .8em; margin-bottom: 1em; }
#filters fieldset { display: inline-block; border: 0; margin: 0 1.5em 0 0; padding: 0; }
#filters legend { font-weight: bold; float: left; margin-right: .5em; }
#filters label { margin-right: .6em; white-space: nowrap; }
p.meta { color: #555; }
[hidden] { display: none !important; }
p.errors { background: #eceff1; border-left: 6px solid #37474f; padding: .5em .8em; }
.scroll { overflow-x: auto; }
#legend { margin: 0 0 1em 0; padding: 0; list-style: none; font-size: 90%; }
#legend li { margin: .15em 0; }
#legend .verdict { display: inline-block; min-width: 7.5em; padding: 1px 6px; margin-right: .5em; }
span.cut { color: #777; }
details.frames summary { cursor: pointer; color: #1565c0; }
@media (max-width: 760px) {
  body { margin: .6em; }
  h1 { font-size: 1.25em; overflow-wrap: anywhere; }
  h2 { font-size: 1.05em; }
  table.cases, table.cases tbody, table.cases tr, table.cases td { display: block; width: auto; }
  table.cases tr:first-child { display: none; }
  table.cases tr { border: 1px solid #bbb; margin-bottom: .8em; }
  table.cases td { border: 0; border-bottom: 1px solid #eee; min-width: 0 !important;
                   width: auto !important; }
  table.run td::before { font-weight: bold; color: #555; }
  table.run td:not(:empty):nth-child(2)::before { content: "case: "; }
  table.run td:not(:empty):nth-child(3)::before { content: "clause: "; }
  table.run td:not(:empty):nth-child(4)::before { content: "level: "; }
  table.run td:not(:empty):nth-child(5)::before { content: "area: "; }
  table.run td:not(:empty):nth-child(6)::before { content: "message: "; }
  #legend .verdict { min-width: 0; }
}
pre { margin: 0; font-size: 85%; white-space: pre-wrap; word-break: break-all; }
""" + "\n".join(f".v-{v.name} {{ background: {c}; }}" for v, c in COLOURS.items())

_FILTER_SCRIPT = """
(function () {
  var form = document.getElementById("filters");
  var rows = document.querySelectorAll("tr[data-row]");
  var shown = document.getElementById("shown");
  function wanted() {
    var want = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (part) {
      var kv = part.split("=");
      if (kv[0] && kv[1]) { want[decodeURIComponent(kv[0])] = decodeURIComponent(kv[1]).split(","); }
    });
    return want;
  }
  function apply() {
    var want = wanted(), count = 0;
    form.querySelectorAll("[data-filter]").forEach(function (control) {
      var values = want[control.dataset.filter] || [];
      if (control.type === "checkbox") { control.checked = values.indexOf(control.value) >= 0; }
      else { control.value = values.length ? values[0] : ""; }
    });
    rows.forEach(function (row) {
      var match = Object.keys(want).every(function (key) {
        return want[key].indexOf(row.dataset[key]) >= 0;
      });
      row.hidden = !match;
      if (match) { count += 1; }
    });
    shown.textContent = count + " of " + rows.length;
  }
  form.addEventListener("change", function () {
    var want = {};
    form.querySelectorAll("[data-filter]").forEach(function (control) {
      var key = control.dataset.filter;
      var on = control.type === "checkbox" ? control.checked : control.value !== "";
      if (on) {
        (want[key] = want[key] || []).push(control.value);
      }
    });
    location.hash = Object.keys(want).map(function (key) {
      return encodeURIComponent(key) + "=" + want[key].map(encodeURIComponent).join(",");
    }).join("&");
  });
  window.addEventListener("hashchange", apply);
  apply();
})();
"""


def e(value: Any) -> str:
    """Escaped text of a value: strings as they are, anything else as compact JSON."""
    return html.escape(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))


def legend(verdicts: Iterable[Verdict] = SEVERITY_ORDER) -> str:
    """What the verdicts mean, each in its colour."""
    items = "".join(f'<li><span class="verdict v-{v.name}">{v.value}</span>{e(MEANINGS[v])}</li>'
                    for v in verdicts)
    return f'<ul id="legend">{items}</ul>'


def page(title: str, body: str, *, filters: bool = True) -> str:
    """A whole page: ``body`` holds where the legend goes as :data:`LEGEND`, else it comes first."""
    script = f"<script>{_FILTER_SCRIPT}</script>" if filters else ""
    body = body.replace(LEGEND, legend(), 1) if LEGEND in body else legend() + body
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{e(title)}</title><style>{_STYLE}</style></head><body><h1>{e(title)}</h1>{body}{script}"
            "</body></html>")


LEGEND = "<!--legend-->"
"""Where a page body wants the verdict legend (after its summary, say); without it the legend leads."""


def verdict_cell(verdict: Verdict, extra: str = "") -> str:
    return (f'<td class="verdict v-{verdict.name}" data-verdict="{verdict.value}"{extra}>'
            f"{verdict.value}</td>")


def clause_link(clause_id: str, clauses: str = CLAUSE_PAGE) -> str:
    """A link to the clause on the clause page at ``clauses`` (relative to the linking page)."""
    return f'<a href="{clauses}#{e(clause_id)}">{e(clause_id)}</a>'


def filter_link(text: str, **criteria: str) -> str:
    """A link that shows only the rows matching ``criteria`` (what a filter form would select)."""
    fragment = "&".join(f"{key}={html.escape(value, quote=True)}" for key, value in criteria.items())
    return f'<a href="#{fragment}">{text}</a>'


def row_attributes(**values: str) -> str:
    """The ``data-*`` attributes the filters match against, on a row the filters may hide."""
    return " data-row" + "".join(f' data-{key}="{e(value)}"' for key, value in values.items())


def filter_form(choices: Mapping[str, Sequence[str] | Iterable[tuple[str, str]]],
                checkboxes: Sequence[str] = ()) -> str:
    """A form of filters, one per key of ``choices``: checkboxes for the keys in ``checkboxes`` (any
    ticked value matches), a drop-down otherwise. A choice is a value, or (value, label)."""
    parts = []
    for key, options in choices.items():
        pairs = [(o, o) if isinstance(o, str) else o for o in options]
        if key in checkboxes:
            controls = "".join(f'<label><input type="checkbox" data-filter="{e(key)}" value="{e(value)}"> '
                               f"{e(label)}</label>" for value, label in pairs)
        else:
            items = "".join(f'<option value="{e(value)}">{e(label)}</option>' for value, label in pairs)
            controls = f'<select data-filter="{e(key)}"><option value="">all</option>{items}</select>'
        parts.append(f"<fieldset><legend>{e(key)}</legend>{controls}</fieldset>")
    return (f'<form id="filters">{"".join(parts)}<a href="#">show all</a> '
            '(showing <span id="shown">all</span> cases)</form>')
