"""Release rules: behaviour that changed between releases, as rows that say which releases hold them.

A receiver of a given release follows a rule when its release is in the row's range; the conformance
cases judge a target by the rules of the release its ``version`` word names, and the reference broker
follows the rules of its wire release. Each row has the clause it refines and the Java source showing it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from rocketmq_spec.spec.clauses import Level, clause
from rocketmq_spec.spec.releases import Releases, since, until

_NS_ROUTES = "namesrv/src/main/java/org/apache/rocketmq/namesrv/routeinfo/RouteInfoManager.java"
_CONSUMER_MANAGE = "broker/src/main/java/org/apache/rocketmq/broker/processor/ConsumerManageProcessor.java"
_ADMIN = "broker/src/main/java/org/apache/rocketmq/broker/processor/AdminBrokerProcessor.java"
_PULL = "broker/src/main/java/org/apache/rocketmq/broker/processor/PullMessageProcessor.java"
_SEND_CHECK = "broker/src/main/java/org/apache/rocketmq/broker/processor/AbstractSendMessageProcessor.java"
_SEND = "broker/src/main/java/org/apache/rocketmq/broker/processor/SendMessageProcessor.java"


class Rule(enum.Enum):
    FIRST_REGISTRATION_NOT_SINGLE_TOPIC = "first-registration-not-single-topic"
    OFFSET_COMMIT_NEEDS_GROUP_AND_TOPIC = "offset-commit-needs-group-and-topic"
    SERVER_SIDE_RESET_OFFSET = "server-side-reset-offset"
    CONSUME_STATS_PULL_OFFSET = "consume-stats-pull-offset"
    PULL_SYS_FLAGS = "pull-sys-flags"
    BAD_QUEUE_INVALID_PARAMETER = "bad-queue-invalid-parameter"
    TOPIC_CONFLICT_INVALID_PARAMETER = "topic-conflict-invalid-parameter"
    SEND_CHECK_INVALID_PARAMETER = "send-check-invalid-parameter"
    RETRY_SEND_DLQ_PAST_LIMIT = "retry-send-dlq-past-limit"
    SEARCH_OFFSET_LOWER_BOUND = "search-offset-lower-bound"
    CONFIG_BLACK_LIST = "config-black-list"
    PROXY_PROTOCOL = "proxy-protocol"
    HA_REPORT_AHEAD_CLOSES = "ha-report-ahead-closes"
    BATCH_KEEPS_OWN_PROPERTIES = "batch-keeps-own-properties"
    EXT_FIELDS_PRESIZED = "ext-fields-presized"
    FASTJSON2_TEXT = "fastjson2-text"
    ACL_CONFIG_54_SERVED = "acl-config-54-served"
    ACL_V1 = "acl-v1"
    INDEX_TAG_KEY = "index-tag-key"
    QUERY_BY_INDEX_TYPE = "query-by-index-type"
    GRPC_SETTINGS_GROUP_REQUIRED = "grpc-settings-group-required"


@dataclass(frozen=True)
class ReleaseRule:
    rule: Rule
    releases: Releases
    clause_id: str
    behaviour: str
    source: str


RELEASE_RULES: tuple[ReleaseRule, ...] = (
    ReleaseRule(Rule.FIRST_REGISTRATION_NOT_SINGLE_TOPIC, since("5.0.0"), "RMQ-NS-REGISTER-FIRST",
                "a broker's first REGISTER_BROKER whose body holds exactly one topic is refused with 1 "
                "\"register broker failed\" (such a body is a single-topic route update)", _NS_ROUTES),
    ReleaseRule(Rule.OFFSET_COMMIT_NEEDS_GROUP_AND_TOPIC, since("5.0.0"), "RMQ-BRK-OFFSET-COMMIT-KNOWN",
                "UPDATE_CONSUMER_OFFSET for a subscription group the broker does not have is refused with 26 "
                "\"Group <g> not exist!\", for a topic it does not have with 17 \"Topic <t> not exist!\"",
                _CONSUMER_MANAGE),
    ReleaseRule(Rule.SERVER_SIDE_RESET_OFFSET, since("5.2.0"), "RMQ-ADMIN-RESET-SERVER-SIDE",
                "INVOKE_BROKER_TO_RESET_OFFSET resets the offsets in the broker (useServerSideResetOffset, "
                "default true): no RESET_CONSUMER_CLIENT_OFFSET is sent; an unknown topic is answered 17, an "
                "unknown group 26, else SUCCESS with the ResetOffsetBody of the offsets set", _ADMIN),
    ReleaseRule(Rule.CONSUME_STATS_PULL_OFFSET, since("5.1.0"), "RMQ-ADMIN-CONSUME-STATS",
                "each OffsetWrapper of GET_CONSUME_STATS also holds pullOffset: the larger of the committed "
                "offset and the next offset the group's last pull was answered with", _ADMIN),
    ReleaseRule(Rule.PULL_SYS_FLAGS, since("5.0.0"), "RMQ-BRK-PULL-HEADER",
                "a PULL_MESSAGE answer's header also holds topicSysFlag and groupSysFlag", _PULL),
    ReleaseRule(Rule.BAD_QUEUE_INVALID_PARAMETER, since("5.3.2"), "RMQ-BRK-PULL-CHECKS",
                "a pull of a queueId outside the topic's read queues (past them or negative) is answered 29 "
                "INVALID_PARAMETER (1 SYSTEM_ERROR before), same remark", _PULL),
    ReleaseRule(Rule.TOPIC_CONFLICT_INVALID_PARAMETER, since("5.3.2"), "RMQ-BRK-CREATE-TOPIC",
                "UPDATE_AND_CREATE_TOPIC of a name that is not allowed or conflicts with a system topic is "
                "answered 29 INVALID_PARAMETER (1 SYSTEM_ERROR before), same remark", _ADMIN),
    ReleaseRule(Rule.SEND_CHECK_INVALID_PARAMETER, since("5.3.2"), "RMQ-BRK-SEND-CHECKS",
                "a send whose topic name is not valid (characters, length) or whose queueId is beyond the "
                "topic's queues is answered 29 INVALID_PARAMETER (1 SYSTEM_ERROR before), same remark",
                _SEND_CHECK + " (msgCheck)"),
    ReleaseRule(Rule.RETRY_SEND_DLQ_PAST_LIMIT, since("5.0.0"), "RMQ-BRK-SEND-BACK-DLQ",
                "a send to %RETRY%<group> goes to %DLQ%<group> only once reconsumeTimes is greater than "
                "maxReconsumeTimes (4.x: greater or equal); equal stays in the retry topic, since a client "
                "may have counted the attempt already", _SEND + " (handleRetryAndDLQ: \"Using '>' instead of "
                "'>='\")"),
    ReleaseRule(Rule.SEARCH_OFFSET_LOWER_BOUND, since("5.1.1"), "RMQ-BRK-SEARCH-OFFSET",
                "a search of a queue offset by store time answers the lower bound (BoundaryType.LOWER): the "
                "first message stored at or after the time, the max offset when all are earlier (4.x and "
                "5.0: the nearer neighbour, the last message's offset after the last)",
                "store/src/main/java/org/apache/rocketmq/store/ConsumeQueue.java "
                "(getOffsetInQueueByTime, binarySearchInQueueByTime)"),
    ReleaseRule(Rule.CONFIG_BLACK_LIST, Releases(("4.9.8", "4.9.8"), ("5.2.0", None)),
                "RMQ-ADMIN-UPDATE-CONFIG",
                "UPDATE_BROKER_CONFIG and UPDATE_NAMESRV_CONFIG naming a key of the configBlackList are "
                "refused with 16 \"Can not update config in black list.\" (apache/rocketmq #7649); before, "
                "the broker applies any key and the name server refuses only kvConfigPath and "
                "configStorePath, with 16 \"Can not update config path\"",
                _ADMIN + " (validateBlackListConfigExist); namesrv/src/main/java/org/apache/rocketmq/namesrv/"
                "processor/DefaultRequestProcessor.java (updateConfig)"),
    ReleaseRule(Rule.HA_REPORT_AHEAD_CLOSES, until("4.9.8"), "RMQ-HA-REPORT-AHEAD",
                "a master closes the HA connection of a slave reporting an offset past its CommitLog end "
                "(5.x's DefaultHAConnection dropped the check)",
                "store/src/main/java/org/apache/rocketmq/store/ha/HAConnection.java (4.9.8), "
                "DefaultHAConnection.java (5.x)"),
    ReleaseRule(Rule.BATCH_KEEPS_OWN_PROPERTIES, since("5.4.0"), "RMQ-CL-BATCH-PROPERTIES",
                "each record of a batch stores its message's properties string alone: the batch's own "
                "properties (CLUSTER, WAIT) are no longer appended (apache/rocketmq #9417, after 5.3.3; "
                "5.5.0 stores them so)",
                "store/src/main/java/org/apache/rocketmq/store/MessageExtEncoder.java "
                "(encode(MessageExtBatch, PutMessageContext): batchPropStr removed)"),
    ReleaseRule(Rule.EXT_FIELDS_PRESIZED, since("5.1.0"), "RMQ-HDR-JSON-EXT-ORDER",
                "an extFields map created by addExtField (a processor adding MSG_REGION and TRACE_ON to a "
                "send answer before its header fields) is a HashMap of capacity 256, so its keys iterate "
                "in the buckets of that capacity (apache/rocketmq #5802); one created by "
                "makeCustomHeaderToNet keeps the default 16",
                "remoting/src/main/java/org/apache/rocketmq/remoting/protocol/RemotingCommand.java "
                "(addExtField: new HashMap<>(256))"),
    ReleaseRule(Rule.FASTJSON2_TEXT, since("5.4.0"), "RMQ-HDR-JSON-ESCAPES",
                "headers and bodies are written by fastjson2: a character below U+0020 other than the "
                "seven with a short escape as \\u00xx with lower-case hex digits, U+007F-U+009F, U+2028 "
                "and U+2029 raw",
                "remoting/src/main/java/org/apache/rocketmq/remoting/protocol/RemotingSerializable.java "
                "(rocketmq-remoting-5.4.0.jar imports com.alibaba.fastjson2.JSON; 5.3.3's "
                "com.alibaba.fastjson)"),
    ReleaseRule(Rule.ACL_CONFIG_54_SERVED, Releases((None, "4.9.7"), ("5.0.0", "5.1.4")), "RMQ-ACL-CONFIG-54",
                "GET_BROKER_CLUSTER_ACL_CONFIG (54) is served (SUCCESS) once the ACL check passes; 4.9.8 and "
                "5.2.0 removed it (apache/rocketmq #7653, #7486), after which it is answered 3",
                _ADMIN + " (getBrokerClusterAclConfig)"),
    ReleaseRule(Rule.ACL_V1, until("5.3.2"), "RMQ-ACL-FILE-UNUSABLE",
                "aclEnable=true turns on ACL 1.0 (plain_acl.yml, signed requests); 5.3.3 removed the acl "
                "module: aclEnable is read by nothing, the broker starts whatever the file holds and serves "
                "unsigned requests (ACL 2.0's authenticationEnabled took its place). Seen on Apache "
                "RocketMQ 5.3.3: a broker with aclEnable=true on a file with a 6-character secretKey "
                "started.",
                "broker/src/main/java/org/apache/rocketmq/broker/BrokerController.java (initialAcl, 5.3.2; "
                "gone in 5.3.3 with the acl module)"),
    ReleaseRule(Rule.INDEX_TAG_KEY, since("5.4.0"), "RMQ-IDX-KEYS",
                "a record with a non-empty TAGS property is also indexed under <topic>#T#<TAGS> (the whole "
                "TAGS string, after its UNIQ_KEY and KEYS entries); there is no setting for it, only "
                "messageIndexEnable and indexFileWriteEnable turn off all IndexFile indexing",
                "store/src/main/java/org/apache/rocketmq/store/index/IndexService.java (buildIndex, "
                "buildKey(topic, key, indexType)); 5.3.3 has no INDEX_TAG_TYPE"),
    ReleaseRule(Rule.QUERY_BY_INDEX_TYPE, since("5.4.0"), "RMQ-BRK-QUERY-MESSAGE",
                "QUERY_MESSAGE reads the optional indexType (and lastKey, used only by the RocksDB index): "
                "indexType T looks the key up as <topic>#T#<key>, the records indexed under that TAGS "
                "string; K, U, none or anything else as <topic>#<key>",
                "broker/src/main/java/org/apache/rocketmq/broker/processor/QueryMessageProcessor.java; "
                "store/src/main/java/org/apache/rocketmq/store/index/IndexService.java (queryOffset)"),
    ReleaseRule(Rule.GRPC_SETTINGS_GROUP_REQUIRED, since("5.5.0"), "RMQ-GRPC-SETTINGS-GROUP",
                "a consumer's Telemetry Settings naming a group the broker does not have (whatever "
                "autoCreateSubscriptionGroup says) fail the stream INVALID_ARGUMENT \"process client "
                "telemetryCommand failed. group not found: <g>\"",
                "proxy/src/main/java/org/apache/rocketmq/proxy/processor/ClientProcessor.java "
                "(getGroupOrException), seen from Apache RocketMQ 5.5.0's proxy in local mode"),
    ReleaseRule(Rule.PROXY_PROTOCOL, since("5.1.4"), "RMQ-FRAME-PROXY-PREAMBLE",
                "server ports read a PROXY protocol preamble and decode nothing before 12 bytes have come",
                "remoting/src/main/java/org/apache/rocketmq/remoting/netty/NettyRemotingServer.java"),
)
_BY_RULE = {row.rule: row for row in RELEASE_RULES}


def holds(rule: Rule, mq_version: int) -> bool:
    """Whether a peer announcing ``mq_version`` follows ``rule``."""
    return _BY_RULE[rule].releases.holds_for_version(mq_version)


REGISTER_FAILED_REMARK = "register broker failed"
"""The remark of a refused registration (``DefaultRequestProcessor.registerBroker``)."""
NS_REGISTER_FIRST = clause(
    "RMQ-NS-REGISTER-FIRST", Level.MUST,
    "From 5.0.0 a name server refuses a broker's first REGISTER_BROKER whose body holds exactly one topic "
    "(1 \"register broker failed\"); a registration with two or more topics is accepted by every release.",
    source=_NS_ROUTES + " (registerBroker)")
BRK_OFFSET_COMMIT_KNOWN = clause(
    "RMQ-BRK-OFFSET-COMMIT-KNOWN", Level.MUST,
    "From 5.0.0 UPDATE_CONSUMER_OFFSET for an unknown subscription group answers 26 \"Group <g> not exist!\" "
    "and for an unknown topic 17 \"Topic <t> not exist!\"; 4.x commits whatever it is given.",
    source=_CONSUMER_MANAGE + " (updateConsumerOffset)")
ADMIN_RESET_SERVER_SIDE = clause(
    "RMQ-ADMIN-RESET-SERVER-SIDE", Level.MUST,
    "From 5.2.0 INVOKE_BROKER_TO_RESET_OFFSET sets the group's offsets in the broker and answers the "
    "ResetOffsetBody without calling the group's clients; unknown topic 17, unknown group 26.",
    source=_ADMIN + " (resetOffsetInner)")
