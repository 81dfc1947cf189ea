"""The broker's admin paths the conformance suite cannot reach in seconds: a consumer that never answers
or leaves during a relayed call, and a permission update that must reach the name server's routes."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

import pytest

from rocketmq_spec.admin.wire import AdminConnection
from rocketmq_spec.codec import fastjson
from rocketmq_spec.reference_broker.broker import relay
from rocketmq_spec.reference_broker.embedded import SyncEmbeddedRocketMQ
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from tests.mqadmin_commands import Scene, prepare
from tests.online_client import OnlineClient

WAIT = 10.0


@pytest.fixture(scope="module")
def scene() -> Iterator[Scene]:
    with SyncEmbeddedRocketMQ() as mq:
        yield prepare(mq.namesrv_addr, mq.broker_addr, mq.embedded.broker_config.broker_name, messages=1)


T = TypeVar("T")


def _until(probe: Callable[[], T], done: Callable[[T], bool], timeout: float = WAIT) -> T:
    deadline = time.monotonic() + timeout
    value = probe()
    while not done(value) and time.monotonic() < deadline:
        time.sleep(0.1)
        value = probe()
    return value


def _online(scene: Scene, client_id: str, *, answering: bool) -> OnlineClient:
    client = OnlineClient(scene.broker, scene.ns, scene.group, scene.topic, client_id, answering=answering)
    client.start()
    with AdminConnection(scene.broker) as admin:
        listed = _until(lambda: admin.call(RequestCode.GET_CONSUMER_CONNECTION_LIST,
                                           {"consumerGroup": scene.group}, accept=(0, 206)),
                        lambda answer: client_id.encode() in (answer.command.body or b""))
    assert client_id.encode() in (listed.command.body or b"")
    return client


def test_silent_consumer_times_out(scene: Scene, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(relay, "CALL_CLIENT_TIMEOUT", 0.5)
    client = _online(scene, "127.0.0.1@silent", answering=False)
    try:
        with AdminConnection(scene.broker, timeout=WAIT) as admin:
            answer = admin.call(RequestCode.GET_CONSUMER_RUNNING_INFO,
                                {"consumerGroup": scene.group, "clientId": "127.0.0.1@silent"},
                                accept=(ResponseCode.CONSUME_MSG_TIMEOUT,))
        assert answer.command.remark is not None
        assert answer.command.remark.startswith(f"consumer <{scene.group}> <127.0.0.1@silent> Timeout")
        assert [c.code for c in client.calls if c.code == RequestCode.GET_CONSUMER_RUNNING_INFO] == [
            RequestCode.GET_CONSUMER_RUNNING_INFO]
    finally:
        client.stop()


def test_consumer_leaving_during_a_call_is_a_system_error(scene: Scene) -> None:
    client = _online(scene, "127.0.0.1@leaving", answering=False)
    leave = threading.Timer(0.5, client.stop)
    leave.start()
    with AdminConnection(scene.broker, timeout=WAIT) as admin:
        answer = admin.call(RequestCode.GET_CONSUMER_RUNNING_INFO,
                            {"consumerGroup": scene.group, "clientId": "127.0.0.1@leaving"},
                            accept=(ResponseCode.SYSTEM_ERROR,))
    leave.join()
    # answered when it left (SYSTEM_ERROR), not at the timeout (CONSUME_MSG_TIMEOUT, the test above)
    assert (answer.command.remark or "").startswith(f"invoke consumer <{scene.group}> <127.0.0.1@leaving>")


def test_read_only_broker_permission_reaches_the_routes(scene: Scene) -> None:
    def perms() -> list[int]:
        with AdminConnection(scene.ns) as namesrv:
            route = fastjson.loads(namesrv.call(RequestCode.GET_ROUTEINFO_BY_TOPIC,
                                                {"topic": scene.topic}).command.body or b"{}")
        return [q["perm"] for q in route["queueDatas"]]

    with AdminConnection(scene.broker) as admin:
        admin.call(RequestCode.UPDATE_BROKER_CONFIG, body=b"brokerPermission=4\n")
        try:
            assert _until(perms, lambda p: p == [4]) == [4]
        finally:
            admin.call(RequestCode.UPDATE_BROKER_CONFIG, body=b"brokerPermission=6\n")
        assert _until(perms, lambda p: p == [6]) == [6]
