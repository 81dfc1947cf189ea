"""The soak harness in its short form against a reference broker it starts: every scenario runs and
everything the broker answered is right. Rows judged on memory or rate are left to the printed table
(``tox -e soak``), since this machine's load moves them."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.soak.__main__ import main

TINY = ["--connections", "60", "--pulls", "60", "--storm-connections", "40", "--storm-batches", "2",
        "--storm-runs", "10", "--partial-rounds", "1", "--partial-per-round", "2", "--partial-mib", "0.25"]


def _rows(report: Path) -> list[dict]:
    return json.loads(report.read_text(encoding="utf-8"))["rows"]


def test_load_and_hostile_scenarios_against_a_reference_broker(tmp_path: Path) -> None:
    report = tmp_path / "soak.json"
    main(["--reference", "--quick", *TINY, "--only", "connections", "pulls", "storm", "partial",
          "--json", str(report)])
    rows = _rows(report)
    scenarios = {r["scenario"] for r in rows}
    assert scenarios == {"connections", "parked pulls", "malformed storm", "partial frames"}
    wrong = [r for r in rows if not r["measured"] and r["passed"] is not True]
    assert not wrong, wrong
    assert "0 tracebacks in the broker's log after 10 storm(s)" in [r["figure"] for r in rows]


def test_a_kill_9_cycle_keeps_every_acknowledged_send(tmp_path: Path) -> None:
    report = tmp_path / "soak.json"
    main(["--reference", "--quick", "--only", "kill", "--kill-cycles", "1", "--load-seconds", "0.3",
          "--store", str(tmp_path / "store"), "--json", str(report)])
    (row,) = _rows(report)
    assert row["passed"] is True, row
    assert "lost 0, duplicated 0, corrupted 0, misplaced 0; offline check clean" in row["figure"]
