"""The suite against a running Apache RocketMQ 4.9.8, when one is given by address.

Set ``RMQ_JAVA_NAMESRV`` and ``RMQ_JAVA_BROKER`` (HOST:PORT each) to run it; without them the test is
skipped, so CI needs no Java. Under the shipped 4.9.8 profile every case must pass or be a cited
deviation: a FAIL means either the case or the profile is wrong.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.test_conformance_runs import _run


def test_java_peer_conforms_under_its_profile(tmp_path: Path) -> None:
    namesrv, broker = os.environ.get("RMQ_JAVA_NAMESRV"), os.environ.get("RMQ_JAVA_BROKER")
    if not (namesrv and broker):
        pytest.skip("set RMQ_JAVA_NAMESRV and RMQ_JAVA_BROKER to the addresses of a Java 4.9.8 peer")
    code, index, stdout = _run(["--namesrv", namesrv, "--broker", broker, "--profile", "rocketmq-4.9.8"],
                               tmp_path / "report")
    assert code == 0, stdout
    assert index["totals"]["FAIL"] == 0 and index["totals"]["CRASH"] == 0, stdout
    judged_by_profile = [c for c in index["cases"] if c.get("deviation")]
    assert all(c["verdict"] == "NON-STRICT" for c in judged_by_profile)
