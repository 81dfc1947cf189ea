"""Consumer groups nobody created, with Apache 5.5.0's default (autoCreateSubscriptionGroup=true: created on
first use) and without it (remoting 26 SUBSCRIPTION_GROUP_NOT_EXIST, gRPC CONSUMER_GROUP_NOT_FOUND); and
5.5.0's proxy, which refuses a consumer's Settings for a group the broker does not have either way."""

from __future__ import annotations

from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import grpc
import pytest

from rocketmq_spec.admin.groups import sub_group_body
from rocketmq_spec.codec.grpc.v2 import definition_pb2 as v2
from rocketmq_spec.conformance.cases.grpc_support import receive
from rocketmq_spec.conformance.grpc_client import ProxyClient
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.config import BrokerConfig
from rocketmq_spec.reference_broker.embedded import SyncEmbeddedRocketMQ
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.faq import suggest_todo
from rocketmq_spec.spec.grpc_codes import Code
from rocketmq_spec.spec.releases import ordinal
from tests.sdk5_clients import create_topic

FAQ = suggest_todo(ordinal("5.5.0"))


async def _admin(running: SyncEmbeddedRocketMQ, code: RequestCode, header: dict[str, str] | None,
                 body: bytes | None) -> None:
    admin = await RemotingClient.connect(running.broker_addr)
    try:
        answer = await admin.invoke(admin.request(code, header, body))
        assert answer.code == ResponseCode.SUCCESS, answer.remark
    finally:
        await admin.close()


@pytest.mark.parametrize("auto_create", [True, False])
def test_unknown_groups_on_both_protocols(auto_create: bool, tmp_path: Path) -> None:
    config = BrokerConfig(listen_port=0, auto_create_subscription_group=auto_create)
    with SyncEmbeddedRocketMQ(tmp_path, broker_config=config, wire_release="5.5.0") as running:
        def create_group(name: str) -> Coroutine[Any, Any, None]:
            return _admin(running, RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, None,
                          sub_group_body(name, {}))

        def delete_group(name: str) -> Coroutine[Any, Any, None]:
            return _admin(running, RequestCode.DELETE_SUBSCRIPTIONGROUP, {"groupName": name}, None)

        async def pull() -> tuple[int, str | None]:
            admin = await RemotingClient.connect(running.broker_addr)
            try:
                await create_topic(admin, "groups_topic", "NORMAL")
                answer = await admin.invoke(admin.request(RequestCode.PULL_MESSAGE, {
                    "consumerGroup": "remoting_group", "topic": "groups_topic", "queueId": "0",
                    "queueOffset": "0", "maxMsgNums": "1", "sysFlag": "0", "commitOffset": "0",
                    "suspendTimeoutMillis": "0", "subscription": "*", "subVersion": "0"}))
            finally:
                await admin.close()
            return answer.code, answer.remark

        code, remark = running.call(pull())
        assert running.grpc_addr is not None
        client = ProxyClient(running.grpc_addr)
        try:
            _, refused = client.announce(client.consumer_settings("nobody_group", "groups_topic"))
            running.call(create_group("grpc_group"))
            client.announce(client.consumer_settings("grpc_group", "groups_topic",
                                                     client_type=v2.SIMPLE_CONSUMER))
            running.call(delete_group("grpc_group"))
            items, _ = receive(client, "grpc_group", "groups_topic", polling_s=1)
        finally:
            client.close()
    assert isinstance(refused, grpc.RpcError) and refused.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert refused.details() == "process client telemetryCommand failed. group not found: nobody_group"
    statuses = [(i.status.code, i.status.message) for i in items if i.WhichOneof("content") == "status"]
    if auto_create:  # created: the pull meets the unregistered consumer, the receive finds nothing
        assert code == ResponseCode.SUBSCRIPTION_NOT_EXIST
        assert [c for c, _ in statuses] == [Code.MESSAGE_NOT_FOUND]
    else:
        assert (code, remark) == (ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST,
                                  f"subscription group [remoting_group] does not exist, {FAQ}")
        assert statuses == [(Code.CONSUMER_GROUP_NOT_FOUND,
                             f"subscription group [grpc_group] does not exist, {FAQ}")]
