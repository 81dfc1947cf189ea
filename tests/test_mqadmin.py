"""Apache RocketMQ's own mqadmin against the reference broker: every command of the admin area runs.

mqadmin is the one of a release provisioned from Maven Central (``tests.mqadmin_commands.launcher``; any
other in ``RMQ_MQADMIN``), skipped where Java or Maven is missing. A consumer and a producer of the
scene's group are kept online by ``tests.online_client``, which answers GET_CONSUMER_RUNNING_INFO as a Java
consumer does, so the commands that ask a client (consumerStatus) or list connections have someone to
find.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from rocketmq_spec.apache import NotServed, ToolMissing
from rocketmq_spec.reference_broker.embedded import SyncEmbeddedRocketMQ
from tests.mqadmin_commands import COMMANDS, AdminCommand, Scene, failed, launcher, prepare, run
from tests.online_client import OnlineClient

CLIENT_ID = "127.0.0.1@mqadmin-test"
TIMEOUT_MARKER = "RemotingTimeoutException"
TIMEOUT_RETRIES = 3
"""mqadmin's client waits 3 s for an answer (ClientConfig.mqClientApiTimeout, not settable from its command
line), which a busy machine's JVM start and first connection can exceed: a timed-out command runs again."""


@pytest.fixture(scope="module")
def mqadmin(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    try:
        return launcher(tmp_path_factory.mktemp("mqadmin"))
    except (ToolMissing, NotServed) as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def scene() -> Iterator[Scene]:
    with SyncEmbeddedRocketMQ(wire_release="4.9.8") as mq:  # 4.9.8 mqadmin against the broker as 4.9.8
        prepared = prepare(mq.namesrv_addr, mq.broker_addr, mq.embedded.broker_config.broker_name)
        client = OnlineClient(prepared.broker, prepared.ns, prepared.group, prepared.topic, CLIENT_ID)
        client.start()
        try:
            yield Scene(**{**prepared.__dict__, "client_id": CLIENT_ID})
        finally:
            client.stop()


@pytest.mark.parametrize("command", COMMANDS, ids=[c.name for c in COMMANDS])
def test_mqadmin_command(command: AdminCommand, mqadmin: list[str], scene: Scene) -> None:
    output = run(mqadmin, command.argv(scene))
    for _ in range(TIMEOUT_RETRIES):
        if TIMEOUT_MARKER not in output:
            break
        output = run(mqadmin, command.argv(scene))
    assert not failed(output), output
