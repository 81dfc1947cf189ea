"""One row per figure: what was measured, the target's RSS before and after, the target and a verdict."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Row:
    scenario: str
    figure: str
    """What was measured, with its unit (``10,000 held, 3.1 KiB each``)."""
    passed: bool | None
    """None when there is no target to judge by (an informative row)."""
    target: str = ""
    rss_before_kib: int | None = None
    rss_after_kib: int | None = None
    note: str = ""
    measured: bool = False
    """The verdict rests on a measurement (memory, rate) that a loaded machine can move, not on what the
    target answered; tests judge only the other rows."""

    @property
    def verdict(self) -> str:
        return {True: "PASS", False: "FAIL", None: "info"}[self.passed]


def _kib(value: int | None) -> str:
    return "" if value is None else f"{value / 1024:,.1f} MiB"


def table(rows: Sequence[Row], title: str) -> str:
    """A Markdown table (it goes into the README as it is)."""
    lines = [f"**{title}**", "", "| scenario | figure | RSS before | RSS after | target | verdict | note |",
             "|---|---|---:|---:|---|---|---|"]
    lines += [f"| {r.scenario} | {r.figure} | {_kib(r.rss_before_kib)} | {_kib(r.rss_after_kib)} "
              f"| {r.target} | {r.verdict} | {r.note} |" for r in rows]
    return "\n".join(lines)


def as_json(rows: Sequence[Row], title: str) -> str:
    return json.dumps({"title": title, "passed": all(r.passed is not False for r in rows),
                       "rows": [{**asdict(r), "verdict": r.verdict} for r in rows]}, indent=2)
