"""ACL 2.0 authorization on the reference broker (spec.authorization): the contexts a gRPC call and a
remoting request are turned into, and the decision on each (the conformance area ``grpc_auth`` judges the
same over the wire against Apache 5.5.0 and the embedded broker)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.grpc.v2 import definition_pb2 as v2
from rocketmq_spec.codec.grpc.v2 import service_pb2 as rpc
from rocketmq_spec.reference_broker.auth.authorization import (
    Authorizer,
    Context,
    grpc_contexts,
    remoting_contexts,
)
from rocketmq_spec.reference_broker.auth.metadata import AuthMetadata
from rocketmq_spec.reference_broker.persistence import ConfigFiles
from rocketmq_spec.reference_broker.server import Refused
from rocketmq_spec.spec import authorization as authz
from rocketmq_spec.spec.auth import Action, ResourceType
from rocketmq_spec.spec.auth_resource import Resource, ResourcePattern
from rocketmq_spec.spec.codes import RequestCode, ResponseCode

TOPIC = Resource(ResourceType.TOPIC, ResourcePattern.LITERAL, "T")
GROUP = Resource(ResourceType.GROUP, ResourcePattern.LITERAL, "G")


def _authorizer(tmp_path: Path, entries: list[dict[str, Any]] | None, user_type: str = "Normal",
                whitelist: frozenset[str] = frozenset()) -> Authorizer:
    metadata = AuthMetadata(ConfigFiles(tmp_path), True, True)
    metadata.create_user({"username": "u", "password": "p", "userType": user_type})
    if entries is not None:
        metadata.put_acl("User:u", {"policies": [{"policyType": "Custom", "entries": entries}]})
    return Authorizer(metadata, whitelist, "C")


def _entry(resource: str, actions: list[str], decision: str = "Allow", **more: Any) -> dict[str, Any]:
    return {"resource": resource, "actions": actions, "decision": decision, **more}


def _refusal(authorizer: Authorizer, context: Context) -> str | None:
    try:
        authorizer.decide("u", context, "127.0.0.1")
    except Refused as refused:
        assert refused.code == ResponseCode.NO_PERMISSION
        return refused.remark
    return None


ROUTE = Context(TOPIC, (Action.PUB, Action.SUB))
NO_MATCH = "User:u has no permission to access Topic:T from 127.0.0.1, no matched policies."
DENY = "User:u has no permission to access Topic:T from 127.0.0.1, the decision is deny."


@pytest.mark.parametrize(("entries", "expected"), [
    (None, NO_MATCH),
    ([_entry("Topic:T", ["Pub"])], None),
    ([_entry("Topic:T", ["Get"])], NO_MATCH),
    ([_entry("Topic:T", ["All"], "Deny")], DENY),
    ([_entry("Topic:T", ["Pub"], sourceIps=["10.0.0.0/8"])], NO_MATCH),
    ([_entry("Topic:T", ["Pub"], sourceIps=["127.0.0.0/8"])], None),
    ([_entry("*", ["All"]), _entry("Topic:T", ["Sub"], "Deny")], DENY),
    ([_entry("Topic:T*", ["All"]), _entry("Topic:T", ["Sub"], "Deny")], DENY),
    ([_entry("Topic:*", ["All"], "Deny"), _entry("Topic:T*", ["All"])], None),
    ([_entry("Topic:T", ["Pub"]), _entry("Topic:T", ["Sub"], "Deny")], DENY),
    ([_entry("Group:G", ["All"])], NO_MATCH),
], ids=["no-acl", "allowed", "other-action", "deny", "other-source", "in-source", "typed-over-any",
        "literal-over-prefix", "prefix-over-any-name", "deny-on-tie", "other-type"])
def test_decision(tmp_path: Path, entries: list[dict[str, Any]] | None, expected: str | None) -> None:
    assert _refusal(_authorizer(tmp_path, entries), ROUTE) == expected


def test_super_user_needs_no_acl(tmp_path: Path) -> None:
    assert _refusal(_authorizer(tmp_path, None, "Super"), ROUTE) is None


def test_unknown_disabled_and_missing_user(tmp_path: Path) -> None:
    authorizer = _authorizer(tmp_path, None)
    with pytest.raises(Refused, match=r"^User:x not found\.$"):
        authorizer.decide("x", ROUTE, "127.0.0.1")
    with pytest.raises(Refused, match=r"^Authorization failed"):
        authorizer.decide(None, ROUTE, "127.0.0.1")
    authorizer.metadata.update_user({"username": "u", "userStatus": "disable"})
    with pytest.raises(Refused, match=r"^User:u is disabled\.$"):
        authorizer.decide("u", ROUTE, "127.0.0.1")


def test_grpc_contexts() -> None:
    receive = rpc.ReceiveMessageRequest(group=v2.Resource(name="G"),
                                        message_queue=v2.MessageQueue(topic=v2.Resource(name="T")))
    assert grpc_contexts(receive) == [Context(GROUP, (Action.SUB,)), Context(TOPIC, (Action.SUB,))]
    send = rpc.SendMessageRequest(messages=[v2.Message(topic=v2.Resource(name="T"))])
    assert grpc_contexts(send) == [Context(TOPIC, (Action.PUB,))]
    producer = rpc.HeartbeatRequest(group=v2.Resource(name="G"), client_type=v2.PRODUCER)
    assert grpc_contexts(producer) == []
    settings = rpc.TelemetryCommand(settings=v2.Settings(subscription=v2.Subscription(
        group=v2.Resource(name="G"), subscriptions=[v2.SubscriptionEntry(topic=v2.Resource(name="T"))])))
    assert grpc_contexts(settings) == [Context(GROUP, (Action.SUB,)), Context(TOPIC, (Action.SUB,))]


@pytest.mark.parametrize(("request_", "message"), [
    (rpc.SendMessageRequest(), authz.MESSAGE_NULL),
    (rpc.ReceiveMessageRequest(group=v2.Resource(name="G")), authz.MESSAGE_QUEUE_NULL),
    (rpc.QueryRouteRequest(topic=v2.Resource(name=" ")), authz.TOPIC_NULL),
    (rpc.AckMessageRequest(topic=v2.Resource(name="T")), authz.GROUP_NULL),
], ids=["no-message", "no-queue", "blank-topic", "blank-group"])
def test_grpc_request_without_resource(request_: Any, message: str) -> None:
    with pytest.raises(Refused, match=f"^{re.escape(message)}$"):
        grpc_contexts(request_)


def test_remoting_contexts() -> None:
    send = RemotingCommand(code=RequestCode.SEND_MESSAGE_V2, ext_fields={"b": "T", "a": "P"})
    assert remoting_contexts(send, "C") == [Context(TOPIC, (Action.PUB,))]
    retry = RemotingCommand(code=RequestCode.SEND_MESSAGE_V2, ext_fields={"b": "%RETRY%G"})
    assert remoting_contexts(retry, "C") == [Context(GROUP, (Action.SUB,))]
    pull = RemotingCommand(code=RequestCode.PULL_MESSAGE,
                           ext_fields={"topic": "%RETRY%G", "consumerGroup": "G"})
    assert remoting_contexts(pull, "C") == [Context(GROUP, (Action.SUB,))]
    heartbeat = RemotingCommand(code=RequestCode.HEART_BEAT, ext_fields={"AccessKey": "u"}, body=json.dumps(
        {"clientID": "c", "consumerDataSet": [{"groupName": "G", "subscriptionDataSet": [{"topic": "T"}]}]}
    ).encode())
    assert remoting_contexts(heartbeat, "C") == [Context(GROUP, (Action.SUB,)), Context(TOPIC, (Action.SUB,))]
    assert remoting_contexts(RemotingCommand(code=RequestCode.SEND_MESSAGE_V2), "C") == []


def test_whitelisted_request_is_not_authorized(tmp_path: Path) -> None:
    authorizer = _authorizer(tmp_path, None, whitelist=frozenset({str(int(RequestCode.SEND_MESSAGE_V2))}))
    authorizer.check(RemotingCommand(code=RequestCode.SEND_MESSAGE_V2, ext_fields={"b": "T"}), "127.0.0.1:1")
    with pytest.raises(Refused, match="no matched policies"):
        authorizer.check(RemotingCommand(code=RequestCode.SEND_MESSAGE, ext_fields={"topic": "T",
                                                                                    "AccessKey": "u"}),
                         "127.0.0.1:1")


def test_annotated_contexts() -> None:
    """Codes outside REMOTING_NEEDS: the header class's resource fields, else its cluster."""
    users = RemotingCommand(code=RequestCode.AUTH_LIST_USER, ext_fields={"filter": "a"})
    cluster = Resource(ResourceType.CLUSTER, ResourcePattern.LITERAL, "C")
    assert remoting_contexts(users, "C") == [Context(cluster, (Action.GET,))]
    stats = RemotingCommand(code=RequestCode.GET_CONSUME_STATS,
                            ext_fields={"consumerGroup": "G", "topicList": "T;%RETRY%H;"})
    assert remoting_contexts(stats, "C") == [
        Context(GROUP, (Action.GET,)), Context(TOPIC, (Action.GET,)),
        Context(Resource(ResourceType.GROUP, ResourcePattern.LITERAL, "H"), (Action.GET,))]
    config = RemotingCommand(code=RequestCode.GET_BROKER_CONFIG, ext_fields={"a": "b"})
    assert remoting_contexts(config, "C") == []
