"""docs/RESULTS.md and the counts in the README and docs/ are what ``python -m
rocketmq_spec.conformance.results render`` makes of the committed reports in docs/results/ (one per target): a
change to either that the command would undo, or a report updated without rendering, fails here."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from rocketmq_spec.conformance import results, results_tls
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

    def check(targets: Sequence[str], keep: Path) -> int:
        checked.extend(targets)
        return 0

    monkeypatch.setattr(results, "check", check)
    assert results.main(["check"]) == 0
    assert checked == list(results.CHECKED)
    assert not set(checked) & set(results.OTHER_TARGETS)


def test_tls_columns_are_shown_but_not_checked_by_ci() -> None:
    """Each TLS column is one run per tls.server.mode of a project target (its gRPC port too when it has
    one); none is among what ``check`` runs without targets."""
    assert not set(results_tls.TLS_COLUMNS) & set(results.CHECKED)
    for column, target in results_tls.TLS_COLUMNS.items():
        runs = results._runs(column)
        assert [args[args.index("--tls-mode") + 1] for args in runs.values()] == [
            mode.value for mode in results_tls.MODES]
        assert all(("--grpc" in args) == (target == "apache-5.5.0") for args in runs.values()), column
        assert all(args[-2:] == ["-k", results_tls.AREA] for args in runs.values()), column
