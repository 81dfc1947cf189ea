"""Comparing conformance runs: the case × run matrix, ``rmq-conformance compare``, and docs/RESULTS.md."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from rocketmq_spec.conformance import cli
from rocketmq_spec.conformance.report import json_files
from rocketmq_spec.conformance.report.matrix import (
    ABSENT,
    Report,
    ReportError,
    differences,
    render_comparison,
)
from rocketmq_spec.conformance.result import CaseResult
from rocketmq_spec.conformance.verdict import Verdict
from tests.test_conformance_framework import sample_results


def _write(directory: Path, results: list[CaseResult], **meta: object) -> Path:
    return json_files.write(directory, results, {"profile": "unprofiled", "namesrv": "127.0.0.1:1",
                                                 "broker": "127.0.0.1:2", "started": 0.0, **meta})


def _with_verdict(results: list[CaseResult], index: int, verdict: Verdict,
                  deviation: str = "") -> list[CaseResult]:
    changed = list(results)
    changed[index] = dataclasses.replace(results[index], verdict=verdict, deviation=deviation)
    return changed


def test_same_runs_have_no_differences(tmp_path: Path) -> None:
    runs = [Report.load(_write(tmp_path / name, sample_results())) for name in ("a", "b", "c")]
    assert differences(runs) == []
    text = render_comparison(runs)
    assert "Every case has the same verdict in every run." in text
    assert f"- {runs[0].label}, `{sample_results()[1].case_id}`, FAIL: FAIL <message>." in text
    assert "| run started | 1970-01-01 00:00:00 UTC |" in text


def test_changed_and_missing_cases_are_differences(tmp_path: Path) -> None:
    base = sample_results()
    cited = _with_verdict(base, 1, Verdict.NON_STRICT, deviation="Java does it its way (Some.java)")
    runs = [Report.load(_write(tmp_path / "a", base), "first"),
            Report.load(_write(tmp_path / "b", cited[:-1]), "second")]
    changed, missing = base[1].case_id, base[-1].case_id
    assert differences(runs) == sorted([changed, missing])
    assert runs[1].verdict(missing) == ABSENT
    text = render_comparison(runs)
    assert f"| `{changed}` | {base[1].verdict.value} | NON-STRICT |" in text
    assert f"| `{missing}` | {base[-1].verdict.value} | {ABSENT} |" in text
    assert (f"- second, `{changed}`, NON-STRICT: {base[1].message}. Known deviation: Java does it its way "
            "(Some.java)") in text


def test_compare_needs_two_readable_reports(tmp_path: Path) -> None:
    one = Report.load(_write(tmp_path / "a", sample_results()))
    with pytest.raises(ReportError, match="two reports"):
        render_comparison([one])
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"cases": [{"no case": 1}]}))
    with pytest.raises(ReportError, match=r"not a conformance index\.json"):
        Report.load(bad)


def test_cli_compare_writes_the_matrix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = (_write(tmp_path / name, sample_results()) for name in ("a", "b"))
    out = tmp_path / "matrix.md"
    assert cli.main(["compare", str(a), str(b), "--label", "A", "--label", "B", "--out", str(out)]) == 0
    assert "| case | clause | level | A | B |" in out.read_text()
    assert "0 case(s) with different verdicts" in capsys.readouterr().out
    assert cli.main(["compare", str(a), str(b), "--label", "A"]) == 2
    assert cli.main(["compare", str(a), str(tmp_path / "absent.json")]) == 2
