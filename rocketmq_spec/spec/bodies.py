"""JSON bodies of the core commands, as the bean field tables fastjson serializes.

fastjson writes a bean's properties in alphabetical order and skips nulls, so each table below is in that
order and a byte-exact encoder walks it; maps (HashMap) keep the order they were given. Map keys that are
Java Longs or Integers (``brokerAddrs``) are written unquoted (``{0:"…"}``), which strict JSON readers
reject. The compressed REGISTER_BROKER body is binary and has its own schema here.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from construct import Int32sb, PascalString, PrefixedArray, Struct

from rocketmq_spec.spec.clauses import Level, clause

_BODY_DIR = "common/src/main/java/org/apache/rocketmq/common/protocol/body/"
_ROUTE_DIR = "common/src/main/java/org/apache/rocketmq/common/protocol/route/"


class Json(enum.Enum):
    STRING = "string"
    NUMBER = "number"
    BOOLEAN = "boolean"
    ARRAY = "array"
    OBJECT = "object"


@dataclass(frozen=True)
class BodyField:
    key: str
    kind: Json
    doc: str
    bean: BodySpec | None = None
    """The table of a nested bean, of each element of an array, or of each value of a map."""
    is_map: bool = False
    """An object that is a map (keys kept in the order given) rather than a bean."""
    constants: tuple[str, ...] = ()
    """For a Java enum field, its constants in ordinal order: fastjson writes the name but also reads the
    ordinal, which is what the C++ clients send."""
    key_bean: BodySpec | None = None
    """For a map whose keys are beans (a MessageQueue): fastjson writes each key as a JSON object,
    ``{{"brokerName":"b","queueId":0,"topic":"t"}:{...}}``, which no strict JSON reader accepts."""
    required: bool = False
    """The receiver cannot do without it: Java dereferences it (a null key of a ConcurrentHashMap, a
    method call), so a body without it ends in SYSTEM_ERROR; a reader rejects it up front instead."""
    default: object = None
    """For a Java primitive (or initialised) field, the value the bean keeps when the key is absent or
    null, which is what a reader takes then."""


@dataclass(frozen=True)
class BodySpec:
    java_class: str
    fields: tuple[BodyField, ...]


_S, _N, _B, _A, _O = Json.STRING, Json.NUMBER, Json.BOOLEAN, Json.ARRAY, Json.OBJECT

DATA_VERSION = BodySpec("DataVersion", (
    BodyField("counter", _N, "incremented on every change", default=0),
    BodyField("timestamp", _N, "time of the last change, ms", default=0),
))
TOPIC_CONFIG = BodySpec("TopicConfig", (
    BodyField("attributes", _O, "5.x topic attributes, name → value (spec.topic_attributes)", is_map=True),
    BodyField("order", _B, "ordered topic", default=False),
    BodyField("perm", _N, "PermName bits (6 = read+write)", default=6),
    BodyField("readQueueNums", _N, "read queues", default=16),
    BodyField("topicFilterType", _S, "SINGLE_TAG or MULTI_TAG", default="SINGLE_TAG"),
    BodyField("topicName", _S, "topic", required=True),
    BodyField("topicSysFlag", _N, "TopicSysFlag bits", default=0),
    BodyField("writeQueueNums", _N, "write queues", default=16),
))
TOPIC_CONFIG_WRAPPER = BodySpec("TopicConfigSerializeWrapper", (
    BodyField("dataVersion", _O, "version of the topic table", DATA_VERSION),
    BodyField("topicConfigTable", _O, "topic name → TopicConfig", TOPIC_CONFIG, is_map=True),
))
REGISTER_BROKER_BODY = BodySpec("RegisterBrokerBody", (
    BodyField("filterServerList", _A, "filter server addresses"),
    BodyField("topicConfigSerializeWrapper", _O, "the broker's topics", TOPIC_CONFIG_WRAPPER),
))
QUEUE_DATA = BodySpec("QueueData", (
    BodyField("brokerName", _S, "broker holding the queues"),
    BodyField("perm", _N, "PermName bits"),
    BodyField("readQueueNums", _N, "read queues"),
    BodyField("topicSysFlag", _N, "TopicSysFlag bits"),
    BodyField("writeQueueNums", _N, "write queues"),
))
BROKER_DATA = BodySpec("BrokerData", (
    BodyField("brokerAddrs", _O, "broker id (unquoted Long key; 0 = master) → ip:port", is_map=True),
    BodyField("brokerName", _S, "broker name"),
    BodyField("cluster", _S, "cluster name"),
))
TOPIC_ROUTE_DATA = BodySpec("TopicRouteData", (
    BodyField("brokerDatas", _A, "brokers serving the topic", BROKER_DATA),
    BodyField("filterServerTable", _O, "broker address → filter server addresses", is_map=True),
    BodyField("orderTopicConf", _S, "brokerName:queues;… for ordered topics"),
    BodyField("queueDatas", _A, "queues per broker", QUEUE_DATA),
))
CLUSTER_INFO = BodySpec("ClusterInfo", (
    BodyField("brokerAddrTable", _O, "broker name → BrokerData", BROKER_DATA, is_map=True),
    BodyField("clusterAddrTable", _O, "cluster name → broker names", is_map=True),
))
MESSAGE_QUEUE = BodySpec("MessageQueue", (
    BodyField("brokerName", _S, "broker", required=True),
    BodyField("queueId", _N, "queue", required=True),
    BodyField("topic", _S, "topic", required=True),
))
LOCK_BATCH_REQUEST = BodySpec("LockBatchRequestBody", (
    BodyField("clientId", _S, "client asking for the locks", required=True),
    BodyField("consumerGroup", _S, "consumer group", required=True),
    BodyField("mqSet", _A, "queues to lock (or unlock)", MESSAGE_QUEUE, default=()),
))
LOCK_BATCH_RESPONSE = BodySpec("LockBatchResponseBody", (
    BodyField("lockOKMQSet", _A, "queues now locked by the client", MESSAGE_QUEUE),
))
CONSUME_FROM_WHERE = ("CONSUME_FROM_LAST_OFFSET", "CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST",
                      "CONSUME_FROM_MIN_OFFSET", "CONSUME_FROM_MAX_OFFSET", "CONSUME_FROM_FIRST_OFFSET",
                      "CONSUME_FROM_TIMESTAMP")
CONSUME_TYPE = ("CONSUME_ACTIVELY", "CONSUME_PASSIVELY", "CONSUME_POP")
MESSAGE_MODEL = ("BROADCASTING", "CLUSTERING")

SUBSCRIPTION_DATA = BodySpec("SubscriptionData", (
    BodyField("classFilterMode", _B, "class filter (always false)"),
    BodyField("codeSet", _A, "Java hashCode of each tag"),
    BodyField("expressionType", _S, "TAG or SQL92"),
    BodyField("subString", _S, "expression; * is everything"),
    BodyField("subVersion", _N, "subscription version, ms"),
    BodyField("tagsSet", _A, "tags of the expression"),
    BodyField("topic", _S, "topic", required=True),
))
CONSUMER_DATA = BodySpec("ConsumerData", (
    BodyField("consumeFromWhere", _S, "ConsumeFromWhere name", constants=CONSUME_FROM_WHERE),
    BodyField("consumeType", _S, "CONSUME_ACTIVELY (pull) or CONSUME_PASSIVELY (push)",
              constants=CONSUME_TYPE),
    BodyField("groupName", _S, "consumer group", required=True),
    BodyField("messageModel", _S, "CLUSTERING or BROADCASTING", constants=MESSAGE_MODEL),
    BodyField("subscriptionDataSet", _A, "subscriptions", SUBSCRIPTION_DATA),
    BodyField("unitMode", _B, "unit mode"),
))
PRODUCER_DATA = BodySpec("ProducerData", (BodyField("groupName", _S, "producer group", required=True),))
HEARTBEAT_DATA = BodySpec("HeartbeatData", (
    BodyField("clientID", _S, "client id", required=True),
    BodyField("consumerDataSet", _A, "consumer groups of the client", CONSUMER_DATA, default=()),
    BodyField("producerDataSet", _A, "producer groups of the client", PRODUCER_DATA, default=()),
))
CONSUMER_LIST = BodySpec("GetConsumerListByGroupResponseBody", (
    BodyField("consumerIdList", _A, "client ids of the group's online consumers"),
))
KV_TABLE = BodySpec("KVTable", (BodyField("table", _O, "key → value", is_map=True),))
OFFSET_MOVED_EVENT = BodySpec("OffsetMovedEvent", (
    BodyField("consumerGroup", _S, "group whose pull asked for an offset the queue does not have"),
    BodyField("messageQueue", _O, "the queue pulled", MESSAGE_QUEUE),
    BodyField("offsetNew", _N, "nextBeginOffset the broker answered"),
    BodyField("offsetRequest", _N, "queueOffset the pull asked for"),
))

CompressedRegisterBrokerBody = Struct(
    "data_version" / PascalString(Int32sb, "utf8") * "DataVersion JSON",
    "topic_configs" / PrefixedArray(Int32sb, PascalString(Int32sb, "utf8"))
    * "TopicConfig.encode(): name, read queues, write queues, perm, filter type, space-separated",
    "filter_server_list" / PascalString(Int32sb, "utf8") * "JSON array of filter server addresses",
)
"""Plaintext of the zlib stream sent when REGISTER_BROKER's ``compressed`` is true."""

CMD_BODY_BEAN_ORDER = clause(
    "RMQ-CMD-BODY-BEAN-ORDER", Level.MUST,
    "JSON bodies are fastjson beans: properties in alphabetical order, null properties omitted.",
    source=_BODY_DIR)
CMD_BODY_REQUIRED = clause(
    "RMQ-CMD-BODY-REQUIRED", Level.MUST,
    "A body property the receiver dereferences (a group, client id, queue's topic/broker/queue id, topic "
    "name) must be present and non-null; Java fails such a request with SYSTEM_ERROR (a "
    "NullPointerException), and an absent primitive property keeps its Java field default.",
    source=_BODY_DIR + "HeartbeatData.java")
CMD_BODY_LENIENT_SCALARS = clause(
    "RMQ-CMD-BODY-LENIENT-SCALARS", Level.MUST,
    "A receiver reads an enum property given as its ordinal number and a numeric property given as a "
    "decimal string, as fastjson does: the C++ clients send consumeType, messageModel and consumeFromWhere "
    "as ordinals and subVersion as a string in HEART_BEAT.",
    source="golden/clients/rocketmq-nodejs-1.1.2/broker-all (HEART_BEAT)")
CMD_BODY_NUMERIC_KEYS = clause(
    "RMQ-CMD-BODY-NUMERIC-KEYS", Level.MUST,
    "A receiver accepts unquoted integer map keys ({0:\"ip:port\"}) in route and cluster data; the name "
    "server quotes them only for requests of version >= 401 or with acceptStandardJsonOnly.",
    source=_ROUTE_DIR + "BrokerData.java")
CMD_BODY_REGISTER_COMPRESSED = clause(
    "RMQ-CMD-BODY-REGISTER-COMPRESSED", Level.MUST,
    "A compressed REGISTER_BROKER body is a zlib stream of: int32-prefixed DataVersion JSON, int32 topic "
    "count, int32-prefixed TopicConfig.encode() strings, int32-prefixed filter server JSON array.",
    source=_BODY_DIR + "RegisterBrokerBody.java")
