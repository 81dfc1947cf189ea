"""ACL 2.0 authorization (``authorizationEnabled``, 5.3.0+): what each request needs, and the decision.

Before a processor runs, a request is turned into *contexts*: (subject, resource, actions, source IP), one
per resource it touches (``DefaultAuthorizationContextBuilder``). A gRPC call is read from its request
message (:data:`GRPC_NEEDS`), a remoting request from its extFields or body (:data:`REMOTING_NEEDS`). Each
context is then decided for the signed user (RMQ-AUTHZ-DECIDE): a Super user may do anything; otherwise
the entries of the user's Custom policy that match the resource, one of the actions and the source IP are
taken (the Default policy's only when none of the Custom one match), the most specific first (a resource
of a type before ``*``; literal before prefixed before any; a longer prefix first; Deny before Allow on a
tie), and its decision stands. No entry, or no ACL, is "no matched policies.".

A refusal is an AuthorizationException: the proxy answers it UNAUTHORIZED (40100, like a failed
authentication), the broker NO_PERMISSION (16). Both carry the same message. The subject of a gRPC call is
read from its ``x-mq-authorization-ak`` metadata, which authentication fills only when the client did not
send one (:func:`grpc_subject`, RMQ-AUTHZ-GRPC-SUBJECT); Telemetry settings with neither publishing nor
subscription cannot be turned into contexts at all (RMQ-AUTHZ-GRPC-SETTINGS-ROLE).

Remoting codes outside :data:`REMOTING_NEEDS` are decided by the ``@RocketMQAction`` / ``@RocketMQResource``
annotations of their request header classes (cluster-level actions of the admin commands among them):
``rocketmq_spec.spec.authorization_annotations``. A code neither table names is not authorized.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from rocketmq_spec.spec.auth import Action, ResourceType
from rocketmq_spec.spec.clauses import Level, clause
from rocketmq_spec.spec.codes import RequestCode
from rocketmq_spec.spec.releases import Releases, since

_AUTHZ = "auth/src/main/java/org/apache/rocketmq/auth/authorization/"
_BUILDER = _AUTHZ + "builder/DefaultAuthorizationContextBuilder.java"
_PROXY = "proxy/src/main/java/org/apache/rocketmq/proxy/grpc/"

AUTHORIZATION_RELEASES = since("5.3.0")

NO_PERMISSION = "{subject} has no permission to access {resource} from {source_ip}, {detail}"
"""``AclAuthorizationHandler.throwException``: subject and resource keys (``User:u``, ``Topic:t``)."""
NO_MATCHED_POLICIES = "no matched policies."
DECISION_DENY = "the decision is deny."
USER_NOT_FOUND = "User:{username} not found."
"""``UserAuthorizationHandler`` (note: not the authentication handler's "is not found.")."""
USER_DISABLED = "User:{username} is disabled."
NO_SUBJECT = "Authorization failed. Please verify your access rights and try again."
"""``AbstractAuthorizationStrategy.doEvaluate``: what an unsigned request (no subject) meets."""
TOPIC_NULL = "topic is null."
GROUP_NULL = "group is null."
MESSAGE_NULL = "message is null."
MESSAGE_QUEUE_NULL = "messageQueue is null."
BLANK_NAME = {ResourceType.TOPIC: TOPIC_NULL, ResourceType.GROUP: GROUP_NULL}
"""What a gRPC request whose resource has a blank name is refused with."""

SETTINGS_WITHOUT_ROLE = "settings command doesn't have publishing or subscription."
SETTINGS_WITHOUT_ROLE_DETAIL = (
    SETTINGS_WITHOUT_ROLE + ". AclException. org.apache.rocketmq.auth.authorization.builder."
    "DefaultAuthorizationContextBuilder.newContext(DefaultAuthorizationContextBuilder.java:424)")
"""What 5.5.0's proxy answers (INTERNAL_SERVER_ERROR) for such settings: ``ResponseBuilder`` writes an
unexpected exception as ``ExceptionUtils.getErrorDetailMessage`` (message, class, first stack frame), as
seen from Apache 5.5.0."""

PUB, SUB, GET, UPDATE = Action.PUB, Action.SUB, Action.GET, Action.UPDATE


class When(enum.Enum):
    """The gRPC requests that are checked only in some shapes."""

    ALWAYS = "always"
    CONSUMER = "the client type is PUSH_CONSUMER, SIMPLE_CONSUMER or PULL_CONSUMER"
    GROUP_NAMED = "the group's name is not blank"
    LITE_TOPICS = "lite_topic_set is not empty"
    SETTINGS = "the command is settings"


@dataclass(frozen=True)
class GrpcNeed:
    """A resource of a gRPC request: ``path`` names a ``Resource`` field from the request message
    (``a.b`` nested; ``a[]`` every element of a repeated field; ``a[0]`` its first). When ``present`` is
    given, the need holds only for requests that set that field."""

    resource: ResourceType
    path: str
    actions: tuple[Action, ...]
    present: str | None = None


@dataclass(frozen=True)
class GrpcRule:
    request: str
    """The request message's full name (the rpcCode of authorizationWhitelist)."""
    needs: tuple[GrpcNeed, ...]
    when: When = When.ALWAYS
    required: tuple[tuple[str, str], ...] = ()
    """(field, refusal): a repeated field that must not be empty or a message field that must be set."""
    one_of: tuple[str, ...] = ()
    """Message fields of which the request must set one, else the builder fails with an AclException
    (not a refusal: the proxy answers INTERNAL_SERVER_ERROR with ``one_of_detail``), for any user."""
    one_of_detail: str = ""
    releases: Releases = AUTHORIZATION_RELEASES


def _v2(name: str) -> str:
    return f"apache.rocketmq.v2.{name}"


def _sub(group: str = "group", topic: str | None = "topic") -> tuple[GrpcNeed, ...]:
    group_need = GrpcNeed(ResourceType.GROUP, group, (SUB,))
    return (group_need,) if topic is None else (group_need, GrpcNeed(ResourceType.TOPIC, topic, (SUB,)))


_PUB_TOPIC = (GrpcNeed(ResourceType.TOPIC, "topic", (PUB,)),)

GRPC_RULES: tuple[GrpcRule, ...] = (
    GrpcRule(_v2("SendMessageRequest"), (GrpcNeed(ResourceType.TOPIC, "messages[0].topic", (PUB,)),),
             required=(("messages", MESSAGE_NULL),)),
    GrpcRule(_v2("RecallMessageRequest"), _PUB_TOPIC),
    GrpcRule(_v2("EndTransactionRequest"), _PUB_TOPIC),
    GrpcRule(_v2("HeartbeatRequest"), _sub(topic=None), When.CONSUMER),
    GrpcRule(_v2("ReceiveMessageRequest"), _sub(topic="message_queue.topic"),
             required=(("message_queue", MESSAGE_QUEUE_NULL),)),
    GrpcRule(_v2("SyncLiteSubscriptionRequest"), _sub(), When.LITE_TOPICS, releases=since("5.5.0")),
    GrpcRule(_v2("AckMessageRequest"), _sub()),
    GrpcRule(_v2("ForwardMessageToDeadLetterQueueRequest"), _sub()),
    GrpcRule(_v2("NotifyClientTerminationRequest"), _sub(topic=None), When.GROUP_NAMED),
    GrpcRule(_v2("ChangeInvisibleDurationRequest"), _sub(topic=None)),
    GrpcRule(_v2("QueryRouteRequest"), (GrpcNeed(ResourceType.TOPIC, "topic", (PUB, SUB)),)),
    GrpcRule(_v2("QueryAssignmentRequest"), _sub()),
    GrpcRule(_v2("TelemetryCommand"), (
        GrpcNeed(ResourceType.TOPIC, "settings.publishing.topics[]", (PUB,)),
        GrpcNeed(ResourceType.GROUP, "settings.subscription.group", (SUB,), present="settings.subscription"),
        GrpcNeed(ResourceType.TOPIC, "settings.subscription.subscriptions[].topic", (SUB,)),
    ), When.SETTINGS, one_of=("settings.publishing", "settings.subscription"),
        one_of_detail=SETTINGS_WITHOUT_ROLE_DETAIL),
)
GRPC_NEEDS: dict[str, GrpcRule] = {rule.request: rule for rule in GRPC_RULES}
"""Requests not named here (the unimplemented offset RPCs) are not authorized."""


def grpc_subject(sent_ak: str | None, authenticated: str | None) -> str | None:
    """The user a gRPC call is authorized as (RMQ-AUTHZ-GRPC-SUBJECT): the ``x-mq-authorization-ak`` the
    client sent, if any, else the user authentication found (none when authentication is off)."""
    return sent_ak if sent_ak and sent_ak.strip() else authenticated


class OnRetry(enum.Enum):
    """What a ``%RETRY%<group>`` topic in a topic field becomes."""

    GROUP = "the group <group>, with the entry's actions replaced by the rule's retry_actions"
    SKIP = "nothing: only the group field is checked"


@dataclass(frozen=True)
class RemotingNeed:
    """A resource of a remoting request: an extFields key, or with ``body`` a path into the JSON body
    (``a[]`` every element). ``optional``: a blank value needs nothing (Java's isNotBlank guards)."""

    resource: ResourceType
    field: str
    actions: tuple[Action, ...]
    on_retry: OnRetry | None = None
    retry_actions: tuple[Action, ...] = ()
    body: bool = False
    optional: bool = False


def _topic(field: str, actions: tuple[Action, ...], on_retry: OnRetry,
           retry_actions: tuple[Action, ...] = ()) -> RemotingNeed:
    return RemotingNeed(ResourceType.TOPIC, field, actions, on_retry, retry_actions)


def _group(field: str, actions: tuple[Action, ...], *, body: bool = False,
           optional: bool = False) -> RemotingNeed:
    return RemotingNeed(ResourceType.GROUP, field, actions, body=body, optional=optional)


_SEND_TOPIC = {"topic": _topic("topic", (PUB,), OnRetry.GROUP, (SUB,)),
               "b": _topic("b", (PUB,), OnRetry.GROUP, (SUB,))}
_OFFSET_QUERY = (_topic("topic", (SUB, GET), OnRetry.SKIP), _group("consumerGroup", (SUB, GET)))
_OFFSET_UPDATE = (_topic("topic", (SUB, UPDATE), OnRetry.SKIP), _group("consumerGroup", (SUB, UPDATE)))
_LOCK = (_group("consumerGroup", (SUB,), body=True),
         RemotingNeed(ResourceType.TOPIC, "mqSet[].topic", (SUB,), OnRetry.SKIP, body=True))

REMOTING_NEEDS: dict[RequestCode, tuple[RemotingNeed, ...]] = {
    RequestCode.GET_ROUTEINFO_BY_TOPIC: (_topic("topic", (PUB, SUB, GET), OnRetry.GROUP, (SUB, GET)),),
    RequestCode.SEND_MESSAGE: (_SEND_TOPIC["topic"],),
    RequestCode.SEND_MESSAGE_V2: (_SEND_TOPIC["b"],),
    RequestCode.SEND_BATCH_MESSAGE: (_SEND_TOPIC["b"],),
    RequestCode.RECALL_MESSAGE: (RemotingNeed(ResourceType.TOPIC, "topic", (PUB,)),),
    RequestCode.END_TRANSACTION: (RemotingNeed(ResourceType.TOPIC, "topic", (PUB,), optional=True),),
    RequestCode.CONSUMER_SEND_MSG_BACK: (_group("group", (SUB,)),),
    RequestCode.PULL_MESSAGE: (_topic("topic", (SUB,), OnRetry.SKIP), _group("consumerGroup", (SUB,))),
    RequestCode.QUERY_MESSAGE: (RemotingNeed(ResourceType.TOPIC, "topic", (SUB, GET)),),
    RequestCode.HEART_BEAT: (
        _group("consumerDataSet[].groupName", (SUB,), body=True),
        RemotingNeed(ResourceType.TOPIC, "consumerDataSet[].subscriptionDataSet[].topic", (SUB,),
                     OnRetry.SKIP, body=True)),
    RequestCode.UNREGISTER_CLIENT: (_group("consumerGroup", (SUB,), optional=True),),
    RequestCode.GET_CONSUMER_LIST_BY_GROUP: (_group("consumerGroup", (SUB, GET)),),
    RequestCode.QUERY_CONSUMER_OFFSET: _OFFSET_QUERY,
    RequestCode.UPDATE_CONSUMER_OFFSET: _OFFSET_UPDATE,
    RequestCode.LOCK_BATCH_MQ: _LOCK,
    RequestCode.UNLOCK_BATCH_MQ: _LOCK,
}
"""The codes ``DefaultAuthorizationContextBuilder.build(ChannelHandlerContext, RemotingCommand)`` names;
a request without extFields needs nothing."""
REMOTING_NEEDS_BY_CODE: dict[int, tuple[RemotingNeed, ...]] = {int(code): needs for code, needs in
                                                              REMOTING_NEEDS.items()}

AUTHZ_DECIDE = clause(
    "RMQ-AUTHZ-DECIDE", Level.MUST,
    "With authorizationEnabled each context of a request (subject, resource, actions, source IP) is "
    "decided before the processor runs, unless the request (gRPC: its message's full name; remoting: its "
    "code) is in authorizationWhitelist: an unknown user is refused \"User:<name> not found.\", a disabled "
    "one \"User:<name> is disabled.\", a Super user is let through; otherwise the matching entries of the "
    "user's Custom policy (else of its Default policy) are sorted most specific first (typed resource "
    "before *, literal before prefixed before any, longer prefix first, Deny before Allow) and the first "
    "one's decision stands. An entry matches when its resource covers the context's, it grants All or one "
    "of the context's actions, and its sourceIps (if any) contain the caller's address. No ACL or no match "
    "is refused \"<subject> has no permission to access <resource> from <ip>, no matched policies.\", a "
    "Deny \"..., the decision is deny.\".",
    source=_AUTHZ + "chain/UserAuthorizationHandler.java; " + _AUTHZ + "chain/AclAuthorizationHandler.java; "
    + _AUTHZ + "model/PolicyEntry.java (isMatchAction)")
AUTHZ_GRPC = clause(
    "RMQ-AUTHZ-GRPC", Level.MUST,
    "A proxy authorizes each gRPC call by the resources GRPC_NEEDS names for its request (QueryRoute: the "
    "topic for Pub or Sub; SendMessage: the first message's topic for Pub; ReceiveMessage, AckMessage, "
    "QueryAssignment: the group and the topic for Sub; a consumer's Heartbeat: the group for Sub; "
    "Telemetry settings: each published topic for Pub, the group and each subscribed topic for Sub) and "
    "answers a refusal with status UNAUTHORIZED (40100) and the refusal's message; a blank topic or group "
    "is refused \"topic is null.\" / \"group is null.\".",
    source=_BUILDER + " (build(Metadata, GeneratedMessageV3)); " + _PROXY
    + "v2/common/ResponseBuilder.java (AuthorizationException -> UNAUTHORIZED)")
AUTHZ_GRPC_SUBJECT = clause(
    "RMQ-AUTHZ-GRPC-SUBJECT", Level.MUST,
    "A proxy authorizes a gRPC call as the user named by its x-mq-authorization-ak metadata; "
    "authentication sets that entry to the signed user only when the client did not send one, so a "
    "client-sent x-mq-authorization-ak is the subject whatever the call was signed with, and with "
    "authentication off it is the only subject (a signed call without it is refused \"Authorization "
    "failed. Please verify your access rights and try again.\"). Seen from Apache 5.5.0: a call signed by a "
    "user without ACL that names a Super user in x-mq-authorization-ak is served.",
    source=_PROXY + "pipeline/AuthenticationPipeline.java (newContext: GrpcUtils.putHeaderIfNotExist); "
    + _PROXY + "interceptor/HeaderInterceptor.java (client metadata kept); " + _BUILDER
    + " (build(Metadata, GeneratedMessageV3): subject from AUTHORIZATION_AK)")
AUTHZ_GRPC_SETTINGS_ROLE = clause(
    "RMQ-AUTHZ-GRPC-SETTINGS-ROLE", Level.MUST,
    "With authorizationEnabled, Telemetry settings that have neither publishing nor subscription are "
    "answered, on the stream, with a TelemetryCommand whose status is INTERNAL_SERVER_ERROR (50001) and "
    "the message SETTINGS_WITHOUT_ROLE_DETAIL, for any user (a Super user too): building the contexts "
    "fails before any user is looked at.",
    source=_BUILDER + " (newContext: AclException); " + _PROXY
    + "v2/common/ResponseBuilder.java (buildStatus: INTERNAL_SERVER_ERROR, getErrorDetailMessage)")
AUTHZ_REMOTING = clause(
    "RMQ-AUTHZ-REMOTING", Level.MUST,
    "A broker authorizes each remoting request of REMOTING_NEEDS by the resources named there (a send: "
    "its topic for Pub, a %RETRY% topic as the group for Sub; a pull: the topic and consumerGroup for "
    "Sub; offsets: topic and group for Sub plus Get or Update) and answers a refusal 16 NO_PERMISSION with "
    "the refusal's message as remark.",
    source=_BUILDER + " (build(ChannelHandlerContext, RemotingCommand)); "
    "broker/src/main/java/org/apache/rocketmq/broker/auth/pipeline/AuthorizationPipeline.java")
