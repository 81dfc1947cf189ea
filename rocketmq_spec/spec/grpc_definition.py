"""The shared types of ``apache.rocketmq.v2`` (definition.proto): resources, routes, messages, settings.

A ``Message`` is what producers send and consumers receive: a topic, user properties, the system
properties the SDK and the server fill (tag, keys, id, type, group, timing, receipt handle ...) and the
body. ``Settings`` is what a client reports on its Telemetry stream and the server answers with, merged
with its own values (retry policy, long-polling timeout, body size limit).
"""

from __future__ import annotations

from rocketmq_spec.spec.grpc_schema import (
    PROTO_2_1_0,
    PROTO_2_1_1,
    EnumValue,
    Label,
    ProtoEnum,
    ProtoMessage,
)
from rocketmq_spec.spec.grpc_schema import ProtoField as F

OPT, REP = Label.OPTIONAL, Label.REPEATED
TIMESTAMP = "google.protobuf.Timestamp"
DURATION = "google.protobuf.Duration"

# -- enums ---------------------------------------------------------------------------------------------

TRANSACTION_RESOLUTION = ProtoEnum("TransactionResolution", "how a producer ends a transaction", (
    EnumValue("TRANSACTION_RESOLUTION_UNSPECIFIED", 0),
    EnumValue("COMMIT", 1, "deliver the half message"),
    EnumValue("ROLLBACK", 2, "drop the half message"),
))
TRANSACTION_SOURCE = ProtoEnum("TransactionSource", "who asked for the resolution", (
    EnumValue("SOURCE_UNSPECIFIED", 0),
    EnumValue("SOURCE_CLIENT", 1, "the producer ended its own transaction"),
    EnumValue("SOURCE_SERVER_CHECK", 2, "answer to a RecoverOrphanedTransactionCommand"),
))
PERMISSION = ProtoEnum("Permission", "what a message queue allows (from the queue data's perm bits)", (
    EnumValue("PERMISSION_UNSPECIFIED", 0),
    EnumValue("NONE", 1),
    EnumValue("READ", 2),
    EnumValue("WRITE", 3),
    EnumValue("READ_WRITE", 4),
))
FILTER_TYPE = ProtoEnum("FilterType", "language of a subscription's filter expression", (
    EnumValue("FILTER_TYPE_UNSPECIFIED", 0),
    EnumValue("TAG", 1, "tag expression, 'TagA || TagB' or '*' (remoting TAG)"),
    EnumValue("SQL", 2, "SQL92 over properties (remoting SQL92)"),
))
ADDRESS_SCHEME = ProtoEnum("AddressScheme", "how the addresses of an Endpoints are written", (
    EnumValue("ADDRESS_SCHEME_UNSPECIFIED", 0),
    EnumValue("IPv4", 1),
    EnumValue("IPv6", 2),
    EnumValue("DOMAIN_NAME", 3),
))
MESSAGE_TYPE = ProtoEnum("MessageType", "kind of message; a topic lists the kinds it accepts", (
    EnumValue("MESSAGE_TYPE_UNSPECIFIED", 0),
    EnumValue("NORMAL", 1),
    EnumValue("FIFO", 2, "ordered within its message group"),
    EnumValue("DELAY", 3, "delivered at its delivery_timestamp"),
    EnumValue("TRANSACTION", 4, "delivered once committed"),
    EnumValue("LITE", 5, "lite topic message", since=PROTO_2_1_0),
    EnumValue("PRIORITY", 6, "priority message", since=PROTO_2_1_1),
))
DIGEST_TYPE = ProtoEnum("DigestType", "algorithm of a body digest", (
    EnumValue("DIGEST_TYPE_UNSPECIFIED", 0),
    EnumValue("CRC32", 1),
    EnumValue("MD5", 2),
    EnumValue("SHA1", 3),
))
CLIENT_TYPE = ProtoEnum("ClientType", "the kind of client a Settings describes", (
    EnumValue("CLIENT_TYPE_UNSPECIFIED", 0),
    EnumValue("PRODUCER", 1),
    EnumValue("PUSH_CONSUMER", 2, "registered as CONSUME_PASSIVELY"),
    EnumValue("SIMPLE_CONSUMER", 3, "registered as CONSUME_ACTIVELY"),
    EnumValue("PULL_CONSUMER", 4),
    EnumValue("LITE_PUSH_CONSUMER", 5, since=PROTO_2_1_0),
    EnumValue("LITE_SIMPLE_CONSUMER", 6, since=PROTO_2_1_0),
))
ENCODING = ProtoEnum("Encoding", "encoding of a message body", (
    EnumValue("ENCODING_UNSPECIFIED", 0),
    EnumValue("IDENTITY", 1),
    EnumValue("GZIP", 2, "body is compressed (remoting COMPRESSED_FLAG)"),
))
LANGUAGE = ProtoEnum("Language", "SDK language in a user agent", tuple(
    EnumValue(name, number) for number, name in enumerate((
        "LANGUAGE_UNSPECIFIED", "JAVA", "CPP", "DOT_NET", "GOLANG", "RUST", "PYTHON", "PHP", "NODE_JS",
        "RUBY", "OBJECTIVE_C", "DART", "KOTLIN")))
)
LITE_SUBSCRIPTION_ACTION = ProtoEnum("LiteSubscriptionAction", "change to a lite push consumer's set", (
    EnumValue("PARTIAL_ADD", 0),
    EnumValue("PARTIAL_REMOVE", 1),
    EnumValue("COMPLETE_ADD", 2),
    EnumValue("COMPLETE_REMOVE", 3),
), since=PROTO_2_1_0)
QUERY_OFFSET_POLICY = ProtoEnum("QueryOffsetPolicy", "which offset QueryOffset looks up", (
    EnumValue("BEGINNING", 0),
    EnumValue("END", 1),
    EnumValue("TIMESTAMP", 2),
))
OFFSET_OPTION_POLICY = ProtoEnum("Policy", "where a lite subscription starts", (
    EnumValue("LAST", 0),
    EnumValue("MIN", 1),
    EnumValue("MAX", 2),
), since=PROTO_2_1_1, parent="OffsetOption")

# -- messages ------------------------------------------------------------------------------------------

FILTER_EXPRESSION = ProtoMessage("FilterExpression", "a subscription filter", (
    F("type", 1, "FilterType", "TAG or SQL"),
    F("expression", 2, "string", "the expression text"),
))
RETRY_POLICY = ProtoMessage("RetryPolicy", "retries of a send, or redelivery back-off of a consumer", (
    F("max_attempts", 1, "int32", "attempts in all (a consumer group's retryMaxTimes + 1)"),
    F("exponential_backoff", 2, "ExponentialBackoff", "", oneof="strategy"),
    F("customized_backoff", 3, "CustomizedBackoff", "", oneof="strategy"),
))
EXPONENTIAL_BACKOFF = ProtoMessage("ExponentialBackoff", "initial * multiplier^n, capped at max", (
    F("initial", 1, DURATION, "first back-off"),
    F("max", 2, DURATION, "largest back-off"),
    F("multiplier", 3, "float", "growth per attempt"),
))
CUSTOMIZED_BACKOFF = ProtoMessage("CustomizedBackoff", "an explicit back-off per attempt", (
    F("next", 1, DURATION, "back-off of attempt n (1s 5s 10s 30s 1m ... in the classic levels)", REP),
))
RESOURCE = ProtoMessage("Resource", "a topic or group name inside a namespace", (
    F("resource_namespace", 1, "string", "namespace; empty for none"),
    F("name", 2, "string", "topic or group name"),
))
SUBSCRIPTION_ENTRY = ProtoMessage("SubscriptionEntry", "one topic a consumer subscribes to", (
    F("topic", 1, "Resource", "topic"),
    F("expression", 2, "FilterExpression", "filter"),
))
ADDRESS = ProtoMessage("Address", "one host and port", (
    F("host", 1, "string", "host or IP"),
    F("port", 2, "int32", "port"),
))
ENDPOINTS = ProtoMessage("Endpoints", "where to reach a server", (
    F("scheme", 1, "AddressScheme", "address kind"),
    F("addresses", 2, "Address", "addresses", REP),
))
BROKER = ProtoMessage("Broker", "a broker as a route names it; endpoints are the proxy's, not the broker's", (
    F("name", 1, "string", "brokerName"),
    F("id", 2, "int32", "brokerId: 0 for the master"),
    F("endpoints", 3, "Endpoints", "where clients send the calls for this broker's queues"),
))
MESSAGE_QUEUE = ProtoMessage("MessageQueue", "a queue of a topic on a broker", (
    F("topic", 1, "Resource", "topic"),
    F("id", 2, "int32", "queue id; -1 in an assignment lets the server pick (POP over every queue)"),
    F("permission", 3, "Permission", "read/write permission"),
    F("broker", 4, "Broker", "owning broker"),
    F("accept_message_types", 5, "MessageType", "kinds the topic accepts (its message.type attribute)", REP),
))
DIGEST = ProtoMessage("Digest", "checksum of a body", (
    F("type", 1, "DigestType", "algorithm"),
    F("checksum", 2, "string", "hex checksum (CRC32 as upper-case hex)"),
))
SYSTEM_PROPERTIES = ProtoMessage("SystemProperties", "properties of a message the SDK or the server sets", (
    F("tag", 1, "string", "tag (remoting TAGS)", OPT),
    F("keys", 2, "string", "keys (remoting KEYS, space separated)", REP),
    F("message_id", 3, "string", "client-generated unique id (remoting UNIQ_KEY); required on send"),
    F("body_digest", 4, "Digest", "body checksum, set by the server on delivery"),
    F("body_encoding", 5, "Encoding", "IDENTITY or GZIP"),
    F("message_type", 6, "MessageType", "kind of message"),
    F("born_timestamp", 7, TIMESTAMP, "when the producer made the message"),
    F("born_host", 8, "string", "producer host"),
    F("store_timestamp", 9, TIMESTAMP, "when the broker stored it (delivery only)", OPT),
    F("store_host", 10, "string", "broker that stored it (delivery only)"),
    F("delivery_timestamp", 11, TIMESTAMP, "when a DELAY message becomes deliverable (remoting "
      "TIMER_DELIVER_MS)", OPT),
    F("receipt_handle", 12, "string", "handle to ack or change invisibility (delivery only)", OPT),
    F("queue_id", 13, "int32", "queue the message is stored in"),
    F("queue_offset", 14, "int64", "offset in that queue (delivery only)", OPT),
    F("invisible_duration", 15, DURATION, "how long it stays invisible after this delivery", OPT),
    F("delivery_attempt", 16, "int32", "1 for a first delivery, reconsumeTimes + 1 after", OPT),
    F("message_group", 17, "string", "FIFO message group (remoting SHARDING_KEY)", OPT),
    F("trace_context", 18, "string", "trace context (remoting TRACE_CONTEXT)", OPT),
    F("orphaned_transaction_recovery_duration", 19, DURATION, "how long a half message waits before it is "
      "checked back (remoting CHECK_IMMUNITY_TIME_IN_SECONDS)", OPT),
    F("dead_letter_queue", 20, "DeadLetterQueue", "origin of a message read from a DLQ", OPT),
    F("lite_topic", 21, "string", "lite topic", OPT, since=PROTO_2_1_0),
    F("priority", 22, "int32", "priority", OPT, since=PROTO_2_1_1),
))
DEAD_LETTER_QUEUE = ProtoMessage("DeadLetterQueue", "where a dead-lettered message came from", (
    F("topic", 1, "string", "original topic"),
    F("message_id", 2, "string", "original message id"),
))
MESSAGE = ProtoMessage("Message", "a message as sent and delivered", (
    F("topic", 1, "Resource", "topic"),
    F("user_properties", 2, "map<string, string>", "user properties; a reserved remoting key is refused"),
    F("system_properties", 3, "SystemProperties", "system properties"),
    F("body", 4, "bytes", "payload"),
))
ASSIGNMENT = ProtoMessage("Assignment", "a queue a consumer may receive from", (
    F("message_queue", 1, "MessageQueue", "the queue"),
))
STATUS = ProtoMessage("Status", "the outcome of a call", (
    F("code", 1, "Code", "outcome (grpc_codes)"),
    F("message", 2, "string", "human-readable detail"),
))
UA = ProtoMessage("UA", "user agent of an SDK", (
    F("language", 1, "Language", "SDK language"),
    F("version", 2, "string", "SDK version"),
    F("platform", 3, "string", "OS, version, architecture"),
    F("hostname", 4, "string", "client host name"),
))
SETTINGS = ProtoMessage("Settings", "a client's configuration; the server answers with its merged copy", (
    F("client_type", 1, "ClientType", "producer or consumer kind", OPT),
    F("access_point", 2, "Endpoints", "the endpoints the client was configured with", OPT),
    F("backoff_policy", 3, "RetryPolicy", "send retries (producer) or redelivery back-off (consumer)", OPT),
    F("request_timeout", 4, DURATION, "timeout of non-long-polling RPCs", OPT),
    F("publishing", 5, "Publishing", "producer settings", oneof="pub_sub"),
    F("subscription", 6, "Subscription", "consumer settings", oneof="pub_sub"),
    F("user_agent", 7, "UA", "SDK identity"),
    F("metric", 8, "Metric", "metric export"),
))
PUBLISHING = ProtoMessage("Publishing", "producer settings", (
    F("topics", 1, "Resource", "topics the producer will send to", REP),
    F("max_body_size", 2, "int32", "largest body the server accepts (server-set)"),
    F("validate_message_type", 3, "bool", "whether the SDK checks a message's type against the queue's "
      "accept_message_types (server-set)"),
))
SUBSCRIPTION = ProtoMessage("Subscription", "consumer settings", (
    F("group", 1, "Resource", "consumer group", OPT),
    F("subscriptions", 2, "SubscriptionEntry", "topics and filters", REP),
    F("fifo", 3, "bool", "server-set: the group consumes orderly (consumeMessageOrderly)", OPT),
    F("receive_batch_size", 4, "int32", "server-set: messages per receive of a push consumer", OPT),
    F("long_polling_timeout", 5, DURATION, "server-set: long-polling time of a push consumer's receive", OPT),
    F("lite_subscription_quota", 6, "int32", "lite push consumer quota", OPT, since=PROTO_2_1_0),
    F("max_lite_topic_size", 7, "int32", "longest lite topic", OPT, since=PROTO_2_1_0),
))
METRIC = ProtoMessage("Metric", "whether and where the client exports metrics", (
    F("on", 1, "bool", "export on"),
    F("endpoints", 2, "Endpoints", "collector", OPT),
))
OFFSET_OPTION = ProtoMessage("OffsetOption", "where a lite subscription starts", (
    F("policy", 1, "OffsetOption.Policy", "", oneof="offset_type"),
    F("offset", 2, "int64", "", oneof="offset_type"),
    F("tail_n", 3, "int64", "", oneof="offset_type"),
    F("timestamp", 4, "int64", "", oneof="offset_type"),
), since=PROTO_2_1_1)

DEFINITION_ENUMS: tuple[ProtoEnum, ...] = (
    TRANSACTION_RESOLUTION, TRANSACTION_SOURCE, PERMISSION, FILTER_TYPE, ADDRESS_SCHEME, MESSAGE_TYPE,
    DIGEST_TYPE, CLIENT_TYPE, ENCODING, LANGUAGE, LITE_SUBSCRIPTION_ACTION, QUERY_OFFSET_POLICY,
    OFFSET_OPTION_POLICY,
)
"""Enums of definition.proto (``Code`` is in ``grpc_codes``), in the order the emitted file declares them."""

DEFINITION_MESSAGES: tuple[ProtoMessage, ...] = (
    FILTER_EXPRESSION, RETRY_POLICY, EXPONENTIAL_BACKOFF, CUSTOMIZED_BACKOFF, RESOURCE, SUBSCRIPTION_ENTRY,
    ADDRESS, ENDPOINTS, BROKER, MESSAGE_QUEUE, DIGEST, SYSTEM_PROPERTIES, DEAD_LETTER_QUEUE, MESSAGE,
    ASSIGNMENT, STATUS, UA, SETTINGS, PUBLISHING, SUBSCRIPTION, METRIC, OFFSET_OPTION,
)
"""Messages of definition.proto, in the order the emitted file declares them."""
