"""Apache RocketMQ's own mqadmin against the reference broker: every command of the admin area runs.

mqadmin is the one of a release provisioned from Maven Central, every command run in one JVM
(``tests.mqadmin_commands.run_batch``), or any other given in ``RMQ_MQADMIN``, a process per command;
skipped where Java or Maven is missing. A consumer and a producer of the
scene's group are kept online by ``tests.online_client``, which answers GET_CONSUMER_RUNNING_INFO as a Java
consumer does, so the commands that ask a client (consumerStatus) or list connections have someone to
find.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rocketmq_spec.apache import NotServed, ToolMissing
from rocketmq_spec.reference_broker.embedded import SyncEmbeddedRocketMQ
from tests.java_programs import JavaUnavailable
from tests.mqadmin_commands import (
    COMMANDS,
    MQADMIN_ENV,
    MQADMIN_RELEASE,
    Scene,
    launcher,
    prepare,
    problems,
    run,
    run_batch,
)
from tests.online_client import OnlineClient

CLIENT_ID = "127.0.0.1@mqadmin-test"
TIMEOUT_MARKER = "RemotingTimeoutException"
TIMEOUT_RETRIES = 3
"""mqadmin's client waits 3 s for an answer (ClientConfig.mqClientApiTimeout, not settable from its command
line), which a busy machine's JVM start and first connection can exceed: a timed-out command runs again."""


def _one_by_one(scene: Scene, home: Path) -> dict[str, str]:
    """The launcher named in ``RMQ_MQADMIN``, one process per command."""
    launch = launcher(home)
    outputs = {}
    for command in COMMANDS:
        output = run(launch, command.argv(scene))
        for _ in range(TIMEOUT_RETRIES):
            if TIMEOUT_MARKER not in output:
                break
            output = run(launch, command.argv(scene))
        outputs[command.name] = output
    return outputs


@pytest.fixture
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    with SyncEmbeddedRocketMQ(wire_release="4.9.8") as mq:  # 4.9.8 mqadmin against the broker as 4.9.8
        prepared = prepare(mq.namesrv_addr, mq.broker_addr, mq.embedded.broker_config.broker_name)
        scene = Scene(**{**prepared.__dict__, "client_id": CLIENT_ID})
        client = OnlineClient(prepared.broker, prepared.ns, prepared.group, prepared.topic, CLIENT_ID)
        client.start()
        try:
            work = tmp_path_factory.mktemp("mqadmin")
            if os.environ.get(MQADMIN_ENV):
                return _one_by_one(scene, work)
            return run_batch(MQADMIN_RELEASE, COMMANDS, scene, work)
        except (JavaUnavailable, ToolMissing, NotServed) as exc:
            pytest.skip(str(exc))
        finally:
            client.stop()


def test_mqadmin_commands(outputs: dict[str, str]) -> None:
    """Every command of the admin area printed its output and none failed; one test for all, so that one
    xdist worker starts the broker and mqadmin's JVM."""
    assert not problems(COMMANDS, outputs), problems(COMMANDS, outputs)
