"""gRPC clients (the 5.x SDKs): what a conforming SDK sends over RocketMQ 5's gRPC protocol.

Read off rocketmq-clients' Java SDK (``java/client``, release java-5.2.1): the Telemetry session that
must open with Settings, heartbeats, receipt handles in acks and invisible-duration changes, FIFO
message groups and the answers to transaction recovery. The ``client`` subcommand judges them from what
its gRPC relay records (FIFO groups, invisible-duration changes and transaction recovery have no
scenario yet).
"""

from __future__ import annotations

from rocketmq_spec.spec.clauses import Level, clause

_SDK = "java/client/src/main/java/org/apache/rocketmq/client/java/"

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
    source=_SDK + "impl/producer/ProducerImpl.java (onRecoverOrphanedTransactionCommand)")
GCLIENT_TERMINATION = clause(
    "RMQ-GCLIENT-TERMINATION", Level.SHOULD,
    "On shutdown an SDK sends NotifyClientTermination to its endpoints and completes its Telemetry streams.",
    source=_SDK + "impl/ClientImpl.java (shutDown, notifyClientTermination)")
