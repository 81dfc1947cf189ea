"""The 5.x Java remoting client (rocketmq-client 5.5.0 from the provisioned class path) against the
reference broker answering as 5.5.0: plain, batch, ordered and timer producers, then a push consumer
switched to POP by the admin API (mqadmin setConsumeMode) that takes its assignment from the broker and
pops every message; a transaction producer (commit, rollback, an undecided message committed when checked
back), then a push consumer in its default pull mode and a lite pull consumer (LITE_PULL_MESSAGE) that
each see exactly the plain and committed messages. The second program also runs against Apache RocketMQ
5.5.0 (slow), so its expectations are Apache's. Skipped without a JDK or the provisioned 5.5.0 jars."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

import pytest

from rocketmq_spec.apache.pytest_plugin import running_or_skip
from rocketmq_spec.reference_broker.config import BrokerConfig
from rocketmq_spec.reference_broker.embedded import SyncEmbeddedRocketMQ
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


TRANSACTION_TIMEOUT_MS = 1000
"""A half message left undecided is checked back once it is this old, in a round every
TRANSACTION_CHECK_INTERVAL_MS (shortened on both brokers, the same keys)."""
TRANSACTION_CHECK_INTERVAL_MS = 1000
EXPECTED_CONSUMED = ["plain-0", "plain-1", "plain-2", "plain-3", "tx-commit", "tx-unknown"]


@contextmanager
def _reference(tmp_path: Path) -> Iterator[str]:
    config = BrokerConfig(listen_port=0, transaction_time_out=TRANSACTION_TIMEOUT_MS,
                          transaction_check_interval=TRANSACTION_CHECK_INTERVAL_MS)
    with SyncEmbeddedRocketMQ(tmp_path / "store", broker_config=config) as broker:
        yield broker.namesrv_addr


@contextmanager
def _apache(tmp_path: Path) -> Iterator[str]:
    settings = {"transactionTimeOut": TRANSACTION_TIMEOUT_MS,
                "transactionCheckInterval": TRANSACTION_CHECK_INTERVAL_MS}
    with running_or_skip(RELEASE, tmp_path / "apache", broker_config=settings) as apache:
        yield apache.namesrv_addr


@pytest.mark.parametrize("target", [
    pytest.param(_reference, id="reference-broker"),
    pytest.param(_apache, id="apache-5.5.0", marks=pytest.mark.slow),
])
def test_transactions_push_and_lite_pull(target: Callable[[Path], AbstractContextManager[str]],
                                         tmp_path: Path) -> None:
    try:
        classpath = release_classpath(RELEASE)
        classes = compile_program("ConsumersRoundTrip", classpath, tmp_path / "classes")
    except JavaUnavailable as exc:
        pytest.skip(str(exc))
    with target(tmp_path) as namesrv:
        try:
            output = run_program("ConsumersRoundTrip", classpath, classes, namesrv, "JavaConsumersTopic",
                                 "JavaConsumers", str(CONSUME_TIMEOUT_S), timeout=CONSUME_TIMEOUT_S + 60,
                                 java_options=JAVA_OPTIONS)
        except subprocess.CalledProcessError as exc:
            pytest.fail(f"ConsumersRoundTrip exited {exc.returncode}:\n{exc.stdout[-3000:]}\n"
                        f"{exc.stderr[-3000:]}")
    lines = output.splitlines()
    assert "done" in lines and "checked tx-unknown" in lines
    for consumer in ("push", "lite"):
        assert f"{consumer} [{', '.join(EXPECTED_CONSUMED)}]" in lines
