"""ACL 2.0 (5.3.0+): users and access policies the broker keeps, managed with the AUTH_* admin commands.

ACL 1.0's ``plain_acl.yml`` accounts give way to two tables the broker keeps itself: **users** (name,
password, Super or Normal, enabled or not) and **ACLs**, one per subject (``User:<name>``), each a list of
policies (Custom or Default) of entries ``resource → actions, source IPs, Allow/Deny``. The ten AUTH_*
requests carry the name or subject in the custom header and the user or ACL as a JSON body
(``UserInfo``, ``AclInfo``); the answers carry no header, a body for GET/LIST only. The broker serves
them only when its configuration names metadata providers (``authenticationMetadataProvider``,
``authorizationMetadataProvider``); without them every request that reaches the tables answers
SYSTEM_ERROR. A request the manager refuses answers 16 NO_PERMISSION with the reason as remark; a
header without the user name 29 INVALID_PARAMETER. Apache keeps both tables in RocksDB under
``<storePathRootDir>/config/users`` and ``config/acls``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from rocketmq_spec.spec.bodies import BodyField, BodySpec, Json
from rocketmq_spec.spec.clauses import Level, clause
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.header_fields import Field, HeaderSpec, S
from rocketmq_spec.spec.releases import Releases, since

_HEADER = "remoting/src/main/java/org/apache/rocketmq/remoting/protocol/header/"
_BODY = "remoting/src/main/java/org/apache/rocketmq/remoting/protocol/body/"
_ADMIN = "broker/src/main/java/org/apache/rocketmq/broker/processor/AdminBrokerProcessor.java"
_AUTH = "auth/src/main/java/org/apache/rocketmq/auth/"
_AUTHN = _AUTH + "authentication/manager/AuthenticationMetadataManagerImpl.java"
_AUTHZ = _AUTH + "authorization/manager/AuthorizationMetadataManagerImpl.java"
_AUTHN_LOCAL = _AUTH + "authentication/provider/LocalAuthenticationMetadataProvider.java"
_AUTHZ_LOCAL = _AUTH + "authorization/provider/LocalAuthorizationMetadataProvider.java"
_MODEL = _AUTH + "authorization/model/"
_CONVERTER = "broker/src/main/java/org/apache/rocketmq/broker/auth/converter/AclConverter.java"

AUTH_RELEASES = since("5.3.0")
"""Releases that declare the AUTH_* codes (RequestCode 3001-3010)."""

LOCAL_AUTHENTICATION_PROVIDER = \
    "org.apache.rocketmq.auth.authentication.provider.LocalAuthenticationMetadataProvider"
LOCAL_AUTHORIZATION_PROVIDER = \
    "org.apache.rocketmq.auth.authorization.provider.LocalAuthorizationMetadataProvider"
"""The providers a broker.conf names to keep users and ACLs in the broker's own store."""
PROXY_AUTHENTICATION_PROVIDER = "org.apache.rocketmq.proxy.auth.ProxyAuthenticationMetadataProvider"
PROXY_AUTHORIZATION_PROVIDER = "org.apache.rocketmq.proxy.auth.ProxyAuthorizationMetadataProvider"
"""The providers a proxy's rmq-proxy.json names to read the users and ACLs of its brokers (in local mode,
of the broker in its own process)."""
PROXY_AUTH_KEYS = ("authenticationEnabled", "authenticationWhitelist", "authorizationEnabled",
                   "authorizationWhitelist")
"""AuthConfig keys a proxy reads from its own rmq-proxy.json, not from broker.conf."""


class UserType(enum.Enum):
    """``UserType``: names read case-insensitively, written as below."""

    SUPER = "Super"
    NORMAL = "Normal"


class UserStatus(enum.Enum):
    ENABLE = "enable"
    DISABLE = "disable"


class PolicyType(enum.Enum):
    """A request without a (known) policy type means Custom."""

    CUSTOM = "Custom"
    DEFAULT = "Default"


class Decision(enum.Enum):
    ALLOW = "Allow"
    DENY = "Deny"


class Action(enum.Enum):
    """``org.apache.rocketmq.common.action.Action``: names read case-insensitively; ``Any`` is what a
    check asks for when any action will do, never something a policy may grant."""

    UNKNOWN = "Unknown"
    ALL = "All"
    ANY = "Any"
    PUB = "Pub"
    SUB = "Sub"
    CREATE = "Create"
    UPDATE = "Update"
    DELETE = "Delete"
    GET = "Get"
    LIST = "List"


class ResourceType(enum.Enum):
    """The part of a resource key before ``:`` (case-insensitive); ``*`` alone is ANY."""

    UNKNOWN = "Unknown"
    ANY = "Any"
    CLUSTER = "Cluster"
    NAMESPACE = "Namespace"
    TOPIC = "Topic"
    GROUP = "Group"


SUBJECT_USER = "User"
"""``SubjectType.USER``: the only kind of subject; a subject key is ``User:<username>``."""

_S, _A = Json.STRING, Json.ARRAY

USER_INFO = BodySpec("UserInfo", (
    BodyField("password", _S, "the user's secret key (answered in clear, as stored)"),
    BodyField("userStatus", _S, "enable or disable", constants=tuple(s.value for s in UserStatus)),
    BodyField("userType", _S, "Super or Normal", constants=tuple(t.value for t in UserType)),
    BodyField("username", _S, "the user's name (a request's header name wins over it)"),
))
POLICY_ENTRY_INFO = BodySpec("AclInfo$PolicyEntryInfo", (
    BodyField("actions", _A, "Action names: Pub, Sub, Create, Update, Delete, Get, List, All"),
    BodyField("decision", _S, "Allow or Deny", constants=tuple(d.value for d in Decision)),
    BodyField("resource", _S, "resource key: *, Topic:name, Group:prefix*, Cluster:*, ..."),
    BodyField("sourceIps", _A, "IPs or CIDRs the entry applies to (absent: any)"),
))
POLICY_INFO = BodySpec("AclInfo$PolicyInfo", (
    BodyField("entries", _A, "the policy's entries, one per resource", POLICY_ENTRY_INFO),
    BodyField("policyType", _S, "Custom or Default", constants=tuple(p.value for p in PolicyType)),
))
ACL_INFO = BodySpec("AclInfo", (
    BodyField("policies", _A, "at most one policy per type", POLICY_INFO),
    BodyField("subject", _S, "subject key User:<name> (in a request, wins over the header's)"),
))

USERNAME = Field("username", S, False, "user name (the processor, not the header class, requires it)")
SUBJECT = Field("subject", S, False, "subject key, User:<name>")
CREATE_USER_REQUEST = HeaderSpec("CreateUserRequestHeader", (USERNAME,))
UPDATE_USER_REQUEST = HeaderSpec("UpdateUserRequestHeader", (USERNAME,))
DELETE_USER_REQUEST = HeaderSpec("DeleteUserRequestHeader", (USERNAME,))
GET_USER_REQUEST = HeaderSpec("GetUserRequestHeader", (USERNAME,))
LIST_USERS_REQUEST = HeaderSpec("ListUsersRequestHeader", (
    Field("filter", S, False, "keep the users whose name contains it"),))
CREATE_ACL_REQUEST = HeaderSpec("CreateAclRequestHeader", (SUBJECT,))
UPDATE_ACL_REQUEST = HeaderSpec("UpdateAclRequestHeader", (SUBJECT,))
DELETE_ACL_REQUEST = HeaderSpec("DeleteAclRequestHeader", (
    SUBJECT,
    Field("policyType", S, False, "policy the resource is deleted from (absent or unknown: Custom)"),
    Field("resource", S, False, "resource key of the entry to delete (absent or unreadable: the whole ACL)"),
))
GET_ACL_REQUEST = HeaderSpec("GetAclRequestHeader", (SUBJECT,))
LIST_ACLS_REQUEST = HeaderSpec("ListAclsRequestHeader", (
    Field("subjectFilter", S, False, "keep the ACLs whose subject key contains it"),
    Field("resourceFilter", S, False, "keep the entries whose resource key contains it"),
))


@dataclass(frozen=True)
class AuthCommand:
    code: RequestCode
    header: HeaderSpec
    request_body: str
    answer_body: str
    releases: Releases = AUTH_RELEASES


AUTH_COMMANDS: tuple[AuthCommand, ...] = (
    AuthCommand(RequestCode.AUTH_CREATE_USER, CREATE_USER_REQUEST, "UserInfo", "(none)"),
    AuthCommand(RequestCode.AUTH_UPDATE_USER, UPDATE_USER_REQUEST, "UserInfo", "(none)"),
    AuthCommand(RequestCode.AUTH_DELETE_USER, DELETE_USER_REQUEST, "(none)", "(none)"),
    AuthCommand(RequestCode.AUTH_GET_USER, GET_USER_REQUEST, "(none)", "UserInfo, absent when unknown"),
    AuthCommand(RequestCode.AUTH_LIST_USER, LIST_USERS_REQUEST, "(none)",
                "JSON array of UserInfo by name, absent when none"),
    AuthCommand(RequestCode.AUTH_CREATE_ACL, CREATE_ACL_REQUEST, "AclInfo", "(none)"),
    AuthCommand(RequestCode.AUTH_UPDATE_ACL, UPDATE_ACL_REQUEST, "AclInfo", "(none)"),
    AuthCommand(RequestCode.AUTH_DELETE_ACL, DELETE_ACL_REQUEST, "(none)", "(none)"),
    AuthCommand(RequestCode.AUTH_GET_ACL, GET_ACL_REQUEST, "(none)", "AclInfo, absent when none"),
    AuthCommand(RequestCode.AUTH_LIST_ACL, LIST_ACLS_REQUEST, "(none)",
                "JSON array of AclInfo by subject, absent when none"),
)
AUTH_REQUEST_HEADERS: dict[int, HeaderSpec] = {command.code: command.header for command in AUTH_COMMANDS}


class Remark:
    """Remarks of the refusals (code in the comment)."""

    USERNAME_BLANK = "The username is blank"  # 29, from the processor
    USERNAME_CAN_NOT_BE_BLANK = "username can not be blank"  # 16, from the manager
    PASSWORD_BLANK = "password can not be blank"  # 16
    USER_EXISTS = "The user is existed"  # 16
    USER_NOT_EXIST = "The user is not exist"  # 16
    SUPER_CREATE = "The super user can only be create by super user"  # 1
    SUPER_UPDATE = "The super user can only be update by super user"  # 1 (processor) or 16 (stored user)
    SUBJECT_OF_NOT_EXIST = "The subject of {subject} is not exist."  # 16, create/update ACL
    SUBJECT_NOT_EXIST = "The subject is not exist."  # 16, get/delete ACL
    SUBJECT_NULL = "The subject is null."  # 16
    ACL_NOT_EXIST = "The acl is not exist."  # 16
    BODY_OF_ACL_NULL = "The body of acl is null"  # 1, thrown out of the processor
    POLICIES_EMPTY = "The policies is empty."
    ENTRIES_EMPTY = "The policy entries is empty."
    RESOURCE_NULL = "The resource is null."
    ACTIONS_EMPTY = "The actions is empty."
    ACTIONS_ANY = "The actions can not be Any."
    SOURCE_IP_EMPTY = "The source ip is empty."
    SOURCE_IP_INVALID = "The source ip is invalid."
    DECISION_NULL = "The decision is null or illegal."
    SYSTEM_ERROR = "An system error occurred, please try again later."  # 1: no provider, malformed subject


class AuthenticationRemark:
    """Refusals of ``authenticationEnabled`` (16 NO_PERMISSION), in the order they are checked."""

    NO_PROVIDER = "The authenticationMetadataProvider is not configured"
    NO_USERNAME = "username cannot be null."
    USER_NOT_FOUND = "User:{username} is not found."
    USER_DISABLED = "User:{username} is disabled."
    SIGNATURE = "check signature failed."


UNIQUE_KEY_SIGNED_AFTER = "4.9.3"
"""``_UNIQUE_KEY_QUERY`` is left out of the signed content only for clients at or below this release."""

REFUSED = ResponseCode.NO_PERMISSION
"""What AuthenticationException / AuthorizationException from the managers become."""

AUTH_PROVIDERS = clause(
    "RMQ-AUTH-PROVIDERS", Level.MUST,
    "The AUTH_* commands read and write the broker's user and ACL tables only when broker.conf names "
    "authenticationMetadataProvider (users) and authorizationMetadataProvider (ACLs); whether "
    "authenticationEnabled / authorizationEnabled are on does not matter. Without the provider a request "
    "that passes the checks made before the tables are reached answers 1 SYSTEM_ERROR \"An system error "
    "occurred, please try again later.\" (AUTH_LIST_ACL: 1 with the IllegalStateException as remark).",
    source=_AUTHN + " (getAuthenticationMetadataProvider)")
AUTH_ANSWER = clause(
    "RMQ-AUTH-ANSWER", Level.MUST,
    "AUTH_* answers carry no extFields; a success keeps the remark \"not set any response code\"; GET and "
    "LIST answer SUCCESS with no body when nothing is found; a refusal of the managers answers 16 "
    "NO_PERMISSION with the exception's message as remark.",
    source=_ADMIN + " (handleAuthException)")
AUTH_USER_CREATE = clause(
    "RMQ-AUTH-USER-CREATE", Level.MUST,
    "AUTH_CREATE_USER: an empty header username answers 29 \"The username is blank\"; a blank password 16 "
    "\"password can not be blank\"; an existing user 16 \"The user is existed\". The user is stored with "
    "userType Normal and userStatus enable unless the body names others (names case-insensitive); a "
    "request signed by a non-Super user may not create a Super user (1).",
    source=_ADMIN + " (createUser); " + _AUTHN + " (createUser, validate)")
AUTH_USER_UPDATE = clause(
    "RMQ-AUTH-USER-UPDATE", Level.MUST,
    "AUTH_UPDATE_USER changes only what the body gives (a non-blank password, a known type or status); "
    "an unknown user answers 16 \"The user is not exist\".",
    source=_AUTHN + " (updateUser)")
AUTH_USER_DELETE = clause(
    "RMQ-AUTH-USER-DELETE", Level.MUST,
    "AUTH_DELETE_USER removes the user and its ACL; an unknown user answers SUCCESS; a blank name 16 "
    "\"username can not be blank\".",
    source=_ADMIN + " (deleteUser); " + _AUTHN + " (deleteUser)")
AUTH_USER_GET = clause(
    "RMQ-AUTH-USER-GET", Level.MUST,
    "AUTH_GET_USER answers the UserInfo (password included); a blank name 29 \"The username is blank\"; "
    "AUTH_LIST_USER answers the users whose name contains the filter (all without one), in byte order "
    "of their names.",
    source=_ADMIN + " (getUser, listUser); " + _AUTHN_LOCAL + " (listUser)")
AUTH_ACL_CREATE = clause(
    "RMQ-AUTH-ACL-CREATE", Level.MUST,
    "AUTH_CREATE_ACL and AUTH_UPDATE_ACL behave alike: the body's subject (else the header's) must be an "
    "existing user (16 \"The subject of User:<name> is not exist.\"); each policy of the body is merged "
    "into the policy of its type (Custom when absent): an entry for a resource already there has its "
    "actions, source IPs and decision replaced, others are appended; a subject without an ACL gets the "
    "body's policies.",
    source=_AUTHZ + " (createAcl, updateAcl); " + _MODEL + "Acl.java, Policy.java (updatePolicy)")
AUTH_ACL_VALIDATE = clause(
    "RMQ-AUTH-ACL-VALIDATE", Level.MUST,
    "An ACL body is checked before anything is stored, answering 16 with the first failure: policies "
    "with no entries are dropped, then \"The policies is empty.\"; per entry \"The resource is null.\" "
    "(an unreadable resource key), \"The actions is empty.\" (unknown action names are dropped), \"The "
    "actions can not be Any.\", \"The source ip is empty.\" / \"The source ip is invalid.\" (IP or "
    "CIDR), \"The decision is null or illegal.\". A body without policies answers 1.",
    source=_AUTHZ + " (validate); " + _CONVERTER)
AUTH_ACL_DELETE = clause(
    "RMQ-AUTH-ACL-DELETE", Level.MUST,
    "AUTH_DELETE_ACL with a resource removes that resource's entry from the policy of the header's type "
    "(Custom by default), dropping a policy left empty and the ACL when no policy is left; without a "
    "(readable) resource it removes the whole ACL. An unknown user answers 16 \"The subject is not "
    "exist.\", a user without ACL 16 \"The acl is not exist.\".",
    source=_AUTHZ + " (deleteAcl)")
AUTH_ACL_GET = clause(
    "RMQ-AUTH-ACL-GET", Level.MUST,
    "AUTH_GET_ACL answers the subject's AclInfo (SUCCESS without body when it has none; 16 \"The subject "
    "is not exist.\" for an unknown user). AUTH_LIST_ACL answers the ACLs whose subject key contains "
    "subjectFilter; with a resourceFilter the subject key does not contain, only entries whose resource "
    "key contains it are kept, and policies and ACLs left empty are left out; in byte order of subject.",
    source=_ADMIN + " (getAcl, listAcl); " + _AUTHZ_LOCAL + " (listAcl)")
AUTH_RESOURCE_KEY = clause(
    "RMQ-AUTH-RESOURCE-KEY", Level.MUST,
    "A resource key is \"*\" (any resource) or Type:name with Type one of Cluster, Namespace, Topic, Group "
    "(case-insensitive, written capitalised); name \"*\" is any name of the type, a name ending in \"*\" a "
    "prefix, else the literal name. Answers write the key back in that canonical form.",
    source=_MODEL + "Resource.java (of, getResourceKey)")
AUTH_AUTHENTICATE = clause(
    "RMQ-AUTH-AUTHENTICATE", Level.MUST,
    "With authenticationEnabled every request whose code is not in authenticationWhitelist is refused with "
    "16 NO_PERMISSION before its processor runs: without an AccessKey \"username cannot be null.\", an "
    "unknown user \"User:<name> is not found.\", a disabled one \"User:<name> is disabled.\", a "
    "Signature that is not HmacSHA1 (Base64) of the other extFields' values in key order and the body, "
    "keyed with the user's password, \"check signature failed.\" (_UNIQUE_KEY_QUERY is left out for "
    "clients at or below 4.9.3). initAuthenticationUser (JSON username/password) is created as a Super user "
    "at start when absent.",
    source=_AUTH + "authentication/chain/DefaultAuthenticationHandler.java; "
    + _AUTH + "authentication/builder/DefaultAuthenticationContextBuilder.java")
AUTH_UNSUPPORTED_4X = clause(
    "RMQ-AUTH-4X", Level.MUST,
    "Releases before 5.3.0 (4.9.8 among them) have no AUTH_* processor: they answer 3 "
    "REQUEST_CODE_NOT_SUPPORTED.",
    source="remoting/src/main/java/org/apache/rocketmq/remoting/protocol/RequestCode.java")
