"""Requests and responses of ``MessagingService`` (service.proto), and the Telemetry stream's commands.

Every response carries a ``Status``; ReceiveMessage streams a status line, a delivery timestamp and the
messages as separate responses (a oneof), ending with its status. The Telemetry stream is bidirectional:
the client opens it with its ``Settings``; the server answers with the merged settings and later pushes
commands (recover an orphaned transaction, print thread stacks, verify a message) whose results the client
sends back on the same stream.
"""

from __future__ import annotations

from rocketmq_spec.spec.grpc_definition import DURATION, OPT, REP, TIMESTAMP
from rocketmq_spec.spec.grpc_schema import PROTO_2_1_0, PROTO_2_1_1, PROTO_2_1_2, File, ProtoMessage
from rocketmq_spec.spec.grpc_schema import ProtoField as F

S = File.SERVICE
_STATUS = F("status", 1, "Status", "outcome")


def _status_only(name: str, meaning: str, since: str = "2.0.4") -> ProtoMessage:
    return ProtoMessage(name, meaning, (_STATUS,), S, since=since)


QUERY_ROUTE_REQUEST = ProtoMessage("QueryRouteRequest", "the queues of a topic", (
    F("topic", 1, "Resource", "topic"),
    F("endpoints", 2, "Endpoints", "the access point the client used; routes name it as the "
      "brokers' endpoints"),
), S)
QUERY_ROUTE_RESPONSE = ProtoMessage("QueryRouteResponse", "", (
    _STATUS,
    F("message_queues", 2, "MessageQueue", "one per queue and broker replica", REP),
), S)
SEND_MESSAGE_REQUEST = ProtoMessage("SendMessageRequest", "messages of one topic", (
    F("messages", 1, "Message", "the messages; more than one is a batch", REP),
), S)
SEND_RESULT_ENTRY = ProtoMessage("SendResultEntry", "the outcome for one message", (
    _STATUS,
    F("message_id", 2, "string", "the message's id (its UNIQ_KEY)"),
    F("transaction_id", 3, "string", "transaction id of a half message"),
    F("offset", 4, "int64", "queue offset"),
    F("recall_handle", 5, "string", "handle to recall a delay message"),
), S)
SEND_MESSAGE_RESPONSE = ProtoMessage("SendMessageResponse", "", (
    _STATUS,
    F("entries", 2, "SendResultEntry", "one per message", REP),
), S)
QUERY_ASSIGNMENT_REQUEST = ProtoMessage("QueryAssignmentRequest", "the queues a push consumer polls", (
    F("topic", 1, "Resource", "topic"),
    F("group", 2, "Resource", "consumer group"),
    F("endpoints", 3, "Endpoints", "access point"),
), S)
QUERY_ASSIGNMENT_RESPONSE = ProtoMessage("QueryAssignmentResponse", "", (
    _STATUS,
    F("assignments", 2, "Assignment", "queues to receive from", REP),
), S)
RECEIVE_MESSAGE_REQUEST = ProtoMessage("ReceiveMessageRequest", "pop messages of a queue", (
    F("group", 1, "Resource", "consumer group"),
    F("message_queue", 2, "MessageQueue", "queue; id -1 for any queue"),
    F("filter_expression", 3, "FilterExpression", "filter"),
    F("batch_size", 4, "int32", "most messages"),
    F("invisible_duration", 5, DURATION, "how long received messages stay invisible (simple consumer)", OPT),
    F("auto_renew", 6, "bool", "the server renews invisibility itself (push consumer)"),
    F("long_polling_timeout", 7, DURATION, "how long to wait for a message", OPT),
    F("attempt_id", 8, "string", "repeats of one receive share it", OPT),
), S)
RECEIVE_MESSAGE_RESPONSE = ProtoMessage("ReceiveMessageResponse", "one item of the receive stream", (
    F("status", 1, "Status", "the closing status", oneof="content"),
    F("message", 2, "Message", "a received message", oneof="content"),
    F("delivery_timestamp", 3, TIMESTAMP, "when the server started delivering", oneof="content"),
), S)
ACK_MESSAGE_ENTRY = ProtoMessage("AckMessageEntry", "one message to acknowledge", (
    F("message_id", 1, "string", "message id"),
    F("receipt_handle", 2, "string", "receipt handle from the delivery"),
    F("lite_topic", 3, "string", "lite topic", OPT, since=PROTO_2_1_0),
), S)
ACK_MESSAGE_REQUEST = ProtoMessage("AckMessageRequest", "", (
    F("group", 1, "Resource", "consumer group"),
    F("topic", 2, "Resource", "topic"),
    F("entries", 3, "AckMessageEntry", "messages", REP),
), S)
ACK_MESSAGE_RESULT_ENTRY = ProtoMessage("AckMessageResultEntry", "", (
    F("message_id", 1, "string", "message id"),
    F("receipt_handle", 2, "string", "receipt handle"),
    F("status", 3, "Status", "outcome for this entry"),
), S)
ACK_MESSAGE_RESPONSE = ProtoMessage("AckMessageResponse", "", (
    _STATUS,
    F("entries", 2, "AckMessageResultEntry", "one per entry", REP),
), S)
FORWARD_TO_DLQ_REQUEST = ProtoMessage("ForwardMessageToDeadLetterQueueRequest", "", (
    F("group", 1, "Resource", "consumer group"),
    F("topic", 2, "Resource", "topic"),
    F("receipt_handle", 3, "string", "receipt handle"),
    F("message_id", 4, "string", "message id"),
    F("delivery_attempt", 5, "int32", "attempts so far"),
    F("max_delivery_attempts", 6, "int32", "the group's limit"),
    F("lite_topic", 7, "string", "lite topic", OPT, since=PROTO_2_1_0),
), S)
FORWARD_TO_DLQ_RESPONSE = _status_only("ForwardMessageToDeadLetterQueueResponse", "")
HEARTBEAT_REQUEST = ProtoMessage("HeartbeatRequest", "keeps the client registered", (
    F("group", 1, "Resource", "consumer group (absent for a producer)", OPT),
    F("client_type", 2, "ClientType", "client kind"),
), S)
HEARTBEAT_RESPONSE = _status_only("HeartbeatResponse", "")
END_TRANSACTION_REQUEST = ProtoMessage("EndTransactionRequest", "commit or roll back a half message", (
    F("topic", 1, "Resource", "topic"),
    F("message_id", 2, "string", "message id"),
    F("transaction_id", 3, "string", "transaction id from the send"),
    F("resolution", 4, "TransactionResolution", "COMMIT or ROLLBACK"),
    F("source", 5, "TransactionSource", "client or server check"),
    F("trace_context", 6, "string", "trace context"),
), S)
END_TRANSACTION_RESPONSE = _status_only("EndTransactionResponse", "")
PRINT_THREAD_STACK_TRACE_COMMAND = ProtoMessage("PrintThreadStackTraceCommand", "server asks for stacks", (
    F("nonce", 1, "string", "matches the answer"),
), S)
RECONNECT_ENDPOINTS_COMMAND = ProtoMessage("ReconnectEndpointsCommand", "server asks for a reconnect", (
    F("nonce", 1, "string", "matches the answer"),
), S, since=PROTO_2_1_0)
THREAD_STACK_TRACE = ProtoMessage("ThreadStackTrace", "client's stacks", (
    F("nonce", 1, "string", "from the command"),
    F("thread_stack_trace", 2, "string", "the stacks", OPT),
), S)
VERIFY_MESSAGE_COMMAND = ProtoMessage("VerifyMessageCommand",
                                      "server asks the client to consume one message", (
    F("nonce", 1, "string", "matches the answer"),
    F("message", 2, "Message", "the message"),
), S)
VERIFY_MESSAGE_RESULT = ProtoMessage("VerifyMessageResult",
                                     "the client consumed it (status in the command)", (
    F("nonce", 1, "string", "from the command"),
), S)
RECOVER_ORPHANED_TRANSACTION_COMMAND = ProtoMessage(
    "RecoverOrphanedTransactionCommand", "server asks a producer to resolve a half message", (
        F("message", 1, "Message", "the half message"),
        F("transaction_id", 2, "string", "its transaction id"),
    ), S)
NOTIFY_UNSUBSCRIBE_LITE_COMMAND = ProtoMessage("NotifyUnsubscribeLiteCommand", "", (
    F("lite_topic", 1, "string", "lite topic"),
), S, since=PROTO_2_1_0)
TELEMETRY_COMMAND = ProtoMessage("TelemetryCommand", "one item of the Telemetry stream, either way", (
    F("status", 1, "Status", "outcome of the command this answers", OPT),
    F("settings", 2, "Settings", "client settings (client to server), merged settings (back)",
      oneof="command"),
    F("thread_stack_trace", 3, "ThreadStackTrace", "client to server", oneof="command"),
    F("verify_message_result", 4, "VerifyMessageResult", "client to server", oneof="command"),
    F("recover_orphaned_transaction_command", 5, "RecoverOrphanedTransactionCommand", "server to client",
      oneof="command"),
    F("print_thread_stack_trace_command", 6, "PrintThreadStackTraceCommand", "server to client",
      oneof="command"),
    F("verify_message_command", 7, "VerifyMessageCommand", "server to client", oneof="command"),
    F("reconnect_endpoints_command", 8, "ReconnectEndpointsCommand", "server to client", oneof="command",
      since=PROTO_2_1_0),
    F("notify_unsubscribe_lite_command", 9, "NotifyUnsubscribeLiteCommand", "server to client",
      oneof="command", since=PROTO_2_1_0),
), S)
NOTIFY_CLIENT_TERMINATION_REQUEST = ProtoMessage("NotifyClientTerminationRequest", "the client is leaving", (
    F("group", 1, "Resource", "consumer group (absent for a producer)", OPT),
), S)
NOTIFY_CLIENT_TERMINATION_RESPONSE = _status_only("NotifyClientTerminationResponse", "")
CHANGE_INVISIBLE_DURATION_REQUEST = ProtoMessage("ChangeInvisibleDurationRequest", "", (
    F("group", 1, "Resource", "consumer group"),
    F("topic", 2, "Resource", "topic"),
    F("receipt_handle", 3, "string", "receipt handle"),
    F("invisible_duration", 4, DURATION, "new invisibility from now"),
    F("message_id", 5, "string", "message id"),
    F("lite_topic", 6, "string", "lite topic", OPT, since=PROTO_2_1_2),
    F("suspend", 7, "bool", "do not count a delivery attempt", OPT, since=PROTO_2_1_2),
), S)
CHANGE_INVISIBLE_DURATION_RESPONSE = ProtoMessage("ChangeInvisibleDurationResponse", "", (
    _STATUS,
    F("receipt_handle", 2, "string", "the new receipt handle (the old one is spent)"),
), S)
PULL_MESSAGE_REQUEST = ProtoMessage("PullMessageRequest", "", (
    F("group", 1, "Resource", "consumer group"),
    F("message_queue", 2, "MessageQueue", "queue"),
    F("offset", 3, "int64", "first offset"),
    F("batch_size", 4, "int32", "most messages"),
    F("filter_expression", 5, "FilterExpression", "filter"),
    F("long_polling_timeout", 6, DURATION, "long-polling time"),
), S)
PULL_MESSAGE_RESPONSE = ProtoMessage("PullMessageResponse", "", (
    F("status", 1, "Status", "closing status", oneof="content"),
    F("message", 2, "Message", "a message", oneof="content"),
    F("next_offset", 3, "int64", "offset to pull from next", oneof="content"),
), S)
UPDATE_OFFSET_REQUEST = ProtoMessage("UpdateOffsetRequest", "", (
    F("group", 1, "Resource", "consumer group"),
    F("message_queue", 2, "MessageQueue", "queue"),
    F("offset", 3, "int64", "offset to store"),
), S)
UPDATE_OFFSET_RESPONSE = _status_only("UpdateOffsetResponse", "")
GET_OFFSET_REQUEST = ProtoMessage("GetOffsetRequest", "", (
    F("group", 1, "Resource", "consumer group"),
    F("message_queue", 2, "MessageQueue", "queue"),
), S)
GET_OFFSET_RESPONSE = ProtoMessage("GetOffsetResponse", "", (
    _STATUS,
    F("offset", 2, "int64", "stored offset"),
), S)
QUERY_OFFSET_REQUEST = ProtoMessage("QueryOffsetRequest", "", (
    F("message_queue", 1, "MessageQueue", "queue"),
    F("query_offset_policy", 2, "QueryOffsetPolicy", "which offset"),
    F("timestamp", 3, TIMESTAMP, "for TIMESTAMP", OPT),
), S)
QUERY_OFFSET_RESPONSE = ProtoMessage("QueryOffsetResponse", "", (
    _STATUS,
    F("offset", 2, "int64", "offset"),
), S)
RECALL_MESSAGE_REQUEST = ProtoMessage("RecallMessageRequest", "withdraw a delay message before it is due", (
    F("topic", 1, "Resource", "topic"),
    F("recall_handle", 2, "string", "from the SendResultEntry"),
), S)
RECALL_MESSAGE_RESPONSE = ProtoMessage("RecallMessageResponse", "", (
    _STATUS,
    F("message_id", 2, "string", "id of the recalled message"),
), S)
SYNC_LITE_SUBSCRIPTION_REQUEST = ProtoMessage("SyncLiteSubscriptionRequest", "", (
    F("action", 1, "LiteSubscriptionAction", "change"),
    F("topic", 2, "Resource", "bind topic"),
    F("group", 3, "Resource", "consumer group"),
    F("lite_topic_set", 4, "string", "lite topics", REP),
    F("version", 5, "int64", "subscription version", OPT),
    F("offset_option", 6, "OffsetOption", "start offset", OPT, since=PROTO_2_1_1),
), S, since=PROTO_2_1_0)
SYNC_LITE_SUBSCRIPTION_RESPONSE = _status_only("SyncLiteSubscriptionResponse", "", since=PROTO_2_1_0)

SERVICE_MESSAGES: tuple[ProtoMessage, ...] = (
    QUERY_ROUTE_REQUEST, QUERY_ROUTE_RESPONSE, SEND_MESSAGE_REQUEST, SEND_RESULT_ENTRY, SEND_MESSAGE_RESPONSE,
    QUERY_ASSIGNMENT_REQUEST, QUERY_ASSIGNMENT_RESPONSE, RECEIVE_MESSAGE_REQUEST, RECEIVE_MESSAGE_RESPONSE,
    ACK_MESSAGE_ENTRY, ACK_MESSAGE_REQUEST, ACK_MESSAGE_RESULT_ENTRY, ACK_MESSAGE_RESPONSE,
    FORWARD_TO_DLQ_REQUEST, FORWARD_TO_DLQ_RESPONSE, HEARTBEAT_REQUEST, HEARTBEAT_RESPONSE,
    END_TRANSACTION_REQUEST, END_TRANSACTION_RESPONSE, PRINT_THREAD_STACK_TRACE_COMMAND,
    RECONNECT_ENDPOINTS_COMMAND, THREAD_STACK_TRACE, VERIFY_MESSAGE_COMMAND, VERIFY_MESSAGE_RESULT,
    RECOVER_ORPHANED_TRANSACTION_COMMAND, NOTIFY_UNSUBSCRIBE_LITE_COMMAND, TELEMETRY_COMMAND,
    NOTIFY_CLIENT_TERMINATION_REQUEST, NOTIFY_CLIENT_TERMINATION_RESPONSE, CHANGE_INVISIBLE_DURATION_REQUEST,
    CHANGE_INVISIBLE_DURATION_RESPONSE, PULL_MESSAGE_REQUEST, PULL_MESSAGE_RESPONSE, UPDATE_OFFSET_REQUEST,
    UPDATE_OFFSET_RESPONSE, GET_OFFSET_REQUEST, GET_OFFSET_RESPONSE, QUERY_OFFSET_REQUEST,
    QUERY_OFFSET_RESPONSE, RECALL_MESSAGE_REQUEST, RECALL_MESSAGE_RESPONSE, SYNC_LITE_SUBSCRIPTION_REQUEST,
    SYNC_LITE_SUBSCRIPTION_RESPONSE,
)
"""Messages of service.proto, in the order the emitted file declares them."""
