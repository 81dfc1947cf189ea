"""What the admin commands answer: the clauses behind mqadmin's and the Dashboard's views of a cluster.

Each clause names the command, what a successful answer holds and how the common failures are answered
(code and remark), as the 4.9.8 AdminBrokerProcessor and the name server's DefaultRequestProcessor do.
Remark templates live here beside their clause, so the reference broker writes them and the conformance
suite expects them from one place.
"""

from __future__ import annotations

from dataclasses import dataclass

from rocketmq_spec.spec.clauses import Level, clause
from rocketmq_spec.spec.releases import ALL, Releases, since, until

_ADMIN = "broker/src/main/java/org/apache/rocketmq/broker/processor/AdminBrokerProcessor.java"
_TO_CLIENT = "broker/src/main/java/org/apache/rocketmq/broker/client/net/Broker2Client.java"
_NAMESRV = "namesrv/src/main/java/org/apache/rocketmq/namesrv/processor/DefaultRequestProcessor.java"

BROKER_CONFIG_BLACK_LIST = ("brokerConfigPath", "rocketmqHome", "configBlackList")
"""Keys UPDATE_BROKER_CONFIG refuses (BrokerConfig.configBlackList plus the two always added)."""
NAMESRV_CONFIG_BLACK_LIST = ("configBlackList", "configStorePath", "kvConfigPath")
"""Keys UPDATE_NAMESRV_CONFIG refuses (NamesrvConfig.configBlackList)."""
BLACK_LIST_REMARK = "Can not update config in black list."
CONFIG_PATH_REMARK = "Can not update config path"
"""The name server's refusal of kvConfigPath / configStorePath in releases without the black list."""
TOPIC_NOT_EXIST_REMARK = "topic[{topic}] not exist"
CONSUMER_NOT_ONLINE_REMARK = "the consumer group[{group}] not online"
PRODUCER_NOT_EXIST_REMARK = "the producer group[{group}] not exist"
STATS_NOT_EXIST_REMARK = "The stats <{name}> <{key}> not exist"
CLIENT_NOT_ONLINE_REMARK = "The Consumer <{group}> <{client}> not online"
RESET_NO_TOPIC_REMARK = "[reset-offset] reset offset failed, no topic in this broker. topic={topic}"
RESET_NO_GROUP_REMARK = "THe consumer group <{group}> not exist"
RESET_SERVER_NO_TOPIC_REMARK = "Topic {topic} does not exist"
RESET_SERVER_NO_GROUP_REMARK = "Group {group} does not exist"
RESET_SERVER_RANGE_REMARK = "Target offset {offset} not in consume queue range [{low}-{high}]"
"""Remarks of 5.x's server-side reset (``resetOffsetInner``)."""
RESET_OFFLINE_REMARK = ("Consumer not online, so can not reset offset, Group: {group} Topic: {topic} "
                        "Timestamp: {timestamp}")
RESET_CLIENT_TOO_OLD_REMARK = "the client does not support this feature. version={version}"
RESET_IN_SLAVE_REMARK = "Can not reset offset in slave broker"
CALL_CONSUMER_TOO_OLD_REMARK = ("The Consumer <{client}> Version <{version}> too low to finish, please "
                                "upgrade it to V3_1_8_SNAPSHOT")
CALL_CONSUMER_TIMEOUT_REMARK = "consumer <{group}> <{client}> Timeout: {error}"
CALL_CONSUMER_FAILED_REMARK = "invoke consumer <{group}> <{client}> Exception: {error}"
"""Remarks of the calls relayed to a consumer (``Broker2Client``: reset, running info, consume directly)."""
CQ_NOT_EXIST_REMARK = "{queue_id}@{topic} is not exist!"
CQ_INDEX_NOT_EXIST_REMARK = "Index {index} of {queue_id}@{topic} is not exist!"
CQ_GROUP_OFFLINE_FILTER = "{group}@{topic} is not online!"
@dataclass(frozen=True)
class RuntimeInfoKey:
    key: str
    releases: Releases = ALL


RUNTIME_INFO: tuple[RuntimeInfoKey, ...] = (
    *(RuntimeInfoKey(key) for key in (
        "brokerVersionDesc", "msgPutTotalYesterdayMorning", "msgPutTotalTodayMorning", "msgPutTotalTodayNow",
        "msgGetTotalYesterdayMorning", "msgGetTotalTodayMorning", "msgGetTotalTodayNow",
        "sendThreadPoolQueueSize", "pullThreadPoolQueueSize", "sendThreadPoolQueueHeadWaitTimeMills",
        "pullThreadPoolQueueHeadWaitTimeMills", "pageCacheLockTimeMills", "earliestMessageTimeStamp",
        "commitLogDiskRatio", "putTps", "commitLogMinOffset", "commitLogMaxOffset", "bootTimestamp",
        "runtime")),
    RuntimeInfoKey("brokerVersion", until("5.3.3")),
    RuntimeInfoKey("getTransferedTps", until("4.9.8")),
    RuntimeInfoKey("getTransferredTps", since("5.0.0")),
)
"""Keys of GET_BROKER_RUNTIME_INFO that mqadmin's clusterList and brokerStatus read (clusterList parses
the msgPut/msgGet counters as longs and the TPS values as "<double> ..."), by the releases that write
them: 5.0.0 renamed getTransferedTps (StoreStatsService), 5.4.0 dropped brokerVersion (the 5.4.0 jar's
AdminBrokerProcessor writes brokerVersionDesc only)."""


def runtime_info_keys(mq_version: int) -> list[str]:
    """The keys a broker announcing ``mq_version`` writes."""
    return [row.key for row in RUNTIME_INFO if row.releases.holds_for_version(mq_version)]

ADMIN_RUNTIME_INFO = clause(
    "RMQ-ADMIN-RUNTIME-INFO", Level.MUST,
    "GET_BROKER_RUNTIME_INFO answers a KVTable of string values holding at least the keys mqadmin's "
    "clusterList reads, the msgPut/msgGet counters as decimal longs.", source=_ADMIN)
ADMIN_BROKER_CONFIG = clause(
    "RMQ-ADMIN-BROKER-CONFIG", Level.MUST,
    "GET_BROKER_CONFIG answers the broker's settings as Properties text and the configuration's "
    "DataVersion JSON in the response header's version field.", source=_ADMIN)
ADMIN_UPDATE_CONFIG = clause(
    "RMQ-ADMIN-UPDATE-CONFIG", Level.MUST,
    "UPDATE_BROKER_CONFIG and UPDATE_NAMESRV_CONFIG apply the Properties body and answer SUCCESS; a body "
    "naming a black-listed key is refused with 16 NO_PERMISSION \"Can not update config in black list.\" and "
    "changes nothing.", source=_ADMIN)
ADMIN_NAMESRV_CONFIG = clause(
    "RMQ-ADMIN-NAMESRV-CONFIG", Level.MUST,
    "GET_NAMESRV_CONFIG answers the name server's settings as Properties text.", source=_NAMESRV)
ADMIN_TOPIC_STATS = clause(
    "RMQ-ADMIN-TOPIC-STATS", Level.MUST,
    "GET_TOPIC_STATS_INFO answers a TopicStatsTable with one entry per write queue (min and max offset, "
    "store time of the last message or 0); an unknown topic is answered 17 TOPIC_NOT_EXIST "
    "\"topic[T] not exist\".", source=_ADMIN)
ADMIN_CONSUME_STATS = clause(
    "RMQ-ADMIN-CONSUME-STATS", Level.MUST,
    "GET_CONSUME_STATS answers a ConsumeStats with one entry per read queue of the topic asked for (or of "
    "every topic the group has offsets for): the queue's max offset, the group's offset (0 when none) and "
    "the store time of the last consumed message.", source=_ADMIN)
ADMIN_CONSUMER_CONNECTION = clause(
    "RMQ-ADMIN-CONSUMER-CONNECTION", Level.MUST,
    "GET_CONSUMER_CONNECTION_LIST answers a ConsumerConnection (clients, subscriptions, consume type, "
    "message model) for an online group, and 206 CONSUMER_NOT_ONLINE \"the consumer group[G] not online\" "
    "otherwise.", source=_ADMIN)
ADMIN_PRODUCER_CONNECTION = clause(
    "RMQ-ADMIN-PRODUCER-CONNECTION", Level.MUST,
    "GET_PRODUCER_CONNECTION_LIST answers a ProducerConnection for a group with connected producers, and "
    "1 SYSTEM_ERROR \"the producer group[G] not exist\" otherwise.", source=_ADMIN)
ADMIN_SUBSCRIPTION_GROUP = clause(
    "RMQ-ADMIN-SUBSCRIPTION-GROUP", Level.MUST,
    "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP stores the SubscriptionGroupConfig body, which "
    "GET_ALL_SUBSCRIPTIONGROUP_CONFIG then lists; DELETE_SUBSCRIPTIONGROUP removes it (and, with "
    "removeOffset, the group's committed offsets).", source=_ADMIN)
ADMIN_CONSUME_BY_WHO = clause(
    "RMQ-ADMIN-CONSUME-BY-WHO", Level.MUST,
    "QUERY_TOPIC_CONSUME_BY_WHO answers a GroupList of the groups subscribed to the topic online or holding "
    "offsets for it.", source=_ADMIN)
ADMIN_RESET_OFFSET = clause(
    "RMQ-ADMIN-RESET-OFFSET", Level.MUST,
    "INVOKE_BROKER_TO_RESET_OFFSET computes each write queue's offset for the timestamp (-1: the max offset; "
    "without isForce never past the committed offset), sends RESET_CONSUMER_CLIENT_OFFSET oneway to every "
    "client of the group and answers the ResetOffsetBody; an unknown topic or a group without offsets is "
    "1 SYSTEM_ERROR, a group without clients 206 CONSUMER_NOT_ONLINE.", source=_TO_CLIENT)
ADMIN_CALL_CONSUMER = clause(
    "RMQ-ADMIN-CALL-CONSUMER", Level.MUST,
    "GET_CONSUMER_RUNNING_INFO and CONSUME_MESSAGE_DIRECTLY are forwarded with their extFields to the "
    "named client and the client's answer is returned; a client that is not connected in the group is "
    "answered 1 SYSTEM_ERROR \"The Consumer <G> <C> not online\". CONSUME_MESSAGE_DIRECTLY carries the "
    "record its msgId (an offsetMsgId) names as body; an id that does not decode, or names no record, is "
    "answered 1 SYSTEM_ERROR without calling the client (the lookup's exception escapes to the remoting "
    "layer).",
    source=_ADMIN)
ADMIN_CLONE_OFFSET = clause(
    "RMQ-ADMIN-CLONE-OFFSET", Level.MUST,
    "CLONE_GROUP_OFFSET copies srcGroup's committed offsets of the topic to destGroup and answers SUCCESS.",
    source=_ADMIN)
ADMIN_STATS_DATA = clause(
    "RMQ-ADMIN-STATS-DATA", Level.MUST,
    "VIEW_BROKER_STATS_DATA answers a BrokerStatsData (minute, hour, day) for a stats item the broker "
    "keeps, and 1 SYSTEM_ERROR \"The stats <N> <K> not exist\" for one it does not.", source=_ADMIN)
ADMIN_QUERY_CQ = clause(
    "RMQ-ADMIN-QUERY-CQ", Level.MUST,
    "QUERY_CONSUME_QUEUE answers the queue's min and max offset and up to count entries from index "
    "(commitlog offset, size, tags code); an absent queue is 1 SYSTEM_ERROR \"Q@T is not exist!\", an index "
    "outside the queue SUCCESS without a body and the remark \"Index I of Q@T is not exist!\".",
    source=_ADMIN)
ADMIN_CLEAN = clause(
    "RMQ-ADMIN-CLEAN", Level.MUST,
    "CLEAN_EXPIRED_CONSUMEQUEUE (drop consume queues whose entries all precede the commitlog's min offset) "
    "and DELETE_EXPIRED_COMMITLOG (delete commitlog files past their reserved time now) answer SUCCESS.",
    source=_ADMIN)
ADMIN_SYSTEM_TOPICS = clause(
    "RMQ-ADMIN-SYSTEM-TOPICS", Level.MUST,
    "GET_SYSTEM_TOPIC_LIST_FROM_BROKER and GET_SYSTEM_TOPIC_LIST_FROM_NS answer a TopicList of system "
    "topics. A broker creates its built-in topics at start with TopicConfig's defaults but for the queue "
    "counts: SELF_TEST_TOPIC and OFFSET_MOVED_EVENT 1 queue, BenchmarkTest 1024, SCHEDULE_TOPIC_XXXX 18, "
    "each with perm 6 and topicSysFlag 0 (TopicConfigManager's constructor).",
    source=_ADMIN + "; broker/src/main/java/org/apache/rocketmq/broker/topic/TopicConfigManager.java")
ADMIN_TOPIC_LIST = clause(
    "RMQ-ADMIN-TOPIC-LIST", Level.MUST,
    "GET_ALL_TOPIC_LIST_FROM_NAMESERVER answers a TopicList of every registered topic; "
    "GET_TOPICS_BY_CLUSTER the topics served by the cluster's brokers.", source=_NAMESRV)
ADMIN_WRITE_PERM = clause(
    "RMQ-ADMIN-WRITE-PERM", Level.MUST,
    "WIPE_WRITE_PERM_OF_BROKER clears and ADD_WRITE_PERM_OF_BROKER restores the write bit of every queue "
    "data of the broker in the name server's routes, answering the number of topics changed "
    "(wipeTopicCount / addTopicCount).", source=_NAMESRV)
GET_TOPIC_CONFIG_NOT_EXIST_REMARK = "No topic in this broker. topic: {topic}"
GET_GROUP_CONFIG_NOT_EXIST_REMARK = "No group in this broker"
ADMIN_GET_TOPIC_CONFIG = clause(
    "RMQ-ADMIN-GET-TOPIC-CONFIG", Level.MUST,
    "GET_TOPIC_CONFIG (351, 5.0.0+) answers the topic's TopicConfig as JSON; a topic the broker does not "
    "have is 17 TOPIC_NOT_EXIST \"No topic in this broker. topic: <t>\".",
    source=_ADMIN + " (getTopicConfig)")
ADMIN_GET_GROUP_CONFIG = clause(
    "RMQ-ADMIN-GET-GROUP-CONFIG", Level.MUST,
    "GET_SUBSCRIPTIONGROUP_CONFIG (352, 5.0.0+) answers the group's SubscriptionGroupConfig as JSON, "
    "creating it with default settings when autoCreateSubscriptionGroup is on (findSubscriptionGroupConfig).",
    source=_ADMIN + " (getSubscriptionGroup)")
ADMIN_POP_ROLLBACK = clause(
    "RMQ-ADMIN-POP-ROLLBACK", Level.MUST,
    "POP_ROLLBACK (200056, 5.3.2+; mqadmin exportPopRecord) carries no header and is answered SUCCESS once "
    "the broker's pop state is in its file store: Java moves it there from the RocksDB pop store when that "
    "store is in use; a broker that keeps pop state in the revive log only has nothing to move.",
    source=_ADMIN + " (transferPopToFsStore)")
