"""JSON bodies of the admin commands, as the bean tables fastjson serializes (alphabetical, nulls left out).

Several admin bodies are maps keyed by a MessageQueue bean (TopicStatsTable, ConsumeStats,
ResetOffsetBody): fastjson writes such a key as a JSON object, which strict JSON readers reject, so the
tables mark those maps with ``key_bean`` and the codec reads and writes them as Java does. Two bodies
are not JSON at all: the broker and name server configurations (GET_BROKER_CONFIG, UPDATE_BROKER_CONFIG,
GET_NAMESRV_CONFIG, UPDATE_NAMESRV_CONFIG) travel as ``java.util.Properties`` text, ``key=value`` lines.
"""

from __future__ import annotations

from rocketmq_spec.spec.bodies import (
    CONSUME_FROM_WHERE,
    CONSUME_TYPE,
    DATA_VERSION,
    MESSAGE_MODEL,
    MESSAGE_QUEUE,
    SUBSCRIPTION_DATA,
    BodyField,
    BodySpec,
    Json,
)
from rocketmq_spec.spec.clauses import Level, clause
from rocketmq_spec.spec.language import LanguageCode

_BODY_DIR = "common/src/main/java/org/apache/rocketmq/common/protocol/body/"
_ADMIN_DIR = "common/src/main/java/org/apache/rocketmq/common/admin/"
_S, _N, _B, _A, _O = Json.STRING, Json.NUMBER, Json.BOOLEAN, Json.ARRAY, Json.OBJECT

TOPIC_LIST = BodySpec("TopicList", (
    BodyField("brokerAddr", _S, "broker that answered (unset by name servers)"),
    BodyField("topicList", _A, "topic names"),
))
GROUP_LIST = BodySpec("GroupList", (BodyField("groupList", _A, "consumer group names"),))
TOPIC_OFFSET = BodySpec("TopicOffset", (
    BodyField("lastUpdateTimestamp", _N, "store time of the queue's last message, 0 when empty"),
    BodyField("maxOffset", _N, "queue's next offset to be written"),
    BodyField("minOffset", _N, "queue's smallest offset"),
))
TOPIC_STATS_TABLE = BodySpec("TopicStatsTable", (
    BodyField("offsetTable", _O, "MessageQueue → TopicOffset, one per write queue", TOPIC_OFFSET,
              is_map=True, key_bean=MESSAGE_QUEUE),
))
OFFSET_WRAPPER = BodySpec("OffsetWrapper", (
    BodyField("brokerOffset", _N, "queue's max offset"),
    BodyField("consumerOffset", _N, "group's committed offset, 0 when none"),
    BodyField("lastTimestamp", _N, "store time of the last consumed message, 0 when none"),
    BodyField("pullOffset", _N, "5.1.0+: the larger of consumerOffset and the last pull's next offset"),
))
CONSUME_STATS = BodySpec("ConsumeStats", (
    BodyField("consumeTps", _N, "messages pulled per second by the group (a double)"),
    BodyField("offsetTable", _O, "MessageQueue → OffsetWrapper, one per read queue", OFFSET_WRAPPER,
              is_map=True, key_bean=MESSAGE_QUEUE),
))
LANGUAGES = tuple(code.name for code in LanguageCode)
CONNECTION = BodySpec("Connection", (
    BodyField("clientAddr", _S, "ip:port of the client's channel"),
    BodyField("clientId", _S, "client id"),
    BodyField("language", _S, "LanguageCode name", constants=LANGUAGES),
    BodyField("version", _N, "client's MQVersion ordinal"),
))
CONSUMER_CONNECTION = BodySpec("ConsumerConnection", (
    BodyField("connectionSet", _A, "the group's online clients", CONNECTION),
    BodyField("consumeFromWhere", _S, "ConsumeFromWhere name", constants=CONSUME_FROM_WHERE),
    BodyField("consumeType", _S, "CONSUME_ACTIVELY or CONSUME_PASSIVELY", constants=CONSUME_TYPE),
    BodyField("messageModel", _S, "CLUSTERING or BROADCASTING", constants=MESSAGE_MODEL),
    BodyField("subscriptionTable", _O, "topic → SubscriptionData", SUBSCRIPTION_DATA, is_map=True),
))
PRODUCER_CONNECTION = BodySpec("ProducerConnection", (
    BodyField("connectionSet", _A, "the group's connected producers", CONNECTION),))
SUBSCRIPTION_GROUP_CONFIG = BodySpec("SubscriptionGroupConfig", (
    BodyField("brokerId", _N, "broker to consume from, 0 = master"),
    BodyField("consumeBroadcastEnable", _B, "broadcast consumption allowed"),
    BodyField("consumeEnable", _B, "the group may consume"),
    BodyField("consumeFromMinEnable", _B, "a new group starts from the queue's min offset"),
    BodyField("groupName", _S, "consumer group"),
    BodyField("notifyConsumerIdsChangedEnable", _B, "members are told when the group changes"),
    BodyField("retryMaxTimes", _N, "deliveries before a message goes to the DLQ"),
    BodyField("retryQueueNums", _N, "queues of the group's %RETRY% topic"),
    BodyField("whichBrokerWhenConsumeSlowly", _N, "broker id suggested to a slow consumer"),
    BodyField("consumeMessageOrderly", _B, "5.x: the group consumes in order (a gRPC consumer's fifo)"),
))
SUBSCRIPTION_GROUP_CONFIG_5X: dict[str, object] = {
    "attributes": {}, "brokerId": 0, "consumeBroadcastEnable": True, "consumeEnable": True,
    "consumeFromMinEnable": True, "consumeMessageOrderly": False, "consumeTimeoutMinute": 15,
    "groupRetryPolicy": {"type": "CUSTOMIZED"}, "groupSysFlag": 0, "notifyConsumerIdsChangedEnable": True,
    "retryMaxTimes": 16, "retryQueueNums": 1, "whichBrokerWhenConsumeSlowly": 1}
"""``new SubscriptionGroupConfig()`` of 5.5.0 as fastjson2 writes it (keys in order, nulls left out):
remoting/src/main/java/org/apache/rocketmq/remoting/protocol/subscription/SubscriptionGroupConfig.java."""
TOPIC_CONFIG_AND_QUEUE_MAPPING = BodySpec("TopicConfigAndQueueMapping", (
    BodyField("attributes", _O, "topic attributes (5.x)", is_map=True),
    BodyField("order", _B, "ordered topic"),
    BodyField("perm", _N, "PermName bits"),
    BodyField("readQueueNums", _N, "read queues"),
    BodyField("topicFilterType", _S, "SINGLE_TAG or MULTI_TAG"),
    BodyField("topicName", _S, "topic", required=True),
    BodyField("topicSysFlag", _N, "TopicSysFlag bits"),
    BodyField("writeQueueNums", _N, "write queues"),
    BodyField("mappingDetail", _O, "static topic queue mapping, with lo=true"),
))
"""GET_TOPIC_CONFIG's answer (5.0.0+): the TopicConfig, and the queue mapping of a static topic."""
SUBSCRIPTION_GROUP_WRAPPER = BodySpec("SubscriptionGroupWrapper", (
    BodyField("dataVersion", _O, "version of the group table", DATA_VERSION),
    BodyField("subscriptionGroupTable", _O, "group → SubscriptionGroupConfig", SUBSCRIPTION_GROUP_CONFIG,
              is_map=True),
))
BROKER_STATS_ITEM = BodySpec("BrokerStatsItem", (
    BodyField("avgpt", _N, "average value per sample (a double)"),
    BodyField("sum", _N, "total over the window"),
    BodyField("tps", _N, "rate per second over the window (a double)"),
))
BROKER_STATS_DATA = BodySpec("BrokerStatsData", (
    BodyField("statsDay", _O, "last day", BROKER_STATS_ITEM),
    BodyField("statsHour", _O, "last hour", BROKER_STATS_ITEM),
    BodyField("statsMinute", _O, "last minute", BROKER_STATS_ITEM),
))
CONSUME_QUEUE_DATA = BodySpec("ConsumeQueueData", (
    BodyField("bitMap", _S, "bloom filter bits of an extended entry"),
    BodyField("eval", _B, "the entry matches the group's filter (extended entries only)"),
    BodyField("extendDataJson", _S, "the extended entry as JSON"),
    BodyField("msg", _S, "why an extended entry could not be read"),
    BodyField("physicOffset", _N, "commitlog offset of the message"),
    BodyField("physicSize", _N, "record size"),
    BodyField("tagsCode", _N, "tag hash (or extended entry address)"),
))
QUERY_CONSUME_QUEUE_RESPONSE = BodySpec("QueryConsumeQueueResponseBody", (
    BodyField("filterData", _S, "the group's filter, or why there is none"),
    BodyField("maxQueueIndex", _N, "queue's max offset"),
    BodyField("minQueueIndex", _N, "queue's min offset"),
    BodyField("queueData", _A, "the entries asked for", CONSUME_QUEUE_DATA),
    BodyField("subscriptionData", _O, "the group's subscription to the topic", SUBSCRIPTION_DATA),
))
RESET_OFFSET_BODY = BodySpec("ResetOffsetBody", (
    BodyField("offsetTable", _O, "MessageQueue → offset the consumer must move to", is_map=True,
              key_bean=MESSAGE_QUEUE),
))
MESSAGE_QUEUE_FOR_C = BodySpec("MessageQueueForC", (
    BodyField("brokerName", _S, "broker"),
    BodyField("offset", _N, "offset the consumer must move to"),
    BodyField("queueId", _N, "queue"),
    BodyField("topic", _S, "topic"),
))
RESET_OFFSET_BODY_FOR_C = BodySpec("ResetOffsetBodyForC", (
    BodyField("offsetTable", _A, "the same offsets as a list, for C++ clients", MESSAGE_QUEUE_FOR_C),
))
"""What RESET_CONSUMER_CLIENT_OFFSET carries when the admin request came from a CPP client (mqadmin's
resetOffsetByTime -c): C++ clients cannot read MessageQueue-keyed maps."""
CONSUMER_RUNNING_INFO = BodySpec("ConsumerRunningInfo", (
    BodyField("jstack", _S, "thread dump, when asked for"),
    BodyField("mqTable", _O, "MessageQueue → ProcessQueueInfo", is_map=True, key_bean=MESSAGE_QUEUE),
    BodyField("properties", _O, "client settings and counters (Properties)", is_map=True),
    BodyField("statusTable", _O, "topic → ConsumeStatus", is_map=True),
    BodyField("subscriptionSet", _A, "the client's subscriptions", SUBSCRIPTION_DATA),
))
CONSUME_MESSAGE_DIRECTLY_RESULT = BodySpec("ConsumeMessageDirectlyResult", (
    BodyField("autoCommit", _B, "offset committed automatically"),
    BodyField("consumeResult", _S, "CR_SUCCESS, CR_LATER, CR_ROLLBACK, CR_COMMIT, CR_THROW_EXCEPTION, "
              "CR_RETURN_NULL"),
    BodyField("order", _B, "consumed by an orderly listener"),
    BodyField("remark", _S, "listener's answer or exception"),
    BodyField("spentTimeMills", _N, "time the listener took, ms"),
))

ADMIN_BODY_OBJECT_KEYS = clause(
    "RMQ-ADMIN-BODY-OBJECT-KEYS", Level.MUST,
    "Maps keyed by MessageQueue (TopicStatsTable, ConsumeStats, ResetOffsetBody) are written with each "
    "key as a JSON object, its properties in alphabetical order: "
    "{{\"brokerName\":…,\"queueId\":…,\"topic\":…}:…}.",
    source=_ADMIN_DIR + "ConsumeStats.java")
ADMIN_BODY_PROPERTIES = clause(
    "RMQ-ADMIN-BODY-PROPERTIES", Level.MUST,
    "Configuration bodies (GET/UPDATE_BROKER_CONFIG, GET/UPDATE_NAMESRV_CONFIG) are java.util.Properties "
    "text, one key=value per line. Answers are written in UTF-8 without escapes (properties2String); "
    "update bodies are read as Properties.load reads a byte stream (string2Properties): ISO-8859-1 with "
    "\\uXXXX escapes, so a value beyond Latin-1 arrives intact only escaped and raw UTF-8 bytes arrive "
    "one character per byte.",
    source="common/src/main/java/org/apache/rocketmq/common/MixAll.java (properties2String, "
    "string2Properties: properties.load(new ByteArrayInputStream(str.getBytes(DEFAULT_CHARSET))))")
"""Apache RocketMQ (4.9.7, 5.3.3, 5.5.0) writes a raw UTF-8 value of an update back double-encoded: the
clause states what its Properties reader does rather than a UTF-8 reading it never had."""
