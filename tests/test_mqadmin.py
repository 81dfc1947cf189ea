"""Apache RocketMQ's own mqadmin against the reference broker: every command of the admin area runs.

Needs a launcher in ``RMQ_MQADMIN`` (``/path/to/rocketmq/bin/mqadmin`` or any wrapper taking mqadmin's
arguments); skipped without one. A consumer and a producer of the scene's group are kept online by
``tests.online_client``, which answers GET_CONSUMER_RUNNING_INFO as a Java consumer does, so the
commands that ask a client (consumerStatus) or list connections have someone to find.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from reference_broker.embedded import SyncEmbeddedRocketMQ
from tests.mqadmin_commands import COMMANDS, AdminCommand, Scene, failed, launcher, prepare, run
from tests.online_client import OnlineClient

LAUNCHER = launcher()
pytestmark = pytest.mark.skipif(LAUNCHER is None, reason="RMQ_MQADMIN names no mqadmin launcher")
CLIENT_ID = "127.0.0.1@mqadmin-test"
TIMEOUT_MARKER = "RemotingTimeoutException"


@pytest.fixture(scope="module")
def scene() -> Iterator[Scene]:
    with SyncEmbeddedRocketMQ() as mq:
        prepared = prepare(mq.namesrv_addr, mq.broker_addr, mq.embedded.broker_config.broker_name)
        client = OnlineClient(prepared.broker, prepared.ns, prepared.group, prepared.topic, CLIENT_ID)
        client.start()
        try:
            yield Scene(**{**prepared.__dict__, "client_id": CLIENT_ID})
        finally:
            client.stop()


@pytest.mark.parametrize("command", COMMANDS, ids=[c.name for c in COMMANDS])
def test_mqadmin_command(command: AdminCommand, scene: Scene) -> None:
    assert LAUNCHER is not None
    output = run(LAUNCHER, command.argv(scene))
    if TIMEOUT_MARKER in output:  # mqadmin's own 3 s client timeout, hit when the machine is loaded
        output = run(LAUNCHER, command.argv(scene))
    assert not failed(output), output
