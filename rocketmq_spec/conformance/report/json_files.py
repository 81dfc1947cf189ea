"""``index.json``, every case of the run in one file, plus the whole record of each case that did not pass.

The index is what tools compare runs with (``rmq-conformance compare``, the committed results): each
case's clause, level, verdict, requirement and message. A case that did not pass also gets a file of its
own under ``cases/`` with everything the suite recorded, observations and frames to the last byte, which
the index names in its ``file`` field. A passing case's observations and frames are left out: they are
most of a run's bytes (a PASS run of the main job wrote 14 MB of them) and say nothing a reader of a
passing case needs; rerun the case to see them.
"""

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
INDEX = "index.json"


def file_stem(case_id: str) -> str:
    """A portable file name, without suffix, for a case id (ids contain ``/``, ``::`` and brackets)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", case_id).strip("_")


def has_file(result: CaseResult) -> bool:
    """Whether the case's whole record is written (and its page, ``report.case_page``)."""
    return result.verdict is not Verdict.PASS


def entry(result: CaseResult) -> dict[str, Any]:
    """The case's line of the index: enough to compare runs and to list the case on a page."""
    found: dict[str, Any] = {"case": result.case_id, "area": result.area, "clause": result.clause_id,
                             "level": result.level, "verdict": result.verdict.value,
                             "requirement": result.requirement, "seconds": round(result.duration, 3)}
    optional = (("message", result.message), ("basis", result.basis), ("case_clause", result.case_clause),
                ("deviation", result.deviation), ("java", result.java_note))
    found.update((key, text) for key, text in optional if text)
    if has_file(result):
        found["file"] = f"{CASES_DIR}/{file_stem(result.case_id)}.json"
    return found


def from_entry(found: dict[str, Any]) -> CaseResult:
    """A case as its index line has it (no clause text, observations or frames)."""
    return CaseResult(case_id=found["case"], area=found["area"], clause_id=found["clause"], clause_text="",
                      level=found["level"], requirement=found.get("requirement", ""),
                      verdict=Verdict(found["verdict"]), message=found.get("message", ""),
                      duration=found.get("seconds", 0.0), java_note=found.get("java", ""),
                      deviation=found.get("deviation", ""), basis=found.get("basis", ""),
                      case_clause=found.get("case_clause", ""))


def write(directory: Path, results: Sequence[CaseResult], meta: dict[str, Any]) -> Path:
    cases = directory / CASES_DIR
    for result in results:
        if has_file(result):
            cases.mkdir(parents=True, exist_ok=True)
            text = json.dumps(result.to_json(), indent=1, ensure_ascii=False)
            (cases / f"{file_stem(result.case_id)}.json").write_text(text, encoding="utf-8")
    head = {
        **meta,
        "totals": totals(results),
        "areas": {area: {v.value: n for v, n in counts.items()} for area, counts in by_area(results).items()},
    }
    # one case a line: the file stays small and two runs diff case by case
    lines = ",\n".join(f"  {json.dumps(entry(result), ensure_ascii=False)}" for result in results)
    text = json.dumps(head, indent=1, ensure_ascii=False).removesuffix("\n}")
    path = directory / INDEX
    directory.mkdir(parents=True, exist_ok=True)
    path.write_text(f'{text},\n "cases": [\n{lines}\n ]\n}}\n', encoding="utf-8")
    return path


def read(directory: Path) -> tuple[dict[str, Any], list[CaseResult]]:
    """A report written by :func:`write`: its ``index.json`` (without the case list) and its cases, each
    from its own file where it has one, else from its index line."""
    index = json.loads((directory / INDEX).read_text(encoding="utf-8"))
    results = []
    for found in index.pop("cases"):
        path = directory / found["file"] if "file" in found else None
        results.append(CaseResult.from_json(json.loads(path.read_text(encoding="utf-8"))) if path is not None
                       and path.is_file() else from_entry(found))
    return index, results
