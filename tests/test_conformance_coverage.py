"""``rmq-conformance coverage``: clauses judged by a case that can fail, those no case can judge (with the
reason, from ``rocketmq_spec/conformance/unjudged.toml``) and those that simply lack a case."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketmq_spec.conformance.coverage import CaseEntry, ClauseEntry, as_text, load_unjudged, summary


def _clause(name: str, *, can_fail: bool | None, reason: str = "") -> ClauseEntry:
    cases = [] if can_fail is None else [CaseEntry(f"cases.py::test_{name}", name, "MUST", can_fail)]
    return ClauseEntry(name, "MUST", "text", cases, reason)


def test_reasons_keep_unjudgeable_clauses_apart_from_missing_cases() -> None:
    clauses = [_clause("RMQ-A", can_fail=True), _clause("RMQ-B", can_fail=None, reason="not observable"),
               _clause("RMQ-C", can_fail=False), _clause("RMQ-D", can_fail=True, reason="stale")]
    totals = summary(clauses)
    assert totals["must_should_judged"] == 2
    assert totals["must_should_no_case_can_judge"] == ["RMQ-B"]
    assert totals["must_should_unjudged"] == ["RMQ-C"]
    assert totals["reasons_of_judged_clauses"] == ["RMQ-D"]
    text = as_text(clauses)
    assert "RMQ-B MUST [no case; unjudged.toml says no case can: not observable]" in text
    assert "out of date in unjudged.toml: RMQ-D" in text


def test_the_shipped_reasons_name_real_clauses() -> None:
    assert all(reason.strip() for reason in load_unjudged().values())


def test_a_reason_for_a_clause_the_spec_lacks_is_refused(tmp_path: Path) -> None:
    table = tmp_path / "unjudged.toml"
    table.write_text('[[unjudged]]\nclause = "RMQ-NO-SUCH"\nreason = "typo"\n', encoding="utf-8")
    with pytest.raises(ValueError, match="RMQ-NO-SUCH"):
        load_unjudged(table)
