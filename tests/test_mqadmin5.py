"""Apache RocketMQ 5.5.0's own mqadmin (``org.apache.rocketmq.tools.command.MQAdminStartup`` from the
provisioned class path) against the reference broker answering as 5.5.0: every command the 4.9.8 checks
run, plus setConsumeMode, which switches a group to POP, and exportPopRecord (POP_ROLLBACK). All commands
run in one JVM (``tests/java/MqadminBatch.java``); skipped without a JDK or the 5.5.0 jars."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from rocketmq_spec.reference_broker.embedded import SyncEmbeddedRocketMQ
from tests.java_programs import JavaUnavailable, compile_program, release_classpath, run_program
from tests.mqadmin_commands import COMMANDS, AdminCommand, Scene, failed, prepare
from tests.online_client import OnlineClient

pytestmark = pytest.mark.interop

RELEASE = "5.5.0"
CLIENT_ID = "127.0.0.1@mqadmin5-test"
BATCH_TIMEOUT_S = 600.0
JAVA_OPTIONS = ("-Xmx256m", "-Drocketmq.client.logRoot=/tmp")
_CHANGED_IN_5X = {"queryMsgById": AdminCommand("queryMsgById", "-n {ns} -t {topic} -i {offset_msg_id}")}
"""Commands whose 5.x form differs: queryMsgById requires the topic (-t) in 5.x."""
COMMANDS_5X = (
    *(_CHANGED_IN_5X.get(command.name, command) for command in COMMANDS),
    AdminCommand("setConsumeMode", "-n {ns} -b {broker} -t {topic} -g {group} -m POP -q 0"),
    AdminCommand("exportPopRecord", "-n {ns} -b {broker}"),
)
WARM_UP = "clusterList"
"""Run once before the judged commands: a cold JVM's first RPC can exceed mqadmin's 3 s timeout."""
_FRAME = re.compile(r"^=== BEGIN (\S+)\n(.*?)^=== END \1$", re.M | re.S)


@pytest.fixture
def outputs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    try:
        classpath = release_classpath(RELEASE)
        classes = compile_program("MqadminBatch", classpath, tmp_path_factory.mktemp("mqadmin5"))
    except JavaUnavailable as exc:
        pytest.skip(str(exc))
    with SyncEmbeddedRocketMQ() as mq:
        prepared = prepare(mq.namesrv_addr, mq.broker_addr, mq.embedded.broker_config.broker_name)
        scene = Scene(**{**prepared.__dict__, "client_id": CLIENT_ID})
        client = OnlineClient(prepared.broker, prepared.ns, prepared.group, prepared.topic, CLIENT_ID)
        client.start()
        try:
            warm_up = next(c for c in COMMANDS_5X if c.name == WARM_UP)
            lines = "\n".join("\t".join(command.argv(scene)) for command in (warm_up, *COMMANDS_5X))
            output = run_program("MqadminBatch", classpath, Path(classes), stdin=lines,
                                 timeout=BATCH_TIMEOUT_S, java_options=JAVA_OPTIONS)
        finally:
            client.stop()
    yield {match.group(1): match.group(2) for match in _FRAME.finditer(output)}


def test_mqadmin5_commands(outputs: dict[str, str]) -> None:
    """Every command printed its frame and none failed; one test for the whole batch, so that one xdist
    worker starts the broker and the JVM (a test per command would start them on each worker)."""
    missing = [command.name for command in COMMANDS_5X if command.name not in outputs]
    assert not missing, f"{missing} printed nothing: {sorted(outputs)}"
    failures = {name: outputs[name] for name in (command.name for command in COMMANDS_5X)
                if failed(outputs[name])}
    assert not failures, failures
    # exportPopRecord prints its own line, not an exception, when POP_ROLLBACK is refused ("Export broker
    # records error, ..."); without -d it is no dry run (its -d false means a dry run)
    assert "Export broker records, brokerName=" in outputs["exportPopRecord"], outputs["exportPopRecord"]
    assert "dryRun=false" in outputs["exportPopRecord"]
