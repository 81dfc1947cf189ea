"""The ACL 2.0 cases of ``rmq-conformance`` against the embedded broker started with
authenticationEnabled and authorizationEnabled, as a user runs them (``--authn``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from rocketmq_spec.conformance.cli import main
from tests import process_tree

RUN_TIMEOUT = 300


def test_authn_cases_pass_against_the_embedded_broker(tmp_path: Path) -> None:
    report = tmp_path / "report"
    done = process_tree.run([sys.executable, "-m", "rocketmq_spec.conformance.cli",
                             "--authn", "-n", "0", "--report", str(report)],
                            capture_output=True, text=True, timeout=RUN_TIMEOUT, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    cases = json.loads((report / "index.json").read_text())["cases"]
    areas = {c["area"] for c in cases}
    assert areas == {"auth_authenticate", "auth_authorize", "grpc_auth"}, "only the ACL 2.0 cases run"
    assert {c["verdict"] for c in cases} == {"PASS"}


@pytest.mark.parametrize("value", ["root", "root:", ":pw"])
def test_auth_user_needs_name_and_password(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--broker", "127.0.0.1:1", "--auth-user", value])
    assert exited.value.code == 2
    assert "NAME:PASSWORD" in capsys.readouterr().err
