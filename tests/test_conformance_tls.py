"""The tls area judges the embedded reference broker in each ``tls.server.mode``: every case of the mode
passes, the cases of the other modes are UNSUPPORTED, none fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import process_tree
from tests.golden import PROJECT_ROOT

EXPECTED_PASS = {
    "permissive": {"RMQ-TLS-EVERY-PORT", "RMQ-TLS-SNIFF", "RMQ-TLS-PERMISSIVE", "RMQ-TLS-TEST-MODE",
                   "RMQ-TLS-GRPC-PORT"},
    "enforcing": {"RMQ-TLS-EVERY-PORT", "RMQ-TLS-ENFORCING", "RMQ-TLS-TEST-MODE", "RMQ-TLS-GRPC-PORT"},
    "disabled": {"RMQ-TLS-DISABLED", "RMQ-TLS-GRPC-PORT"},
}


@pytest.mark.parametrize("mode", sorted(EXPECTED_PASS))
def test_tls_area_against_the_embedded_broker(mode: str, tmp_path: Path) -> None:
    done = process_tree.run([sys.executable, "-m", "rocketmq_spec.conformance.cli", "--wire-release", "5.5.0",
                             "--tls", "--tls-mode", mode, "--tls-insecure", "-k", "test_tls", "-n", "0",
                             "--report", str(tmp_path)], capture_output=True, text=True, timeout=300,
                            stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    cases = [c for c in json.loads((tmp_path / "index.json").read_text())["cases"] if c["area"] == "tls"]
    passed = {c["clause"] for c in cases if c["verdict"] == "PASS"}
    assert passed == EXPECTED_PASS[mode]
    assert {c["verdict"] for c in cases} <= {"PASS", "UNSUPPORTED"}


def test_tls_options_go_with_tls() -> None:
    done = process_tree.run([sys.executable, "-m", "rocketmq_spec.conformance.cli", "--tls-insecure"],
                            capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT)})
    assert done.returncode == 2 and "--tls-insecure goes with --tls" in done.stderr
