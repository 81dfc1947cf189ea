"""Custom headers of the core commands: the typed fields a command carries in extFields.

On the wire every value is a string in the extFields map; these tables say which keys a command uses,
the Java type each string stands for and whether the receiver insists on it (``@CFNotNull``). A response's
header is chosen by the request it answers, so the registry is keyed by request code for both directions.
Keys not in a table (ACL's AccessKey/Signature, MSG_REGION, TRACE_ON, _UNIQUE_KEY_QUERY ...) share the map
and are ignored by header decoding.
"""

from __future__ import annotations

from dataclasses import replace

from rocketmq_spec.spec.admin_headers import ADMIN_REQUEST_HEADERS, ADMIN_RESPONSE_HEADERS
from rocketmq_spec.spec.auth import AUTH_REQUEST_HEADERS
from rocketmq_spec.spec.clauses import Level, clause
from rocketmq_spec.spec.codes import RequestCode
from rocketmq_spec.spec.header_fields import BNAME, INT, TOPIC_RPC_FIELDS_5X, B, Field, HeaderSpec, L, S
from rocketmq_spec.spec.header_fields import FieldType as FieldType
from rocketmq_spec.spec.pop import POP_REQUEST_HEADERS, POP_RESPONSE_HEADERS
from rocketmq_spec.spec.releases import since
from rocketmq_spec.spec.timer import TIMER_REQUEST_HEADERS, TIMER_RESPONSE_HEADERS

_HEADER_DIR = "common/src/main/java/org/apache/rocketmq/common/protocol/header/"


_BNAME = BNAME

SEND_MESSAGE_REQUEST = HeaderSpec("SendMessageRequestHeader", (
    Field("producerGroup", S, True, "producer group"),
    Field("topic", S, True, "destination topic"),
    Field("defaultTopic", S, True, "template topic for auto-creation, TBW102"),
    Field("defaultTopicQueueNums", INT, True, "queues of an auto-created topic"),
    Field("queueId", INT, True, "destination queue; negative lets the broker choose"),
    Field("sysFlag", INT, True, "MessageSysFlag bits"),
    Field("bornTimestamp", L, True, "client send time, ms"),
    Field("flag", INT, True, "user flag stored with the message"),
    Field("properties", S, False, "message properties string"),
    Field("reconsumeTimes", INT, False, "times the message was consumed and sent back"),
    Field("unitMode", B, False, "unit mode (default false)"),
    Field("batch", B, False, "body is a batch of messages (default false)"),
    Field("maxReconsumeTimes", INT, False, "retry limit of the consumer group"),
    _BNAME,
    *TOPIC_RPC_FIELDS_5X,
))

SEND_MESSAGE_REQUEST_V2 = HeaderSpec("SendMessageRequestHeaderV2", (
    *(replace(SEND_MESSAGE_REQUEST.by_wire_name()[long], name=short, long_name=long)
      for short, long in zip("abcdefghijklmn", (
          "producerGroup", "topic", "defaultTopic", "defaultTopicQueueNums", "queueId", "sysFlag",
          "bornTimestamp", "flag", "properties", "reconsumeTimes", "unitMode", "maxReconsumeTimes", "batch",
          "bname"), strict=True)),
    *TOPIC_RPC_FIELDS_5X))
"""The same fields under one-letter keys a..n, to shrink the hottest request (the 5.x RpcRequestHeader
fields keep their own names)."""

SEND_MESSAGE_RESPONSE = HeaderSpec("SendMessageResponseHeader", (
    Field("msgId", S, True, "offsetMsgId of the stored message; comma-separated for a batch"),
    Field("queueId", INT, True, "queue the message went to"),
    Field("queueOffset", L, True, "consume-queue offset (of the first message of a batch)"),
    Field("transactionId", S, False, "transaction id of a half message"),
    Field("batchUniqId", S, False, "UNIQ_KEYs of a batch's messages, comma-separated",
          releases=since("5.0.0")),
    Field("recallHandle", S, False, "handle RECALL_MESSAGE takes to cancel a timer message",
          releases=since("5.3.2")),
))

PULL_MESSAGE_REQUEST = HeaderSpec("PullMessageRequestHeader", (
    Field("consumerGroup", S, True, "consumer group"),
    Field("topic", S, True, "topic"),
    Field("queueId", INT, True, "queue"),
    Field("queueOffset", L, True, "first logical offset wanted"),
    Field("maxMsgNums", INT, True, "most messages to return"),
    Field("sysFlag", INT, True, "PullSysFlag bits"),
    Field("commitOffset", L, True, "consumer offset to commit when the commit flag is set"),
    Field("suspendTimeoutMillis", L, True, "long-poll hold time, ms"),
    Field("subscription", S, False, "tag expression or SQL92 text"),
    Field("subVersion", L, True, "subscription version (client ms timestamp)"),
    Field("expressionType", S, False, "TAG or SQL92"),
    _BNAME,
    *TOPIC_RPC_FIELDS_5X,
))

PULL_MESSAGE_RESPONSE = HeaderSpec("PullMessageResponseHeader", (
    Field("suggestWhichBrokerId", L, True, "broker id to pull from next; 0 is the master"),
    Field("nextBeginOffset", L, True, "offset to pull from next"),
    Field("minOffset", L, True, "queue's smallest offset"),
    Field("maxOffset", L, True, "queue's next offset to be written"),
    Field("offsetDelta", L, False, "static topics: logical minus physical offset", releases=since("5.0.0")),
    Field("topicSysFlag", INT, False, "TopicSysFlag of the topic", releases=since("5.0.0")),
    Field("groupSysFlag", INT, False, "sysFlag of the subscription group", releases=since("5.0.0")),
    Field("forbiddenType", INT, False, "why the pull is forbidden, when it is (spec.sysflag.ForbiddenType)",
          releases=since("5.0.0")),
))

_GROUP_TOPIC_QUEUE = (Field("consumerGroup", S, True, "consumer group"), Field("topic", S, True, "topic"),
                      Field("queueId", INT, True, "queue"))
_TOPIC_QUEUE = (Field("topic", S, True, "topic"), Field("queueId", INT, True, "queue"))
_OFFSET_RESPONSE = HeaderSpec("OffsetResponseHeader", (Field("offset", L, True, "the offset asked for"),))
_EMPTY_RESPONSE = HeaderSpec("EmptyResponseHeader", ())
_BROKER_IDENTITY = (
    Field("brokerName", S, True, "broker name"),
    Field("brokerAddr", S, True, "ip:listenPort"),
    Field("clusterName", S, True, "cluster"),
)
_KV_KEY = (Field("namespace", S, True, "KV namespace"), Field("key", S, True, "key"))

QUERY_CONSUMER_OFFSET_REQUEST = HeaderSpec("QueryConsumerOffsetRequestHeader", (*_GROUP_TOPIC_QUEUE, _BNAME))
UPDATE_CONSUMER_OFFSET_REQUEST = HeaderSpec("UpdateConsumerOffsetRequestHeader", (
    *_GROUP_TOPIC_QUEUE, Field("commitOffset", L, True, "offset to store"), _BNAME))
GET_MAX_OFFSET_REQUEST = HeaderSpec("GetMaxOffsetRequestHeader", _TOPIC_QUEUE)
GET_MIN_OFFSET_REQUEST = HeaderSpec("GetMinOffsetRequestHeader", _TOPIC_QUEUE)
SEARCH_OFFSET_REQUEST = HeaderSpec("SearchOffsetRequestHeader", (
    *_TOPIC_QUEUE, Field("timestamp", L, True, "store time to search for, ms")))
GET_EARLIEST_MSG_STORETIME_REQUEST = HeaderSpec("GetEarliestMsgStoretimeRequestHeader", _TOPIC_QUEUE)
GET_EARLIEST_MSG_STORETIME_RESPONSE = HeaderSpec("GetEarliestMsgStoretimeResponseHeader", (
    Field("timestamp", L, True, "store time of the queue's first message, -1 if unavailable"),))
GET_CONSUMER_LIST_BY_GROUP_REQUEST = HeaderSpec("GetConsumerListByGroupRequestHeader", (
    Field("consumerGroup", S, True, "consumer group"),))
UNREGISTER_CLIENT_REQUEST = HeaderSpec("UnregisterClientRequestHeader", (
    Field("clientID", S, True, "client id"),
    Field("producerGroup", S, False, "producer group to leave"),
    Field("consumerGroup", S, False, "consumer group to leave"),
))
CONSUMER_SEND_MSG_BACK_REQUEST = HeaderSpec("ConsumerSendMsgBackRequestHeader", (
    Field("offset", L, True, "commitlog offset of the consumed message"),
    Field("group", S, True, "consumer group"),
    Field("delayLevel", INT, True, "0 lets the broker decide, negative goes straight to the DLQ"),
    Field("originMsgId", S, False, "message id of the original message"),
    Field("originTopic", S, False, "topic of the original message"),
    Field("unitMode", B, False, "unit mode (default false)"),
    Field("maxReconsumeTimes", INT, False, "retry limit of the consumer group"),
))
END_TRANSACTION_REQUEST = HeaderSpec("EndTransactionRequestHeader", (
    Field("producerGroup", S, True, "producer group"),
    Field("tranStateTableOffset", L, True, "queue offset of the half message"),
    Field("commitLogOffset", L, True, "commitlog offset of the half message"),
    Field("commitOrRollback", INT, True, "0 unknown, 8 commit, 12 rollback (MessageSysFlag values)"),
    Field("fromTransactionCheck", B, False, "answer to a CHECK_TRANSACTION_STATE (default false)"),
    Field("msgId", S, True, "UNIQ_KEY of the half message"),
    Field("transactionId", S, False, "transaction id"),
    _BNAME,
))
CHECK_TRANSACTION_STATE_REQUEST = HeaderSpec("CheckTransactionStateRequestHeader", (
    Field("tranStateTableOffset", L, True, "queue offset of the half message"),
    Field("commitLogOffset", L, True, "commitlog offset of the half message"),
    Field("msgId", S, False, "UNIQ_KEY of the half message"),
    Field("transactionId", S, False, "transaction id"),
    Field("offsetMsgId", S, False, "offsetMsgId of the half message"),
))
QUERY_MESSAGE_REQUEST = HeaderSpec("QueryMessageRequestHeader", (
    Field("topic", S, True, "topic"),
    Field("key", S, True, "message key (or UNIQ_KEY when _UNIQUE_KEY_QUERY is true)"),
    Field("maxNum", INT, True, "most messages to return"),
    Field("beginTimestamp", L, True, "start of the store-time range, ms"),
    Field("endTimestamp", L, True, "end of the store-time range, ms"),
    Field("indexType", S, False, "T: key is a TAGS string; K (the default) or U: a key or UNIQ_KEY",
          releases=since("5.4.0")),
    Field("lastKey", S, False, "where a paged query of the RocksDB index resumes", releases=since("5.4.0")),
))
QUERY_MESSAGE_RESPONSE = HeaderSpec("QueryMessageResponseHeader", (
    Field("indexLastUpdateTimestamp", L, True, "last index update time, ms"),
    Field("indexLastUpdatePhyoffset", L, True, "commitlog offset of the last indexed message"),
))
VIEW_MESSAGE_REQUEST = HeaderSpec("ViewMessageRequestHeader", (
    Field("offset", L, True, "commitlog physical offset"),))
CREATE_TOPIC_REQUEST = HeaderSpec("CreateTopicRequestHeader", (
    Field("topic", S, True, "topic"),
    Field("defaultTopic", S, True, "template topic"),
    Field("readQueueNums", INT, True, "read queues"),
    Field("writeQueueNums", INT, True, "write queues"),
    Field("perm", INT, True, "PermName bits"),
    Field("topicFilterType", S, True, "SINGLE_TAG or MULTI_TAG"),
    Field("topicSysFlag", INT, False, "TopicSysFlag bits"),
    Field("order", B, True, "ordered topic (default false)"),
    Field("attributes", S, False, "topic attributes to set (+key=value) or remove (-key), comma separated",
          releases=since("5.0.0")),
))
GET_ROUTE_INFO_REQUEST = HeaderSpec("GetRouteInfoRequestHeader", (
    Field("topic", S, True, "topic"),
    Field("acceptStandardJsonOnly", B, False, "ask for quoted map keys in the route data"),
))
REGISTER_BROKER_REQUEST = HeaderSpec("RegisterBrokerRequestHeader", (
    *_BROKER_IDENTITY,
    Field("haServerAddr", S, True, "ip:haListenPort"),
    Field("brokerId", L, True, "0 for the master"),
    Field("compressed", B, False, "body is the compressed form (default false)"),
    Field("bodyCrc32", INT, False, "masked CRC32 of the body; 0 skips the check"),
))
REGISTER_BROKER_RESPONSE = HeaderSpec("RegisterBrokerResponseHeader", (
    Field("haServerAddr", S, False, "master's HA address, for slaves"),
    Field("masterAddr", S, False, "master's address, for slaves"),
))
UNREGISTER_BROKER_REQUEST = HeaderSpec("UnRegisterBrokerRequestHeader", (
    *_BROKER_IDENTITY, Field("brokerId", L, True, "0 for the master")))
QUERY_DATA_VERSION_REQUEST = HeaderSpec("QueryDataVersionRequestHeader", (
    *_BROKER_IDENTITY, Field("brokerId", L, True, "0 for the master")))
QUERY_DATA_VERSION_RESPONSE = HeaderSpec("QueryDataVersionResponseHeader", (
    Field("changed", B, True, "the name server's data version differs from the broker's"),))
PUT_KV_CONFIG_REQUEST = HeaderSpec("PutKVConfigRequestHeader", (*_KV_KEY, Field("value", S, True, "value")))
GET_KV_CONFIG_REQUEST = HeaderSpec("GetKVConfigRequestHeader", _KV_KEY)
GET_KV_CONFIG_RESPONSE = HeaderSpec("GetKVConfigResponseHeader", (Field("value", S, False, "value"),))
DELETE_KV_CONFIG_REQUEST = HeaderSpec("DeleteKVConfigRequestHeader", _KV_KEY)
GET_KV_LIST_BY_NAMESPACE_REQUEST = HeaderSpec("GetKVListByNamespaceRequestHeader", (
    Field("namespace", S, True, "KV namespace"),))
DELETE_TOPIC_REQUEST = HeaderSpec("DeleteTopicRequestHeader", (Field("topic", S, True, "topic"),))
DELETE_TOPIC_IN_NAMESRV_REQUEST = HeaderSpec("DeleteTopicFromNamesrvRequestHeader", (
    Field("topic", S, True, "topic"), Field("clusterName", S, False, "cluster")))
WIPE_WRITE_PERM_REQUEST = HeaderSpec("WipeWritePermOfBrokerRequestHeader", (
    Field("brokerName", S, True, "broker name"),))
WIPE_WRITE_PERM_RESPONSE = HeaderSpec("WipeWritePermOfBrokerResponseHeader", (
    Field("wipeTopicCount", INT, True, "topics whose write permission was removed"),))

CREATE_ACCESS_CONFIG_REQUEST = HeaderSpec("CreateAccessConfigRequestHeader", (
    Field("accessKey", S, True, "account to create or replace"),
    Field("secretKey", S, False, "its secret (> 6 characters)"),
    Field("whiteRemoteAddress", S, False, "address pattern let in unsigned"),
    Field("admin", B, False, "admin account (primitive boolean: absent is false)"),
    Field("defaultTopicPerm", S, False, "DENY, PUB, SUB or PUB|SUB"),
    Field("defaultGroupPerm", S, False, "DENY, PUB, SUB or PUB|SUB"),
    Field("topicPerms", S, False, "comma-separated topic=PERM"),
    Field("groupPerms", S, False, "comma-separated group=PERM"),
))
DELETE_ACCESS_CONFIG_REQUEST = HeaderSpec("DeleteAccessConfigRequestHeader", (
    Field("accessKey", S, True, "account to remove"),))
UPDATE_GLOBAL_WHITE_ADDRS_REQUEST = HeaderSpec("UpdateGlobalWhiteAddrsConfigRequestHeader", (
    Field("globalWhiteAddrs", S, True, "comma-separated address patterns"),
    Field("aclFileFullPath", S, False, "ACL file to rewrite; empty or absent means the default file "
          "(@CFNotNull in Java, yet a 4.9.8 broker serves a request without it)"),
))
GET_BROKER_ACL_CONFIG_RESPONSE = HeaderSpec("GetBrokerAclConfigResponseHeader", (
    Field("version", S, True, "DataVersion JSON of the default ACL file"),
    Field("allAclFileVersion", S, False, "JSON map: ACL file path -> DataVersion"),
    Field("brokerName", S, True, "broker name"),
    Field("brokerAddr", S, True, "ip:port"),
    Field("clusterName", S, True, "cluster name"),
))

_C = RequestCode
_REQUEST_HEADERS: dict[int, HeaderSpec] = {
    _C.SEND_MESSAGE: SEND_MESSAGE_REQUEST,
    _C.SEND_MESSAGE_V2: SEND_MESSAGE_REQUEST_V2,
    _C.SEND_BATCH_MESSAGE: SEND_MESSAGE_REQUEST_V2,
    _C.SEND_REPLY_MESSAGE: SEND_MESSAGE_REQUEST,
    _C.SEND_REPLY_MESSAGE_V2: SEND_MESSAGE_REQUEST_V2,
    _C.PULL_MESSAGE: PULL_MESSAGE_REQUEST,
    _C.LITE_PULL_MESSAGE: PULL_MESSAGE_REQUEST,
    _C.QUERY_CONSUMER_OFFSET: QUERY_CONSUMER_OFFSET_REQUEST,
    _C.UPDATE_CONSUMER_OFFSET: UPDATE_CONSUMER_OFFSET_REQUEST,
    _C.GET_MAX_OFFSET: GET_MAX_OFFSET_REQUEST,
    _C.GET_MIN_OFFSET: GET_MIN_OFFSET_REQUEST,
    _C.SEARCH_OFFSET_BY_TIMESTAMP: SEARCH_OFFSET_REQUEST,
    _C.GET_EARLIEST_MSG_STORETIME: GET_EARLIEST_MSG_STORETIME_REQUEST,
    _C.GET_CONSUMER_LIST_BY_GROUP: GET_CONSUMER_LIST_BY_GROUP_REQUEST,
    _C.UNREGISTER_CLIENT: UNREGISTER_CLIENT_REQUEST,
    _C.CONSUMER_SEND_MSG_BACK: CONSUMER_SEND_MSG_BACK_REQUEST,
    _C.END_TRANSACTION: END_TRANSACTION_REQUEST,
    _C.CHECK_TRANSACTION_STATE: CHECK_TRANSACTION_STATE_REQUEST,
    _C.QUERY_MESSAGE: QUERY_MESSAGE_REQUEST,
    _C.VIEW_MESSAGE_BY_ID: VIEW_MESSAGE_REQUEST,
    _C.UPDATE_AND_CREATE_TOPIC: CREATE_TOPIC_REQUEST,
    _C.GET_ROUTEINFO_BY_TOPIC: GET_ROUTE_INFO_REQUEST,
    _C.REGISTER_BROKER: REGISTER_BROKER_REQUEST,
    _C.UNREGISTER_BROKER: UNREGISTER_BROKER_REQUEST,
    _C.QUERY_DATA_VERSION: QUERY_DATA_VERSION_REQUEST,
    _C.PUT_KV_CONFIG: PUT_KV_CONFIG_REQUEST,
    _C.GET_KV_CONFIG: GET_KV_CONFIG_REQUEST,
    _C.DELETE_KV_CONFIG: DELETE_KV_CONFIG_REQUEST,
    _C.GET_KVLIST_BY_NAMESPACE: GET_KV_LIST_BY_NAMESPACE_REQUEST,
    _C.DELETE_TOPIC_IN_BROKER: DELETE_TOPIC_REQUEST,
    _C.DELETE_TOPIC_IN_NAMESRV: DELETE_TOPIC_IN_NAMESRV_REQUEST,
    _C.WIPE_WRITE_PERM_OF_BROKER: WIPE_WRITE_PERM_REQUEST,
    _C.UPDATE_AND_CREATE_ACL_CONFIG: CREATE_ACCESS_CONFIG_REQUEST,
    _C.DELETE_ACL_CONFIG: DELETE_ACCESS_CONFIG_REQUEST,
    _C.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG: UPDATE_GLOBAL_WHITE_ADDRS_REQUEST,
    **ADMIN_REQUEST_HEADERS,
    **POP_REQUEST_HEADERS,
    **TIMER_REQUEST_HEADERS,
    **AUTH_REQUEST_HEADERS,
}
_RESPONSE_HEADERS: dict[int, HeaderSpec] = {
    _C.SEND_MESSAGE: SEND_MESSAGE_RESPONSE,
    _C.SEND_MESSAGE_V2: SEND_MESSAGE_RESPONSE,
    _C.SEND_BATCH_MESSAGE: SEND_MESSAGE_RESPONSE,
    _C.SEND_REPLY_MESSAGE: SEND_MESSAGE_RESPONSE,
    _C.SEND_REPLY_MESSAGE_V2: SEND_MESSAGE_RESPONSE,
    _C.PULL_MESSAGE: PULL_MESSAGE_RESPONSE,
    _C.LITE_PULL_MESSAGE: PULL_MESSAGE_RESPONSE,
    _C.QUERY_CONSUMER_OFFSET: _OFFSET_RESPONSE,
    _C.UPDATE_CONSUMER_OFFSET: _EMPTY_RESPONSE,
    _C.GET_MAX_OFFSET: _OFFSET_RESPONSE,
    _C.GET_MIN_OFFSET: _OFFSET_RESPONSE,
    _C.SEARCH_OFFSET_BY_TIMESTAMP: _OFFSET_RESPONSE,
    _C.GET_EARLIEST_MSG_STORETIME: GET_EARLIEST_MSG_STORETIME_RESPONSE,
    _C.GET_CONSUMER_LIST_BY_GROUP: _EMPTY_RESPONSE,
    _C.UNREGISTER_CLIENT: _EMPTY_RESPONSE,
    _C.END_TRANSACTION: _EMPTY_RESPONSE,
    _C.QUERY_MESSAGE: QUERY_MESSAGE_RESPONSE,
    _C.VIEW_MESSAGE_BY_ID: _EMPTY_RESPONSE,
    _C.REGISTER_BROKER: REGISTER_BROKER_RESPONSE,
    _C.QUERY_DATA_VERSION: QUERY_DATA_VERSION_RESPONSE,
    _C.GET_KV_CONFIG: GET_KV_CONFIG_RESPONSE,
    _C.WIPE_WRITE_PERM_OF_BROKER: WIPE_WRITE_PERM_RESPONSE,
    _C.GET_BROKER_CLUSTER_ACL_INFO: GET_BROKER_ACL_CONFIG_RESPONSE,
    **ADMIN_RESPONSE_HEADERS,
    **POP_RESPONSE_HEADERS,
    **TIMER_RESPONSE_HEADERS,
}


def header_for(code: int, is_response: bool) -> HeaderSpec | None:
    """The custom header of a request code, or of the response to it (keyed by the request's code)."""
    return (_RESPONSE_HEADERS if is_response else _REQUEST_HEADERS).get(code)


CMD_EXT_STRINGS = clause(
    "RMQ-CMD-EXT-STRINGS", Level.MUST,
    "Custom header fields travel as extFields strings: decimal integers, \"true\"/\"false\" booleans; "
    "null fields are left out.",
    source="remoting/src/main/java/org/apache/rocketmq/remoting/protocol/RemotingCommand.java")
CMD_REQUIRED = clause(
    "RMQ-CMD-REQUIRED", Level.MUST,
    "A request lacking a @CFNotNull field of its header is rejected (Java 4.9.8 rejects it only in the "
    "FastCodesHeader decoders of pull and SEND_MESSAGE_V2; its reflective decoder logs the missing field "
    "and goes on).",
    source=_HEADER_DIR)
_MISSING_FIELD_FRAME = ("org.apache.rocketmq.remoting.protocol.RemotingCommand.decodeCommandCustomHeader"
                        "(RemotingCommand.java:281)")


def missing_field_remark(name: str) -> str:
    """The SYSTEM_ERROR remark of a request lacking ``name`` (4.9.8's exceptionSimpleDesc of the
    RemotingCommandException thrown by the reflective decoder; the few FastCodesHeader classes only log
    and fail later on the null)."""
    return (f"org.apache.rocketmq.remoting.exception.RemotingCommandException: the custom field <{name}> is "
            f"null, {_MISSING_FIELD_FRAME}")


CMD_EXTRA_KEYS = clause(
    "RMQ-CMD-EXTRA-KEYS", Level.MUST,
    "extFields keys that are not fields of the command's header are ignored.",
    source="remoting/src/main/java/org/apache/rocketmq/remoting/protocol/RemotingCommand.java")
CMD_BOOLEAN = clause(
    "RMQ-CMD-BOOLEAN", Level.MUST,
    "A Boolean field is true only for the string \"true\" (any case); receivers also meet \"1\" and "
    "\"0\" from non-Java clients.",
    source="remoting/src/main/java/org/apache/rocketmq/remoting/protocol/RemotingCommand.java")
CMD_SEND_V2_KEYS = clause(
    "RMQ-CMD-SEND-V2-KEYS", Level.MUST,
    "SEND_MESSAGE_V2, SEND_BATCH_MESSAGE and SEND_REPLY_MESSAGE_V2 carry the SendMessageRequestHeader "
    "fields under the keys a..n, in declaration order (n = bname, 4.9.5+).",
    source=_HEADER_DIR + "SendMessageRequestHeaderV2.java")
