"""A real transaction producer against the reference broker's check-back: the Apache RocketMQ 4.9.8 Java
client's ``TransactionMQProducer``, as its own example program drives it.

PyPI rocketmq 0.4.4 (the C++ client) cannot be used: its C API has no transaction producer (the C++
``TransactionMQProducer`` is inside the bundled library, but no C function reaches it), and neither npm
client ends or answers transactions. The Java example sends ten messages whose local transactions all
answer UNKNOW; when the broker checks them back it commits message 1, 4 and 7, rolls back 2, 5 and 8 and
keeps answering UNKNOW for 0, 3, 6 and 9 until the broker gives up on them.

Needs ``RMQ_JAVA_CLASSPATH``: a classpath holding an existing build of the 4.9.8 client and its example
classes (and ``java`` on PATH); skipped without.
"""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from rocketmq_spec.codec.store import MessageRecord, decode_records
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.embedded import EmbeddedRocketMQ
from rocketmq_spec.spec.codes import ResponseCode
from rocketmq_spec.spec.properties import PropertyKey
from rocketmq_spec.spec.system_topics import TRANS_CHECK_MAX_TIME_TOPIC
from tests.java_clients import FIVE_X, FOUR_X, driver
from tests.messaging_support import pull, with_broker

pytestmark = pytest.mark.interop

TOPIC = "TopicTest1234"
"""The driver's answers to the checks, by message key (``TransactionProduce``)."""
MESSAGES = 10
COMMITTED = ["KEY1", "KEY4", "KEY7"]
NEVER_DECIDED = {"KEY0", "KEY3", "KEY6", "KEY9"}
CHECK_MAX = 3
WAIT_S = 90.0


async def _all(client: RemotingClient, topic: str, queues: range) -> list[MessageRecord]:
    records: list[MessageRecord] = []
    for queue_id in queues:
        answer = await pull(client, topic, queue_id, 0)
        if answer.code == ResponseCode.SUCCESS:
            records.extend(decode_records(answer.body))
    return records


@pytest.mark.parametrize("release", [FOUR_X, FIVE_X], ids=lambda v: f"client-{v}")
def test_java_transaction_producer_is_checked_back(release: str, tmp_path: Path) -> None:
    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        command = driver(release, "TransactionProduce", mq.namesrv_addr, TOPIC, str(MESSAGES),
                         str(int(WAIT_S)), home=tmp_path)
        java = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            delivered: list[MessageRecord] = []
            given_up: list[MessageRecord] = []
            for _ in range(int(WAIT_S / 0.5)):
                await asyncio.sleep(0.5)
                delivered = await _all(client, TOPIC, range(4))
                given_up = await _all(client, TRANS_CHECK_MAX_TIME_TOPIC, range(1))
                if len(given_up) >= len(NEVER_DECIDED) and len(delivered) >= len(COMMITTED):
                    break
        finally:
            java.kill()
            output = java.communicate(timeout=30)[0]
        assert sorted(r.keys[0] for r in delivered) == COMMITTED, output[-3000:]
        assert {r.keys[0] for r in given_up} == NEVER_DECIDED
        assert {r.properties[PropertyKey.TRANSACTION_CHECK_TIMES] for r in given_up} == {str(CHECK_MAX)}

    # a JVM's start and its client's first route lookups take longer than tests.broker_support.run allows
    asyncio.run(asyncio.wait_for(with_broker(tmp_path / "store", scenario, transaction_time_out=1000,
                                             transaction_check_interval=500, transaction_check_max=CHECK_MAX),
                                 WAIT_S + 60))
