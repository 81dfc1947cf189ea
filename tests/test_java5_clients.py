"""The 5.x Java remoting client (rocketmq-client 5.5.0 from the provisioned class path) against the
reference broker answering as 5.5.0: plain, batch, ordered and timer producers, then a push consumer
switched to POP by the admin API (mqadmin setConsumeMode) that takes its assignment from the broker and
pops every message. Skipped without a JDK or the provisioned 5.5.0 jars."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from reference_broker.embedded import SyncEmbeddedRocketMQ
from tests.java_programs import JavaUnavailable, compile_program, release_classpath, run_program

pytestmark = pytest.mark.interop

RELEASE = "5.5.0"
CONSUME_TIMEOUT_S = 90
JAVA_OPTIONS = ("-Xmx256m", "-Drocketmq.client.logRoot=/tmp", "-Djava.net.preferIPv4Stack=true")


def test_pop_round_trip(tmp_path: Path) -> None:
    try:
        classpath = release_classpath(RELEASE)
        classes = compile_program("PopRoundTrip", classpath, tmp_path / "classes")
    except JavaUnavailable as exc:
        pytest.skip(str(exc))
    with SyncEmbeddedRocketMQ(tmp_path / "store") as broker:
        try:
            output = run_program("PopRoundTrip", classpath, classes, broker.namesrv_addr, broker.broker_addr,
                                 "JavaPopTopic", "JavaPopGroup", str(CONSUME_TIMEOUT_S),
                                 timeout=CONSUME_TIMEOUT_S + 60, java_options=JAVA_OPTIONS)
        except subprocess.CalledProcessError as exc:
            pytest.fail(f"PopRoundTrip exited {exc.returncode}:\n{exc.stdout[-3000:]}\n{exc.stderr[-3000:]}")
    lines = output.splitlines()
    assert "done" in lines and "mode POP" in lines
    consumed = [line.split()[1] for line in lines if line.startswith("consumed ")]
    assert {"plain-0", "plain-3", "batch-2", "ordered-0", "timer-0"} <= set(consumed)
