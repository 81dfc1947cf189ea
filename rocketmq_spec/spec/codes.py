"""RequestCode and ResponseCode: what a command asks for and how it was answered.

Every row carries the releases that declare it (``rocketmq_spec.spec.releases``), read off the published jars
of 4.9.7, 4.9.8, 5.3.3, 5.4.0, 5.5.0 and 5.5.1 and off the source tags between them. Values are not unique
across the history: 5.0.0-5.3.2 declare both the ACL 1.0 failure codes and the POP codes as 209-211, and 5.1.1
moved three controller codes, so a response code is named by the peer's release and by the request it answers,
and lookups by value return every name that value has had. """

from __future__ import annotations

from dataclasses import dataclass

from rocketmq_spec.spec.clauses import Level, clause
from rocketmq_spec.spec.enums import RequestCode as RequestCode  # re-exported: the tables' home
from rocketmq_spec.spec.enums import ResponseCode as ResponseCode
from rocketmq_spec.spec.releases import ALL, LEGACY, Releases, between, ordinal, since, until

_REQUEST_SOURCE = "remoting/src/main/java/org/apache/rocketmq/remoting/protocol/RequestCode.java"
_RESPONSE_SOURCE = "remoting/src/main/java/org/apache/rocketmq/remoting/protocol/ResponseCode.java"
"""5.x paths; 4.x declares both classes in common/.../common/protocol/."""


@dataclass(frozen=True)
class Code:
    name: str
    value: int
    releases: Releases = ALL
    """The releases that declare the code (``all``: every covered release, 4.9.0 to the newest)."""

    @property
    def since(self) -> str | None:
        return self.releases.since

    @property
    def until(self) -> str | None:
        return self.releases.until

    def present_in(self, release: str) -> bool:
        """Whether the code is declared in ``release`` (a release name such as ``"5.3.3"``)."""
        return release in self.releases

    def present_for_version(self, mq_version: int) -> bool:
        """Whether a peer announcing this ``version`` word declares the code."""
        return self.releases.holds_for_version(mq_version)


REQUEST_CODES: tuple[Code, ...] = (
    # declared by every covered release (4.9.0 ... 5.5.1)
    Code("SEND_MESSAGE", 10),
    Code("PULL_MESSAGE", 11),
    Code("QUERY_MESSAGE", 12),
    Code("QUERY_BROKER_OFFSET", 13),
    Code("QUERY_CONSUMER_OFFSET", 14),
    Code("UPDATE_CONSUMER_OFFSET", 15),
    Code("UPDATE_AND_CREATE_TOPIC", 17),
    Code("GET_ALL_TOPIC_CONFIG", 21),
    Code("GET_TOPIC_CONFIG_LIST", 22),
    Code("GET_TOPIC_NAME_LIST", 23),
    Code("UPDATE_BROKER_CONFIG", 25),
    Code("GET_BROKER_CONFIG", 26),
    Code("TRIGGER_DELETE_FILES", 27),
    Code("GET_BROKER_RUNTIME_INFO", 28),
    Code("SEARCH_OFFSET_BY_TIMESTAMP", 29),
    Code("GET_MAX_OFFSET", 30),
    Code("GET_MIN_OFFSET", 31),
    Code("GET_EARLIEST_MSG_STORETIME", 32),
    Code("VIEW_MESSAGE_BY_ID", 33),
    Code("HEART_BEAT", 34),
    Code("UNREGISTER_CLIENT", 35),
    Code("CONSUMER_SEND_MSG_BACK", 36),
    Code("END_TRANSACTION", 37),
    Code("GET_CONSUMER_LIST_BY_GROUP", 38),
    Code("CHECK_TRANSACTION_STATE", 39),
    Code("NOTIFY_CONSUMER_IDS_CHANGED", 40),
    Code("LOCK_BATCH_MQ", 41),
    Code("UNLOCK_BATCH_MQ", 42),
    Code("GET_ALL_CONSUMER_OFFSET", 43),
    Code("GET_ALL_DELAY_OFFSET", 45),
    Code("CHECK_CLIENT_CONFIG", 46),
    Code("UPDATE_AND_CREATE_ACL_CONFIG", 50, until("5.3.2")),
    Code("DELETE_ACL_CONFIG", 51, until("5.3.2")),
    Code("GET_BROKER_CLUSTER_ACL_INFO", 52, until("5.3.2")),
    Code("UPDATE_GLOBAL_WHITE_ADDRS_CONFIG", 53, until("5.3.2")),
    Code("GET_BROKER_CLUSTER_ACL_CONFIG", 54, Releases((None, "4.9.7"), ("5.0.0", "5.3.2"))),
    Code("PUT_KV_CONFIG", 100),
    Code("GET_KV_CONFIG", 101),
    Code("DELETE_KV_CONFIG", 102),
    Code("REGISTER_BROKER", 103),
    Code("UNREGISTER_BROKER", 104),
    Code("GET_ROUTEINFO_BY_TOPIC", 105),
    Code("GET_BROKER_CLUSTER_INFO", 106),
    Code("UPDATE_AND_CREATE_SUBSCRIPTIONGROUP", 200),
    Code("GET_ALL_SUBSCRIPTIONGROUP_CONFIG", 201),
    Code("GET_TOPIC_STATS_INFO", 202),
    Code("GET_CONSUMER_CONNECTION_LIST", 203),
    Code("GET_PRODUCER_CONNECTION_LIST", 204),
    Code("WIPE_WRITE_PERM_OF_BROKER", 205),
    Code("GET_ALL_TOPIC_LIST_FROM_NAMESERVER", 206),
    Code("DELETE_SUBSCRIPTIONGROUP", 207),
    Code("GET_CONSUME_STATS", 208),
    Code("SUSPEND_CONSUMER", 209),
    Code("RESUME_CONSUMER", 210),
    Code("RESET_CONSUMER_OFFSET_IN_CONSUMER", 211),
    Code("RESET_CONSUMER_OFFSET_IN_BROKER", 212),
    Code("ADJUST_CONSUMER_THREAD_POOL", 213),
    Code("WHO_CONSUME_THE_MESSAGE", 214),
    Code("DELETE_TOPIC_IN_BROKER", 215),
    Code("DELETE_TOPIC_IN_NAMESRV", 216),
    Code("GET_KVLIST_BY_NAMESPACE", 219),
    Code("RESET_CONSUMER_CLIENT_OFFSET", 220),
    Code("GET_CONSUMER_STATUS_FROM_CLIENT", 221),
    Code("INVOKE_BROKER_TO_RESET_OFFSET", 222),
    Code("INVOKE_BROKER_TO_GET_CONSUMER_STATUS", 223),
    Code("QUERY_TOPIC_CONSUME_BY_WHO", 300),
    Code("GET_TOPICS_BY_CLUSTER", 224),
    Code("REGISTER_FILTER_SERVER", 301),
    Code("REGISTER_MESSAGE_FILTER_CLASS", 302),
    Code("QUERY_CONSUME_TIME_SPAN", 303),
    Code("GET_SYSTEM_TOPIC_LIST_FROM_NS", 304),
    Code("GET_SYSTEM_TOPIC_LIST_FROM_BROKER", 305),
    Code("CLEAN_EXPIRED_CONSUMEQUEUE", 306),
    Code("GET_CONSUMER_RUNNING_INFO", 307),
    Code("QUERY_CORRECTION_OFFSET", 308),
    Code("CONSUME_MESSAGE_DIRECTLY", 309),
    Code("SEND_MESSAGE_V2", 310),
    Code("GET_UNIT_TOPIC_LIST", 311),
    Code("GET_HAS_UNIT_SUB_TOPIC_LIST", 312),
    Code("GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST", 313),
    Code("CLONE_GROUP_OFFSET", 314),
    Code("VIEW_BROKER_STATS_DATA", 315),
    Code("CLEAN_UNUSED_TOPIC", 316),
    Code("GET_BROKER_CONSUME_STATS", 317),
    Code("UPDATE_NAMESRV_CONFIG", 318),
    Code("GET_NAMESRV_CONFIG", 319),
    Code("SEND_BATCH_MESSAGE", 320),
    Code("QUERY_CONSUME_QUEUE", 321),
    Code("QUERY_DATA_VERSION", 322),
    Code("RESUME_CHECK_HALF_MESSAGE", 323),
    Code("SEND_REPLY_MESSAGE", 324),
    Code("SEND_REPLY_MESSAGE_V2", 325),
    Code("PUSH_REPLY_MESSAGE_TO_CLIENT", 326),
    Code("ADD_WRITE_PERM_OF_BROKER", 327, since("4.9.2")),
    Code("GET_ALL_PRODUCER_INFO", 328, since("4.9.4")),
    Code("DELETE_EXPIRED_COMMITLOG", 329, since("4.9.4")),
    Code("GET_CLIENT_CONFIG", 47, since("5.0.0")),
    Code("GET_TIMER_CHECK_POINT", 60, since("5.0.0")),
    Code("GET_TIMER_METRICS", 61, since("5.0.0")),
    Code("REGISTER_TOPIC_IN_NAMESRV", 217, since("5.0.0")),
    Code("QUERY_TOPICS_BY_CONSUMER", 343, since("5.0.0")),
    Code("QUERY_SUBSCRIPTION_BY_CONSUMER", 345, since("5.0.0")),
    Code("GET_TOPIC_CONFIG", 351, since("5.0.0")),
    Code("GET_SUBSCRIPTIONGROUP_CONFIG", 352, since("5.0.0")),
    Code("UPDATE_AND_GET_GROUP_FORBIDDEN", 353, since("5.0.0")),
    Code("LITE_PULL_MESSAGE", 361, since("5.0.0")),
    Code("QUERY_ASSIGNMENT", 400, since("5.0.0")),
    Code("SET_MESSAGE_REQUEST_MODE", 401, since("5.0.0")),
    Code("GET_ALL_MESSAGE_REQUEST_MODE", 402, since("5.0.0")),
    Code("UPDATE_AND_CREATE_STATIC_TOPIC", 513, since("5.0.0")),
    Code("GET_BROKER_MEMBER_GROUP", 901, since("5.0.0")),
    Code("ADD_BROKER", 902, since("5.0.0")),
    Code("REMOVE_BROKER", 903, since("5.0.0")),
    Code("BROKER_HEARTBEAT", 904, since("5.0.0")),
    Code("NOTIFY_MIN_BROKER_ID_CHANGE", 905, since("5.0.0")),
    Code("EXCHANGE_BROKER_HA_INFO", 906, since("5.0.0")),
    Code("GET_BROKER_HA_STATUS", 907, since("5.0.0")),
    Code("RESET_MASTER_FLUSH_OFFSET", 908, since("5.0.0")),
    Code("CONTROLLER_ALTER_SYNC_STATE_SET", 1001, since("5.0.0")),
    Code("CONTROLLER_ELECT_MASTER", 1002, since("5.0.0")),
    Code("CONTROLLER_REGISTER_BROKER", 1003, since("5.0.0")),
    Code("CONTROLLER_GET_REPLICA_INFO", 1004, since("5.0.0")),
    Code("CONTROLLER_GET_METADATA_INFO", 1005, since("5.0.0")),
    Code("CONTROLLER_GET_SYNC_STATE_DATA", 1006, since("5.0.0")),
    Code("GET_BROKER_EPOCH_CACHE", 1007, since("5.0.0")),
    Code("NOTIFY_BROKER_ROLE_CHANGED", 1008, since("5.0.0")),
    Code("UPDATE_CONTROLLER_CONFIG", 1009, since("5.0.0")),
    Code("GET_CONTROLLER_CONFIG", 1010, since("5.0.0")),
    Code("CLEAN_BROKER_DATA", 1011, since("5.0.0")),
    Code("POP_MESSAGE", 200050, since("5.0.0")),
    Code("ACK_MESSAGE", 200051, since("5.0.0")),
    Code("PEEK_MESSAGE", 200052, since("5.0.0")),
    Code("CHANGE_MESSAGE_INVISIBLETIME", 200053, since("5.0.0")),
    Code("NOTIFICATION", 200054, since("5.0.0")),
    Code("POLLING_INFO", 200055, since("5.0.0")),
    Code("CONTROLLER_GET_NEXT_BROKER_ID", 1012, since("5.1.1")),
    Code("CONTROLLER_APPLY_BROKER_ID", 1013, since("5.1.1")),
    Code("UPDATE_COLD_DATA_FLOW_CTR_CONFIG", 2001, since("5.1.2")),
    Code("REMOVE_COLD_DATA_FLOW_CTR_CONFIG", 2002, since("5.1.2")),
    Code("GET_COLD_DATA_FLOW_CTR_INFO", 2003, since("5.1.2")),
    Code("SET_COMMITLOG_READ_MODE", 2004, since("5.1.2")),
    Code("BATCH_ACK_MESSAGE", 200151, since("5.1.3")),
    Code("UPDATE_AND_CREATE_TOPIC_LIST", 18, since("5.3.0")),
    Code("AUTH_CREATE_USER", 3001, since("5.3.0")),
    Code("AUTH_UPDATE_USER", 3002, since("5.3.0")),
    Code("AUTH_DELETE_USER", 3003, since("5.3.0")),
    Code("AUTH_GET_USER", 3004, since("5.3.0")),
    Code("AUTH_LIST_USER", 3005, since("5.3.0")),
    Code("AUTH_CREATE_ACL", 3006, since("5.3.0")),
    Code("AUTH_UPDATE_ACL", 3007, since("5.3.0")),
    Code("AUTH_DELETE_ACL", 3008, since("5.3.0")),
    Code("AUTH_GET_ACL", 3009, since("5.3.0")),
    Code("AUTH_LIST_ACL", 3010, since("5.3.0")),
    Code("UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST", 225, since("5.3.1")),
    Code("CHECK_ROCKSDB_CQ_WRITE_PROGRESS", 354, since("5.3.1")),
    Code("EXPORT_ROCKSDB_CONFIG_TO_JSON", 355, since("5.3.2")),
    Code("RECALL_MESSAGE", 370, since("5.3.2")),
    Code("POP_ROLLBACK", 200056, since("5.3.2")),
    Code("BROKER_CLOSE_CHANNEL_REQUEST", 1014, since("5.2.0")),
    Code("CHECK_NOT_ACTIVE_BROKER_REQUEST", 1015, since("5.2.0")),
    Code("GET_BROKER_LIVE_INFO_REQUEST", 1016, since("5.2.0")),
    Code("GET_SYNC_STATE_DATA_REQUEST", 1017, since("5.2.0")),
    Code("RAFT_BROKER_HEART_BEAT_EVENT_REQUEST", 1018, since("5.2.0")),
    Code("SWITCH_TIMER_ENGINE", 5001, since("5.4.0")),
    Code("POP_LITE_MESSAGE", 200070, since("5.5.0")),
    Code("LITE_SUBSCRIPTION_CTL", 200071, since("5.5.0")),
    Code("ACK_LITE_MESSAGE", 200072, since("5.5.0")),
    Code("NOTIFY_UNSUBSCRIBE_LITE", 200073, since("5.5.0")),
    Code("GET_BROKER_LITE_INFO", 200074, since("5.5.0")),
    Code("GET_PARENT_TOPIC_INFO", 200075, since("5.5.0")),
    Code("GET_LITE_TOPIC_INFO", 200076, since("5.5.0")),
    Code("GET_LITE_CLIENT_INFO", 200077, since("5.5.0")),
    Code("GET_LITE_GROUP_INFO", 200078, since("5.5.0")),
    Code("TRIGGER_LITE_DISPATCH", 200079, since("5.5.0")),
    Code("DELETE_TOPIC_IN_BROKER_LIST", 5002, since("5.5.1")),
    Code("DELETE_SUBSCRIPTION_GROUP_LIST", 5003, since("5.5.1")),
)
RESPONSE_CODES: tuple[Code, ...] = (
    # RemotingSysResponseCode, inherited by ResponseCode
    Code("SUCCESS", 0),
    Code("SYSTEM_ERROR", 1),
    Code("SYSTEM_BUSY", 2),
    Code("REQUEST_CODE_NOT_SUPPORTED", 3),
    Code("TRANSACTION_FAILED", 4),
    # ResponseCode
    Code("FLUSH_DISK_TIMEOUT", 10),
    Code("SLAVE_NOT_AVAILABLE", 11),
    Code("FLUSH_SLAVE_TIMEOUT", 12),
    Code("MESSAGE_ILLEGAL", 13),
    Code("SERVICE_NOT_AVAILABLE", 14),
    Code("VERSION_NOT_SUPPORTED", 15),
    Code("NO_PERMISSION", 16),
    Code("TOPIC_NOT_EXIST", 17),
    Code("TOPIC_EXIST_ALREADY", 18),
    Code("PULL_NOT_FOUND", 19),
    Code("PULL_RETRY_IMMEDIATELY", 20),
    Code("PULL_OFFSET_MOVED", 21),
    Code("QUERY_NOT_FOUND", 22),
    Code("SUBSCRIPTION_PARSE_FAILED", 23),
    Code("SUBSCRIPTION_NOT_EXIST", 24),
    Code("SUBSCRIPTION_NOT_LATEST", 25),
    Code("SUBSCRIPTION_GROUP_NOT_EXIST", 26),
    Code("FILTER_DATA_NOT_EXIST", 27),
    Code("FILTER_DATA_NOT_LATEST", 28),
    Code("TRANSACTION_SHOULD_COMMIT", 200),
    Code("TRANSACTION_SHOULD_ROLLBACK", 201),
    Code("TRANSACTION_STATE_UNKNOW", 202),
    Code("TRANSACTION_STATE_GROUP_WRONG", 203),
    Code("NO_BUYER_ID", 204),
    Code("NOT_IN_CURRENT_UNIT", 205),
    Code("CONSUMER_NOT_ONLINE", 206),
    Code("CONSUME_MSG_TIMEOUT", 207),
    Code("NO_MESSAGE", 208),
    Code("UPDATE_AND_CREATE_ACL_CONFIG_FAILED", 209, until("5.3.2")),
    Code("DELETE_ACL_CONFIG_FAILED", 210, until("5.3.2")),
    Code("UPDATE_GLOBAL_WHITE_ADDRS_CONFIG_FAILED", 211, until("5.3.2")),
    Code("FLOW_CONTROL", 215, since("4.9.5")),
    Code("RPC_TIME_OUT", -1006, since("5.0.0")),
    Code("RPC_SEND_TO_CHANNEL_FAILED", -1004, since("5.0.0")),
    Code("RPC_ADDR_IS_NULL", -1002, since("5.0.0")),
    Code("RPC_UNKNOWN", -1000, since("5.0.0")),
    Code("POLLING_FULL", 209, since("5.0.0")),
    Code("POLLING_TIMEOUT", 210, since("5.0.0")),
    Code("BROKER_NOT_EXIST", 211, since("5.0.0")),
    Code("BROKER_DISPATCH_NOT_COMPLETE", 212, since("5.0.0")),
    Code("BROADCAST_CONSUMPTION", 213, since("5.0.0")),
    Code("NOT_LEADER_FOR_QUEUE", 501, since("5.0.0")),
    Code("CONTROLLER_FENCED_MASTER_EPOCH", 2000, since("5.0.0")),
    Code("CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH", 2001, since("5.0.0")),
    Code("CONTROLLER_INVALID_MASTER", 2002, since("5.0.0")),
    Code("CONTROLLER_INVALID_REPLICAS", 2003, since("5.0.0")),
    Code("CONTROLLER_MASTER_NOT_AVAILABLE", 2004, since("5.0.0")),
    Code("CONTROLLER_INVALID_REQUEST", 2005, since("5.0.0")),
    Code("CONTROLLER_BROKER_NOT_ALIVE", 2006, since("5.0.0")),
    Code("CONTROLLER_NOT_LEADER", 2007, since("5.0.0")),
    Code("CONTROLLER_BROKER_METADATA_NOT_EXIST", 2008, since("5.0.0")),
    Code("CONTROLLER_INVALID_CLEAN_BROKER_METADATA", 2009, since("5.0.0")),
    Code("CONTROLLER_ALTER_SYNC_STATE_SET_FAILED", 2010, between("5.0.0", "5.1.0")),
    Code("CONTROLLER_ELECT_MASTER_FAILED", 2011, between("5.0.0", "5.1.0")),
    Code("CONTROLLER_REGISTER_BROKER_FAILED", 2012, between("5.0.0", "5.1.0")),
    Code("ILLEGAL_OPERATION", 604, since("5.1.1")),
    Code("CONTROLLER_BROKER_NEED_TO_BE_REGISTERED", 2010, since("5.1.1")),
    Code("CONTROLLER_MASTER_STILL_EXIST", 2011, since("5.1.1")),
    Code("CONTROLLER_ELECT_MASTER_FAILED", 2012, since("5.1.1")),
    Code("CONTROLLER_ALTER_SYNC_STATE_SET_FAILED", 2013, since("5.1.1")),
    Code("CONTROLLER_BROKER_ID_INVALID", 2014, since("5.1.1")),
    Code("GO_AWAY", 1500, since("5.2.0")),
    Code("CONTROLLER_JRAFT_INTERNAL_ERROR", 2015, since("5.2.0")),
    Code("CONTROLLER_BROKER_LIVE_INFO_NOT_EXISTS", 2016, since("5.2.0")),
    Code("USER_NOT_EXIST", 3001, since("5.3.0")),
    Code("POLICY_NOT_EXIST", 3002, since("5.3.0")),
    Code("INVALID_PARAMETER", 29, since("5.3.2")),
    Code("LMQ_QUOTA_EXCEEDED", 2017, since("5.5.0")),
    Code("LITE_SUBSCRIPTION_QUOTA_EXCEEDED", 2018, since("5.5.0")),
)


# RequestCode and ResponseCode: the tables above as enum classes (``rocketmq_spec.spec.enums``, written from
# them by ``python -m rocketmq_spec.spec.enum_source``), so that a type checker sees every member.

_REQUEST_BY_VALUE: dict[int, tuple[Code, ...]] = {}
_RESPONSE_BY_VALUE: dict[int, tuple[Code, ...]] = {}
for _table, _index in ((REQUEST_CODES, _REQUEST_BY_VALUE), (RESPONSE_CODES, _RESPONSE_BY_VALUE)):
    for _code in _table:
        _index[_code.value] = (*_index.get(_code.value, ()), _code)


@dataclass(frozen=True)
class Meaning:
    """Which name a response code has when it answers a given request, where a release declares two."""

    value: int
    name: str
    answers: str
    """The requests (comma-separated RequestCode names) whose answers use this name."""


_POP_FAMILY = "POP_MESSAGE, PEEK_MESSAGE, NOTIFICATION, POLLING_INFO, POP_LITE_MESSAGE"
COLLISION_MEANINGS: tuple[Meaning, ...] = (
    Meaning(209, "POLLING_FULL", _POP_FAMILY),
    Meaning(210, "POLLING_TIMEOUT", _POP_FAMILY),
    Meaning(211, "BROKER_NOT_EXIST", "requests a proxy or a broker relays to another broker"),
    Meaning(209, "UPDATE_AND_CREATE_ACL_CONFIG_FAILED", "UPDATE_AND_CREATE_ACL_CONFIG"),
    Meaning(210, "DELETE_ACL_CONFIG_FAILED", "DELETE_ACL_CONFIG"),
    Meaning(211, "UPDATE_GLOBAL_WHITE_ADDRS_CONFIG_FAILED", "UPDATE_GLOBAL_WHITE_ADDRS_CONFIG"),
)
"""209-211 in 5.0.0-5.3.2, which declare both meanings: the request answered decides. From 5.3.3 only the
POP meanings are declared, up to 4.9.8 only the ACL ones (``RESPONSE_CODES`` says which release has
which)."""


def codes_for(value: int, *, is_response: bool) -> tuple[Code, ...]:
    """Every table entry with this value (two for the 209-211 response collision, none when unknown)."""
    return (_RESPONSE_BY_VALUE if is_response else _REQUEST_BY_VALUE).get(value, ())


def code_name(value: int, *, is_response: bool, release: str = LEGACY,
              request: int | None = None) -> str | None:
    """The name a peer of ``release`` gives the code, or None when that release does not declare it.

    Where the release declares two names for a response code (209-211 in 5.0.0-5.3.2), the request it
    answers picks one (``COLLISION_MEANINGS``); without the request the older (ACL) name is returned, as
    Java's own value lookups would.
    """
    present = [code for code in codes_for(value, is_response=is_response) if code.present_in(release)]
    if len(present) > 1 and request is not None:
        request_name = next((c.name for c in codes_for(request, is_response=False) if c.present_in(release)),
                            None)
        for code in present:
            meaning = next((m for m in COLLISION_MEANINGS if m.name == code.name), None)
            if meaning is not None and request_name in meaning.answers.split(", "):
                return code.name
    return present[0].name if present else None


def request_codes_of(release: str) -> frozenset[int]:
    """The request codes ``release`` declares: what a broker of that release can be asked."""
    return frozenset(code.value for code in REQUEST_CODES if code.present_in(release))


def release_ordinal(release: str) -> int:
    """The ``version`` word of ``release`` (re-exported so code tables and their callers agree)."""
    return ordinal(release)


CODE_REQUEST_TABLE = clause(
    "RMQ-CODE-REQUEST", Level.MUST,
    "A request's code is one of the RequestCode values of the receiver's release.",
    source=_REQUEST_SOURCE)
CODE_RESPONSE_TABLE = clause(
    "RMQ-CODE-RESPONSE", Level.MUST,
    "A response's code is a ResponseCode value; 0-4 are the RemotingSysResponseCode values shared by all.",
    source=_RESPONSE_SOURCE)
CODE_UNSUPPORTED = clause(
    "RMQ-CODE-NOT-SUPPORTED", Level.MUST,
    "A broker answers a request code it has no processor for with 3 REQUEST_CODE_NOT_SUPPORTED and the "
    "remark \" request type <code> not supported\", even for oneway requests.",
    source="remoting/src/main/java/org/apache/rocketmq/remoting/netty/NettyRemotingAbstract.java")
CODE_NAMESRV_SILENT = clause(
    "RMQ-CODE-NAMESRV-UNKNOWN", Level.MAY,
    "A 4.9.8 name server sends no response to a request code it does not know (5.x answers 3).",
    source="namesrv/src/main/java/org/apache/rocketmq/namesrv/processor/DefaultRequestProcessor.java")
CODE_RESPONSE_COLLISION = clause(
    "RMQ-CODE-RESPONSE-COLLISION", Level.MUST,
    "Response codes 209-211 mean the ACL admin failures in 4.9.8 and POLLING_FULL, POLLING_TIMEOUT, "
    "BROKER_NOT_EXIST in 5.x POP calls; a decoder names them by the request they answer.",
    source=_RESPONSE_SOURCE)
CODE_INT16 = clause(
    "RMQ-CODE-INT16", Level.MUST,
    "Codes above 32767 (the 5.x POP codes 200050...) are only carried by JSON headers: the ROCKETMQ "
    "header stores the code in 16 bits.",
    source="remoting/src/main/java/org/apache/rocketmq/remoting/protocol/RocketMQSerializable.java")
