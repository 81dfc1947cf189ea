"""The suite against the Apache RocketMQ releases the project checks, provisioned from Maven Central.

Each release is started for the run (``rmq-conformance --target apache-VERSION``); its profile is chosen by
the version its answers carry. Every case must pass or be a deviation the profile cites, and every verdict
must be the one committed in docs/results/ (a FAIL means the case, the profile or the release changed). Marked
slow: ``.ci/run`` checks the same runs through ``python -m rocketmq_spec.conformance.results check``; skipped
where Java or Maven is missing or the Maven repository does not serve the release. """

from __future__ import annotations

from pathlib import Path

import pytest

from rocketmq_spec.apache import NotServed, ToolMissing, provision
from rocketmq_spec.conformance import results
from rocketmq_spec.conformance.report.matrix import Report, differences
from rocketmq_spec.targets import PROJECT_TARGETS, parse_target
from tests.test_conformance_runs import _run

APACHE_TARGETS = [name for name in PROJECT_TARGETS if parse_target(name) is not None]


@pytest.mark.slow
@pytest.mark.parametrize("target", APACHE_TARGETS)
def test_release_conforms_under_its_profile(target: str, tmp_path: Path) -> None:
    try:
        provision(target)
    except (ToolMissing, NotServed) as exc:
        pytest.skip(str(exc))
    code, index, stdout = _run(["--target", target], tmp_path / "report")
    assert index["profile_chosen"].endswith(f"covered by profile {index['profile_file']}"), stdout
    assert index["totals"]["FAIL"] == 0 and index["totals"]["CRASH"] == 0, stdout
    assert code == 0, stdout
    assert all(c.get("deviation") for c in index["cases"] if c["verdict"] != "PASS"), stdout
    committed = Report.load(results.RESULTS_DIR / target / results.INDEX, "committed")
    assert differences([committed, Report.load(tmp_path / "report" / results.INDEX, "run")]) == []
