"""The names a broker reserves: system topics, the prefixes of derived topics and groups, and the topic
name rules (characters, length).

Brokers, clients and store readers all meet these names on the wire and in the files (a send to one of
them is refused, a pull of a retry topic is a group's, a CommitLog record of SCHEDULE_TOPIC_XXXX is a
parked message), so each is declared here once, with the Java constant it is: ``TopicValidator``
(common/src/main/java/org/apache/rocketmq/common/topic/TopicValidator.java), ``MixAll``
(common/src/main/java/org/apache/rocketmq/common/MixAll.java), ``TimerMessageStore`` and
``PopAckConstants`` (store/src/main/java/org/apache/rocketmq/store/timer/, .../store/pop/) and
``TransactionalMessageUtil`` (broker/src/main/java/org/apache/rocketmq/broker/transaction/queue/).
"""

from __future__ import annotations

import re

DEFAULT_TOPIC = "TBW102"
"""``TopicValidator.DEFAULT_TOPIC_TOPIC``: the template producers name in ``defaultTopic``."""
SCHEDULE_TOPIC = "SCHEDULE_TOPIC_XXXX"
"""``TopicValidator.RMQ_SYS_SCHEDULE_TOPIC``: delayed messages wait here, queue id = delay level - 1."""
BENCHMARK_TOPIC = "BenchmarkTest"
"""``TopicValidator.RMQ_SYS_BENCHMARK_TOPIC``."""
TRANS_HALF_TOPIC = "RMQ_SYS_TRANS_HALF_TOPIC"
"""``TopicValidator.RMQ_SYS_TRANS_HALF_TOPIC``: prepared (half) transactional messages, all in queue 0."""
TRANS_OP_HALF_TOPIC = "RMQ_SYS_TRANS_OP_HALF_TOPIC"
"""``TopicValidator.RMQ_SYS_TRANS_OP_HALF_TOPIC``: one op message per ended transaction; its body is the
half message's queue offset."""
TRANS_OP_TAG = "d"
"""``TransactionalMessageUtil.REMOVETAG``: the tag of every op message."""
TRANS_CHECK_MAX_TIME_TOPIC = "TRANS_CHECK_MAX_TIME_TOPIC"
"""``TopicValidator.RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC``: half messages checked back ``transactionCheckMax``
times without an answer end up here."""
TRACE_TOPIC = "RMQ_SYS_TRACE_TOPIC"
"""``TopicValidator.RMQ_SYS_TRACE_TOPIC``: message traces (``msgTraceTopicName``'s default)."""
SELF_TEST_TOPIC = "SELF_TEST_TOPIC"
"""``TopicValidator.RMQ_SYS_SELF_TEST_TOPIC``."""
OFFSET_MOVED_EVENT_TOPIC = "OFFSET_MOVED_EVENT"
"""``TopicValidator.RMQ_SYS_OFFSET_MOVED_EVENT``: a master writes here when it corrects a pull's offset."""
TIMER_TOPIC = "rmq_sys_wheel_timer"
"""``TimerMessageStore.TIMER_TOPIC`` (5.x): every parked timer message sits in its queue 0."""
REVIVE_TOPIC_PREFIX = "rmq_sys_REVIVE_LOG_"
"""``PopAckConstants.REVIVE_TOPIC`` (5.x); the broker's cluster name follows."""
SYNC_BROKER_MEMBER_PREFIX = "rmq_sys_SYNC_BROKER_MEMBER_"
"""``TopicValidator.SYNC_BROKER_MEMBER_GROUP_PREFIX`` (5.x); the broker's name follows."""
SYSTEM_TOPIC_PREFIX = "rmq_sys_"
"""``TopicValidator.SYSTEM_TOPIC_PREFIX``: every topic so named is a system topic."""
REPLY_TOPIC_SUFFIX = "_REPLY_TOPIC"
"""``MixAll.REPLY_TOPIC_POSTFIX``: the cluster's reply topic is its name and this."""

RETRY_PREFIX = "%RETRY%"
"""``MixAll.RETRY_GROUP_TOPIC_PREFIX``: ``%RETRY%<group>`` is a group's retry topic (and, to ACL, the group
as a resource)."""
DLQ_PREFIX = "%DLQ%"
"""``MixAll.DLQ_GROUP_TOPIC_PREFIX``: ``%DLQ%<group>`` is a group's dead-letter topic."""
SYSTEM_GROUP_PREFIX = "CID_RMQ_SYS_"
"""``MixAll.CID_RMQ_SYS_PREFIX``: groups of the broker's own."""
TRANS_CHECK_GROUP = "CID_RMQ_SYS_TRANS"
"""``MixAll.CID_SYS_RMQ_TRANS``: its offsets say how far the transaction check walked each queue."""
REVIVE_GROUP = "CID_RMQ_SYS_REVIVE_GROUP"
"""``PopAckConstants.REVIVE_GROUP`` (5.x): its offsets say how far each revive queue was read."""

SYSTEM_TOPICS = frozenset({
    DEFAULT_TOPIC, SCHEDULE_TOPIC, BENCHMARK_TOPIC, TRANS_HALF_TOPIC, TRACE_TOPIC, TRANS_OP_HALF_TOPIC,
    TRANS_CHECK_MAX_TIME_TOPIC, SELF_TEST_TOPIC, OFFSET_MOVED_EVENT_TOPIC,
})
"""``TopicValidator.SYSTEM_TOPIC_SET``: topics a client may not create or delete."""
NOT_ALLOWED_SEND_TOPICS = frozenset({
    SCHEDULE_TOPIC, TRANS_HALF_TOPIC, TRANS_OP_HALF_TOPIC, TRANS_CHECK_MAX_TIME_TOPIC, SELF_TEST_TOPIC,
    OFFSET_MOVED_EVENT_TOPIC,
})
"""``TopicValidator.NOT_ALLOWED_SEND_TOPIC_SET``: a send to one is refused 16 NO_PERMISSION."""
BUILT_IN_QUEUES = {SELF_TEST_TOPIC: 1, OFFSET_MOVED_EVENT_TOPIC: 1, BENCHMARK_TOPIC: 1024,
                   SCHEDULE_TOPIC: 18}
"""Queues of the topics ``TopicConfigManager``'s constructor creates whatever the settings
(SCHEDULE_TOPIC_XXXX: one per delay level of the default ``messageDelayLevel``)."""

TOPIC_MAX_LENGTH = 127
"""``TopicValidator.TOPIC_MAX_LENGTH``: characters of a topic name a send or a creation may have."""
VALID_TOPIC_CHARACTERS = "^[%|a-zA-Z0-9_-]+$"
"""``TopicValidator.VALID_CHAR_BIT_MAP``, as the pattern Java's remark quotes."""
VALID_TOPIC = re.compile(VALID_TOPIC_CHARACTERS)



def reply_topic(cluster: str) -> str:
    """``MixAll.getReplyTopic``."""
    return cluster + REPLY_TOPIC_SUFFIX


def is_system_topic(topic: str) -> bool:
    """``TopicValidator.isSystemTopic``: a listed name or one under ``rmq_sys_``."""
    return topic in SYSTEM_TOPICS or topic.startswith(SYSTEM_TOPIC_PREFIX)
