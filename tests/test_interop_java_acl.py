"""The Java client (Apache RocketMQ's benchmark Producer, which signs with ``AclClientRPCHook``) against
the reference broker with ACL on, and against a Java broker started with the same policy.

Needs an existing Apache RocketMQ 4.9.8 client install: ``RMQ_JAVA_CLASSPATH`` (its classpath, example
classes included). ``RMQ_JAVA_ACL_NAMESRV`` and ``RMQ_JAVA_ACL_BROKER`` add the Java broker run: a broker
started with ``aclEnable=true`` on ``rmq-conformance acl-file``'s policy. Skipped without them. What was
stored is counted on the broker (signed GET_MAX_OFFSET), not taken from the tool's statistics.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from codec.acl import Credentials, sign
from conformance import acl_policy as policy
from reference_broker.client import RemotingClient
from spec.codes import RequestCode, ResponseCode
from tests.interop_checks import RestartableBroker

CLASSPATH = os.environ.get("RMQ_JAVA_CLASSPATH")
JAVA_ACL_NAMESRV = os.environ.get("RMQ_JAVA_ACL_NAMESRV")
JAVA_ACL_BROKER = os.environ.get("RMQ_JAVA_ACL_BROKER")
SENDS = 3
QUEUES = 4
JAVA_TIMEOUT_S = 120
WRONG = Credentials(policy.USER.access_key, "not-the-secret")

pytestmark = [pytest.mark.interop,
              pytest.mark.skipif(not CLASSPATH, reason="no Java client (RMQ_JAVA_CLASSPATH)")]


def java_producer(namesrv: str, topic: str, credentials: Credentials) -> None:
    """SENDS sends on one thread; a refused send is the tool's failure count, so only completion is
    required of it."""
    with tempfile.TemporaryDirectory(prefix="rmq-java-client-") as home:
        done = subprocess.run(
            ["java", "-Xmx256m", f"-Drocketmq.client.logRoot={home}", f"-Duser.home={home}", "-cp",
             str(CLASSPATH), "org.apache.rocketmq.example.benchmark.Producer", "-n", namesrv, "-t", topic,
             "-w", "1", "-q", str(SENDS), "-a", "true", "-ak", credentials.access_key,
             "-sk", credentials.secret_key],
            capture_output=True, text=True, timeout=JAVA_TIMEOUT_S, check=False)
    assert "[Complete]" in done.stdout, done.stdout[-3000:] + done.stderr[-3000:]


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
        assert stored(broker_addr, topic) - before == expected, (topic, credentials.secret_key)


def test_java_client_against_the_reference_broker(tmp_path: Path) -> None:
    acl_file = policy.write_acl_file(tmp_path / "conf" / "plain_acl.yml")
    with RestartableBroker(tmp_path / "store", acl_enable=True, acl_file=str(acl_file)) as broker:
        for topic in (policy.TOPIC_PUB, policy.TOPIC_SUB):
            broker.create_topic(topic, credentials=policy.ADMIN)
        assert broker.running is not None
        check_broker(broker.namesrv_addr, broker.running.broker_addr)


@pytest.mark.skipif(not (JAVA_ACL_NAMESRV and JAVA_ACL_BROKER),
                    reason="no Java broker with ACL (RMQ_JAVA_ACL_NAMESRV, RMQ_JAVA_ACL_BROKER)")
def test_java_client_against_the_java_broker() -> None:
    check_broker(str(JAVA_ACL_NAMESRV), str(JAVA_ACL_BROKER))
