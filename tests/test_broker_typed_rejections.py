"""Well-formed frames with missing, null or mistyped fields: typed rejections, never a handler's crash.

Every custom header and JSON body a handler reads goes through the spec's tables, so what a request
lacks is answered with SYSTEM_ERROR, the request's opaque and a remark naming the field (Java's own
remark for a missing header field) before any table changes. These requests used to reach the handlers
and fail there with KeyError or TypeError, a traceback in the log, and for REGISTER_BROKER a broker left
half-registered in the name server.
"""

from __future__ import annotations

import logging

import pytest

from rocketmq_spec.codec import fastjson
from rocketmq_spec.codec.bodies import decode_body
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.custom_header import encode_header
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.embedded import EmbeddedRocketMQ
from rocketmq_spec.spec.bodies import CLUSTER_INFO
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.headers import REGISTER_BROKER_REQUEST
from tests.broker_support import run, started

LOCK_GROUP = {"clientId": "c1", "consumerGroup": "G"}


def _body(value: object) -> bytes:
    return fastjson.dumps_bytes(value)


async def _ask(addr: str, code: int, ext_fields: dict[str, str] | None,
               body: bytes | None) -> RemotingCommand:
    client = await RemotingClient.connect(addr)
    try:
        request = client.request(code, ext_fields, body)
        answer = await client.invoke(request)
        assert answer.opaque == request.opaque
        return answer
    finally:
        await client.close()


def _no_handler_crash(caplog: pytest.LogCaptureFixture) -> None:
    crashes = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert not crashes, crashes


@pytest.mark.parametrize(("code", "body", "field"), [
    (RequestCode.LOCK_BATCH_MQ, {**LOCK_GROUP, "mqSet": [{"queueId": 0, "topic": "T"}]}, "brokerName"),
    (RequestCode.UNLOCK_BATCH_MQ, {**LOCK_GROUP, "mqSet": [{"brokerName": "b", "topic": "T"}]}, "queueId"),
    (RequestCode.LOCK_BATCH_MQ, {**LOCK_GROUP, "mqSet": [None]}, "MessageQueue"),
    (RequestCode.HEART_BEAT, {"clientID": "c1", "producerDataSet": [{}]}, "groupName"),
    (RequestCode.HEART_BEAT, {"clientID": "c1", "consumerDataSet": [{"groupName": None}]}, "groupName"),
    (RequestCode.HEART_BEAT, {"clientID": "c1", "producerDataSet": [{"groupName": 7}]}, "groupName"),
], ids=["lock-no-broker", "unlock-no-queue", "lock-null-queue", "producer-no-group", "consumer-null-group",
        "producer-number-group"])
def test_a_body_lacking_what_the_broker_needs_is_a_typed_rejection(
        code: int, body: dict, field: str, caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> RemotingCommand:
        async with EmbeddedRocketMQ() as mq:
            return await _ask(mq.broker_addr, code, None, _body(body))

    answer = run(scenario())
    assert answer.code == ResponseCode.SYSTEM_ERROR
    remark = answer.remark or ""
    assert remark.startswith("BodyError: ") and field in remark
    _no_handler_crash(caplog)


def test_a_missing_header_field_gets_javas_remark(caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> RemotingCommand:
        async with EmbeddedRocketMQ() as mq:
            return await _ask(mq.namesrv_addr, RequestCode.GET_ROUTEINFO_BY_TOPIC, {"other": "x"}, None)

    answer = run(scenario())
    assert answer.code == ResponseCode.SYSTEM_ERROR
    assert answer.remark == (
        "org.apache.rocketmq.remoting.exception.RemotingCommandException: the custom field <topic> is null, "
        "org.apache.rocketmq.remoting.protocol.RemotingCommand.decodeCommandCustomHeader(RemotingCommand.java:281)")
    _no_handler_crash(caplog)


@pytest.mark.parametrize("topic_config", [{"perm": 6}, {"topicName": "T", "perm": "rw"}, None],
                         ids=["no-topic-name", "text-perm", "null-config"])
def test_a_failed_registration_leaves_no_ghost_broker(topic_config: dict | None,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    header = encode_header(REGISTER_BROKER_REQUEST, {
        "brokerName": "ghost", "brokerAddr": "127.0.0.1:1", "clusterName": "GhostCluster",
        "haServerAddr": "127.0.0.1:2", "brokerId": 0, "compressed": False, "bodyCrc32": 0})
    body = _body({"topicConfigSerializeWrapper": {"dataVersion": {"counter": 1, "timestamp": 1},
                                                  "topicConfigTable": {"T": topic_config}}})

    async def scenario() -> tuple[RemotingCommand, dict]:
        async with EmbeddedRocketMQ() as mq:
            answer = await _ask(mq.namesrv_addr, RequestCode.REGISTER_BROKER, header, body)
            info = await _ask(mq.namesrv_addr, RequestCode.GET_BROKER_CLUSTER_INFO, None, None)
            return answer, decode_body(CLUSTER_INFO, info.body or b"{}")

    answer, cluster = run(scenario())
    assert answer.code == ResponseCode.SYSTEM_ERROR
    assert (answer.remark or "").startswith("BodyError: ")
    assert "ghost" not in cluster["brokerAddrTable"] and "GhostCluster" not in cluster["clusterAddrTable"]
    _no_handler_crash(caplog)


@pytest.mark.parametrize("body", [None, b'{"mqSet":null,"producerDataSet":[{}],"dataVersion":7}', b"[1]"],
                         ids=["no-body", "nulls", "array"])
def test_no_request_code_crashes_a_handler_on_empty_fields(body: bytes | None,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    """Every request code both servers serve, with an empty extFields map: each gets an answer with its
    opaque (or none when oneway) and no handler raises anything but the spec's typed errors."""
    async def scenario() -> None:
        async with EmbeddedRocketMQ() as mq:
            for addr, server in ((mq.namesrv_addr, started(mq.namesrv).server),
                                 (mq.broker_addr, started(mq.broker).server)):
                for code in server.dispatch.supported:
                    await _ask(addr, code, {}, body)

    run(scenario())
    _no_handler_crash(caplog)
