"""The store directory: where each file lives, the marker files, and the shapes of the config JSON files.

Config files are written by fastjson in its pretty layout (TAB indentation, integer map keys unquoted)
through a tmp file, keeping the previous content as ``<name>.bak``; a reader falls back to the ``.bak``
file when the main one is missing, empty or unreadable.
"""

from __future__ import annotations

from dataclasses import dataclass

from rocketmq_spec.spec.clauses import Level, clause

COMMITLOG_DIR = "commitlog"
CONSUMEQUEUE_DIR = "consumequeue"
CONSUMEQUEUE_EXT_DIR = "consumequeue_ext"
INDEX_DIR = "index"
CONFIG_DIR = "config"
CHECKPOINT_FILE = "checkpoint"
ABORT_FILE = "abort"
LOCK_FILE = "lock"
LOCK_CONTENT = b"lock"
BACKUP_SUFFIX = ".bak"
TMP_SUFFIX = ".tmp"
INDEX_FILE_NAME_FORMAT = "%Y%m%d%H%M%S"
"""Followed by three digits of milliseconds: yyyyMMddHHmmssSSS."""
TOPIC_GROUP_SEPARATOR = "@"
"""consumerOffset.json keys are ``topic@group``."""


@dataclass(frozen=True)
class ConfigFile:
    name: str
    top_level: str
    """Top-level keys, in the order fastjson writes them."""
    meaning: str


CONFIG_FILES = (
    ConfigFile("topics.json", "dataVersion, topicConfigTable",
               "topic name -> TopicConfig (order, perm, readQueueNums, topicFilterType, topicName, "
               "topicSysFlag, writeQueueNums)"),
    ConfigFile("consumerOffset.json", "offsetTable",
               "topic@group -> {queueId: committed offset} with unquoted integer keys"),
    ConfigFile("subscriptionGroup.json", "dataVersion, subscriptionGroupTable",
               "group name -> SubscriptionGroupConfig (brokerId, consumeBroadcastEnable, consumeEnable, "
               "consumeFromMinEnable, groupName, notifyConsumerIdsChangedEnable, retryMaxTimes, "
               "retryQueueNums, whichBrokerWhenConsumeSlowly)"),
    ConfigFile("delayOffset.json", "offsetTable",
               "delay level -> next SCHEDULE_TOPIC_XXXX queue offset, unquoted integer keys"),
    ConfigFile("consumerFilter.json", "filterDataByTopic", "SQL92 filter data per topic and group"),
    ConfigFile("consumerOrderInfo.json", "orderInfoCount (5.5.0+), orderedConsumptionLevel (5.4.0+), table",
               "5.x: topic@group -> {queueId: OrderInfo (a attemptId, cm acked offsets as bits by index, "
               "i invisibleTime, l lastConsumeTimestamp, o the first offset then each other's distance from "
               "it, oc consumed counts, ot next visible times, popTime)}, the batch an ordered pop locked "
               "its queue to"),
)
ORDER_INFO_FILE = "consumerOrderInfo.json"
"""``BrokerPathConfigHelper.getConsumerOrderInfoPath`` (``ConsumerOrderInfoManager``, 5.x)."""
ORDER_INFO_TABLE = "table"

TOPIC_CONFIG_FIELDS = ("order", "perm", "readQueueNums", "topicFilterType", "topicName", "topicSysFlag",
                       "writeQueueNums")
SUBSCRIPTION_GROUP_FIELDS = ("brokerId", "consumeBroadcastEnable", "consumeEnable", "consumeFromMinEnable",
                             "groupName", "notifyConsumerIdsChangedEnable", "retryMaxTimes", "retryQueueNums",
                             "whichBrokerWhenConsumeSlowly")
DATA_VERSION_FIELDS = ("counter", "timestamp")

RMQ_STORE_LAYOUT = clause(
    "RMQ-STORE-LAYOUT", Level.MUST,
    "A store root holds commitlog/<20-digit offset>, consumequeue/<topic>/<queueId>/<20-digit offset>, "
    "index/<yyyyMMddHHmmssSSS>, checkpoint, lock, abort while running, and config/*.json.",
    source="store/src/main/java/org/apache/rocketmq/store/config/StorePathConfigHelper.java",
)
RMQ_STORE_ABORT = clause(
    "RMQ-STORE-ABORT", Level.MUST,
    "The abort file exists while the store runs and is deleted on clean shutdown; its presence at start "
    "means the previous run crashed and recovery must be the abnormal one.",
    source="store/src/main/java/org/apache/rocketmq/store/DefaultMessageStore.java",
)
RMQ_STORE_LOCK = clause(
    "RMQ-STORE-LOCK", Level.MUST,
    "A broker holds an exclusive lock on byte 0 of the lock file and writes 'lock' into it; a second "
    "broker on the same root fails to start.",
    source="store/src/main/java/org/apache/rocketmq/store/DefaultMessageStore.java (start)",
)
RMQ_STORE_CONFIG_JSON = clause(
    "RMQ-STORE-CONFIG-JSON", Level.MUST,
    "Config files are fastjson pretty-format JSON (TAB indentation, no trailing newline) in which maps "
    "with integer keys are written with unquoted keys.",
    source="common/src/main/java/org/apache/rocketmq/common/ConfigManager.java; golden store-4x",
)
RMQ_STORE_CONFIG_BAK = clause(
    "RMQ-STORE-CONFIG-BAK", Level.MUST,
    "A config file is replaced through <name>.tmp with the old content kept in <name>.bak, and a reader "
    "uses <name>.bak when <name> is missing, empty or unparsable.",
    source="common/src/main/java/org/apache/rocketmq/common/MixAll.java (string2File); ConfigManager.load",
)
RMQ_STORE_OFFSET_KEY = clause(
    "RMQ-STORE-OFFSET-KEY", Level.MUST,
    "consumerOffset.json keys are topic@group and map queue ids to the next offset to consume.",
    source="broker/src/main/java/org/apache/rocketmq/broker/offset/ConsumerOffsetManager.java",
)


def offset_table_key(topic: str, group: str) -> str:
    return f"{topic}{TOPIC_GROUP_SEPARATOR}{group}"


def split_offset_table_key(key: str) -> tuple[str, str]:
    """Split at the first '@' as Java's ``split("@")[0..1]`` does (neither name may contain one)."""
    topic, _, group = key.partition(TOPIC_GROUP_SEPARATOR)
    return topic, group
