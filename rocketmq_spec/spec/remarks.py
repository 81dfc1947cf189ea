"""The remarks Java writes into the answers of the core commands, keyed by the clause whose answer carries
them.

A remark is free text on the wire, but clients log it, operators read it and tools match it ("not exist,
apply first please"), so a broker answering as Apache RocketMQ writes Java's words: a template here is
Java's string with its arguments as ``{name}`` fields, and both the reference broker and the suite read
it from here. The remarks of the admin, ACL, timer and shutdown commands live beside their clauses
(``rocketmq_spec.spec.admin`` ...). Sources are the 4.9.8 processors unless the row says 5.x.
"""

from __future__ import annotations

from dataclasses import dataclass

from rocketmq_spec.spec.faq import NO_ROUTE_TEXT, suggest_todo
from rocketmq_spec.spec.system_topics import VALID_TOPIC_CHARACTERS

_PROCESSOR = "broker/src/main/java/org/apache/rocketmq/broker/processor/"
_SEND = _PROCESSOR + "SendMessageProcessor.java"
_ABSTRACT_SEND = _PROCESSOR + "AbstractSendMessageProcessor.java"
_PULL = _PROCESSOR + "PullMessageProcessor.java"
_END_TX = _PROCESSOR + "EndTransactionProcessor.java"
_CONSUMER_MANAGE = _PROCESSOR + "ConsumerManageProcessor.java"
_QUERY = _PROCESSOR + "QueryMessageProcessor.java"
_NAMESRV = "namesrv/src/main/java/org/apache/rocketmq/namesrv/processor/DefaultRequestProcessor.java"
_VALIDATOR = "common/src/main/java/org/apache/rocketmq/common/topic/TopicValidator.java"
_REMOTING = "remoting/src/main/java/org/apache/rocketmq/remoting/netty/NettyRemotingAbstract.java"
_POP = _PROCESSOR + "PopMessageProcessor.java"
_ACK = _PROCESSOR + "AckMessageProcessor.java"
_CHANGE_INVISIBLE = _PROCESSOR + "ChangeInvisibleTimeProcessor.java"
_ADMIN = _PROCESSOR + "AdminBrokerProcessor.java"
_PERMISSION = "acl/src/main/java/org/apache/rocketmq/acl/common/Permission.java"
_PLAIN_MANAGER = "acl/src/main/java/org/apache/rocketmq/acl/plain/PlainPermissionManager.java"

FAQ_SUFFIX = "\nSee http://rocketmq.apache.org/docs/faq/ for further details."
"""``FAQUrl.suggestTodo``: 4.9.8 points every "apply first" and "does not exist" remark at one FAQ page."""


@dataclass(frozen=True)
class Remark:
    """Java's remark for one refusal: ``template`` with ``{name}`` fields, the clause whose answer carries
    it, and where Java writes it."""

    clause: str
    template: str
    source: str

    def format(self, version: int | None = None, **fields: object) -> str:
        """The remark with ``fields`` filled in; with ``version`` (a release's MQVersion ordinal), its FAQ
        line that release's (RMQ-ERR-FAQ-URL: the link moved with 5.1.0)."""
        text = self.template.format(**fields)
        return text if version is None else text.replace(FAQ_SUFFIX, suggest_todo(version))


# -- sends (RMQ-BRK-SEND-CHECKS, RMQ-BRK-MESSAGE-ILLEGAL, RMQ-BRK-SEND) ---------------------------------
BROKER_SEND_FORBIDDEN = Remark("RMQ-BRK-SEND-CHECKS", "the broker[{broker_ip}] sending message is forbidden",
                               f"{_ABSTRACT_SEND} (msgCheck); {_SEND} (consumerSendMsgBack)")
TOPIC_SEND_FORBIDDEN = Remark("RMQ-BRK-SEND-CHECKS", "Sending message to topic[{topic}] is forbidden.",
                              f"{_ABSTRACT_SEND} (msgCheck)")
SEND_TOPIC_NOT_EXIST = Remark("RMQ-BRK-SEND-CHECKS",
                              "topic[{topic}] not exist, apply first please!" + FAQ_SUFFIX,
                              f"{_ABSTRACT_SEND} (msgCheck)")
SEND_QUEUE_ILLEGAL = Remark("RMQ-BRK-SEND-CHECKS",
                            "request queueId[{queue_id}] is illegal, {topic_config} Producer: {producer}",
                            f"{_ABSTRACT_SEND} (msgCheck)")
TOPIC_BLANK = Remark("RMQ-BRK-SEND-CHECKS", "The specified topic is blank.", f"{_VALIDATOR} (validateTopic)")
TOPIC_ILLEGAL_CHARACTERS = Remark(
    "RMQ-BRK-SEND-CHECKS",
    f"The specified topic contains illegal characters, allowing only {VALID_TOPIC_CHARACTERS}",
    f"{_VALIDATOR} (validateTopic)")
TOPIC_TOO_LONG = Remark("RMQ-BRK-SEND-CHECKS", "The specified topic is longer than topic max length.",
                        f"{_VALIDATOR} (validateTopic)")
TRANSACTION_SEND_FORBIDDEN = Remark("RMQ-BRK-SEND-CHECKS",
                                    "the broker[{broker_ip}] sending transaction message is forbidden",
                                    f"{_SEND} (sendMessage, rejectTransactionMessage)")
BATCH_TOPIC_TOO_LONG = Remark("RMQ-BRK-MESSAGE-ILLEGAL", "message topic length too long {length}",
                              f"{_SEND} (sendBatchMessage)")
BATCH_RETRY_TOPIC = Remark("RMQ-BRK-MESSAGE-ILLEGAL", "batch request does not support retry group {topic}",
                           f"{_SEND} (sendBatchMessage)")
MESSAGE_ILLEGAL = Remark(
    "RMQ-BRK-MESSAGE-ILLEGAL",
    "the message is illegal, maybe msg body or properties length not matched. msg body length limit "
    "{max_size}B, msg properties length limit 32KB.", f"{_SEND} (handlePutMessageResult)")
SERVICE_NOT_AVAILABLE = Remark(
    "RMQ-BRK-SEND",
    "service not available now. It may be caused by one of the following reasons: the broker's disk is full "
    "[{disk_use}], messages are put to the slave, message store has been shut down, etc.",
    f"{_SEND} (handlePutMessageResult)")
CREATE_MAPPED_FILE_FAILED = Remark("RMQ-BRK-SEND", "create mapped file failed, server is busy or broken.",
                                   f"{_SEND} (handlePutMessageResult)")
IN_SYNC_REPLICAS_NOT_ENOUGH = Remark("RMQ-HA2-MIN-ISR", "in-sync replicas not enough",
                                     f"{_SEND} (handlePutMessageResult)")
PAGECACHE_BUSY = Remark("RMQ-BRK-SEND", "[PC_SYNCHRONIZED]broker busy, start flow control for a while",
                        f"{_SEND} (handlePutMessageResult)")
PUT_UNKNOWN_ERROR = Remark("RMQ-BRK-SEND", "UNKNOWN_ERROR", f"{_SEND} (handlePutMessageResult)")
PUT_UNKNOWN_DEFAULT = Remark("RMQ-BRK-SEND", "UNKNOWN_ERROR DEFAULT", f"{_SEND} (handlePutMessageResult)")

# -- END_TRANSACTION of a half message (RMQ-BRK-TXN-CHECK-ANSWER) ---------------------------------------
HALF_NOT_FOUND = Remark("RMQ-BRK-TXN-CHECK-ANSWER", "Find prepared transaction message failed",
                        f"{_END_TX} (processRequest)")
PRODUCER_GROUP_WRONG = Remark("RMQ-BRK-TXN-CHECK-ANSWER", "The producer group wrong",
                              f"{_END_TX} (checkPrepareMessage)")
TRAN_STATE_OFFSET_WRONG = Remark("RMQ-BRK-TXN-CHECK-ANSWER", "The transaction state table offset wrong",
                                 f"{_END_TX} (checkPrepareMessage)")
COMMIT_LOG_OFFSET_WRONG = Remark("RMQ-BRK-TXN-CHECK-ANSWER", "The commit log offset wrong",
                                 f"{_END_TX} (checkPrepareMessage)")

# -- CONSUMER_SEND_MSG_BACK (RMQ-BRK-SEND-BACK, RMQ-BRK-SEND-BACK-NOT-FOUND) -----------------------------
SEND_BACK_GROUP_NOT_EXIST = Remark("RMQ-BRK-SEND-BACK",
                                   "subscription group not exist, {group} " + FAQ_SUFFIX,
                                   f"{_SEND} (consumerSendMsgBack, handleRetryAndDLQ)")
RETRY_TOPIC_SEND_FORBIDDEN = Remark("RMQ-BRK-SEND-BACK", "the topic[{topic}] sending message is forbidden",
                                    f"{_SEND} (consumerSendMsgBack)")
SEND_BACK_NOT_FOUND = Remark("RMQ-BRK-SEND-BACK-NOT-FOUND", "look message by offset failed, {offset}",
                             f"{_SEND} (consumerSendMsgBack)")

# -- pulls (RMQ-BRK-PULL-CHECKS, RMQ-BRK-PULL-SUBSCRIPTION) ----------------------------------------------
BROKER_PULL_FORBIDDEN = Remark("RMQ-BRK-PULL-CHECKS", "the broker[{broker_ip}] pulling message is forbidden",
                               f"{_PULL} (processRequest)")
PULL_GROUP_NOT_EXIST = Remark("RMQ-BRK-PULL-CHECKS",
                              "subscription group [{group}] does not exist, " + FAQ_SUFFIX,
                              f"{_PULL} (processRequest)")
GROUP_NO_PERMISSION = Remark("RMQ-BRK-PULL-CHECKS", "subscription group no permission, {group}",
                             f"{_PULL} (processRequest)")
PULL_TOPIC_NOT_EXIST = Remark("RMQ-BRK-PULL-CHECKS",
                              "topic[{topic}] not exist, apply first please! " + FAQ_SUFFIX,
                              f"{_PULL} (processRequest)")
TOPIC_PULL_FORBIDDEN = Remark("RMQ-BRK-PULL-CHECKS", "the topic[{topic}] pulling message is forbidden",
                              f"{_PULL} (processRequest)")
PULL_QUEUE_ILLEGAL = Remark(
    "RMQ-BRK-PULL-CHECKS",
    "queueId[{queue_id}] is illegal, topic:[{topic}] topicConfig.readQueueNums:[{read_queues}] "
    "consumer:[{consumer}]", f"{_PULL} (processRequest: the consumer's channel.remoteAddress(), /ip:port)")
SUBSCRIPTION_PARSE_FAILED = Remark("RMQ-BRK-PULL-SUBSCRIPTION", "parse the consumer's subscription failed",
                                   f"{_PULL} (processRequest)")
FILTER_NOT_SUPPORTED = Remark("RMQ-BRK-PULL-SUBSCRIPTION",
                              "The broker does not support consumer to filter message by {expression_type}",
                              f"{_PULL} (processRequest)")
GROUP_INFO_NOT_EXIST = Remark("RMQ-BRK-PULL-SUBSCRIPTION", "the consumer's group info not exist" + FAQ_SUFFIX,
                              f"{_PULL} (processRequest)")
BROADCAST_FORBIDDEN = Remark("RMQ-BRK-PULL-SUBSCRIPTION",
                             "the consumer group[{group}] can not consume by broadcast way",
                             f"{_PULL} (processRequest)")
SUBSCRIPTION_NOT_EXIST = Remark("RMQ-BRK-PULL-SUBSCRIPTION",
                                "the consumer's subscription not exist" + FAQ_SUFFIX,
                                f"{_PULL} (processRequest)")
SUBSCRIPTION_NOT_LATEST = Remark("RMQ-BRK-PULL-SUBSCRIPTION", "the consumer's subscription not latest",
                                 f"{_PULL} (processRequest)")

# -- consumer offsets and lists, lookups -------------------------------------------------------------------
OFFSET_GROUP_NOT_EXIST = Remark("RMQ-BRK-OFFSET-COMMIT-KNOWN", "Group {group} not exist!",
                                f"{_CONSUMER_MANAGE} (updateConsumerOffset, 5.x)")
OFFSET_TOPIC_NOT_EXIST = Remark("RMQ-BRK-OFFSET-COMMIT-KNOWN", "Topic {topic} not exist!",
                                f"{_CONSUMER_MANAGE} (updateConsumerOffset, 5.x)")
NO_CONSUMER = Remark("RMQ-BRK-HEARTBEAT", "no consumer for this group, {group}",
                     f"{_CONSUMER_MANAGE} (getConsumerListByGroup)")
VIEW_NOT_FOUND = Remark("RMQ-BRK-VIEW-BY-ID", "can not find message by the offset, {offset}",
                        f"{_QUERY} (viewMessageById)")
QUERY_NOT_FOUND = Remark("RMQ-BRK-QUERY-MESSAGE", "can not find message, maybe time range not correct",
                         f"{_QUERY} (queryMessage)")

# -- pop, ack, change invisible time (5.x processors; RMQ-POP-*) -----------------------------------------
POP_TIMEOUT_TOO_MUCH = Remark("RMQ-POP-LIMITS", "the broker[{broker_ip}] pop message is timeout too much",
                              f"{_POP} (processRequest: bornTime older than pollTime + 3 s)")
BROKER_POP_FORBIDDEN = Remark("RMQ-POP-LIMITS", "the broker[{broker_ip}] pop message is forbidden",
                              f"{_POP} (processRequest)")
POP_TOO_MANY = Remark("RMQ-POP-LIMITS", "the broker[{broker_ip}] pop message's num is greater than 32",
                      f"{_POP} (processRequest, 5.3.2+)")
POP_TOPIC_NOT_EXIST = Remark("RMQ-POP-LIMITS", "topic[{topic}] not exist, apply first please! " + FAQ_SUFFIX,
                             f"{_POP} (processRequest); {_ACK}; {_CHANGE_INVISIBLE}")
TOPIC_POP_FORBIDDEN = Remark("RMQ-POP-LIMITS", "the topic[{topic}] {verb} message is forbidden",
                             f"{_POP} (processRequest: 'peeking', as Java's copy of the peek check says)")
POP_QUEUE_ILLEGAL = Remark(
    "RMQ-POP-LIMITS",
    "queueId[{queue_id}] is illegal, topic:[{topic}] topicConfig.readQueueNums:[{read_queues}] "
    "consumer:[{consumer}]", f"{_POP} (processRequest); {_ACK}; {_CHANGE_INVISIBLE}")
POP_GROUP_NOT_EXIST = Remark("RMQ-POP-LIMITS", "subscription group [{group}] does not exist, " + FAQ_SUFFIX,
                             f"{_POP} (processRequest)")
POP_GROUP_NO_PERMISSION = Remark("RMQ-POP-LIMITS", "subscription group no permission, {group}",
                                 f"{_POP} (processRequest)")
ACK_OFFSET_ILLEGAL = Remark("RMQ-POP-ACK-OFFSET",
                            "offset is illegal, key:{key}@{queue_id}, commit:{offset}, store:{low}~{high}",
                            f"{_ACK} (processRequest)")

# -- ACL 1.0 administration (RMQ-ACL-ADMIN-*, RMQ-ACL-PERM-VALUES) ---------------------------------------
ACL_DELETE_FAILED = Remark(
    "RMQ-ACL-ADMIN-DELETE",
    "The accesskey[{access_key}] corresponding to accessConfig has been deleted failed.",
    f"{_ADMIN} (deleteAccessConfig)")
ACL_WHITE_UPDATE_FAILED = Remark("RMQ-ACL-ADMIN-WHITE",
                                 "The globalWhiteAddresses[{addresses}] has been updated failed.",
                                 f"{_ADMIN} (updateGlobalWhiteAddrsConfig)")
ACL_RESOURCE_FORMAT = Remark("RMQ-ACL-PERM-VALUES",
                             "Parse Resource format error for {entry}.\nThe expected resource format is "
                             "'Res=Perm'. For example: topicA=SUB", f"{_PERMISSION} (checkResourcePerms)")
ACL_RESOURCE_PERMISSION = Remark(
    "RMQ-ACL-PERM-VALUES",
    "Parse resource permission error for {entry}.\nThe expected permissions are 'SUB' or 'PUB' or "
    "'SUB|PUB' or 'PUB|SUB'.", f"{_PERMISSION} (checkResourcePerms)")
ACL_ACCESS_KEY_SHORT = Remark("RMQ-ACL-ADMIN-UPDATE",
                              "The accessKey={access_key} cannot be null and length should longer than 6",
                              f"{_PLAIN_MANAGER} (createAclAccessConfigMap)")

# -- the name server (RMQ-NS-*) --------------------------------------------------------------------------
NO_ROUTE = Remark("RMQ-NS-TOPIC-NOT-EXIST", NO_ROUTE_TEXT + FAQ_SUFFIX, f"{_NAMESRV} (getRouteInfoByTopic)")
KV_NOT_FOUND = Remark("RMQ-NS-KV", "No config item, Namespace: {namespace} Key: {key}",
                      f"{_NAMESRV} (getKVConfig)")
KV_NAMESPACE_NOT_FOUND = Remark("RMQ-NS-KV-LIST", "No config item, Namespace: {namespace}",
                                f"{_NAMESRV} (getKVListByNamespace)")
REGISTER_CRC_MISMATCH = Remark("RMQ-NS-REGISTER", "crc32 not match", f"{_NAMESRV} (registerBroker, 5.x)")

# -- any request ----------------------------------------------------------------------------------------
NOT_SUPPORTED = Remark("RMQ-CODE-NOT-SUPPORTED", " request type {code} not supported",
                       f"{_REMOTING} (processRequestCommand)")
UNSET = Remark("RMQ-CODE-RESPONSE", "not set any response code",
               "remoting/src/main/java/org/apache/rocketmq/remoting/protocol/RemotingCommand.java "
               "(createResponseCommand)")

REMARKS: tuple[Remark, ...] = tuple(value for value in tuple(globals().values()) if isinstance(value, Remark))
"""Every remark above, in order: the test that each names a registered clause reads it."""
