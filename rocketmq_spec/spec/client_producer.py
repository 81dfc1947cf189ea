"""Remoting producers: how a conforming client encodes what it sends and reacts to the broker's answers.

The encoding rules (properties, UNIQ_KEY, batches, compression, born time) restate the message clauses
for the producer that writes them; the reactions (retries, TOPIC_NOT_EXIST, transaction ends and
check-backs) are what a client does with an answer, which no broker-side case can see. Sources are the
Java client of release 4.9.7 unless a clause names 5.x.
"""

from __future__ import annotations

from rocketmq_spec.spec.clauses import Level, clause
from rocketmq_spec.spec.releases import since

_CLIENT = "client/src/main/java/org/apache/rocketmq/client/"
_PRODUCER = _CLIENT + "impl/producer/DefaultMQProducerImpl.java"
_API = _CLIENT + "impl/MQClientAPIImpl.java"
_ID_SETTER = "common/src/main/java/org/apache/rocketmq/common/message/MessageClientIDSetter.java"
_RETRY_CODES = _CLIENT + "producer/DefaultMQProducer.java (retryResponseCodes)"
_DECODER = "common/src/main/java/org/apache/rocketmq/common/message/MessageDecoder.java"
_REMOTING_CLIENT = "remoting/src/main/java/org/apache/rocketmq/remoting/netty/NettyRemotingClient.java"

SEND_RETRY_CODES_4X = (17, 14, 1, 16, 204, 205)
"""Broker answers a 4.9.7 sync send retries: TOPIC_NOT_EXIST, SERVICE_NOT_AVAILABLE, SYSTEM_ERROR,
NO_PERMISSION, NO_BUYER_ID, NOT_IN_CURRENT_UNIT (``DefaultMQProducer.retryResponseCodes``); 5.3.0 adds
SYSTEM_BUSY (2) and 5.3.1 GO_AWAY (1500)."""
SEND_BUSY_RETRIED = since("5.3.0")
"""Client releases whose sync send retries SYSTEM_BUSY: 5.3.0 added code 2 to retryResponseCodes."""
GO_AWAY_RESENT = since("5.2.0")
"""Client releases whose remoting client reconnects and resends a request answered GO_AWAY (1500)
(``NettyClientConfig.enableReconnectForGoAway``, default true); older ones know no such code."""

PRODUCER_UNIQ_KEY = clause(
    "RMQ-CLIENT-UNIQ-KEY", Level.MUST,
    "Each single message sent carries a UNIQ_KEY property of 32 (IPv4) or 56 (IPv6) upper-case hex "
    "characters laid out as RMQ-MSGID-UNIQ-KEY, distinct for distinct messages.",
    source=_ID_SETTER + " (createUniqID); " + _PRODUCER + " (sendKernelImpl)")
PRODUCER_UNIQ_TIME = clause(
    "RMQ-CLIENT-UNIQ-TIME", Level.SHOULD,
    "A UNIQ_KEY's time field is the producer's milliseconds into its local month at the send "
    "(RMQ-MSGID-UNIQ-TIME), so it lies within the month's range and grows with later sends.",
    source=_ID_SETTER + " (createUniqID)")
PRODUCER_PROPERTIES = clause(
    "RMQ-CLIENT-PROPERTIES", Level.MUST,
    "The properties field is `name\\u0001value\\u0002...` (RMQ-PROP-*), with the user's TAGS and KEYS "
    "(keys joined by spaces) as given.",
    source=_DECODER + " (messageProperties2String)")
PRODUCER_BODY = clause(
    "RMQ-CLIENT-BODY", Level.MUST,
    "The body sent is the application's body byte for byte (after decompression when sysFlag says it is "
    "compressed).",
    source=_PRODUCER + " (sendKernelImpl)")
PRODUCER_BATCH = clause(
    "RMQ-CLIENT-BATCH", Level.MUST,
    "A batch send's body is the concatenation of encoded messages (RMQ-BATCH-*), one per message of the "
    "batch, each with its own UNIQ_KEY, and its header has batch=true.",
    source=_DECODER + " (encodeMessages); common/.../message/MessageBatch.java (generateFromList)")
PRODUCER_COMPRESS = clause(
    "RMQ-CLIENT-COMPRESS", Level.SHOULD,
    "A single message body of compressMsgBodyOverHowmuch (4096) bytes or more is sent compressed with "
    "the COMPRESSED flag (and, from 5.0, its type) in sysFlag; a smaller body is sent as it is.",
    source=_PRODUCER + " (tryToCompressMessage, sendKernelImpl)")
PRODUCER_BORN = clause(
    "RMQ-CLIENT-BORN-TIMESTAMP", Level.SHOULD,
    "A send's bornTimestamp is the client's clock in ms when it built the request: within seconds of "
    "the time the request arrives.",
    source=_PRODUCER + " (sendKernelImpl)")
PRODUCER_DEFAULT_TOPIC = clause(
    "RMQ-CLIENT-DEFAULT-TOPIC", Level.SHOULD,
    "A send names defaultTopic TBW102 and defaultTopicQueueNums 4, so that a broker with "
    "autoCreateTopicEnable can create the topic.",
    source=_PRODUCER + " (sendKernelImpl)")
PRODUCER_QUEUE = clause(
    "RMQ-CLIENT-QUEUE", Level.MUST,
    "A send names a queueId that exists in the route the client fetched (0 <= queueId < writeQueueNums of "
    "the broker it sends to).",
    source=_CLIENT + "impl/producer/TopicPublishInfo.java (selectOneMessageQueue)")
PRODUCER_ONEWAY = clause(
    "RMQ-CLIENT-ONEWAY-SEND", Level.MUST,
    "A oneway send sets the oneway bit (2) in flag, and the client does not wait for an answer.",
    source=_API + " (sendMessage, ONEWAY: invokeOneway)")
PRODUCER_RETRY = clause(
    "RMQ-CLIENT-SEND-RETRY", Level.SHOULD,
    "A sync send answered SYSTEM_ERROR (or another retryable code) is tried again up to "
    "retryTimesWhenSendFailed (2) more times, keeping the message's UNIQ_KEY and taking a new opaque.",
    source=_PRODUCER + " (sendDefaultImpl); " + _RETRY_CODES)
PRODUCER_RETRY_BOUND = clause(
    "RMQ-CLIENT-SEND-RETRY-BOUND", Level.MUST,
    "A client gives up a failing send after a bounded number of attempts (1 + retryTimesWhenSendFailed) "
    "and reports the error to the application.",
    source=_PRODUCER + " (sendDefaultImpl: timesTotal)")
PRODUCER_NO_RETRY = clause(
    "RMQ-CLIENT-SEND-NO-RETRY", Level.SHOULD,
    "A sync send answered with a code outside retryResponseCodes (MESSAGE_ILLEGAL 13, and SYSTEM_BUSY 2 "
    "before 5.3.0) is not tried again: the error goes to the application.",
    source=_PRODUCER + " (sendDefaultImpl); " + _RETRY_CODES)
PRODUCER_SLOW_ANSWER = clause(
    "RMQ-CLIENT-SLOW-ANSWER", Level.MUST,
    "A send answered late but within sendMsgTimeout (3 s) succeeds: the client matches the answer by "
    "opaque and does not report an error.",
    source=_API + " (sendMessageSync); remoting/.../netty/NettyRemotingAbstract.java (invokeSyncImpl)")
PRODUCER_RECONNECT = clause(
    "RMQ-CLIENT-RECONNECT", Level.SHOULD,
    "After the broker connection drops, the client's next request opens a new connection instead of "
    "failing for good.",
    source="remoting/src/main/java/org/apache/rocketmq/remoting/netty/NettyRemotingClient.java "
           "(getAndCreateChannel)")
PRODUCER_TOPIC_NOT_EXIST = clause(
    "RMQ-CLIENT-TOPIC-NOT-EXIST", Level.SHOULD,
    "When the name server answers TOPIC_NOT_EXIST (17) for a topic, a producer asks for the route of "
    "TBW102 and sends through it (the Java and C++ clients; ali-ons fails the send instead).",
    source=_PRODUCER + " (tryToFindTopicPublishInfo); " + _CLIENT + "impl/factory/MQClientInstance.java "
           "(updateTopicRouteInfoFromNameServer)")
PRODUCER_TXN_HALF = clause(
    "RMQ-CLIENT-TXN-HALF", Level.MUST,
    "A transactional send's half message has sysFlag TRANSACTION_PREPARED (4) and the properties "
    "TRAN_MSG=true and PGROUP=<producer group>.",
    source=_PRODUCER + " (sendMessageInTransaction, sendKernelImpl)")
PRODUCER_TXN_CHECK = clause(
    "RMQ-CLIENT-TXN-CHECK", Level.MUST,
    "On CHECK_TRANSACTION_STATE (39) from a broker the client runs its checker and answers, on that "
    "connection, with a oneway END_TRANSACTION (37): fromTransactionCheck=true, the check's commitLogOffset "
    "and tranStateTableOffset, and commitOrRollback 8, 12 or 0 as the checker decided.",
    source=_CLIENT + "impl/ClientRemotingProcessor.java (checkTransactionState); "
    + _PRODUCER + " (checkTransactionState)")
PRODUCER_TXN_END = clause(
    "RMQ-CLIENT-TXN-END", Level.MUST,
    "After the local transaction the client sends END_TRANSACTION (37) oneway to the half message's broker "
    "with commitOrRollback 8 (commit) or 12 (rollback), its msgId and its producerGroup.",
    source=_PRODUCER + " (endTransaction); " + _API + " (endTransactionOneway)")
PRODUCER_SEND_BUSY = clause(
    "RMQ-CLIENT-SEND-BUSY", Level.SHOULD,
    "A sync send answered SYSTEM_BUSY (2, a flow-controlling broker) is handled as the client's release "
    "handles it (its version word): up to 5.2 it is not tried again and the error goes to the application "
    "at once (code 2 is outside retryResponseCodes, processSendResponse throws MQBrokerException, unlike "
    "SYSTEM_ERROR 1, which is retried); from 5.3.0 it is retried like SYSTEM_ERROR, keeping the UNIQ_KEY.",
    source=_PRODUCER + " (sendDefaultImpl: the MQBrokerException branch); " + _API
    + " (processSendResponse); " + _RETRY_CODES)
PRODUCER_GO_AWAY = clause(
    "RMQ-CLIENT-GO-AWAY", Level.SHOULD,
    "A request answered GO_AWAY (1500, a server shutting down gracefully: RMQ-SRV-GO-AWAY) is never sent "
    "again on that connection. A client of 5.2.0 or later (its version word) opens a new connection to the "
    "same address and resends the request once there, with the same header and body and a new opaque, "
    "so the send succeeds; an older client, which knows no such code, handles it as a refusal it does not "
    "retry: the error goes to the application.",
    source=_REMOTING_CLIENT + " (invokeImpl, ChannelWrapper.reconnect; 5.2.0+); " + _API
    + " (processSendResponse: an unknown code is an MQBrokerException; 4.9.7)")
