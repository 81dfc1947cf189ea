"""ACL 1.0 as a 4.9.8 broker enforces it: signed requests, the broker's check, permissions.

A client signs each request (``AclClientRPCHook``): it adds ``AccessKey`` (and ``SecurityToken``) to
extFields, concatenates the *values* of all extFields sorted by key (``Signature`` excluded) followed by the
body bytes, and puts the Base64 HmacSHA1 of that content under the secret key into ``Signature``. The
broker runs one check before any processor (an RPC hook registered when ``aclEnable=true``): the steps of
``ACL_CHECK_ORDER`` in order, each either letting the request through or refusing it. A refusal is an
``AclException`` thrown by the hook, which the remoting layer turns into ``SYSTEM_ERROR`` with the exception
and its first stack frame as remark (``ACL_REFUSALS``). The name server checks nothing. The policy the
check applies (plain_acl.yml, whitelist patterns, the admin commands) is in ``rocketmq_spec.spec.acl_file``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from rocketmq_spec.spec.clauses import Level, clause
from rocketmq_spec.spec.codes import RequestCode
from rocketmq_spec.spec.system_topics import RETRY_PREFIX

_ACL = "acl/src/main/java/org/apache/rocketmq/acl/"
_HOOK = _ACL + "common/AclClientRPCHook.java"
_VALIDATOR = _ACL + "plain/PlainAccessValidator.java"
_MANAGER = _ACL + "plain/PlainPermissionManager.java"
_PERMISSION = _ACL + "common/Permission.java"

ACCESS_KEY = "AccessKey"
SIGNATURE = "Signature"
SECURITY_TOKEN = "SecurityToken"
UNIQUE_KEY_QUERY = "_UNIQUE_KEY_QUERY"
"""Added by a client after signing (QUERY_MESSAGE by unique key): the broker leaves it out of the content."""
SERVER_UNSIGNED_KEYS = (SIGNATURE, UNIQUE_KEY_QUERY)
"""extFields keys the broker leaves out when it rebuilds the signed content."""
EXCEPTION_CLASS = "org.apache.rocketmq.acl.common.AclException"


class Permission(enum.IntFlag):
    """``Permission.java`` bits. A resource's permission is parsed from ``PERMISSION_NAMES``."""

    DENY = 1
    ANY = 2
    PUB = 4
    SUB = 8


@dataclass(frozen=True)
class PermissionName:
    name: str
    value: int
    meaning: str


PERMISSION_NAMES = (
    PermissionName("DENY", 1, "nothing"),
    PermissionName("PUB", 4, "send"),
    PermissionName("SUB", 8, "pull, offsets, heartbeat, group membership"),
    PermissionName("PUB|SUB", 12, "both"),
    PermissionName("SUB|PUB", 12, "both"),
)
"""Any other text (after trimming), or a missing value, parses as DENY."""


def parse_permission(text: object) -> Permission:
    """``Permission.parsePermFromString``: unknown or absent text is DENY."""
    if text is None:
        return Permission.DENY
    found = {p.name: p.value for p in PERMISSION_NAMES}.get(str(text).strip())
    return Permission(found) if found is not None else Permission.DENY


def permits(needed: Permission, owned: Permission) -> bool:
    """``Permission.checkPermission``: DENY wins; ANY needs PUB or SUB; else any needed bit owned."""
    if owned & Permission.DENY:
        return False
    if needed & Permission.ANY:
        return bool(owned & (Permission.PUB | Permission.SUB))
    return bool(needed & owned)


class Resource(enum.Enum):
    TOPIC = "topic"
    GROUP = "group"
    """Checked as the resource ``%RETRY%<group>``."""


@dataclass(frozen=True)
class ResourceNeed:
    """A resource a request code needs: where its name is read and the permission required."""

    code: RequestCode
    field: str
    """The extFields key holding the name; a dotted path names a HEART_BEAT body field."""
    resource: Resource
    needed: Permission
    when: str = ""


_RETRY = "the topic starts with %RETRY% (a consumer's retry send)"
_PLAIN = "the topic does not start with %RETRY%"
_C = RequestCode

RESOURCE_NEEDS = (
    ResourceNeed(_C.SEND_MESSAGE, "topic", Resource.TOPIC, Permission.PUB, _PLAIN),
    ResourceNeed(_C.SEND_MESSAGE, "group", Resource.GROUP, Permission.SUB, _RETRY),
    ResourceNeed(_C.SEND_MESSAGE_V2, "b", Resource.TOPIC, Permission.PUB, _PLAIN),
    ResourceNeed(_C.SEND_MESSAGE_V2, "a", Resource.GROUP, Permission.SUB, _RETRY),
    ResourceNeed(_C.CONSUMER_SEND_MSG_BACK, "group", Resource.GROUP, Permission.SUB),
    ResourceNeed(_C.PULL_MESSAGE, "topic", Resource.TOPIC, Permission.SUB),
    ResourceNeed(_C.PULL_MESSAGE, "consumerGroup", Resource.GROUP, Permission.SUB),
    ResourceNeed(_C.QUERY_MESSAGE, "topic", Resource.TOPIC, Permission.SUB),
    ResourceNeed(_C.HEART_BEAT, "consumerDataSet.groupName", Resource.GROUP, Permission.SUB),
    ResourceNeed(_C.HEART_BEAT, "consumerDataSet.subscriptionDataSet.topic", Resource.TOPIC, Permission.SUB),
    ResourceNeed(_C.UNREGISTER_CLIENT, "consumerGroup", Resource.GROUP, Permission.SUB),
    ResourceNeed(_C.GET_CONSUMER_LIST_BY_GROUP, "consumerGroup", Resource.GROUP, Permission.SUB),
    ResourceNeed(_C.UPDATE_CONSUMER_OFFSET, "consumerGroup", Resource.GROUP, Permission.SUB),
    ResourceNeed(_C.UPDATE_CONSUMER_OFFSET, "topic", Resource.TOPIC, Permission.SUB),
)
"""Every other code (SEND_BATCH_MESSAGE and QUERY_CONSUMER_OFFSET included) needs no resource: a valid
signature (and admin for ``ADMIN_CODES``) is enough. A missing name is no resource (nothing is checked),
even a @CFNotNull one, and other header fields are not judged (a 4.9.8 broker lets a malformed queueId of
UPDATE_CONSUMER_OFFSET through this check); an absent HEART_BEAT body is refused as UNREADABLE_REQUEST."""

ADMIN_CODES = (_C.UPDATE_AND_CREATE_TOPIC, _C.UPDATE_BROKER_CONFIG, _C.DELETE_TOPIC_IN_BROKER,
               _C.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, _C.DELETE_SUBSCRIPTIONGROUP)
"""``Permission.ADMIN_CODE``: only ``admin: true`` accounts may send these. The ACL admin commands 50-53
are not among them: any account with a valid signature may send them."""


@dataclass(frozen=True)
class AclRefusal:
    """Why the hook refused a request: the AclException message and where Java throws it."""

    name: str
    message_template: str
    thrown_at: str
    """The exception's first stack frame, which ``RemotingHelper.exceptionSimpleDesc`` appends."""

    def message(self, **values: object) -> str:
        return self.message_template.format(**values)

    def remark(self, **values: object) -> str:
        """The SYSTEM_ERROR remark: ``RemotingHelper.exceptionSimpleDesc`` of the AclException."""
        return f"{EXCEPTION_CLASS}: {self.message(**values)}, {self.thrown_at}"


_PPM = "org.apache.rocketmq.acl.plain.PlainPermissionManager."

ACL_REFUSALS = (
    AclRefusal("NO_ACCESS_KEY", "No accessKey is configured",
               _PPM + "validate(PlainPermissionManager.java:664)"),
    AclRefusal("UNKNOWN_ACCESS_KEY", "No acl config for {access_key}",
               _PPM + "validate(PlainPermissionManager.java:668)"),
    AclRefusal("ACCOUNT_GONE", "No PlainAccessResource for accessKey={access_key}",
               _PPM + "validate(PlainPermissionManager.java:675)"),
    AclRefusal("SIGNATURE", "Check signature failed for accessKey={access_key}",
               _PPM + "validate(PlainPermissionManager.java:684)"),
    AclRefusal("NOT_ADMIN",
               "Need admin permission for request code={code}, but accessKey={access_key} is not",
               _PPM + "checkPerm(PlainPermissionManager.java:581)"),
    AclRefusal("NO_DEFAULT_PERMISSION", "No default permission for {resource}",
               _PPM + "checkPerm(PlainPermissionManager.java:606)"),
    AclRefusal("NO_PERMISSION", "No default permission for {resource}",
               _PPM + "checkPerm(PlainPermissionManager.java:611)"),
    AclRefusal("UNREADABLE_REQUEST", "{detail}",
               "org.apache.rocketmq.acl.plain.PlainAccessValidator.parse(PlainAccessValidator.java:134)"),
)
"""NO_DEFAULT_PERMISSION is thrown for a resource without an entry of its own, NO_PERMISSION for one with
an entry: same message, different frame. ``{resource}`` is ``topic:<t>`` or ``group:<g>``."""


class Refusal:
    """The rows of ``ACL_REFUSALS`` by name."""

    (NO_ACCESS_KEY, UNKNOWN_ACCESS_KEY, ACCOUNT_GONE, SIGNATURE, NOT_ADMIN, NO_DEFAULT_PERMISSION,
     NO_PERMISSION, UNREADABLE_REQUEST) = ACL_REFUSALS


def resource_label(resource: str) -> str:
    """``PlainAccessResource.printStr``: ``group:<g>`` for a retry-topic resource, else ``topic:<t>``."""
    if resource.startswith(RETRY_PREFIX):
        return "group:" + resource[len(RETRY_PREFIX):]
    return "topic:" + resource


@dataclass(frozen=True)
class CheckStep:
    step: int
    check: str
    outcome: str


ACL_CHECK_ORDER = (
    CheckStep(1, "read the resources the code needs (RESOURCE_NEEDS); an unreadable header or HEART_BEAT "
              "body", "refused UNREADABLE_REQUEST"),
    CheckStep(2, "client IP matches a globalWhiteRemoteAddresses pattern", "allowed"),
    CheckStep(3, "no AccessKey in extFields (or no extFields)", "refused NO_ACCESS_KEY"),
    CheckStep(4, "AccessKey names no account", "refused UNKNOWN_ACCESS_KEY"),
    CheckStep(5, "client IP matches the account's whiteRemoteAddress", "allowed: neither signature nor "
              "permissions checked"),
    CheckStep(6, "Signature differs from the one computed with the account's secretKey", "refused SIGNATURE"),
    CheckStep(7, "the request needs RMQ_SYS_TRACE_TOPIC with PUB exactly", "allowed"),
    CheckStep(8, "code in ADMIN_CODES and the account is not admin", "refused NOT_ADMIN"),
    CheckStep(9, "admin account with no topicPerms/groupPerms entries", "allowed"),
    CheckStep(10, "each needed resource, in Java HashMap order: its own entry if listed, else "
              "defaultTopicPerm/defaultGroupPerm, must permit the need", "refused NO_PERMISSION / "
              "NO_DEFAULT_PERMISSION at the first that does not"),
)
"""The client IP is the channel's remote address without its ``:port`` (text after the last colon)."""


# -- clauses -------------------------------------------------------------------------------------------

SIGN_CONTENT = clause(
    "RMQ-ACL-SIGN-CONTENT", Level.MUST,
    "The signed content is the UTF-8 concatenation of the values (no keys, no separators) of all extFields "
    "sorted by key in UTF-16 code-unit order, AccessKey and SecurityToken included and Signature left out, "
    "followed by the body bytes.", source=_HOOK)
SIGN_HMAC = clause(
    "RMQ-ACL-SIGN-HMAC", Level.MUST,
    "Signature is the standard Base64 (with padding) of HmacSHA1 over the content, keyed with the UTF-8 "
    "bytes of the secret key.", source=_ACL + "common/AclSigner.java")
SIGN_KEYS = clause(
    "RMQ-ACL-SIGN-KEYS", Level.MUST,
    "A signed request carries AccessKey, Signature and, when the client has one, SecurityToken in extFields; "
    "the broker verifies over every key it receives except Signature and _UNIQUE_KEY_QUERY.",
    source=_VALIDATOR)
REFUSAL = clause(
    "RMQ-ACL-REFUSAL", Level.MUST,
    "A refused request is answered 1 SYSTEM_ERROR whose remark is 'org.apache.rocketmq.acl.common."
    "AclException: <message>, <first stack frame>'; a refused oneway request gets no answer.",
    source="remoting/src/main/java/org/apache/rocketmq/remoting/netty/NettyRemotingAbstract.java")
NO_ACCESS_KEY = clause(
    "RMQ-ACL-NO-ACCESS-KEY", Level.MUST,
    "A request without AccessKey from an address no global whitelist pattern matches is refused with "
    "'No accessKey is configured'.", source=_MANAGER)
UNKNOWN_KEY = clause(
    "RMQ-ACL-UNKNOWN-KEY", Level.MUST,
    "A request whose AccessKey names no account is refused with 'No acl config for <ak>'.", source=_MANAGER)
SIGNATURE_CHECK = clause(
    "RMQ-ACL-SIGNATURE", Level.MUST,
    "A request whose Signature is absent or differs from the one computed over what was received (any "
    "changed, added or removed field value or body byte) is refused with 'Check signature failed for "
    "accessKey=<ak>'.", source=_MANAGER)
WHITELIST_ACCOUNT = clause(
    "RMQ-ACL-WHITELIST-ACCOUNT", Level.MUST,
    "A request from an address matching its account's whiteRemoteAddress is let through with neither "
    "signature nor permission check.", source=_MANAGER)
WHITELIST_GLOBAL = clause(
    "RMQ-ACL-WHITELIST-GLOBAL", Level.MUST,
    "A request from an address matching a globalWhiteRemoteAddresses pattern is let through with no "
    "AccessKey, signature or permission check.", source=_MANAGER)
ADMIN_ONLY = clause(
    "RMQ-ACL-ADMIN-ONLY", Level.MUST,
    "UPDATE_AND_CREATE_TOPIC, UPDATE_BROKER_CONFIG, DELETE_TOPIC_IN_BROKER, "
    "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP and DELETE_SUBSCRIPTIONGROUP from a non-admin account are refused "
    "with 'Need admin permission for request code=<code>, but accessKey=<ak> is not'.", source=_PERMISSION)
PERM_RESOURCE = clause(
    "RMQ-ACL-PERM-RESOURCE", Level.MUST,
    "Each resource of RESOURCE_NEEDS must be permitted by the account's entry for it (topicPerms, or "
    "groupPerms for %RETRY%<group>), or without an entry by defaultTopicPerm/defaultGroupPerm; otherwise the "
    "request is refused with 'No default permission for topic:<t>' or 'group:<g>'.", source=_MANAGER)
PERM_VALUES = clause(
    "RMQ-ACL-PERM-VALUES", Level.MUST,
    "DENY permits nothing, PUB only sends, SUB only pulls/offsets/heartbeats/group use, PUB|SUB (or SUB|PUB) "
    "both; any other value, and an absent default, is DENY.", source=_PERMISSION)
PERM_ADMIN_ALL = clause(
    "RMQ-ACL-PERM-ADMIN-ALL", Level.MUST,
    "An admin account with neither topicPerms nor groupPerms may use every resource.", source=_MANAGER)
TRACE_TOPIC_SEND = clause(
    "RMQ-ACL-TRACE-TOPIC", Level.MUST,
    "A correctly signed send to RMQ_SYS_TRACE_TOPIC is let through whatever the account's permissions.",
    source=_MANAGER)
UNGUARDED_CODES = clause(
    "RMQ-ACL-UNGUARDED", Level.MUST,
    "Codes outside RESOURCE_NEEDS and ADMIN_CODES need only a valid signature (SEND_BATCH_MESSAGE and "
    "QUERY_CONSUMER_OFFSET included); the check runs before the code is looked up, so an unknown code is "
    "refused like any other when unsigned.", source=_VALIDATOR)
NAMESRV_OPEN = clause(
    "RMQ-ACL-NAMESRV", Level.MUST,
    "The name server does not check ACL: unsigned requests are served.",
    source="namesrv/src/main/java/org/apache/rocketmq/namesrv/NamesrvController.java")
UNIQUE_KEY_QUERY_UNSIGNED = clause(
    "RMQ-ACL-UNIQUE-KEY-QUERY", Level.MUST,
    "The broker leaves _UNIQUE_KEY_QUERY out of the signed content: a request signed with it included is "
    "refused (4.9.8's own client adds it to QUERY_MESSAGE before signing, so its queries by key fail under "
    "ACL), one that adds it after signing is accepted.", source=_VALIDATOR)
SECURITY_TOKEN_SIGNED = clause(
    "RMQ-ACL-SECURITY-TOKEN", Level.MUST,
    "SecurityToken is not checked against anything; it is signed like any other field, so a request whose "
    "token was changed after signing is refused.", source=_HOOK)
