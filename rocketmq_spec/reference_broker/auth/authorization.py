"""ACL 2.0 authorization (``authorizationEnabled``): may the signed user do what the request asks?

One decision for both protocols (RMQ-AUTHZ-DECIDE), made at dispatch after authentication: the remoting
server's guard and the gRPC proxy turn a request into contexts from the spec's tables (``GRPC_NEEDS``,
``REMOTING_NEEDS``) and ask :meth:`Authorizer.decide` about each. A refusal is ``Refused`` with
NO_PERMISSION and Java's message; the proxy answers the same message as UNAUTHORIZED (RMQ-AUTHZ-GRPC).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import Message

from rocketmq_spec.codec.bodies import decode_body
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.grpc.v2 import definition_pb2 as v2
from rocketmq_spec.reference_broker.auth.metadata import AuthMetadata, subject_key
from rocketmq_spec.reference_broker.server import Refused
from rocketmq_spec.spec import authorization as authz
from rocketmq_spec.spec.acl import ACCESS_KEY
from rocketmq_spec.spec.auth import Action, Decision, PolicyType, ResourceType, UserStatus, UserType
from rocketmq_spec.spec.auth_resource import Resource, ResourcePattern, ip_in_range, parse_resource
from rocketmq_spec.spec.authorization_annotations import ANNOTATED_BY_CODE, Annotated
from rocketmq_spec.spec.bodies import HEARTBEAT_DATA, LOCK_BATCH_REQUEST, BodySpec
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.system_topics import DLQ_PREFIX, RETRY_PREFIX

BODIES: dict[int, BodySpec] = {RequestCode.HEART_BEAT: HEARTBEAT_DATA,
                               RequestCode.LOCK_BATCH_MQ: LOCK_BATCH_REQUEST,
                               RequestCode.UNLOCK_BATCH_MQ: LOCK_BATCH_REQUEST}
"""The bean each body-reading rule of ``REMOTING_NEEDS`` reads."""
CONSUMER_TYPES = frozenset({"PUSH_CONSUMER", "SIMPLE_CONSUMER", "PULL_CONSUMER"})


@dataclass(frozen=True)
class Context:
    resource: Resource
    actions: tuple[Action, ...]


class ContextFailure(Exception):
    """Java's builder failed on a request it cannot turn into contexts (an AclException, not a refusal):
    the proxy answers INTERNAL_SERVER_ERROR with ``detail`` (RMQ-AUTHZ-GRPC-SETTINGS-ROLE)."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


def _refused(message: str) -> Refused:
    return Refused(ResponseCode.NO_PERMISSION, message)


def source_ip(peer: str) -> str:
    """``substringBeforeLast(remoteAddress, ":")``."""
    return peer.rpartition(":")[0] if ":" in peer else peer


def _group(name: str) -> Resource:
    """``Resource.ofGroup``: a retry (or dead-letter) topic names its group."""
    for prefix in (RETRY_PREFIX, DLQ_PREFIX):
        name = name.removeprefix(prefix)
    return Resource(ResourceType.GROUP, ResourcePattern.LITERAL, name)


def _resource(kind: ResourceType, name: str) -> Resource:
    return _group(name) if kind is ResourceType.GROUP else Resource(kind, ResourcePattern.LITERAL, name)


def _walk(value: Any, path: str) -> Iterator[Any]:
    """The values at ``path`` (``a.b``, ``a[]`` every element, ``a[0]`` the first) in a protobuf message
    or a decoded JSON body; a missing step yields nothing."""
    if not path:
        yield value
        return
    step, _, rest = path.partition(".")
    name, bracket, index = step.partition("[")
    child = value.get(name) if isinstance(value, dict) else getattr(value, name, None)
    if child is None:
        return
    if not bracket:
        yield from _walk(child, rest)
    elif index == "]":
        for item in child:
            yield from _walk(item, rest)
    elif len(child) > int(index.rstrip("]")):
        yield from _walk(child[int(index.rstrip("]"))], rest)


def _has(message: Message, path: str) -> bool:
    *parents, last = path.split(".")
    holder: Any = message
    for name in parents:
        if not holder.HasField(name):
            return False
        holder = getattr(holder, name)
    return bool(holder.HasField(last))


def _applies(rule: authz.GrpcRule, message: Any) -> bool:
    when = rule.when
    if when is authz.When.CONSUMER:
        return v2.ClientType.Name(message.client_type) in CONSUMER_TYPES
    if when is authz.When.GROUP_NAMED:
        return bool(message.group.name.strip())
    if when is authz.When.LITE_TOPICS:
        return len(message.lite_topic_set) > 0
    if when is authz.When.SETTINGS:
        return message.WhichOneof("command") == "settings"
    return True


def grpc_contexts(message: Message) -> list[Context]:
    """The contexts of a gRPC request (``build(Metadata, GeneratedMessageV3)``); Refused for a request
    without the field its rule requires or with a blank resource name, ContextFailure for one that sets
    none of its rule's ``one_of`` fields."""
    rule = authz.GRPC_NEEDS.get(message.DESCRIPTOR.full_name)
    if rule is None or not _applies(rule, message):
        return []
    if rule.one_of and not any(_has(message, path) for path in rule.one_of):
        raise ContextFailure(rule.one_of_detail)
    for field, refusal in rule.required:
        value = getattr(message, field)
        if not message.HasField(field) if isinstance(value, Message) else not value:
            raise _refused(refusal)
    contexts = []
    for need in rule.needs:
        if need.present is not None and not _has(message, need.present):
            continue
        for resource in _walk(message, need.path):
            if not resource.name.strip():
                raise _refused(authz.BLANK_NAME[need.resource])
            contexts.append(Context(_resource(need.resource, resource.name), need.actions))
    return contexts


def remoting_contexts(command: RemotingCommand, cluster: str) -> list[Context]:
    """The contexts of a remoting request (``build(ChannelHandlerContext, RemotingCommand)``): by
    ``REMOTING_NEEDS``, else by its header class's annotations (``ANNOTATED``); none for a request
    without extFields or of a code neither names."""
    needs = authz.REMOTING_NEEDS_BY_CODE.get(command.code)
    fields = command.ext_fields or {}
    if not fields:
        return []
    if needs is None:
        annotated = ANNOTATED_BY_CODE.get(command.code)
        return _annotated(annotated, fields, cluster) if annotated is not None else []
    body = decode_body(BODIES[command.code], command.body or b"{}") if any(n.body for n in needs) else {}
    contexts = []
    for need in needs:
        values = list(_walk(body, need.field)) if need.body else [fields.get(need.field)]
        for value in values:
            if need.optional and not (value or "").strip():
                continue
            name = value or ""
            if need.on_retry is not None and name.startswith(RETRY_PREFIX):
                if need.on_retry is authz.OnRetry.GROUP:
                    contexts.append(Context(_group(name), need.retry_actions))
                continue
            contexts.append(Context(_resource(need.resource, name), need.actions))
    return contexts


def _annotated(row: Annotated, fields: Mapping[str, str], cluster: str) -> list[Context]:
    """``buildContextByAnnotation``."""
    contexts = []
    for field in row.fields:
        value = fields.get(field.name)
        if value is None:
            continue
        for name in [part for part in value.split(field.splitter) if part] if field.splitter else [value]:
            retry = field.resource is ResourceType.TOPIC and name.startswith(RETRY_PREFIX)
            resource = _group(name) if retry else Resource(field.resource, ResourcePattern.LITERAL, name)
            contexts.append(Context(resource, row.actions))
    if not contexts and row.cluster:
        whole = Resource(ResourceType.CLUSTER, ResourcePattern.LITERAL, cluster)
        contexts.append(Context(whole, row.actions))
    return contexts


def _match_action(granted: list[str], asked: tuple[Action, ...]) -> bool:
    """``PolicyEntry.isMatchAction``."""
    if not granted:
        return False
    if Action.ANY in asked:
        return True
    return any(a.value in granted or Action.ALL.value in granted for a in asked)


def _specificity(one: dict[str, Any], other: dict[str, Any]) -> int:
    """``AclAuthorizationHandler.comparePolicyEntries``: negative when ``one`` comes first."""
    r1, r2 = parse_resource(one["resource"]), parse_resource(other["resource"])
    assert r1 is not None and r2 is not None
    compare = 0
    if r1.type is not r2.type:
        compare = -1 if r2.type is ResourceType.ANY else 1 if r1.type is ResourceType.ANY else 0
    elif r1.pattern is r2.pattern:
        if r1.pattern is ResourcePattern.PREFIXED:
            compare = -(len(r1.name or "") - len(r2.name or ""))
    else:
        order = (ResourcePattern.LITERAL, ResourcePattern.PREFIXED)
        for pattern in order:
            if r1.pattern is pattern:
                compare = -1
                break
            if r2.pattern is pattern:
                compare = 1
                break
    if compare:
        return compare
    if one["decision"] != other["decision"]:
        return -1 if one["decision"] == Decision.DENY.value else 1
    return 0


class Authorizer:
    def __init__(self, metadata: AuthMetadata, whitelisted: frozenset[str], cluster: str) -> None:
        """``cluster``: the broker's brokerClusterName, the resource of cluster-level requests."""
        self.metadata = metadata
        self.whitelisted = whitelisted
        self.cluster = cluster

    def check(self, command: RemotingCommand, peer: str) -> None:
        """The remoting guard (RMQ-AUTHZ-REMOTING)."""
        if str(command.code) in self.whitelisted:
            return
        contexts = remoting_contexts(command, self.cluster)
        username = (command.ext_fields or {}).get(ACCESS_KEY)
        for context in contexts:
            self.decide(username, context, source_ip(peer))

    def check_call(self, message: Message, username: str | None, peer: str) -> None:
        """A gRPC call by ``username`` (its subject, RMQ-AUTHZ-GRPC-SUBJECT) from ``peer``
        (RMQ-AUTHZ-GRPC). The contexts are built before the whitelist is consulted, as Java's pipeline
        builds them before the strategy evaluates."""
        contexts = grpc_contexts(message)
        if message.DESCRIPTOR.full_name in self.whitelisted:
            return
        for context in contexts:
            self.decide(username, context, source_ip(peer))

    def decide(self, username: str | None, context: Context, ip: str) -> None:
        """RMQ-AUTHZ-DECIDE: return to let it through, Refused with Java's message otherwise."""
        if username is None:  # Java: a NullPointerException on the missing subject, wrapped
            raise _refused(authz.NO_SUBJECT)
        user = self.metadata.users.get(username)
        if user is None:
            raise _refused(authz.USER_NOT_FOUND.format(username=username))
        if user["userStatus"] == UserStatus.DISABLE.value:
            raise _refused(authz.USER_DISABLED.format(username=username))
        if user["userType"] == UserType.SUPER.value:
            return
        acl = self.metadata.acls.get(subject_key(username))
        entry = self._matched(acl, context, ip) if acl is not None else None
        if entry is None or entry["decision"] == Decision.DENY.value:
            detail = authz.NO_MATCHED_POLICIES if entry is None else authz.DECISION_DENY
            raise _refused(authz.NO_PERMISSION.format(subject=subject_key(username),
                                                      resource=context.resource.key, source_ip=ip,
                                                      detail=detail))

    @staticmethod
    def _matched(acl: Mapping[str, Any], context: Context, ip: str) -> dict[str, Any] | None:
        for kind in (PolicyType.CUSTOM, PolicyType.DEFAULT):
            entries = [entry for policy in acl["policies"] if policy["policyType"] == kind.value
                       for entry in policy["entries"] if _matches(entry, context, ip)]
            if entries:
                return sorted(entries, key=functools.cmp_to_key(_specificity))[0]
        return None


def _matches(entry: dict[str, Any], context: Context, ip: str) -> bool:
    resource = parse_resource(entry["resource"])
    sources = entry.get("sourceIps") or []
    return (resource is not None and resource.covers(context.resource)
            and _match_action(entry["actions"], context.actions)
            and (not sources or any(ip_in_range(ip, source) for source in sources)))
