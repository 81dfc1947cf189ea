"""The ``acl`` area of ``rmq-conformance`` against the embedded broker started with ACL, as a user runs it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml  # type: ignore[import-untyped]

from rocketmq_spec.conformance import acl_policy
from rocketmq_spec.conformance.cli import main
from rocketmq_spec.reference_broker.acl.plain_file import parse
from tests import process_tree

RUN_TIMEOUT = 300
MIN_ACL_CASES = 25


UNUSABLE_FILES = "unusable_file"
"""The three cases that restart the broker on a broken policy file (most of the area's time): the long form
runs them, and so does CI's ``results check`` (the embedded-4.9.8 column's acl run)."""


@pytest.mark.parametrize("selection", [pytest.param("acl", id="whole", marks=pytest.mark.slow),
                                       pytest.param(f"acl and not {UNUSABLE_FILES}", id="short")])
def test_acl_area_passes_against_the_embedded_broker(selection: str, tmp_path: Path) -> None:
    report = tmp_path / "report"
    # ACL 1.0's admin codes (50-54) are gone from 5.3.3 on: the broker answers as 4.9.8, which has them
    argv = ["--acl", "--wire-release", "4.9.8", "-k", selection, "--report", str(report)]
    done = process_tree.run([sys.executable, "-m", "rocketmq_spec.conformance.cli",
                             *argv], capture_output=True, text=True,
                            timeout=RUN_TIMEOUT, check=False)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    index = json.loads((report / "index.json").read_text())
    cases = [c for c in index["cases"] if c["area"] == "acl"]
    assert len(cases) >= MIN_ACL_CASES
    assert {c["verdict"] for c in cases} == {"PASS"}
    assert len({c["clause"] for c in cases}) >= 15


def test_acl_file_command_writes_a_usable_policy(tmp_path: Path, capsys: object) -> None:
    path = tmp_path / "conf" / "plain_acl.yml"
    assert main(["acl-file", str(path)]) == 0
    policy = parse(yaml.safe_load(path.read_text()), path)
    assert set(policy.accounts) == {c.access_key for c in (acl_policy.ADMIN, acl_policy.USER, acl_policy.OPEN,
                                                            acl_policy.LOCAL)}
    assert policy.accounts[acl_policy.LOCAL.access_key].white_address("127.0.0.1")
    assert not policy.accounts[acl_policy.OPEN.access_key].white_address("127.0.0.1")
    assert policy.accounts[acl_policy.OPEN.access_key].white_address("192.168.1.11")


def test_a_foreign_policy_file_is_named(tmp_path: Path) -> None:
    foreign = tmp_path / "plain_acl.yml"
    foreign.write_text("accounts:\n  - accessKey: RocketMQ\n    secretKey: 12345678\n")
    assert acl_policy.missing_accounts(foreign) == ["rmqAdminKey", "rmqUserKey", "rmqOpenKey", "rmqLocalKey"]
    assert acl_policy.missing_accounts(acl_policy.write_acl_file(tmp_path / "ok.yml")) == []


def test_acl_needs_a_release_with_acl_1(capsys: pytest.CaptureFixture[str]) -> None:
    """ACL 1.0 left Apache RocketMQ in 5.3.3: ``--acl`` answers as 4.9.8 unless told, and refuses 5.5.0."""
    assert main(["--acl", "--wire-release", "5.5.0"]) == 2
    assert "ACL 1.0 left Apache RocketMQ in 5.3.3" in capsys.readouterr().err
