"""Behavioural clauses: what a name server and a broker do with well-formed requests.

Other spec modules constrain bytes; these constrain the state a server keeps and the answers it gives
over time (routes after a registration, offsets after a send, a parked pull after a message arrives).
They are what the conformance suite checks over TCP, and each names the Java class that implements it.
"""

from __future__ import annotations

from rocketmq_spec.spec.clauses import Level, clause

_NS_ROUTES = "namesrv/src/main/java/org/apache/rocketmq/namesrv/routeinfo/RouteInfoManager.java"
_NS_PROCESSOR = "namesrv/src/main/java/org/apache/rocketmq/namesrv/processor/DefaultRequestProcessor.java"
_NS_KV = "namesrv/src/main/java/org/apache/rocketmq/namesrv/kvconfig/KVConfigManager.java"
_BRK = "broker/src/main/java/org/apache/rocketmq/broker/"
_SEND = _BRK + "processor/SendMessageProcessor.java"
_SEND_CHECK = _BRK + "processor/AbstractSendMessageProcessor.java"
_PULL = _BRK + "processor/PullMessageProcessor.java"
_ADMIN = _BRK + "processor/AdminBrokerProcessor.java"
_STORE = "store/src/main/java/org/apache/rocketmq/store/DefaultMessageStore.java"
_TXN_CHECK = _BRK + "transaction/queue/TransactionalMessageServiceImpl.java"

BROKER_EXPIRY_MS = 120_000
"""A broker that has not re-registered for this long is dropped (``BROKER_CHANNEL_EXPIRED_TIME``)."""

BROKER_SCAN_INTERVAL_MS = 10_000
"""How often a 4.9.8 name server scans for expired brokers: expiry is observed up to this much late."""

HOLD_CHECK_INTERVAL_MS = 5_000
"""PullRequestHoldService's wake-up period under long polling: a parked pull whose timeout passed is
answered at most this much after its timeout."""

DEFAULT_NAMESRV_PORT = 9876
"""``NamesrvConfig``/``NettyServerConfig.listenPort`` of a name server started by ``mqnamesrv``."""

DEFAULT_BROKER_PORT = 10911
"""The broker's remoting port when broker.conf names none (``BrokerStartup`` sets ``listenPort`` so)."""

FAST_PORT_OFFSET = 2
"""The fast ("VIP") remoting port is ``listenPort - 2`` (``BrokerController``: 10909 beside 10911)."""

TRANSACTION_TIMEOUT_MS = 6_000
"""A half message younger than this is not checked back (``transactionTimeOut``)."""

TRANSACTION_CHECK_INTERVAL_MS = 60_000
"""How often a 4.9.8 broker walks its half messages (``transactionCheckInterval``): a check-back arrives
up to this long after a half message became due."""

TRANSACTION_CHECK_MAX = 15
"""Check-backs of one half message before it is given up (``transactionCheckMax``)."""

VISIBILITY_BOUND_MS = 10_000
"""How long after a send's SUCCESS its message may stay unreadable (``RMQ-BRK-VISIBILITY``). Java's
ReputMessageService dispatches the commitlog to the consume queues and the index in its own thread, which
looks for new data every millisecond: the delay is milliseconds on a healthy broker, and the bound only
separates a slow dispatch from a message that never becomes readable."""

LOCK_MAX_LIVE_MS = 60_000
"""Lease of a queue lock taken with LOCK_BATCH_MQ (``rocketmq.broker.rebalance.lockMaxLiveTime``)."""

# -- name server ---------------------------------------------------------------------------------------

NS_REGISTER = clause(
    "RMQ-NS-REGISTER", Level.MUST,
    "After REGISTER_BROKER from a master (brokerId 0), GET_ROUTEINFO_BY_TOPIC of each topic in its body "
    "lists the broker and the topic's queues, and GET_BROKER_CLUSTER_INFO lists it under its cluster. The "
    "answer's body is the KV table of namespace ORDER_TOPIC_CONFIG ({\"table\": {...}}), none while that "
    "namespace was never used.",
    source=_NS_ROUTES + "; " + _NS_PROCESSOR + " (registerBroker: getKVListByNamespace)")
NS_REGISTER_ONEWAY = clause(
    "RMQ-NS-REGISTER-ONEWAY", Level.MUST,
    "A oneway REGISTER_BROKER is applied like a two-way one and gets no response.",
    source=_NS_PROCESSOR)
NS_BODY_CRC = clause(
    "RMQ-NS-BODY-CRC", Level.MUST,
    "A REGISTER_BROKER whose non-zero bodyCrc32 differs from the masked CRC-32 of its body is refused with "
    "SYSTEM_ERROR and changes nothing.",
    source=_NS_PROCESSOR)
NS_SLAVE = clause(
    "RMQ-NS-SLAVE", Level.MUST,
    "A broker registered with brokerId n > 0 appears under key n of brokerAddrs; its response names the "
    "master's address when the master (brokerId 0) is registered.",
    source=_NS_ROUTES)
NS_ROUTE_SHAPE = clause(
    "RMQ-NS-ROUTE-SHAPE", Level.MUST,
    "Route data is a JSON object with brokerDatas (brokerName, cluster, brokerAddrs keyed by brokerId) "
    "and queueDatas (brokerName, perm, readQueueNums, writeQueueNums, topicSysFlag).",
    source="common/src/main/java/org/apache/rocketmq/common/protocol/route/TopicRouteData.java")
NS_ROUTE_STANDARD_JSON = clause(
    "RMQ-NS-ROUTE-STANDARD-JSON", Level.MUST,
    "Route data is standard JSON (quoted map keys) when the request's version is at least 401 (4.9.4) or it "
    "sets acceptStandardJsonOnly=true; older requests may get fastjson's unquoted integer keys.",
    source=_NS_PROCESSOR)
NS_TOPIC_NOT_EXIST = clause(
    "RMQ-NS-TOPIC-NOT-EXIST", Level.MUST,
    "GET_ROUTEINFO_BY_TOPIC for a topic no registered broker serves is answered 17 TOPIC_NOT_EXIST.",
    source=_NS_PROCESSOR)
NS_CLUSTER_INFO = clause(
    "RMQ-NS-CLUSTER-INFO", Level.MUST,
    "Cluster info is a JSON object with brokerAddrTable (brokerName -> broker data) and clusterAddrTable "
    "(cluster name -> broker names).",
    source="common/src/main/java/org/apache/rocketmq/common/protocol/body/ClusterInfo.java")
NS_QUERY_DATA_VERSION = clause(
    "RMQ-NS-QUERY-DATA-VERSION", Level.MUST,
    "QUERY_DATA_VERSION answers changed=false when the DataVersion a broker sends equals the one it last "
    "registered (counter and timestamp), true otherwise, with that registered version as the body.",
    source="namesrv/src/main/java/org/apache/rocketmq/namesrv/processor/DefaultRequestProcessor.java "
           "(queryBrokerTopicConfig); RouteInfoManager.java (isBrokerTopicConfigChanged)")
NS_UNREGISTER = clause(
    "RMQ-NS-UNREGISTER", Level.MUST,
    "UNREGISTER_BROKER removes the broker: its topics lose their route and cluster info no longer lists it.",
    source=_NS_ROUTES)
NS_CHANNEL_CLOSE = clause(
    "RMQ-NS-CHANNEL-CLOSE", Level.SHOULD,
    "When the connection a broker registered on closes, the name server drops the broker at once.",
    source="namesrv/src/main/java/org/apache/rocketmq/namesrv/routeinfo/BrokerHousekeepingService.java")
NS_EXPIRY = clause(
    "RMQ-NS-EXPIRY", Level.MUST,
    "A broker that does not re-register within 120 s is dropped (found by a scan every 10 s).",
    source=_NS_ROUTES)
NS_KV = clause(
    "RMQ-NS-KV", Level.MUST,
    "PUT_KV_CONFIG stores a value that GET_KV_CONFIG returns until DELETE_KV_CONFIG; a missing key is "
    "answered 22 QUERY_NOT_FOUND.",
    source=_NS_KV)

NS_KV_LIST = clause(
    "RMQ-NS-KV-LIST", Level.SHOULD,
    "GET_KVLIST_BY_NAMESPACE answers a namespace's pairs as {\"table\":{...}}: an empty table once all its "
    "keys were deleted (a namespace stays once created), 22 QUERY_NOT_FOUND for one never used.",
    source=_NS_KV)

# -- broker --------------------------------------------------------------------------------------------

BRK_SEND = clause(
    "RMQ-BRK-SEND", Level.MUST,
    "A stored send is answered SUCCESS with msgId (the offsetMsgId), queueId and queueOffset.",
    source=_SEND)
BRK_BATCH = clause(
    "RMQ-BRK-BATCH", Level.MUST,
    "SEND_BATCH_MESSAGE stores every message of the body in one queue at consecutive queue offsets; msgId "
    "lists their offsetMsgIds joined by commas and queueOffset is the first one's.",
    source=_SEND)
BRK_QUEUE_OFFSET = clause(
    "RMQ-BRK-QUEUE-OFFSET", Level.MUST,
    "Queue offsets of one queue are consecutive integers from 0, in the order messages are stored.",
    source="store/src/main/java/org/apache/rocketmq/store/CommitLog.java")
BRK_STORE_HOST = clause(
    "RMQ-BRK-STORE-HOST", Level.MUST,
    "The offsetMsgId of a send names the broker's store host (its listen port) and the commitlog offset "
    "at which VIEW_MESSAGE_BY_ID returns the message.",
    source=_SEND)
BRK_SEND_CHECKS = clause(
    "RMQ-BRK-SEND-CHECKS", Level.MUST,
    "A send is refused (never SUCCESS) when its topic is blank, has characters outside [%|a-zA-Z0-9_-], is "
    "longer than 127 characters, is a system topic, or its queueId is beyond the topic's queues.",
    source=_SEND_CHECK)
BRK_MESSAGE_ILLEGAL = clause(
    "RMQ-BRK-MESSAGE-ILLEGAL", Level.MUST,
    "A message whose body is longer than maxMessageSize (4 MiB), whose record would be longer than "
    "maxMessageSize + 64 KiB, or whose properties string is longer than 32767 bytes is refused with 13 "
    "MESSAGE_ILLEGAL; a body of exactly maxMessageSize is stored.",
    source=_SEND + "; store/src/main/java/org/apache/rocketmq/store/CommitLog.java (MessageExtEncoder)")
BRK_SEND_EXT = clause(
    "RMQ-BRK-SEND-EXT", Level.SHOULD,
    "A send response carries the extFields MSG_REGION and TRACE_ON.",
    source=_SEND)
BRK_STORED_PROPERTIES = clause(
    "RMQ-BRK-STORED-PROPERTIES", Level.SHOULD,
    "The broker adds CLUSTER to a stored message's properties and leaves WAIT out of them.",
    source="store/src/main/java/org/apache/rocketmq/store/CommitLog.java")
BRK_VIEW = clause(
    "RMQ-BRK-VIEW-BY-ID", Level.MUST,
    "VIEW_MESSAGE_BY_ID returns the record at a commitlog offset as its body, and a non-SUCCESS code for an "
    "offset holding no record.",
    source=_BRK + "processor/QueryMessageProcessor.java")
BRK_PULL = clause(
    "RMQ-BRK-PULL", Level.MUST,
    "A pull that finds messages answers SUCCESS with the stored records as the body (exactly as sent: body, "
    "tags, keys, properties, born host and time) and nextBeginOffset, minOffset, maxOffset.",
    source=_PULL)
BRK_PULL_STATUS = clause(
    "RMQ-BRK-PULL-STATUS", Level.MUST,
    "A pull at the queue's max offset answers 19 PULL_NOT_FOUND; past it or before the min offset 21 "
    "PULL_OFFSET_MOVED with nextBeginOffset corrected; an empty queue answers 19 at offset 0.",
    source=_STORE + " (getMessage)")
BRK_VISIBILITY = clause(
    "RMQ-BRK-VISIBILITY", Level.MUST,
    "A message whose send was answered SUCCESS becomes readable within 10 s: pulled by PULL_MESSAGE, "
    "counted by GET_MAX_OFFSET and the other offset queries, and found by QUERY_MESSAGE. It need not be "
    "readable when the answer arrives — Java dispatches the commitlog to consume queues and index "
    "asynchronously — so a reader that must see a write polls for it, bounded, before judging.",
    source=_STORE + " (ReputMessageService)")
BRK_PULL_HEADER = clause(
    "RMQ-BRK-PULL-HEADER", Level.MUST,
    "Every pull answer from a master carries nextBeginOffset, minOffset and maxOffset of the queue and "
    "suggestWhichBrokerId 0 (slave reading is off by default).",
    source=_PULL)
BRK_PULL_REMARK = clause(
    "RMQ-BRK-PULL-REMARK", Level.SHOULD,
    "A pull answer's remark is the name of the store's GetMessageStatus (FOUND, NO_MESSAGE_IN_QUEUE, "
    "OFFSET_OVERFLOW_ONE, OFFSET_OVERFLOW_BADLY, OFFSET_TOO_SMALL, ...).",
    source=_PULL)
BRK_PULL_CHECKS = clause(
    "RMQ-BRK-PULL-CHECKS", Level.MUST,
    "A pull of a topic the broker does not have is answered 17 TOPIC_NOT_EXIST, and one whose queueId is "
    "outside the topic's read queues 1 SYSTEM_ERROR.",
    source=_PULL)
LITE_PULL_FORBIDDEN_REMARK = "the broker[{broker_ip1}] for lite pull consumer is forbidden"
"""The remark of a LITE_PULL_MESSAGE refused because ``litePullMessageEnable`` is off."""
BRK_LITE_PULL = clause(
    "RMQ-BRK-LITE-PULL", Level.MUST,
    "LITE_PULL_MESSAGE (361, 5.0.0+), what a lite pull consumer sends (sysFlag FLAG_LITE_PULL_MESSAGE), is "
    "served by the pull processor on the main port exactly as PULL_MESSAGE: same header, checks, answers. "
    "When litePullMessageEnable (default true) is false it is answered 16 NO_PERMISSION, forbiddenType 1 "
    "(BROKER_FORBIDDEN), remark \"the broker[<brokerIP1>] for lite pull consumer is forbidden\", before "
    "any other check but the broker's read permission.",
    source=_PULL + " (processRequest); broker/src/main/java/org/apache/rocketmq/broker/BrokerController.java "
    "(registerProcessor); client/src/main/java/org/apache/rocketmq/client/impl/MQClientAPIImpl.java "
    "(pullMessage)")
BRK_PULL_SUBSCRIPTION = clause(
    "RMQ-BRK-PULL-SUBSCRIPTION", Level.MUST,
    "A pull without FLAG_SUBSCRIPTION is filtered by the subscription the group's heartbeat registered for "
    "the topic; one naming a subVersion newer than that subscription's is answered 25 "
    "SUBSCRIPTION_NOT_LATEST ('the consumer's subscription not latest').",
    source=_PULL)
BRK_OFFSET_MOVED_EVENT = clause(
    "RMQ-BRK-OFFSET-MOVED-EVENT", Level.SHOULD,
    "A master that answers a pull 21 PULL_OFFSET_MOVED writes a message to topic OFFSET_MOVED_EVENT queue 0 "
    "with TAGS and KEYS = the pull's consumerGroup and an OffsetMovedEvent body (consumerGroup, "
    "messageQueue, offsetRequest = the pull's queueOffset, offsetNew = the nextBeginOffset answered).",
    source=_PULL + " (generateOffsetMovedEvent)")
BRK_LONG_POLL = clause(
    "RMQ-BRK-LONG-POLL", Level.MUST,
    "A pull with FLAG_SUSPEND that finds nothing is held: it is answered with the message when one arrives, "
    "or with 19 PULL_NOT_FOUND once suspendTimeoutMillis has passed. Waking it runs every check of a pull "
    "again: a topic deleted while the pull was held is answered 17 TOPIC_NOT_EXIST. The commitOffset of a "
    "pull with FLAG_COMMIT_OFFSET is committed as it is held (QUERY_CONSUMER_OFFSET reads it back).",
    source=_BRK + "longpolling/PullRequestHoldService.java; " + _BRK + "processor/PullMessageProcessor.java "
    "(executeRequestWhenWakeup -> processRequest; 4.9.x: commitOffset after suspendPullRequest); " + _BRK
    + "processor/DefaultPullMessageResultHandler.java (5.x handle: tryCommitOffset, then suspendPullRequest)")
BRK_TAG_FILTER = clause(
    "RMQ-BRK-TAG-FILTER", Level.MUST,
    "With FLAG_SUBSCRIPTION and a TAG expression, a pull returns only messages whose tag is one of the "
    "expression's '||'-separated tags ('*' returns all).",
    source="broker/src/main/java/org/apache/rocketmq/broker/filter/ExpressionMessageFilter.java")
BRK_OFFSETS = clause(
    "RMQ-BRK-OFFSETS", Level.MUST,
    "GET_MAX_OFFSET answers the number of entries of a queue (0 for an unknown queue) and GET_MIN_OFFSET "
    "its first offset.",
    source=_ADMIN)
BRK_SEARCH_OFFSET = clause(
    "RMQ-BRK-SEARCH-OFFSET", Level.MUST,
    "SEARCH_OFFSET_BY_TIMESTAMP answers the queue offset of a message stored at that time; between two "
    "messages, the nearer one's (the earlier on a tie; 5.x: the later, its lower bound); before the first "
    "message, the first offset; after the last, the last message's offset (5.x: the max offset).",
    source=_STORE + " (getOffsetInQueueByTime)")
BRK_STORE_TIMESTAMP = clause(
    "RMQ-BRK-STORE-TIMESTAMP", Level.MUST,
    "A message's store timestamp is the broker's clock when it stored it, whatever born timestamp the "
    "producer sent; messages stored one after another have non-decreasing store timestamps.",
    source="store/src/main/java/org/apache/rocketmq/store/CommitLog.java (putMessage: setStoreTimestamp)")
BRK_EARLIEST_TIME = clause(
    "RMQ-BRK-EARLIEST-TIME", Level.MUST,
    "GET_EARLIEST_MSG_STORETIME answers the store timestamp of the message at the queue's min offset.",
    source=_ADMIN)
BRK_CONSUMER_OFFSET = clause(
    "RMQ-BRK-CONSUMER-OFFSET", Level.MUST,
    "UPDATE_CONSUMER_OFFSET (two-way or oneway) stores an offset that QUERY_CONSUMER_OFFSET returns; a "
    "group with no offset gets 22 QUERY_NOT_FOUND, or 0 while the queue's first message is in memory.",
    source=_BRK + "processor/ConsumerManageProcessor.java")
BRK_HEARTBEAT = clause(
    "RMQ-BRK-HEARTBEAT", Level.MUST,
    "HEART_BEAT registers the client's consumer groups: GET_CONSUMER_LIST_BY_GROUP lists its clientID until "
    "UNREGISTER_CLIENT; a group without consumers is answered SYSTEM_ERROR. Per topic the group keeps the "
    "subscription of the greatest subVersion; one without subVersion is as new as the moment it is decoded "
    "(SubscriptionData's field starts at System.currentTimeMillis()).",
    source=_BRK + "processor/ClientManageProcessor.java; " + _BRK + "client/ConsumerGroupInfo.java "
    "(updateSubscription); common/src/main/java/org/apache/rocketmq/common/protocol/heartbeat/"
    "SubscriptionData.java")
BRK_NOTIFY_IDS = clause(
    "RMQ-BRK-NOTIFY-IDS", Level.SHOULD,
    "When a consumer joins a group, the broker sends NOTIFY_CONSUMER_IDS_CHANGED (oneway, consumerGroup) "
    "to the group's connected consumers so that they rebalance at once.",
    source=_BRK + "client/DefaultConsumerIdsChangeListener.java")
BRK_LOCK = clause(
    "RMQ-BRK-LOCK", Level.MUST,
    "LOCK_BATCH_MQ grants each queue to one client of a group at a time (lockOKMQSet lists what this "
    "client holds); UNLOCK_BATCH_MQ releases it.",
    source=_BRK + "client/rebalance/RebalanceLockManager.java")
BRK_QUERY_MESSAGE = clause(
    "RMQ-BRK-QUERY-MESSAGE", Level.MUST,
    "QUERY_MESSAGE by key (or by UNIQ_KEY with _UNIQUE_KEY_QUERY=true; from 5.4.0 by TAGS string with "
    "indexType T, release rule query-by-index-type) returns the records indexed under it in the time range, "
    "and 22 QUERY_NOT_FOUND when there are none.",
    source=_BRK + "processor/QueryMessageProcessor.java")
BRK_CREATE_TOPIC = clause(
    "RMQ-BRK-CREATE-TOPIC", Level.MUST,
    "UPDATE_AND_CREATE_TOPIC creates a topic with the requested queues and permission and refuses system "
    "topic names with SYSTEM_ERROR; each topic it creates advances the counter of the topic table's "
    "dataVersion (DataVersion.nextVersion), which GET_ALL_TOPIC_CONFIG answers with the table.",
    source=_ADMIN)
BRK_ROUTE_PUBLISHED = clause(
    "RMQ-BRK-ROUTE-PUBLISHED", Level.MUST,
    "A topic created on a broker becomes routable at its name servers: the broker registers again at once.",
    source="broker/src/main/java/org/apache/rocketmq/broker/topic/TopicConfigManager.java")
BRK_AUTO_CREATE = clause(
    "RMQ-BRK-AUTO-CREATE", Level.MAY,
    "With autoCreateTopicEnable (the 4.9.8 default) a send to an unknown topic naming TBW102 as defaultTopic "
    "creates the topic.",
    source=_SEND_CHECK)
BRK_FAST_PORT = clause(
    "RMQ-BRK-FAST-PORT", Level.SHOULD,
    "A broker also listens on listenPort - 2 (the fast port), which serves the same requests except "
    "PULL_MESSAGE (and, 5.x, LITE_PULL_MESSAGE), answered 3 REQUEST_CODE_NOT_SUPPORTED.",
    source="broker/src/main/java/org/apache/rocketmq/broker/BrokerController.java")
BRK_ECHO_SERIALIZE_TYPE = clause(
    "RMQ-BRK-ECHO-SERIALIZE-TYPE", Level.SHOULD,
    "On the normal processing path a server answers in the request's serialization.",
    source="remoting/src/main/java/org/apache/rocketmq/remoting/netty/NettyRemotingAbstract.java")
BRK_TXN_CHECK = clause(
    "RMQ-BRK-TXN-CHECK", Level.MUST,
    "A half message not ended within transactionTimeOut is checked back: the broker sends a oneway "
    "CHECK_TRANSACTION_STATE to a connected producer of its PGROUP, with msgId and transactionId = its "
    "UNIQ_KEY, commitLogOffset and tranStateTableOffset naming a copy of it written again to "
    "RMQ_SYS_TRANS_HALF_TOPIC (offsetMsgId = that copy's), and as body the message under its real topic "
    "and queue with TRANSACTION_CHECK_TIMES counting the checks.",
    source=_TXN_CHECK + " (check), " + _BRK + "transaction/AbstractTransactionalMessageCheckListener.java")
BRK_TXN_CHECK_ANSWER = clause(
    "RMQ-BRK-TXN-CHECK-ANSWER", Level.MUST,
    "END_TRANSACTION naming the checked copy (fromTransactionCheck=true) is answered SUCCESS; COMMIT then "
    "delivers the message to its real topic and queue, ROLLBACK delivers nothing, and an ended "
    "transaction is not checked again.",
    source=_BRK + "processor/EndTransactionProcessor.java")
BRK_TXN_CHECK_MAX = clause(
    "RMQ-BRK-TXN-CHECK-MAX", Level.SHOULD,
    "A half message checked transactionCheckMax times without an answer is not checked again: it is moved "
    "to TRANS_CHECK_MAX_TIME_TOPIC with its properties (REAL_TOPIC, TRANSACTION_CHECK_TIMES) kept.",
    source=_BRK + "transaction/queue/DefaultTransactionalMessageCheckListener.java")
BRK_CHECKPOINT = clause(
    "RMQ-BRK-CHECKPOINT", Level.MUST,
    "After a clean shutdown the checkpoint's physic and logics timestamps are not ahead of the store time "
    "of the newest record: they are taken from records already written (the physic one at a thorough "
    "CommitLog flush, every flushPhysicQueueThoroughInterval), so they may lag the last record, even be 0 "
    "(5.x leaves logics at 0), but a checkpoint ahead of the records says the store lost some it had.",
    source="store/src/main/java/org/apache/rocketmq/store/StoreCheckpoint.java; store/src/main/java/org/"
           "apache/rocketmq/store/CommitLog.java (FlushRealTimeService)")
