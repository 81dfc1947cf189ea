"""Custom headers of the admin commands: what mqadmin and the Dashboard send to brokers and name servers.

Same model as ``rocketmq_spec.spec.headers`` (every value a string in extFields, ``required`` =
``@CFNotNull``). Admin commands without a header (GET_BROKER_RUNTIME_INFO, GET_NAMESRV_CONFIG,
CLEAN_EXPIRED_CONSUMEQUEUE ...) are listed with an empty table, so the protocol document says so instead of
leaving them out. Three requests travel the other way, from the broker to a connected client:
RESET_CONSUMER_CLIENT_OFFSET, GET_CONSUMER_RUNNING_INFO and CONSUME_MESSAGE_DIRECTLY; the broker forwards the
last two with the admin tool's extFields unchanged. """

from __future__ import annotations

from rocketmq_spec.spec.codes import RequestCode
from rocketmq_spec.spec.header_fields import INT, B, Field, HeaderSpec, L, S
from rocketmq_spec.spec.releases import since, until

NO_HEADER = HeaderSpec("(none)", ())
"""Commands Java creates with a null custom header: no extFields keys are read or written."""

GET_BROKER_CONFIG_RESPONSE = HeaderSpec("GetBrokerConfigResponseHeader", (
    Field("version", S, True, "DataVersion JSON of the broker's configuration"),))
DELETE_SUBSCRIPTION_GROUP_REQUEST = HeaderSpec("DeleteSubscriptionGroupRequestHeader", (
    Field("groupName", S, True, "consumer group"),
    Field("removeOffset", B, False, "also drop the group's committed offsets (default false)",
          releases=until("4.9.8")),
    Field("cleanOffset", B, False, "5.x name of removeOffset", releases=since("5.0.0")),
))
GET_TOPIC_STATS_INFO_REQUEST = HeaderSpec("GetTopicStatsInfoRequestHeader", (
    Field("topic", S, True, "topic"),))
GET_CONSUMER_CONNECTION_LIST_REQUEST = HeaderSpec("GetConsumerConnectionListRequestHeader", (
    Field("consumerGroup", S, True, "consumer group"),))
GET_PRODUCER_CONNECTION_LIST_REQUEST = HeaderSpec("GetProducerConnectionListRequestHeader", (
    Field("producerGroup", S, True, "producer group"),))
GET_CONSUME_STATS_REQUEST = HeaderSpec("GetConsumeStatsRequestHeader", (
    Field("consumerGroup", S, True, "consumer group"),
    Field("topic", S, False, "one topic; absent means every topic the group has offsets for"),
))
QUERY_TOPIC_CONSUME_BY_WHO_REQUEST = HeaderSpec("QueryTopicConsumeByWhoRequestHeader", (
    Field("topic", S, True, "topic"),))
RESET_OFFSET_REQUEST = HeaderSpec("ResetOffsetRequestHeader", (
    Field("topic", S, True, "topic"),
    Field("group", S, True, "consumer group"),
    Field("timestamp", L, True, "store time to rewind to, ms; -1 means each queue's max offset"),
    Field("isForce", B, True, "also move offsets forward (false only ever rewinds)"),
    Field("queueId", INT, False, "one queue to reset (-1 or absent: every queue)", releases=since("5.1.0")),
    Field("offset", L, False, "offset to set the one queue to (absent or -1: by timestamp)",
          releases=since("5.1.0")),
))
GET_CONSUMER_RUNNING_INFO_REQUEST = HeaderSpec("GetConsumerRunningInfoRequestHeader", (
    Field("consumerGroup", S, True, "consumer group"),
    Field("clientId", S, True, "client to ask"),
    Field("jstackEnable", B, False, "include the client's thread dump (default false)"),
))
CONSUME_MESSAGE_DIRECTLY_REQUEST = HeaderSpec("ConsumeMessageDirectlyResultRequestHeader", (
    Field("consumerGroup", S, True, "consumer group"),
    Field("clientId", S, False, "client to hand the message to"),
    Field("msgId", S, False, "offsetMsgId of the message; the broker puts the record in the body"),
    Field("brokerName", S, False, "set by the broker before forwarding"),
))
CLONE_GROUP_OFFSET_REQUEST = HeaderSpec("CloneGroupOffsetRequestHeader", (
    Field("srcGroup", S, True, "group to copy offsets from"),
    Field("destGroup", S, True, "group to copy offsets to"),
    Field("topic", S, False, "topic; absent means every topic of srcGroup"),
    Field("offline", B, False, "clone even when srcGroup is online but does not subscribe to the topic"),
))
VIEW_BROKER_STATS_DATA_REQUEST = HeaderSpec("ViewBrokerStatsDataRequestHeader", (
    Field("statsName", S, True, "stats item kind: TOPIC_PUT_NUMS, GROUP_GET_NUMS ..."),
    Field("statsKey", S, True, "topic, or topic@group"),
))
QUERY_CONSUME_QUEUE_REQUEST = HeaderSpec("QueryConsumeQueueRequestHeader", (
    Field("topic", S, False, "topic"),
    Field("queueId", INT, False, "queue"),
    Field("index", L, False, "first logical offset to show"),
    Field("count", INT, False, "entries to show"),
    Field("consumerGroup", S, False, "group whose subscription is reported beside the entries"),
))
GET_CONSUMER_STATUS_REQUEST = HeaderSpec("GetConsumerStatusRequestHeader", (
    Field("topic", S, True, "topic"),
    Field("group", S, True, "consumer group"),
    Field("clientAddr", S, False, "one client's address; absent asks every client"),
))
BROKER_NAME_REQUEST = HeaderSpec("AddWritePermOfBrokerRequestHeader", (
    Field("brokerName", S, True, "broker name"),))
ADD_WRITE_PERM_RESPONSE = HeaderSpec("AddWritePermOfBrokerResponseHeader", (
    Field("addTopicCount", INT, True, "topics whose write permission was restored"),))
GET_TOPICS_BY_CLUSTER_REQUEST = HeaderSpec("GetTopicsByClusterRequestHeader", (
    Field("cluster", S, True, "cluster name"),))

GET_TOPIC_CONFIG_REQUEST = HeaderSpec("GetTopicConfigRequestHeader", (
    Field("topic", S, True, "topic"),
    Field("lo", B, False, "also answer the static topic's queue mapping", releases=since("5.0.0")),
))
GET_SUBSCRIPTION_GROUP_CONFIG_REQUEST = HeaderSpec("GetSubscriptionGroupConfigRequestHeader", (
    Field("group", S, True, "consumer group"),))

_C = RequestCode
ADMIN_REQUEST_HEADERS: dict[int, HeaderSpec] = {
    _C.GET_TOPIC_CONFIG: GET_TOPIC_CONFIG_REQUEST,
    _C.GET_SUBSCRIPTIONGROUP_CONFIG: GET_SUBSCRIPTION_GROUP_CONFIG_REQUEST,
    _C.GET_BROKER_RUNTIME_INFO: NO_HEADER,
    _C.GET_BROKER_CONFIG: NO_HEADER,
    _C.UPDATE_BROKER_CONFIG: NO_HEADER,
    _C.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP: NO_HEADER,
    _C.GET_ALL_SUBSCRIPTIONGROUP_CONFIG: NO_HEADER,
    _C.DELETE_SUBSCRIPTIONGROUP: DELETE_SUBSCRIPTION_GROUP_REQUEST,
    _C.GET_TOPIC_STATS_INFO: GET_TOPIC_STATS_INFO_REQUEST,
    _C.GET_CONSUMER_CONNECTION_LIST: GET_CONSUMER_CONNECTION_LIST_REQUEST,
    _C.GET_PRODUCER_CONNECTION_LIST: GET_PRODUCER_CONNECTION_LIST_REQUEST,
    _C.GET_CONSUME_STATS: GET_CONSUME_STATS_REQUEST,
    _C.GET_ALL_CONSUMER_OFFSET: NO_HEADER,
    _C.QUERY_TOPIC_CONSUME_BY_WHO: QUERY_TOPIC_CONSUME_BY_WHO_REQUEST,
    _C.INVOKE_BROKER_TO_RESET_OFFSET: RESET_OFFSET_REQUEST,
    _C.RESET_CONSUMER_CLIENT_OFFSET: RESET_OFFSET_REQUEST,
    _C.INVOKE_BROKER_TO_GET_CONSUMER_STATUS: GET_CONSUMER_STATUS_REQUEST,
    _C.GET_CONSUMER_RUNNING_INFO: GET_CONSUMER_RUNNING_INFO_REQUEST,
    _C.CONSUME_MESSAGE_DIRECTLY: CONSUME_MESSAGE_DIRECTLY_REQUEST,
    _C.CLONE_GROUP_OFFSET: CLONE_GROUP_OFFSET_REQUEST,
    _C.VIEW_BROKER_STATS_DATA: VIEW_BROKER_STATS_DATA_REQUEST,
    _C.QUERY_CONSUME_QUEUE: QUERY_CONSUME_QUEUE_REQUEST,
    _C.CLEAN_EXPIRED_CONSUMEQUEUE: NO_HEADER,
    _C.DELETE_EXPIRED_COMMITLOG: NO_HEADER,
    _C.GET_SYSTEM_TOPIC_LIST_FROM_BROKER: NO_HEADER,
    _C.GET_SYSTEM_TOPIC_LIST_FROM_NS: NO_HEADER,
    _C.GET_ALL_TOPIC_LIST_FROM_NAMESERVER: NO_HEADER,
    _C.GET_BROKER_CLUSTER_INFO: NO_HEADER,
    _C.ADD_WRITE_PERM_OF_BROKER: BROKER_NAME_REQUEST,
    _C.GET_TOPICS_BY_CLUSTER: GET_TOPICS_BY_CLUSTER_REQUEST,
    _C.GET_NAMESRV_CONFIG: NO_HEADER,
    _C.UPDATE_NAMESRV_CONFIG: NO_HEADER,
}
ADMIN_RESPONSE_HEADERS: dict[int, HeaderSpec] = {
    _C.GET_BROKER_CONFIG: GET_BROKER_CONFIG_RESPONSE,
    _C.ADD_WRITE_PERM_OF_BROKER: ADD_WRITE_PERM_RESPONSE,
}
