"""Apache RocketMQ 5.5.0's own mqadmin (``org.apache.rocketmq.tools.command.MQAdminStartup`` from the
provisioned class path) against the reference broker answering as 5.5.0: every command the 4.9.8 checks
run, plus setConsumeMode, which switches a group to POP, and exportPopRecord (POP_ROLLBACK). All commands
run in one JVM (``tests/java/MqadminBatch.java``); skipped without a JDK or the 5.5.0 jars."""

from __future__ import annotations

import pytest

from rocketmq_spec.admin.wire import AdminConnection
from rocketmq_spec.reference_broker.embedded import SyncEmbeddedRocketMQ
from tests.java_programs import JavaUnavailable, release_classpath
from tests.mqadmin_commands import COMMANDS, AdminCommand, Scene, create_group, prepare, problems, run_batch
from tests.online_client import OnlineClient

pytestmark = pytest.mark.interop

RELEASE = "5.5.0"
CLIENT_ID = "127.0.0.1@mqadmin5-test"
_CHANGED_IN_5X = {"queryMsgById": AdminCommand("queryMsgById", "-n {ns} -t {topic} -i {offset_msg_id}")}
"""Commands whose 5.x form differs: queryMsgById requires the topic (-t) in 5.x."""
COMMANDS_5X = (
    *(_CHANGED_IN_5X.get(command.name, command) for command in COMMANDS),
    AdminCommand("setConsumeMode", "-n {ns} -b {broker} -t {topic} -g {group} -m POP -q 0"),
    AdminCommand("exportPopRecord", "-n {ns} -b {broker}"),
)


@pytest.fixture
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    with SyncEmbeddedRocketMQ() as mq:
        prepared = prepare(mq.namesrv_addr, mq.broker_addr, mq.embedded.broker_config.broker_name)
        scene = Scene(**{**prepared.__dict__, "client_id": CLIENT_ID})
        with AdminConnection(mq.broker_addr) as connection:  # 5.x clones offsets into a known group only
            create_group(connection, f"{prepared.group}_clone")
        client = OnlineClient(prepared.broker, prepared.ns, prepared.group, prepared.topic, CLIENT_ID)
        client.start()
        try:
            release_classpath(RELEASE)  # provisioned first; skipped where Maven cannot provision it
            return run_batch(RELEASE, COMMANDS_5X, scene, tmp_path_factory.mktemp("mqadmin5"))
        except JavaUnavailable as exc:
            pytest.skip(str(exc))
        finally:
            client.stop()


def test_mqadmin5_commands(outputs: dict[str, str]) -> None:
    """Every command printed its frame and none failed; one test for the whole batch, so that one xdist
    worker starts the broker and the JVM (a test per command would start them on each worker)."""
    assert not problems(COMMANDS_5X, outputs), problems(COMMANDS_5X, outputs)
    # exportPopRecord prints its own line, not an exception, when POP_ROLLBACK is refused ("Export broker
    # records error, ..."); without -d it is no dry run (its -d false means a dry run)
    assert "Export broker records, brokerName=" in outputs["exportPopRecord"], outputs["exportPopRecord"]
    assert "dryRun=false" in outputs["exportPopRecord"]
