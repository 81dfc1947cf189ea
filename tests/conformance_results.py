"""Case results with every verdict, for the report-writer tests."""

from __future__ import annotations

from conformance.result import CaseResult
from conformance.verdict import Verdict


def sample_results() -> list[CaseResult]:
    return [
        CaseResult(case_id=f"{area}::case_{verdict.name.lower()}", area=area, clause_id="RMQ-FRAME-OPAQUE",
                   clause_text="A response carries the opaque of its request.", level="MUST",
                   requirement="opaque echoed", verdict=verdict, message=f"{verdict.value} <message>",
                   expected=1, actual=2, duration=0.25,
                   frames=[{"t": 0.001, "conn": 1, "dir": ">", "len": 4, "hex": "0000000c"}])
        for area in ("framing", "headers") for verdict in Verdict
    ]
