"""``results check`` tells a flaky case from a changed one and leaves timing-sensitive cases out; ``update``
keeps the case files of the non-PASS cases."""

from __future__ import annotations

from pathlib import Path

from rocketmq_spec.conformance.report import json_files
from rocketmq_spec.conformance.report.matrix import Report
from rocketmq_spec.conformance.result import CaseResult
from rocketmq_spec.conformance.results import TIMING_SENSITIVE
from rocketmq_spec.conformance.results_store import compare, keep_reproducers
from rocketmq_spec.conformance.verdict import Verdict


def report(label: str, **verdicts: str) -> Report:
    cases = {case.replace("__", "::"): {"case": case.replace("__", "::"), "verdict": verdict}
             for case, verdict in verdicts.items()}
    return Report(label, label, {}, cases)


def test_a_case_that_flips_back_is_flaky_and_one_that_stays_is_changed() -> None:
    committed = report("committed", query__a="PASS", pull__b="PASS", send__c="PASS")
    fresh = report("fresh", query__a="FAIL", pull__b="FAIL", send__c="PASS")
    asked: list[list[str]] = []

    def rerun(cases: list[str]) -> Report:
        asked.append(cases)
        return report("rerun", query__a="PASS", pull__b="FAIL")

    found = compare(committed, fresh, rerun, TIMING_SENSITIVE)
    assert asked == [["pull::b", "query::a"]]
    assert found.flaky == [("query::a", "PASS", "FAIL")]
    assert found.changed == [("pull::b", "PASS", "FAIL")]


def test_nothing_is_rerun_when_nothing_differs_and_a_rerun_that_cannot_run_changes_nothing() -> None:
    same = report("x", a__b="PASS")
    assert compare(same, same, lambda cases: None, {}).changed == []
    found = compare(same, report("y", a__b="FAIL"), lambda cases: None, {})
    assert found.changed == [("a::b", "PASS", "FAIL")] and found.flaky == []


def test_timing_sensitive_cases_are_left_out_with_a_reason() -> None:
    case = next(iter(TIMING_SENSITIVE))
    committed = Report("c", "c", {}, {case: {"verdict": "PASS"}})
    fresh = Report("f", "f", {}, {case: {"verdict": "INFO"}})
    found = compare(committed, fresh, lambda cases: None, TIMING_SENSITIVE)
    assert found.left_out == [case] and not found.changed and all(TIMING_SENSITIVE.values())


def test_update_keeps_the_case_files_of_non_pass_cases_only(tmp_path: Path) -> None:
    fresh, committed = tmp_path / "fresh", tmp_path / "committed"
    json_files.write(fresh, [CaseResult(case_id=f"a::{verdict.name.lower()}", area="a", clause_id="RMQ-X-Y",
                                        clause_text="", level="MUST", requirement="", verdict=verdict)
                             for verdict in (Verdict.PASS, Verdict.FAIL, Verdict.NON_STRICT)], {})
    (committed / "cases").mkdir(parents=True)
    (committed / "cases" / "stale.json").write_text("{}")
    kept = keep_reproducers(fresh, committed)
    assert sorted(p.name for p in kept) == ["a_fail.json", "a_non_strict.json"]
    assert sorted(p.name for p in (committed / "cases").iterdir()) == ["a_fail.json", "a_non_strict.json"]
