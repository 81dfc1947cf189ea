"""docs/RESULTS.md and the counts in the README and docs/ are what ``python -m
rocketmq_spec.conformance.results render`` makes of the committed reports in docs/results/ (one per target): a
change to either that the command would undo, or a report updated without rendering, fails here."""

from __future__ import annotations

import pytest

from rocketmq_spec.conformance import results
from rocketmq_spec.conformance.verdict import Verdict


def test_every_project_target_has_a_committed_report() -> None:
    for target in results.CHECKED:
        for index in results._indexes(results.RESULTS_DIR, target):
            assert index.is_file(), (f"{index} is missing: "
                                     f"run python -m rocketmq_spec.conformance.results update {target}")


def test_results_and_documents_are_rendered_from_the_reports() -> None:
    assert results.RESULTS_DOC.read_text(encoding="utf-8") == results.results_text(), \
        "docs/RESULTS.md is stale: run python -m rocketmq_spec.conformance.results render"
    for path in results.spanned_documents():
        text = path.read_text(encoding="utf-8")
        assert text == results.spans_text(text, path.name), \
            f"{path.name}: counts are stale: run python -m rocketmq_spec.conformance.results render"


def test_every_generated_span_is_somewhere() -> None:
    texts = "".join(path.read_text(encoding="utf-8") for path in results.spanned_documents())
    for name in results.SPANS:
        assert f"<!-- generated:{name} -->" in texts and f"<!-- /generated:{name} -->" in texts, name


def test_every_release_conforms_under_its_profile_in_the_committed_reports() -> None:
    """What ``.ci/run`` holds every run to: 0 FAIL and every verdict other than PASS cited (by a profile's
    deviation, or, for a feature the release does not have, by the case's own reason)."""
    for target in results.CHECKED:
        report = results._report(target)
        assert report.total(Verdict.FAIL) == 0 and report.total(Verdict.CRASH) == 0, target
        uncited = [case for case, entry in report.cases.items()
                   if entry["verdict"] != Verdict.PASS.value and not entry.get("deviation")
                   and not (entry["verdict"] == Verdict.UNSUPPORTED.value and entry.get("message"))]
        assert uncited == [], target


def test_the_check_ci_runs_names_only_the_project_targets(monkeypatch: pytest.MonkeyPatch) -> None:
    """CI cannot build rocketmq-rust: its committed report is shown, but ``check`` without targets (what
    ``.ci/run`` calls) must not run it."""
    checked: list[str] = []
    monkeypatch.setattr(results, "check", lambda targets: checked.extend(targets) or 0)
    assert results.main(["check"]) == 0
    assert checked == list(results.CHECKED)
    assert not set(checked) & set(results.OTHER_TARGETS)
