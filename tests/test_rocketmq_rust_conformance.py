"""rocketmq-rust 1.0.0 through the whole remoting suite, judged by its profile: every verdict must be the
one in the committed report (``docs/results/rocketmq-rust-1.0.0``), whose FAILs are the defects
``docs/OTHER_IMPLEMENTATIONS.md`` reproduces. A changed verdict is either a change of the suite, which must
then be re-judged against rocketmq-rust and Apache RocketMQ, or a changed target.

Slow, and skipped where rocketmq-rust 1.0.0 is not installed (``rmq-rust install 1.0.0``, about an hour).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rocketmq_rust.pytest_plugin import missing
from rocketmq_rust.releases import release

pytestmark = pytest.mark.slow

TARGET = "rocketmq-rust-1.0.0"
COMMITTED = Path(__file__).resolve().parent.parent / "docs" / "results" / TARGET / "index.json"
RUN_TIMEOUT = 3600


def _verdicts(index: dict[str, object]) -> dict[str, str]:
    cases = index["cases"]
    assert isinstance(cases, list)
    return {case["case"]: case["verdict"] for case in cases}


def test_every_verdict_is_the_committed_one(tmp_path: Path) -> None:
    if reason := missing(release(TARGET)):
        pytest.skip(reason)
    report = tmp_path / "report"
    done = subprocess.run([sys.executable, "-m", "conformance.cli", "--target", TARGET, "-n", "2",
                           "--report", str(report)], capture_output=True, text=True, timeout=RUN_TIMEOUT,
                          check=False)
    assert (report / "index.json").exists(), done.stdout[-3000:] + done.stderr[-3000:]
    seen = _verdicts(json.loads((report / "index.json").read_text(encoding="utf-8")))
    committed = _verdicts(json.loads(COMMITTED.read_text(encoding="utf-8")))
    changed = {case: (committed.get(case), verdict) for case, verdict in seen.items()
               if committed.get(case) != verdict}
    assert not changed, changed
