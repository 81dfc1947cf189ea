"""plain_acl.yml, the ACL files a broker reads and the admin commands that rewrite them (ACL 1.0, 4.9.8).

The checks these files configure are in ``rocketmq_spec.spec.acl``; this module holds the files themselves:
their keys, the whitelist patterns they may hold, where a broker finds them and how it follows their changes,
and the ACL admin commands 50-53 (request codes), whose headers are in ``rocketmq_spec.spec.headers`` and
which carry no body. """

from __future__ import annotations

from dataclasses import dataclass

from rocketmq_spec.spec.clauses import Level, clause
from rocketmq_spec.spec.codes import RequestCode

_ACL = "acl/src/main/java/org/apache/rocketmq/acl/"
_MANAGER = _ACL + "plain/PlainPermissionManager.java"
_ADDRESSES = _ACL + "plain/RemoteAddressStrategyFactory.java"
_ADMIN = "broker/src/main/java/org/apache/rocketmq/broker/processor/AdminBrokerProcessor.java"
_WATCH = "srvutil/src/main/java/org/apache/rocketmq/srvutil/AclFileWatchService.java"
_C = RequestCode

KEY_MIN_LENGTH = 6
"""accessKey and secretKey must be *longer* than this (``length() <= 6`` is refused)."""
RELOAD_INTERVAL_S = 5.0
"""``AclFileWatchService`` compares each ACL file's last-modified time this often."""
ROCKETMQ_HOME_ENV = "ROCKETMQ_HOME"
"""``MixAll.ROCKETMQ_HOME_ENV``: the installation the servers and mqadmin read their files below, when the
``rocketmq.home.dir`` property does not name one."""
DEFAULT_ACL_FILE = "conf/plain_acl.yml"
"""Below ``rocketmq.home.dir`` (or ``$ROCKETMQ_HOME``); property ``rocketmq.acl.plain.file`` overrides it."""
TOOLS_FILE = "conf/tools.yml"
"""mqadmin's credentials below ``$ROCKETMQ_HOME`` (``MixAll.ACL_CONF_TOOLS_FILE``): ``accessKey`` and
``secretKey``, read by ``AclUtils.getAclRPCHook`` at every mqadmin command to sign its requests."""

@dataclass(frozen=True)
class AddressPattern:
    form: str
    example: str
    matches: str


ADDRESS_PATTERNS = (
    AddressPattern("blank or absent", "", "nothing"),
    AddressPattern("all", "* / *.*.*.* / *:*:*:*:*:*:*:*", "every address"),
    AddressPattern("literal", "192.168.0.1 / ::1", "that address (IPv6 compared fully expanded, upper case)"),
    AddressPattern("comma list", "192.168.0.1,192.168.0.2", "any listed literal"),
    AddressPattern("set in the last part", "192.168.0.{1,2} / 1:2:3:4:5:6:7:{8,9}", "any listed ending"),
    AddressPattern("range", "192.168.*.* / 192.168.1.1-100 / 1:2:3:4:5:6:7:1-ff",
                   "a '*' or 'n-m' part (IPv4: 2nd to 4th part, the parts before it literal; IPv6: hex)"),
)
"""A pattern of none of these forms (``RemoteAddressStrategyFactory``) makes the file unusable."""


@dataclass(frozen=True)
class FileKey:
    key: str
    type: str
    default: str
    meaning: str


PLAIN_ACL_FILE = (
    FileKey("globalWhiteRemoteAddresses", "list of address patterns", "[]", "clients let in unsigned"),
    FileKey("accounts", "list of accounts", "[]", "one map per access key"),
    FileKey("accounts[].accessKey", "string, > 6 chars", "required", "the AccessKey a client sends"),
    FileKey("accounts[].secretKey", "string, > 6 chars", "required", "HMAC key (a YAML number is text)"),
    FileKey("accounts[].whiteRemoteAddress", "address pattern", "none", "its clients go unsigned"),
    FileKey("accounts[].admin", "boolean", "false", "ADMIN_CODES; no perms lists: all"),
    FileKey("accounts[].defaultTopicPerm", "permission name", "DENY", "for topics not in topicPerms"),
    FileKey("accounts[].defaultGroupPerm", "permission name", "DENY", "for groups not in groupPerms"),
    FileKey("accounts[].topicPerms", "list of 'topic=PERM'", "[]", "per-topic permission"),
    FileKey("accounts[].groupPerms", "list of 'group=PERM'", "[]", "per-group permission (as %RETRY%group)"),
    FileKey("dataVersion", "list of {counter, timestamp}", "absent", "first element: the file's version; the "
            "ACL admin commands increment counter and set timestamp when they rewrite the file"),
)


@dataclass(frozen=True)
class AdminCommand:
    code: RequestCode
    header: str
    success: str
    failure: str


ACL_ADMIN_COMMANDS = (
    AdminCommand(_C.UPDATE_AND_CREATE_ACL_CONFIG, "CreateAccessConfigRequestHeader",
                 "0, no remark; the account is in effect at once and written to the file",
                 "209 UPDATE_AND_CREATE_ACL_CONFIG_FAILED, remark = the exception message"),
    AdminCommand(_C.DELETE_ACL_CONFIG, "DeleteAccessConfigRequestHeader",
                 "0; the account leaves the file (memory follows on reload: see RMQ-ACL-RELOAD)",
                 "210 DELETE_ACL_CONFIG_FAILED 'The accesskey[<ak>] corresponding to accessConfig has been "
                 "deleted failed.' for an unknown key"),
    AdminCommand(_C.GET_BROKER_CLUSTER_ACL_INFO, "(request) none / GetBrokerAclConfigResponseHeader",
                 "0 with version (DataVersion JSON), allAclFileVersion (path -> DataVersion), brokerName, "
                 "brokerAddr, clusterName", "-"),
    AdminCommand(_C.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG, "UpdateGlobalWhiteAddrsConfigRequestHeader",
                 "0; the file's globalWhiteRemoteAddresses is replaced, memory follows on reload",
                 "211 UPDATE_GLOBAL_WHITE_ADDRS_CONFIG_FAILED 'The globalWhiteAddresses[<list>] has been "
                 "updated failed.'"),
)
"""Successes are written by the processor itself (no extFields, the server's own serialization)."""

# -- clauses -------------------------------------------------------------------------------------------

ADDRESS_PATTERN = clause(
    "RMQ-ACL-ADDRESS-PATTERN", Level.MUST,
    "Whitelist patterns are read as ADDRESS_PATTERNS: blank, all, literal, comma list, {a,b} set, * or n-m "
    "range, for IPv4 and IPv6.", source=_ADDRESSES)
ACL_FILE = clause(
    "RMQ-ACL-FILE", Level.MUST,
    "plain_acl.yml holds the keys of PLAIN_ACL_FILE; an account with an accessKey or secretKey of 6 "
    "characters or fewer, or an unreadable pattern, makes the file unusable.", source=_MANAGER)
ACL_FILE_UNUSABLE = clause(
    "RMQ-ACL-FILE-UNUSABLE", Level.MUST,
    "A broker with aclEnable=true does not start on an unusable ACL file (4.9.8 dies in initialAcl with a "
    "ClassCastException, the validator having failed to load). A missing default file is created empty by "
    "4.9.8, which then refuses every request no global whitelist matches; a broker may refuse to start "
    "instead, as the reference broker does.", source="broker/src/main/java/org/apache/rocketmq/broker/"
    "BrokerController.java")
ACL_FILE_LOCATION = clause(
    "RMQ-ACL-FILE-LOCATION", Level.MUST,
    "With aclEnable=true the broker reads <rocketmq.home.dir>/conf/plain_acl.yml (property "
    "rocketmq.acl.plain.file overrides the relative path) and every *.yml/*.yaml below "
    "<rocketmq.home.dir>/conf/acl.",
    source=_MANAGER)
ACL_RELOAD = clause(
    "RMQ-ACL-RELOAD", Level.MUST,
    "A change of an ACL file's last-modified time is applied within about RELOAD_INTERVAL_S seconds, "
    "without a restart; an access key removed from the file is then refused with 'No PlainAccessResource for "
    "accessKey=<ak>'. A file added or removed reloads every file afresh: keys no file defines are unknown.",
    source=_WATCH)
ADMIN_UPDATE = clause(
    "RMQ-ACL-ADMIN-UPDATE", Level.MUST,
    "UPDATE_AND_CREATE_ACL_CONFIG creates or replaces an account (comma-separated topicPerms/groupPerms) in "
    "memory and in its file, answering 0; invalid keys or permission names answer 209 with the reason.",
    source=_ADMIN)
ADMIN_DELETE = clause(
    "RMQ-ACL-ADMIN-DELETE", Level.MUST,
    "DELETE_ACL_CONFIG removes a known account from its file answering 0; an unknown one is answered 210.",
    source=_ADMIN)
ADMIN_VERSION = clause(
    "RMQ-ACL-ADMIN-VERSION", Level.MUST,
    "GET_BROKER_CLUSTER_ACL_INFO answers 0 with version (the default file's DataVersion JSON), "
    "allAclFileVersion, brokerName, brokerAddr and clusterName; each rewrite by an ACL admin command "
    "increments the counter.", source=_ADMIN)
ADMIN_WHITE = clause(
    "RMQ-ACL-ADMIN-WHITE", Level.MUST,
    "UPDATE_GLOBAL_WHITE_ADDRS_CONFIG (globalWhiteAddrs split at every comma, so a {a,b} pattern cannot be "
    "set; aclFileFullPath required, empty = the default file) replaces the file's "
    "globalWhiteRemoteAddresses, answering 0.", source=_ADMIN)
ADMIN_54 = clause(
    "RMQ-ACL-CONFIG-54", Level.MUST,
    "GET_BROKER_CLUSTER_ACL_CONFIG (54) does not exist in 4.9.8: once the ACL check passes it is answered 3 "
    "REQUEST_CODE_NOT_SUPPORTED.", source=_ADMIN)
