"""The Java client (the project's ``Produce`` driver on a 4.x release's client, which signs with the
release's ``AclClientRPCHook``) against the reference broker with ACL on, and against Apache RocketMQ of
the same release started with the same policy (``rmq-conformance acl-file``'s).

The release is provisioned from Maven Central; skipped where Java or Maven is missing. What was stored is
counted on the broker (signed GET_MAX_OFFSET), not taken from the driver's own count.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

import pytest

from rocketmq_spec.apache.pytest_plugin import running_or_skip
from rocketmq_spec.codec.acl import Credentials, sign
from rocketmq_spec.conformance import acl_policy as policy
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from tests import process_tree
from tests.interop_checks import RestartableBroker, create_topic_at
from tests.java_clients import FOUR_X, driver

SENDS = 3
QUEUES = 4
JAVA_TIMEOUT_S = 120
DISPATCH_WAIT_S = 30.0
WRONG = Credentials(policy.USER.access_key, "not-the-secret")
JAVA_RELEASE = FOUR_X
"""ACL 1.0 (plain_acl.yml, AclClientRPCHook) is a 4.x feature: 5.3 removed its admin codes."""

pytestmark = pytest.mark.interop


def java_producer(namesrv: str, topic: str, credentials: Credentials) -> None:
    """SENDS sends on one thread; a refused send is the driver's failure count, so only completion is
    required of it."""
    with tempfile.TemporaryDirectory(prefix="rmq-java-client-") as home:
        command = driver(JAVA_RELEASE, "Produce", namesrv, topic, "1", "128", str(SENDS), "0",
                         credentials.access_key, credentials.secret_key, home=Path(home))
        done = process_tree.run(command, capture_output=True, text=True, timeout=JAVA_TIMEOUT_S, check=False)
    assert "done sent=" in done.stdout, done.stdout[-3000:] + done.stderr[-3000:]


def stored(broker_addr: str, topic: str) -> int:
    async def count() -> int:
        client = await RemotingClient.connect(broker_addr)
        try:
            total = 0
            for queue in range(QUEUES):
                request = client.request(RequestCode.GET_MAX_OFFSET, {"topic": topic, "queueId": str(queue)})
                answer = await client.invoke(sign(request, policy.ADMIN))
                assert answer.code == ResponseCode.SUCCESS, answer.remark
                total += int((answer.ext_fields or {})["offset"])
            return total
        finally:
            await client.close()
    return asyncio.run(count())


def check_broker(namesrv: str, broker_addr: str) -> None:
    """Right keys store every send; a SUB-only topic and a wrong secret store nothing."""
    runs = ((policy.TOPIC_PUB, policy.USER, SENDS), (policy.TOPIC_SUB, policy.USER, 0),
            (policy.TOPIC_PUB, WRONG, 0))
    for topic, credentials, expected in runs:
        before = stored(broker_addr, topic)
        java_producer(namesrv, topic, credentials)
        # Java dispatches a stored message to its consume queue in a thread of its own, so a count taken
        # at once can lag the sends; a refused send is refused before anything is stored
        deadline = time.monotonic() + DISPATCH_WAIT_S
        while (count := stored(broker_addr, topic) - before) < expected and time.monotonic() < deadline:
            time.sleep(0.5)
        assert count == expected, (topic, credentials.secret_key)


def test_java_client_against_the_reference_broker(tmp_path: Path) -> None:
    acl_file = policy.write_acl_file(tmp_path / "conf" / "plain_acl.yml")
    with RestartableBroker(tmp_path / "store", acl_enable=True, acl_file=str(acl_file),
                           wire_release=policy.ACL_RELEASE) as broker:
        for topic in (policy.TOPIC_PUB, policy.TOPIC_SUB):
            broker.create_topic(topic, credentials=policy.ADMIN)
        assert broker.running is not None
        check_broker(broker.namesrv_addr, broker.running.broker_addr)


def test_java_client_against_the_java_broker(tmp_path: Path) -> None:
    home = tmp_path / "java"
    # 4.x reads ROCKETMQ_HOME/conf/plain_acl.yml (PlainPermissionManager)
    policy.write_acl_file(home / "conf" / "plain_acl.yml")
    with running_or_skip(JAVA_RELEASE, home, {"aclEnable": "true"}) as java:
        for topic in (policy.TOPIC_PUB, policy.TOPIC_SUB):
            asyncio.run(create_topic_at(java.broker_addr, java.namesrv_addr, topic, QUEUES, policy.ADMIN))
        check_broker(java.namesrv_addr, java.broker_addr)
