"""Remoting clients: what a conforming producer or consumer sends on its own, and when.

The broker clauses judge answers; these judge the other side of the socket. Every rule is read off the
Apache RocketMQ Java client of release 4.9.7 (tag ``rocketmq-all-4.9.7``) unless it names 5.x; the suite's
``client`` subcommand (``rocketmq_spec.conformance.clients``) checks them from the frames a client under
test exchanges with a recording relay. Timings are the Java client's defaults, which every client in the
field copies; a client with other defaults breaks the SHOULD clauses only.
"""

from __future__ import annotations

from dataclasses import dataclass

from rocketmq_spec.spec.clauses import Level, clause

_CLIENT = "client/src/main/java/org/apache/rocketmq/client/"
_INSTANCE = _CLIENT + "impl/factory/MQClientInstance.java"
_API = _CLIENT + "impl/MQClientAPIImpl.java"
_COMMAND = "remoting/src/main/java/org/apache/rocketmq/remoting/protocol/RemotingCommand.java"
_CONFIG = _CLIENT + "ClientConfig.java"


@dataclass(frozen=True)
class ClientDefault:
    """A default of the Java client that shows on the wire."""

    name: str
    value: int
    meaning: str
    source: str


HEARTBEAT_INTERVAL = ClientDefault("heartbeatBrokerInterval", 30_000,
                                   "ms between HEART_BEATs to each broker", _CONFIG)
POLL_NAMESERVER_INTERVAL = ClientDefault("pollNameServerInterval", 30_000,
                                         "ms between route fetches of each topic in use", _CONFIG)
PERSIST_OFFSET_INTERVAL = ClientDefault("persistConsumerOffsetInterval", 5_000,
                                        "ms between offset commits of each owned queue", _CONFIG)
SEND_RETRIES = ClientDefault("retryTimesWhenSendFailed", 2, "extra attempts of a failed sync send",
                             _CLIENT + "producer/DefaultMQProducer.java")
SEND_TIMEOUT = ClientDefault("sendMsgTimeout", 3_000, "ms budget of one send, retries included",
                             _CLIENT + "producer/DefaultMQProducer.java")
COMPRESS_OVER = ClientDefault("compressMsgBodyOverHowmuch", 4_096,
                              "bytes from which a single message's body is compressed",
                              _CLIENT + "producer/DefaultMQProducer.java")
DEFAULT_TOPIC_QUEUE_NUMS = ClientDefault("defaultTopicQueueNums", 4, "queues of an auto-created topic",
                                         _CLIENT + "producer/DefaultMQProducer.java")
PULL_SUSPEND = ClientDefault("BROKER_SUSPEND_MAX_TIME_MILLIS", 15_000,
                             "ms a push consumer's pull may be held by the broker",
                             _CLIENT + "impl/consumer/DefaultMQPushConsumerImpl.java")

CLIENT_DEFAULTS = (HEARTBEAT_INTERVAL, POLL_NAMESERVER_INTERVAL, PERSIST_OFFSET_INTERVAL, SEND_RETRIES,
                   SEND_TIMEOUT, COMPRESS_OVER, DEFAULT_TOPIC_QUEUE_NUMS, PULL_SUSPEND)

PERIOD_SLACK_MS = 5_000
"""What a periodic task may run late by before its period counts as broken: the Java client schedules
at a fixed rate on a shared single-thread executor, which a slow route fetch can hold up."""

# -- frames and headers ----------------------------------------------------------------------------------

CLIENT_FRAME = clause(
    "RMQ-CLIENT-FRAME", Level.MUST,
    "Every command a client writes is a well-formed frame (RMQ-FRAME-*): consistent lengths, a known "
    "serialization type and a decodable header.",
    source=_COMMAND + " (encode, fastEncodeHeader)")
CLIENT_LANGUAGE = clause(
    "RMQ-CLIENT-LANGUAGE", Level.MUST,
    "Every request names a LanguageCode of the spec in `language` (JAVA for the Java client) and keeps "
    "it for the client's life.",
    source=_COMMAND + " (language field); " + _API + " (sendHeartbeat)")
CLIENT_VERSION = clause(
    "RMQ-CLIENT-VERSION", Level.MUST,
    "Every request carries the client release's version word (MQVersion.CURRENT_VERSION: 4.9.7 sends 407), "
    "non-zero and the same on every request of a client.",
    source=_API + " (static init sets rocketmq.remoting.version); " + _COMMAND + " (setCmdVersion)")
CLIENT_SERIALIZE_TYPE = clause(
    "RMQ-CLIENT-SERIALIZE-TYPE", Level.MUST,
    "The type byte of a request's second word matches its header (0 JSON, 1 ROCKETMQ), and a JSON "
    "header names the same type in `serializeTypeCurrentRPC` when it has the key.",
    source=_COMMAND + " (markProtocolType, serializeTypeCurrentRPC)")
CLIENT_FLAG = clause(
    "RMQ-CLIENT-FLAG", Level.MUST,
    "A request has the response bit (bit 0) clear; a oneway request (a oneway send, a persisted offset, "
    "END_TRANSACTION) has bit 1 set, and a request expecting an answer has it clear.",
    source=_COMMAND + " (markOnewayRPC); remoting/.../netty/NettyRemotingAbstract.java (invokeOnewayImpl)")
CLIENT_OPAQUE = clause(
    "RMQ-CLIENT-OPAQUE", Level.MUST,
    "A request's opaque is not reused while an earlier request of the same connection with that opaque "
    "awaits its answer; the Java client draws every opaque from one process-wide counter.",
    source=_COMMAND + " (requestId, createNewRequestId)")
CLIENT_HEADER_REQUIRED = clause(
    "RMQ-CLIENT-HEADER-REQUIRED", Level.MUST,
    "A request carries every @CFNotNull field of its custom header (the tables of spec.headers), "
    "as strings in extFields.",
    source=_COMMAND + " (makeCustomHeaderToNet); common/.../protocol/header/*RequestHeader.java")
CLIENT_SEND_CODE = clause(
    "RMQ-CLIENT-SEND-CODE", Level.SHOULD,
    "A single message goes out as SEND_MESSAGE_V2 (310) and a batch as SEND_BATCH_MESSAGE (320); "
    "SEND_MESSAGE (10) with long names is what a client with sendSmartMsg=false sends.",
    source=_API + " (sendMessage)")

# -- session: heartbeat, routes, shutdown ----------------------------------------------------------------

CLIENT_ROUTE_FIRST = clause(
    "RMQ-CLIENT-ROUTE-FIRST", Level.MUST,
    "A client asks the name server for a topic's route (GET_ROUTEINFO_BY_TOPIC) before its first "
    "request about that topic to a broker, and sends only to broker addresses a route gave it.",
    source=_CLIENT + "impl/producer/DefaultMQProducerImpl.java (tryToFindTopicPublishInfo)")
CLIENT_ROUTE_POLL = clause(
    "RMQ-CLIENT-ROUTE-POLL", Level.MUST,
    "While started, a client fetches the route of every topic it uses again every "
    "pollNameServerInterval (30 s).",
    source=_INSTANCE + " (startScheduledTask, updateTopicRouteInfoFromNameServer)")
CLIENT_HEARTBEAT_CONTENT = clause(
    "RMQ-CLIENT-HEARTBEAT-CONTENT", Level.MUST,
    "HEART_BEAT (34) carries a JSON HeartbeatData body: a non-empty clientID, producerDataSet with each "
    "started producer group, consumerDataSet with each consumer group and its subscriptions. Heartbeats go "
    "only to brokers the client knows from a route, so a producer heartbeats once it has sent (its first "
    "send fetches the route): within one heartbeatBrokerInterval after its first send it has named its "
    "group. A producer that never sent, or one shut down right after its sends, may heartbeat nowhere; "
    "from 5.x a producer and a consumer of one process are two client instances (instance name "
    "pid#nanoTime), so a consumer's heartbeat does not name the producer's group.",
    source=_INSTANCE + " (4.9.7: startScheduledTask L283-294 heartbeats 1 s after start then every "
    "heartbeatBrokerInterval; sendHeartbeatToAllBroker L531-540 sends only when brokerAddrTable is not "
    "empty; 5.3.3: L356-360, L663-672); client/.../ClientConfig.java (5.3.3 changeInstanceNameToPID "
    "L157-161); common/.../protocol/heartbeat/HeartbeatData.java")
CLIENT_HEARTBEAT_START = clause(
    "RMQ-CLIENT-HEARTBEAT-START", Level.MUST,
    "A started consumer sends HEART_BEAT to the broker before it pulls, so that the broker knows the "
    "group's subscription.",
    source=_CLIENT + "impl/consumer/DefaultMQPushConsumerImpl.java (start: sendHeartbeatToAllBrokerWithLock)")
CLIENT_HEARTBEAT_PERIOD = clause(
    "RMQ-CLIENT-HEARTBEAT-PERIOD", Level.MUST,
    "While started, a client sends HEART_BEAT to each broker it knows every heartbeatBrokerInterval (30 s).",
    source=_INSTANCE + " (startScheduledTask, sendHeartbeatToAllBroker)")
CLIENT_CLIENT_ID = clause(
    "RMQ-CLIENT-CLIENT-ID", Level.SHOULD,
    "A clientID is `ip@instanceName[@unitName]`: at least two non-empty parts joined by '@', the same in "
    "every heartbeat and in UNREGISTER_CLIENT.",
    source=_CONFIG + " (buildMQClientId)")
CLIENT_UNREGISTER = clause(
    "RMQ-CLIENT-UNREGISTER", Level.SHOULD,
    "On shutdown a client sends UNREGISTER_CLIENT (35) to each broker it knows, once per group, with its "
    "clientID and exactly one of producerGroup or consumerGroup.",
    source=_INSTANCE + " (unregisterClient); " + _API + " (unregisterClient)")
CLIENT_UNREGISTER_LAST = clause(
    "RMQ-CLIENT-UNREGISTER-LAST", Level.SHOULD,
    "A client that unregisters sends nothing else afterwards: UNREGISTER_CLIENT is its last request to a "
    "broker, followed only by the unregistration of its other groups.",
    source=_INSTANCE + " (shutdown: mQClientAPIImpl.shutdown)")

# -- ACL 1.0 ---------------------------------------------------------------------------------------------

CLIENT_ACL_SIGN = clause(
    "RMQ-CLIENT-ACL-SIGN", Level.MUST,
    "With credentials, every request carries AccessKey and a Signature that is Base64(HmacSHA1(secret, "
    "values of all extFields but Signature in key order, then the body)): RMQ-ACL-SIGNATURE on the "
    "client side.",
    source="acl/src/main/java/org/apache/rocketmq/acl/common/AclClientRPCHook.java (doBeforeRequest)")
