"""``results check`` tells a flaky case from a changed one and leaves timing-sensitive cases out; ``update``
keeps the case files of the non-PASS cases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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


def written(directory: Path, label: str, **verdicts: Verdict) -> Report:
    """A run's report written to ``directory`` as ``rmq-conformance --report`` writes one (case files of
    the non-PASS cases included), loaded back."""
    json_files.write(directory, [CaseResult(case_id=case.replace("__", "::"), area="a", clause_id="RMQ-X-Y",
                                            clause_text="", level="MUST", requirement="", verdict=verdict,
                                            message=f"{label} saw {verdict.value}")
                                 for case, verdict in verdicts.items()], {})
    return Report.load(directory / json_files.INDEX, label)


def test_the_records_of_a_flaky_and_a_changed_case_are_kept_and_named(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    committed = report("committed", a__flaky="PASS", a__changed="PASS", a__same="PASS")
    fresh = written(tmp_path / "run", "this run", a__flaky=Verdict.FAIL, a__changed=Verdict.FAIL,
                    a__same=Verdict.PASS)
    again = written(tmp_path / "rerun", "rerun", a__flaky=Verdict.PASS, a__changed=Verdict.ERROR)
    keep = tmp_path / "kept"
    found = compare(committed, fresh, lambda cases: again, {}, keep)
    assert found.kept == {"a::flaky": keep / "a_flaky", "a::changed": keep / "a_changed"}
    flaky, changed = found.kept["a::flaky"], found.kept["a::changed"]
    assert (flaky / "this-run.json").read_bytes() == (tmp_path / "run/cases/a_flaky.json").read_bytes()
    assert json.loads((flaky / "rerun.json").read_text())["verdict"] == "PASS"  # a PASS has no case file
    assert (changed / "rerun.json").read_bytes() == (tmp_path / "rerun/cases/a_changed.json").read_bytes()
    assert json.loads((changed / "this-run.json").read_text())["message"] == "this run saw FAIL"
    assert not (keep / "a_same").exists()
    found.print_lines("apache-5.3.3", {})
    lines = capsys.readouterr().out.splitlines()
    flaky_line = "apache-5.3.3: a::flaky: FLAKY: committed PASS, this run FAIL, PASS when rerun"
    assert f"{flaky_line}; records kept in {flaky}" in lines
    assert any(line.startswith("apache-5.3.3: a::changed: committed PASS") and line.endswith(str(changed))
               for line in lines)


def test_a_case_that_was_not_rerun_keeps_the_record_of_the_run_that_differed(tmp_path: Path) -> None:
    fresh = written(tmp_path / "run", "this run", a__b=Verdict.FAIL)
    where = tmp_path / "kept" / "a_b"
    where.mkdir(parents=True)
    (where / "rerun.json").write_text("{}")  # an earlier check's record is replaced, not mixed in
    found = compare(report("committed", a__b="PASS"), fresh, lambda cases: None, {}, tmp_path / "kept")
    assert sorted(p.name for p in found.kept["a::b"].iterdir()) == ["this-run.json"]
