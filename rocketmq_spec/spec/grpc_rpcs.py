"""The RPCs of ``MessagingService``, what a proxy turns each into, and which Code answers what.

A proxy holds no messages: Apache's 5.3 proxy serves each RPC with remoting requests to the name server
and the brokers (``remoting`` column), in local mode by calling the processors of a broker in its own
process. Its answers are the rows of ``CODE_ANSWERS``; the clauses below are what the ``grpc`` conformance
area checks against any proxy.
"""

from __future__ import annotations

from dataclasses import dataclass

from rocketmq_spec.spec.clauses import Level, clause
from rocketmq_spec.spec.grpc_schema import PROTO_2_0_4, PROTO_2_1_0

_PROXY = "proxy/src/main/java/org/apache/rocketmq/proxy/"
_GRPC = _PROXY + "grpc/v2/"


@dataclass(frozen=True)
class Rpc:
    name: str
    request: str
    response: str
    remoting: str
    """The remoting requests Apache's 5.3 proxy makes for it; "unimplemented" when it answers gRPC
    UNIMPLEMENTED."""
    meaning: str
    client_streaming: bool = False
    server_streaming: bool = False
    since: str = PROTO_2_0_4

    @property
    def path(self) -> str:
        return f"/apache.rocketmq.v2.MessagingService/{self.name}"


RPCS: tuple[Rpc, ...] = (
    Rpc("QueryRoute", "QueryRouteRequest", "QueryRouteResponse", "GET_ROUTEINFO_BY_TOPIC (name server)",
        "queues of a topic, the brokers' endpoints replaced by the proxy's"),
    Rpc("Heartbeat", "HeartbeatRequest", "HeartbeatResponse", "HEART_BEAT",
        "keep the client's producer or consumer registration alive"),
    Rpc("SendMessage", "SendMessageRequest", "SendMessageResponse", "SEND_MESSAGE_V2 / SEND_BATCH_MESSAGE",
        "store messages (normal, FIFO, delay, transactional half)"),
    Rpc("QueryAssignment", "QueryAssignmentRequest", "QueryAssignmentResponse",
        "GET_ROUTEINFO_BY_TOPIC, GET_SUBSCRIPTIONGROUP_CONFIG", "queues a push consumer receives from"),
    Rpc("ReceiveMessage", "ReceiveMessageRequest", "ReceiveMessageResponse", "POP_MESSAGE",
        "pop messages, making them invisible for a while", server_streaming=True),
    Rpc("AckMessage", "AckMessageRequest", "AckMessageResponse", "ACK_MESSAGE / BATCH_ACK_MESSAGE",
        "acknowledge popped messages"),
    Rpc("ForwardMessageToDeadLetterQueue", "ForwardMessageToDeadLetterQueueRequest",
        "ForwardMessageToDeadLetterQueueResponse", "CONSUMER_SEND_MSG_BACK (delay level -1), ACK_MESSAGE",
        "move a message the client gave up on to %DLQ%<group>"),
    Rpc("PullMessage", "PullMessageRequest", "PullMessageResponse", "unimplemented",
        "offset-based pull", server_streaming=True),
    Rpc("UpdateOffset", "UpdateOffsetRequest", "UpdateOffsetResponse", "unimplemented", "store an offset"),
    Rpc("GetOffset", "GetOffsetRequest", "GetOffsetResponse", "unimplemented", "read a stored offset"),
    Rpc("QueryOffset", "QueryOffsetRequest", "QueryOffsetResponse", "unimplemented", "look an offset up"),
    Rpc("EndTransaction", "EndTransactionRequest", "EndTransactionResponse", "END_TRANSACTION (oneway)",
        "commit or roll back a half message"),
    Rpc("Telemetry", "TelemetryCommand", "TelemetryCommand",
        "HEART_BEAT on settings; CHECK_TRANSACTION_STATE from the broker becomes a recover command",
        "client settings in, server commands out", client_streaming=True, server_streaming=True),
    Rpc("NotifyClientTermination", "NotifyClientTerminationRequest", "NotifyClientTerminationResponse",
        "UNREGISTER_CLIENT", "the client is leaving"),
    Rpc("ChangeInvisibleDuration", "ChangeInvisibleDurationRequest", "ChangeInvisibleDurationResponse",
        "CHANGE_MESSAGE_INVISIBLETIME", "make a popped message invisible for another while"),
    Rpc("RecallMessage", "RecallMessageRequest", "RecallMessageResponse", "RECALL_MESSAGE",
        "withdraw a delay message before it is due"),
    Rpc("SyncLiteSubscription", "SyncLiteSubscriptionRequest", "SyncLiteSubscriptionResponse",
        "unimplemented",         "lite push consumer subscriptions", since=PROTO_2_1_0),
)


def rpc(name: str) -> Rpc:
    return next(r for r in RPCS if r.name == name)


@dataclass(frozen=True)
class CodeAnswer:
    rpc: str
    code: str
    when: str


CODE_ANSWERS: tuple[CodeAnswer, ...] = (
    CodeAnswer("every RPC", "CLIENT_ID_REQUIRED", "no x-mq-client-id metadata"),
    CodeAnswer("every RPC", "ILLEGAL_TOPIC", "topic empty, longer than 127, outside [%|a-zA-Z0-9_-], or a "
               "system topic (TBW102, SCHEDULE_TOPIC_XXXX, RMQ_SYS_*, rmq_sys_* ...)"),
    CodeAnswer("every RPC", "ILLEGAL_CONSUMER_GROUP", "group empty, longer than 255, illegal characters, "
               "or a system group"),
    CodeAnswer("QueryRoute", "OK", "the topic exists: one MessageQueue per queue of each broker replica"),
    CodeAnswer("QueryRoute", "TOPIC_NOT_FOUND", "the name server has no route for the topic"),
    CodeAnswer("Heartbeat", "UNRECOGNIZED_CLIENT_TYPE",
               "no Settings were received on Telemetry from the client"),
    CodeAnswer("Heartbeat", "OK", "the client's producer or consumer registration was refreshed"),
    CodeAnswer("SendMessage", "OK", "every message stored (entries carry id, offset, transaction id)"),
    CodeAnswer("SendMessage", "MULTIPLE_RESULTS", "entries ended with different codes"),
    CodeAnswer("SendMessage", "MESSAGE_CORRUPTED", "no message, or messages of different topics"),
    CodeAnswer("SendMessage", "ILLEGAL_MESSAGE_ID", "a message has no message_id"),
    CodeAnswer("SendMessage", "MESSAGE_BODY_EMPTY", "a body is empty"),
    CodeAnswer("SendMessage", "MESSAGE_BODY_TOO_LARGE", "a body exceeds maxMessageSize (4 MiB)"),
    CodeAnswer("SendMessage", "ILLEGAL_MESSAGE_TAG", "a tag is blank or holds '|' or a control character"),
    CodeAnswer("SendMessage", "ILLEGAL_MESSAGE_KEY", "a key is blank or holds a control character"),
    CodeAnswer("SendMessage", "ILLEGAL_MESSAGE_GROUP",
               "a message group is blank, 64 bytes or longer, or holds a control character"),
    CodeAnswer("SendMessage", "ILLEGAL_MESSAGE_PROPERTY_KEY",
               "a user property key is a reserved remoting key, or a key or value holds a control character"),
    CodeAnswer("SendMessage", "MESSAGE_PROPERTIES_TOO_LARGE",
               "more than 128 user properties, or over 16 KiB"),
    CodeAnswer("SendMessage", "ILLEGAL_DELIVERY_TIME", "delivery_timestamp more than a day ahead"),
    CodeAnswer("SendMessage", "MESSAGE_PROPERTY_CONFLICT_WITH_TYPE", "the message's type is not the topic's "
               "message.type (MIXED accepts all, UNSPECIFIED none), or the topic does not exist"),
    CodeAnswer("EndTransaction", "INVALID_TRANSACTION_ID", "transaction_id is blank"),
    CodeAnswer("EndTransaction", "INTERNAL_SERVER_ERROR", "the proxy holds no transaction data for the id "
               "(not sent through it, already ended, or expired)"),
    CodeAnswer("EndTransaction", "OK", "END_TRANSACTION was sent to the broker (oneway)"),
    CodeAnswer("NotifyClientTermination", "UNRECOGNIZED_CLIENT_TYPE", "no Settings known for the client"),
    CodeAnswer("NotifyClientTermination", "OK", "the client was unregistered"),
    CodeAnswer("ReceiveMessage", "MESSAGE_NOT_FOUND", "no message arrived within the long-polling time"),
    CodeAnswer("ReceiveMessage", "ILLEGAL_INVISIBLE_TIME", "invisible_duration under 10 s or over 12 h"),
    CodeAnswer("ReceiveMessage", "ILLEGAL_POLLING_TIME",
               "long_polling_timeout beyond the request's deadline"),
    CodeAnswer("AckMessage", "INVALID_RECEIPT_HANDLE", "a receipt handle's invisible time has passed"),
    CodeAnswer("AckMessage", "INTERNAL_SERVER_ERROR", "a receipt handle does not decode (an entry's status)"),
    CodeAnswer("ChangeInvisibleDuration", "INVALID_RECEIPT_HANDLE", "the receipt handle's time has passed"),
)
"""Which Code each RPC answers when (Apache RocketMQ 5.3.3's proxy; limits are its ProxyConfig defaults)."""

MAX_MESSAGE_SIZE = 4 * 1024 * 1024
"""``ProxyConfig.maxMessageSize``: largest body SendMessage accepts."""
MAX_MESSAGE_GROUP_SIZE = 64
"""``ProxyConfig.maxMessageGroupSize``: a message group must be shorter than this many UTF-8 bytes."""
MAX_USER_PROPERTY_SIZE = 16 * 1024
USER_PROPERTY_MAX_NUM = 128
MAX_DELAY_MS = 24 * 3600 * 1000
"""``ProxyConfig.maxDelayTimeMills``: a delivery timestamp at most this far ahead."""
MIN_INVISIBLE_MS = 10_000
MAX_INVISIBLE_MS = 12 * 3600 * 1000
DEFAULT_INVISIBLE_MS = 60_000
MIN_LONG_POLLING_MS = 5_000
"""``grpcClientConsumerMinLongPollingTimeoutMillis``: the shortest long-polling time of a receive."""
MAX_LONG_POLLING_MS = 20_000
"""``grpcClientConsumerMaxLongPollingTimeoutMillis``: the long-polling time pushed to push consumers."""
CONSUMER_BATCH_SIZE = 32
"""``grpcClientConsumerLongPollingBatchSize``: the receive batch pushed to push consumers."""
RENEW_AHEAD_MS = 10_000
"""``renewAheadTimeMillis``: an auto-renewed message is renewed once its invisibility ends within this."""
RENEW_PERIOD_MS = 5_000
"""``renewSchedulePeriodMillis``: how often the proxy looks for messages to renew."""
RENEW_MAX_MS = 3 * 3600 * 1000
"""``renewMaxTimeMillis``: how long after its receive a message is renewed at most."""
RENEW_SLICES_MS = (60_000, 180_000, 300_000, 600_000, 1_800_000, 3_600_000)
"""``RenewStrategyPolicy``: the invisible time of the n-th renewal (the last one repeats)."""
MAX_RENEW_RETRIES = 3
"""``maxRenewRetryTimes``: failed renewals in a row after which the proxy lets the message go."""
INVISIBLE_WHEN_CLEAR_MS = 1_000
"""``invisibleTimeMillisWhenClear``: the invisible time left to the messages of a client that went away."""
PRODUCER_MAX_ATTEMPTS = 3
PRODUCER_BACKOFF_MS = (10, 1000, 2.0)
"""``grpcClientProducerBackoff{Initial,Max}Millis`` and multiplier: the producer retry policy pushed."""

_APP = _GRPC + "GrpcMessagingApplication.java"
_SEND = _GRPC + "producer/SendMessageActivity.java"
_ROUTE = _GRPC + "route/RouteActivity.java"
_CLIENT = _GRPC + "client/ClientActivity.java"
_TXN = _PROXY + "processor/TransactionProcessor.java"

ROUTE = clause(
    "RMQ-GRPC-ROUTE", Level.MUST,
    "QueryRoute of an existing topic answers OK and one MessageQueue per queue of the topic on each broker "
    "(ids 0..n-1, READ_WRITE when readable and writable), each naming the broker by name and id and giving "
    "the proxy's endpoints, never the broker's remoting address.",
    source=_ROUTE)
ROUTE_NOT_FOUND = clause(
    "RMQ-GRPC-ROUTE-NOT-FOUND", Level.MUST,
    "QueryRoute of a topic the name server does not know answers TOPIC_NOT_FOUND and no queue.",
    source=_PROXY + "grpc/v2/common/ResponseBuilder.java")
ILLEGAL_TOPIC = clause(
    "RMQ-GRPC-ILLEGAL-TOPIC", Level.MUST,
    "A topic name that is empty, has characters outside [%|a-zA-Z0-9_-], is longer than 127 characters or "
    "names a system topic is answered with ILLEGAL_TOPIC before any broker is asked.",
    source=_GRPC + "common/GrpcValidator.java")
SETTINGS = clause(
    "RMQ-GRPC-SETTINGS", Level.MUST,
    "Settings sent on Telemetry are answered on the stream with a TelemetryCommand of status OK carrying "
    "the settings merged with the server's: a producer's publishing gets max_body_size and "
    "validate_message_type and its backoff_policy the server's retry policy; a consumer's subscription gets "
    "receive_batch_size, long_polling_timeout and fifo from its group.",
    source=_CLIENT)
SETTINGS_REQUIRED = clause(
    "RMQ-GRPC-SETTINGS-REQUIRED", Level.MUST,
    "Heartbeat and NotifyClientTermination from a client that has sent no Settings answer "
    "UNRECOGNIZED_CLIENT_TYPE.",
    source=_CLIENT)
RECEIVE_BEFORE_SETTINGS = clause(
    "RMQ-GRPC-RECEIVE-BEFORE-SETTINGS", Level.SHOULD,
    "A ReceiveMessage from a client whose Settings the proxy does not hold (none sent yet on Telemetry, "
    "or still on their way) is answered INTERNAL_SERVER_ERROR at once, without waiting for them: Apache "
    "5.5.0's ReceiveMessageActivity dereferences the missing settings and ResponseBuilder writes the "
    "NullPointerException as message, class and first stack frame (JDK 17's text). A client waits for the "
    "Settings answer on Telemetry before it receives (the Java, Go and Node.js SDKs do) or tries again.",
    source="proxy/src/main/java/org/apache/rocketmq/proxy/grpc/v2/consumer/ReceiveMessageActivity.java "
           "(receiveMessage); proxy/src/main/java/org/apache/rocketmq/proxy/grpc/v2/common/"
           "GrpcClientSettingsManager.java (getClientSettings); proxy/src/main/java/org/apache/rocketmq/"
           "proxy/grpc/v2/common/ResponseBuilder.java (buildStatus)")
RECEIVE_BEFORE_SETTINGS_DETAIL = (
    'Cannot invoke "apache.rocketmq.v2.Settings.getClientType()" because "settings" is null. '
    "NullPointerException. org.apache.rocketmq.proxy.grpc.v2.consumer.ReceiveMessageActivity."
    "receiveMessage(ReceiveMessageActivity.java:68)")
"""The message of that answer (``ExceptionUtils.getErrorDetailMessage`` of JDK 17's helpful
NullPointerException)."""
SETTINGS_GROUP = clause(
    "RMQ-GRPC-SETTINGS-GROUP", Level.MUST,
    "From 5.5.0 a consumer's Settings on Telemetry naming a group its broker does not have are refused "
    "ILLEGAL_CONSUMER_GROUP \"group not found: <g>\" (the stream fails INVALID_ARGUMENT \"process client "
    "telemetryCommand failed. group not found: <g>\"), whatever autoCreateSubscriptionGroup says: the group "
    "is created first (mqadmin updateSubGroup). Earlier releases accept them.",
    source="proxy/src/main/java/org/apache/rocketmq/proxy/processor/ClientProcessor.java "
           "(getGroupOrException)")
GROUP_NOT_FOUND = clause(
    "RMQ-GRPC-GROUP-NOT-FOUND", Level.MUST,
    "ReceiveMessage for a consumer group the broker does not have answers CONSUMER_GROUP_NOT_FOUND with the "
    "broker's remark \"subscription group [<g>] does not exist, \\nSee <faq> for further details.\" when "
    "autoCreateSubscriptionGroup is false; with true (the default) the broker creates the group and the "
    "receive goes on (MESSAGE_NOT_FOUND when nothing is there).",
    source="broker/src/main/java/org/apache/rocketmq/broker/processor/PopMessageProcessor.java "
           "(processRequest); proxy/src/main/java/org/apache/rocketmq/proxy/grpc/v2/common/"
           "ResponseBuilder.java (RESPONSE_CODE_MAPPING)")
HEARTBEAT = clause(
    "RMQ-GRPC-HEARTBEAT", Level.MUST,
    "Heartbeat from a client whose Settings are known answers OK.",
    source=_CLIENT)
TERMINATION = clause(
    "RMQ-GRPC-TERMINATION", Level.MUST,
    "NotifyClientTermination from a client whose Settings are known answers OK and forgets the settings: a "
    "Heartbeat after it answers UNRECOGNIZED_CLIENT_TYPE.",
    source=_CLIENT)
SEND = clause(
    "RMQ-GRPC-SEND", Level.MUST,
    "SendMessage of valid messages answers OK with one entry per message: status OK, message_id equal to the "
    "message's system_properties.message_id, and the queue offset.",
    source=_SEND)
SEND_CORRUPTED = clause(
    "RMQ-GRPC-SEND-CORRUPTED", Level.MUST,
    "SendMessage without messages, or with messages of different topics, answers MESSAGE_CORRUPTED and "
    "stores nothing.",
    source=_SEND)
SEND_VALIDATION = clause(
    "RMQ-GRPC-SEND-VALIDATION", Level.MUST,
    "A message without message_id, with an empty body, with a body over 4 MiB, an illegal tag, key, message "
    "group or a reserved user property key is refused with the Code of CODE_ANSWERS and not stored.",
    source=_SEND)
SEND_TYPE = clause(
    "RMQ-GRPC-SEND-TYPE", Level.MUST,
    "A message whose type is not the topic's message.type (a FIFO or DELAY message to a NORMAL topic) is "
    "refused with MESSAGE_PROPERTY_CONFLICT_WITH_TYPE; a MIXED topic accepts every type.",
    source=_PROXY + "processor/validator/DefaultTopicMessageTypeValidator.java")
SEND_FIFO = clause(
    "RMQ-GRPC-SEND-FIFO", Level.MUST,
    "Single-message sends of one message_group all go to the same queue (consistent hash of the group over "
    "the writable queues), so a consumer sees them in send order.",
    source=_SEND)
SEND_UNKNOWN_TOPIC = clause(
    "RMQ-GRPC-SEND-UNKNOWN-TOPIC", Level.MUST,
    "SendMessage to a topic the broker does not have is refused with MESSAGE_PROPERTY_CONFLICT_WITH_TYPE: "
    "an unknown topic's message type is UNSPECIFIED, which accepts no message (a proxy that checks message "
    "types, Apache's default).",
    source=_PROXY + "processor/validator/DefaultTopicMessageTypeValidator.java")
END_TRANSACTION = clause(
    "RMQ-GRPC-END-TRANSACTION", Level.MUST,
    "EndTransaction with the transaction_id a SendMessage of a TRANSACTION message returned answers OK, "
    "once; a blank transaction_id answers INVALID_TRANSACTION_ID and an unknown or already ended one "
    "INTERNAL_SERVER_ERROR.",
    source=_TXN)
RECOVER_TRANSACTION = clause(
    "RMQ-GRPC-RECOVER-TRANSACTION", Level.MUST,
    "A half message left unresolved past the broker's check time reaches a live producer of its topic as a "
    "RecoverOrphanedTransactionCommand on its Telemetry stream, carrying the message and its transaction id; "
    "EndTransaction with source SOURCE_SERVER_CHECK then resolves it.",
    source=_GRPC + "channel/GrpcClientChannel.java")
RECEIVE = clause(
    "RMQ-GRPC-RECEIVE", Level.MUST,
    "ReceiveMessage of a group whose Settings are known streams a status OK, then each popped message with "
    "a receipt handle, then a delivery timestamp, and ends; with nothing to deliver within the long-polling "
    "time it streams status MESSAGE_NOT_FOUND and the delivery timestamp. A received message is not "
    "received again by the group while it is invisible.",
    source=_GRPC + "consumer/ReceiveMessageActivity.java")
RECEIVE_INVISIBLE = clause(
    "RMQ-GRPC-RECEIVE-INVISIBLE", Level.MUST,
    "ReceiveMessage with invisible_duration under 10 s or over 12 h (auto_renew off) answers "
    "ILLEGAL_INVISIBLE_TIME and pops nothing.",
    source=_GRPC + "common/GrpcValidator.java")
ACK = clause(
    "RMQ-GRPC-ACK", Level.MUST,
    "AckMessage with receipt handles from a receive answers OK per entry, and the group never receives "
    "those messages again; an entry whose handle does not decode answers INTERNAL_SERVER_ERROR (Java's "
    "ReceiptHandle.decode throws), one whose invisible time has passed INVALID_RECEIPT_HANDLE.",
    source=_GRPC + "consumer/AckMessageActivity.java")
REDELIVERY = clause(
    "RMQ-GRPC-REDELIVERY", Level.MUST,
    "A received message that is not acked is received again by its group after its invisible duration, "
    "with delivery_attempt one higher.",
    source="broker/src/main/java/org/apache/rocketmq/broker/processor/PopReviveService.java")
CHANGE_INVISIBLE = clause(
    "RMQ-GRPC-CHANGE-INVISIBLE", Level.MUST,
    "ChangeInvisibleDuration of a received message answers OK with a new receipt handle, and the message "
    "stays invisible for the new duration from then on; the new handle acks it.",
    source=_GRPC + "consumer/ChangeInvisibleDurationActivity.java")
AUTO_RENEW = clause(
    "RMQ-GRPC-AUTO-RENEW", Level.SHOULD,
    "A message received with auto_renew (a push consumer's receive) is popped invisible for 60 s and kept "
    "invisible by the proxy while its client is registered: 10 s before its invisibility ends the proxy "
    "changes it to 1 min, then 3, 5, 10, 30 min and 1 h, for at most 3 h after the receive. An ack or "
    "change of the message with the handle the client received uses the proxy's newest handle; when the "
    "client terminates or its registration expires its renewed messages become visible again within 1 s.",
    source=_PROXY + "service/receipt/DefaultReceiptHandleManager.java")
RELAY = clause(
    "RMQ-GRPC-RELAY", Level.MUST,
    "An admin request the broker relays to a gRPC client reaches it on its Telemetry stream with a nonce: "
    "GET_CONSUMER_RUNNING_INFO with jstackEnable as a PrintThreadStackTraceCommand, whose ThreadStackTrace "
    "answer becomes a SUCCESS holding a ConsumerRunningInfo with that jstack; CONSUME_MESSAGE_DIRECTLY as a "
    "VerifyMessageCommand with the message, whose VerifyMessageResult answer (status OK) becomes a SUCCESS "
    "holding a ConsumeMessageDirectlyResult with consumeResult CR_SUCCESS (CR_LATER for "
    "FAILED_TO_CONSUME_MESSAGE, CR_RETURN_NULL for MESSAGE_CORRUPTED) and remark \"from gRPC client\".",
    source=_GRPC + "channel/GrpcClientChannel.java")
DLQ = clause(
    "RMQ-GRPC-DLQ", Level.MUST,
    "ForwardMessageToDeadLetterQueue of a received message answers OK, puts the message in its group's "
    "%DLQ%<group> topic (CONSUMER_SEND_MSG_BACK with delay level -1) and acks it: the group does not "
    "receive it again.",
    source=_GRPC + "producer/ForwardMessageToDLQActivity.java")
UNIMPLEMENTED = clause(
    "RMQ-GRPC-UNIMPLEMENTED", Level.MAY,
    "PullMessage, UpdateOffset, GetOffset and QueryOffset (and SyncLiteSubscription of a 2.0.4 server) "
    "may be answered with gRPC status UNIMPLEMENTED: Apache's 5.3 proxy does not serve them.",
    source=_APP)
