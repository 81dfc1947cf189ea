"""gRPC clients (the 5.x SDKs): what a conforming SDK sends over RocketMQ 5's gRPC protocol.

Read off rocketmq-clients' Java SDK (``java/client``, release java-5.2.1): the Telemetry session that
must open with Settings, heartbeats, receipt handles in acks and invisible-duration changes, FIFO
message groups and the answers to transaction recovery; where a clause is about what the proxy expects
of the calls, Apache's proxy (``proxy/``, 5.3.3, unchanged to 5.5.0 in these classes) is cited beside
the SDK. The ``client`` subcommand judges them from what its gRPC relay records.
"""

from __future__ import annotations

from rocketmq_spec.spec.clauses import Level, clause

_SDK = "java/client/src/main/java/org/apache/rocketmq/client/java/"
_PROXY = "proxy/src/main/java/org/apache/rocketmq/proxy/grpc/v2/"

GRPC_HEARTBEAT_INTERVAL_MS = 10_000
"""Period of the SDK's Heartbeat RPC to each endpoint (``ClientManagerImpl``)."""

GCLIENT_METADATA = clause(
    "RMQ-GCLIENT-METADATA", Level.MUST,
    "Every RPC carries x-mq-language, x-mq-protocol, x-mq-client-version, x-mq-date-time "
    "(yyyyMMdd'T'HHmmss'Z'), x-mq-request-id and x-mq-client-id; with credentials also "
    "`authorization: MQv2-HMAC-SHA1 Credential=<ak>, SignedHeaders=x-mq-date-time, Signature=<hex>`.",
    source=_SDK + "rpc/Signature.java (sign)")
GCLIENT_SETTINGS_FIRST = clause(
    "RMQ-GCLIENT-SETTINGS-FIRST", Level.MUST,
    "The first command an SDK writes on each Telemetry stream is Settings describing the client "
    "(client_type, access_point, request_timeout, and publishing topics or the subscription).",
    source=_SDK + "impl/ClientImpl.java (startUp, onTopicRouteDataFetched, syncSettings); "
           + _SDK + "impl/producer/PublishingSettings.java (toProtobuf)")
GCLIENT_HEARTBEAT = clause(
    "RMQ-GCLIENT-HEARTBEAT", Level.MUST,
    "While started, an SDK sends Heartbeat to every endpoint of its routes (the topics it declared or "
    "sent to, the consumer's subscriptions) 1 s after start and then every 10 s; a consumer's names its "
    "group and client_type. An SDK shut down within a second of its start may send none.",
    source=_SDK + "impl/ClientManagerImpl.java (java-5.2.0 L88-89 HEART_BEAT_INITIAL_DELAY 1 s, "
    "HEART_BEAT_PERIOD 10 s; startUp L418-428); " + _SDK + "impl/ClientImpl.java (java-5.2.0 doHeartbeat "
    "L563-568 over getTotalRouteEndpoints L673-679, the route cache); rocketmq-python-client 5.1.2 "
    "rocketmq/v5/client/client.py (__start_scheduler: ClientScheduler(__do_heartbeat, 1, 10); "
    "__do_heartbeat: route_manager.get_all_endpoints())")
GCLIENT_ACK_HANDLE = clause(
    "RMQ-GCLIENT-ACK-HANDLE", Level.MUST,
    "AckMessage names the group, the topic and each message's message_id with the receipt_handle of the "
    "ReceiveMessage answer that delivered it (or of the latest ChangeInvisibleDuration answer).",
    source=_SDK + "impl/consumer/ConsumerImpl.java (wrapAckMessageRequest)")
GCLIENT_CHANGE_INVISIBLE = clause(
    "RMQ-GCLIENT-CHANGE-INVISIBLE", Level.MUST,
    "A failed delivery of a non-FIFO message is answered with ChangeInvisibleDuration carrying its "
    "receipt_handle and message_id; later calls use the receipt handle that answer returned.",
    source=_SDK + "impl/consumer/ConsumerImpl.java (wrapChangeInvisibleDuration); "
           + _SDK + "impl/consumer/ProcessQueueImpl.java (nackMessage)")
GCLIENT_FIFO_GROUP = clause(
    "RMQ-GCLIENT-FIFO-GROUP", Level.SHOULD,
    "All messages of one FIFO send share one message_group, and messages of a group go to one queue.",
    source=_SDK + "impl/producer/ProducerImpl.java; " + _SDK + "impl/producer/PublishingLoadBalancer.java")
GCLIENT_TXN_RECOVER = clause(
    "RMQ-GCLIENT-TXN-RECOVER", Level.MUST,
    "On RecoverOrphanedTransactionCommand an SDK answers COMMIT or ROLLBACK with EndTransaction "
    "(source SOURCE_SERVER_CHECK, the command's transaction_id and message_id) and sends nothing for "
    "UNKNOWN.",
    source=_SDK + "impl/producer/ProducerImpl.java (onRecoverOrphanedTransactionCommand); "
           + _PROXY + "transaction/EndTransactionActivity.java (fromTransactionCheck from the source); "
           "broker/src/main/java/org/apache/rocketmq/broker/processor/EndTransactionProcessor.java "
           "(rejectCommitOrRollback spares only ends from a check)")
GCLIENT_TERMINATION = clause(
    "RMQ-GCLIENT-TERMINATION", Level.SHOULD,
    "On shutdown an SDK sends NotifyClientTermination to its endpoints and completes its Telemetry streams.",
    source=_SDK + "impl/ClientImpl.java (shutDown, notifyClientTermination)")
GCLIENT_FIFO_SEND = clause(
    "RMQ-GCLIENT-FIFO-SEND", Level.MUST,
    "A message given a message group is sent with message_type FIFO and the group in "
    "system_properties.message_group, and the messages of one group are sent in the application's order, "
    "each after the answer to the one before.",
    source=_SDK + "message/PublishingMessageImpl.java (constructor: messageType FIFO for a message group); "
           + _SDK + "impl/producer/ProducerImpl.java (send0); "
           + _PROXY + "producer/SendMessageActivity.java (buildMessage: message_group to __SHARDINGKEY)")
GCLIENT_FIFO_CONSUME = clause(
    "RMQ-GCLIENT-FIFO-CONSUME", Level.MUST,
    "A consumer of an orderly group (Settings answer with subscription.fifo) acks the messages of a "
    "message group in the order they were delivered, and acks each before the group's next message is "
    "delivered by a later ReceiveMessage (the broker holds a queue's next batch until the last is acked).",
    source=_SDK + "impl/consumer/ProcessQueueImpl.java (fifoConsume, eraseFifoMessage); "
           + _PROXY + "consumer/ReceiveMessageActivity.java (fifo of the client's settings); "
           + _PROXY + "common/GrpcClientSettingsManager.java (fifo from consumeMessageOrderly); "
           + "broker/src/main/java/org/apache/rocketmq/broker/offset/ConsumerOrderInfoManager.java")
GCLIENT_CHANGE_HANDLE = clause(
    "RMQ-GCLIENT-CHANGE-HANDLE", Level.MUST,
    "ChangeInvisibleDuration names the message_id with the message's current receipt handle (of the "
    "ReceiveMessage answer that delivered it, or of the last ChangeInvisibleDuration answer for it) and a "
    "non-negative invisible_duration; the next ack or change of that message uses the receipt handle the "
    "change answered with, since the change ends the old handle's validity.",
    source=_SDK + "impl/consumer/SimpleConsumerImpl.java (changeInvisibleDuration0: refresh the receipt "
           "handle); " + _SDK + "impl/consumer/ConsumerImpl.java (wrapChangeInvisibleDuration); "
           + _PROXY + "consumer/ChangeInvisibleDurationActivity.java (validateInvisibleTime, new handle)")
GCLIENT_TXN_SEND = clause(
    "RMQ-GCLIENT-TXN-SEND", Level.MUST,
    "A transactional message is sent with message_type TRANSACTION, and the EndTransaction that resolves "
    "it names its topic and the message_id and transaction_id of the SendMessage answer's entry, with "
    "source SOURCE_CLIENT (never SOURCE_SERVER_CHECK; a proxy tells only that value apart, so an unset "
    "source is tolerated).",
    source=_SDK + "message/PublishingMessageImpl.java (messageType TRANSACTION); "
           + _SDK + "impl/producer/TransactionImpl.java (commit, rollback); "
           + _SDK + "impl/producer/ProducerImpl.java (endTransaction); "
           + _PROXY + "transaction/EndTransactionActivity.java (transaction_id required; "
           "fromTransactionCheck = source is SOURCE_SERVER_CHECK)")
