"""``index.json`` plus one JSON file per case, for tools that compare runs or diff two targets."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rocketmq_spec.conformance.report.matrix import by_area, totals
from rocketmq_spec.conformance.result import CaseResult
from rocketmq_spec.conformance.verdict import Verdict

CASES_DIR = "cases"


def file_name(case_id: str) -> str:
    """A portable file name for a case id (ids contain ``/``, ``::`` and brackets)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", case_id).strip("_") + ".json"


def write(directory: Path, results: Sequence[CaseResult], meta: dict[str, Any]) -> Path:
    cases = directory / CASES_DIR
    cases.mkdir(parents=True, exist_ok=True)
    entries = []
    for result in results:
        name = file_name(result.case_id)
        text = json.dumps(result.to_json(), indent=1, ensure_ascii=False)
        (cases / name).write_text(text, encoding="utf-8")
        entry = {"case": result.case_id, "area": result.area, "clause": result.clause_id,
                 "level": result.level, "verdict": result.verdict.value, "file": f"{CASES_DIR}/{name}"}
        if result.verdict is not Verdict.PASS:
            entry["message"] = result.message
            entry["basis"] = result.basis
        if result.case_clause:
            entry["case_clause"] = result.case_clause
        if result.deviation:
            entry["deviation"] = result.deviation
        entries.append(entry)
    index = {
        **meta,
        "totals": totals(results),
        "areas": {area: {v.value: n for v, n in counts.items()} for area, counts in by_area(results).items()},
        "cases": entries,
    }
    path = directory / "index.json"
    path.write_text(json.dumps(index, indent=1, ensure_ascii=False), encoding="utf-8")
    return path


def read(directory: Path) -> tuple[dict[str, Any], list[CaseResult]]:
    """A report written by :func:`write`: its ``index.json`` (without the case list) and its cases."""
    index = json.loads((directory / "index.json").read_text(encoding="utf-8"))
    results = [CaseResult.from_json(json.loads((directory / entry["file"]).read_text(encoding="utf-8")))
               for entry in index.pop("cases")]
    return index, results
