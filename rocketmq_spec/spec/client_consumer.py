"""Remoting consumers: how a conforming consumer pulls, where it starts, and how it commits offsets.

What a consumer asks for decides what a group receives and whether a restart repeats or loses messages;
none of it is visible from the broker's side of a single request. Sources are the Java client of release
4.9.7 unless a clause names 5.x.
"""

from __future__ import annotations

from rocketmq_spec.spec.clauses import Level, clause

_CLIENT = "client/src/main/java/org/apache/rocketmq/client/"
_PUSH = _CLIENT + "impl/consumer/DefaultMQPushConsumerImpl.java"
_REBALANCE = _CLIENT + "impl/consumer/RebalancePushImpl.java"
_OFFSETS = _CLIENT + "consumer/store/RemoteBrokerOffsetStore.java"

CONSUMER_PULL_QUEUE = clause(
    "RMQ-CLIENT-PULL-QUEUE", Level.MUST,
    "A consumer pulls only queues of the subscribed topic that the route lists (0 <= queueId < "
    "readQueueNums), naming its own group.",
    source=_CLIENT + "impl/consumer/RebalanceImpl.java (rebalanceByTopic); " + _PUSH + " (pullMessage)")
CONSUMER_PULL_NEXT = clause(
    "RMQ-CLIENT-PULL-NEXT", Level.MUST,
    "After a FOUND, NO_NEW_MSG or NO_MATCHED_MSG answer the next pull of that queue starts at the answer's "
    "nextBeginOffset.",
    source=_PUSH + " (pullMessage callback); " + _CLIENT + "impl/consumer/PullAPIWrapper.java")
CONSUMER_PULL_SUSPEND = clause(
    "RMQ-CLIENT-PULL-SUSPEND", Level.SHOULD,
    "A push consumer's pull sets the suspend bit (2) of sysFlag and a suspendTimeoutMillis of at most "
    "15000 ms below its own request timeout, so the broker can hold it (long polling).",
    source=_PUSH + " (pullMessage: BROKER_SUSPEND_MAX_TIME_MILLIS)")
CONSUMER_OFFSET_MOVED = clause(
    "RMQ-CLIENT-OFFSET-MOVED", Level.MUST,
    "After PULL_OFFSET_MOVED (21) a consumer does not pull that queue again at the refused offset; it "
    "goes on from the answer's nextBeginOffset.",
    source=_PUSH + " (pullMessage callback, OFFSET_ILLEGAL)")
CONSUMER_DELIVERY = clause(
    "RMQ-CLIENT-DELIVERY", Level.MUST,
    "Every message the broker returned to a pull of the consumer's group is handed to the application "
    "with its topic and body unchanged.",
    source=_CLIENT + "impl/consumer/PullAPIWrapper.java (processPullResult)")
CONSUMER_QUERY_OFFSET = clause(
    "RMQ-CLIENT-QUERY-OFFSET", Level.SHOULD,
    "A push consumer without a local offset for a queue asks the broker (QUERY_CONSUMER_OFFSET, 14) "
    "before its first pull of that queue.",
    source=_OFFSETS + " (readOffset); " + _REBALANCE + " (computePullFromWhere)")
CONSUMER_FROM_WHERE = clause(
    "RMQ-CLIENT-CONSUME-FROM-WHERE", Level.SHOULD,
    "When the broker has no offset for the group (QUERY_NOT_FOUND, 22), a push consumer starts from "
    "CONSUME_FROM_LAST_OFFSET (asks GET_MAX_OFFSET, 30) or FIRST_OFFSET (0), never from an offset "
    "it was not given.",
    source=_REBALANCE + " (computePullFromWhereWithException)")
CONSUMER_COMMIT = clause(
    "RMQ-CLIENT-OFFSET-COMMIT", Level.MUST,
    "A clustering consumer commits its progress: UPDATE_CONSUMER_OFFSET (15) for each queue it consumed, "
    "or the commit-offset bit (1) of a pull, with an offset no greater than the pulled nextBeginOffset.",
    source=_OFFSETS + " (persistAll, updateConsumeOffsetToBroker); " + _PUSH + " (pullMessage: commitOffset)")
CONSUMER_COMMIT_PERIOD = clause(
    "RMQ-CLIENT-OFFSET-PERIOD", Level.SHOULD,
    "While started, a consumer commits the offsets of its queues every persistConsumerOffsetInterval "
    "(5 s).",
    source=_CLIENT + "impl/factory/MQClientInstance.java (startScheduledTask: persistAllConsumerOffset)")
CONSUMER_COMMIT_SHUTDOWN = clause(
    "RMQ-CLIENT-OFFSET-SHUTDOWN", Level.SHOULD,
    "A consumer that shuts down commits its offsets (UPDATE_CONSUMER_OFFSET) before UNREGISTER_CLIENT.",
    source=_PUSH + " (shutdown: persistConsumerOffset before unregisterConsumer)")
