"""ACL 2.0 authorization of the remoting codes Apache decides by annotation (the codes outside
``rocketmq_spec.spec.authorization.REMOTING_NEEDS``).

Each request header class of these codes carries ``@RocketMQAction(value = code, resource = ..., action =
...)`` and marks the fields naming resources with ``@RocketMQResource(type[, splitter])``;
``DefaultAuthorizationContextBuilder.buildContextByAnnotation`` makes one context per value of such a field
(split at the splitter when one is given; a ``%RETRY%`` topic as its group), each for the class's actions,
and when no field gave one and the class's resource is Cluster, one context for ``Cluster:<the broker's
brokerClusterName>``. Only the fields the class declares itself count, not inherited ones. Read off
5.5.0's ``remoting/.../protocol/header/*RequestHeader.java``.
"""

from __future__ import annotations

from dataclasses import dataclass

from rocketmq_spec.spec.auth import Action, ResourceType
from rocketmq_spec.spec.codes import RequestCode

C = RequestCode
GET, LIST, PUB, SUB = Action.GET, Action.LIST, Action.PUB, Action.SUB
CREATE, UPDATE, DELETE = Action.CREATE, Action.UPDATE, Action.DELETE
CLUSTER, GROUP, TOPIC = ResourceType.CLUSTER, ResourceType.GROUP, ResourceType.TOPIC


@dataclass(frozen=True)
class AnnotatedField:
    name: str
    """The extFields key (the header class's field name)."""
    resource: ResourceType
    splitter: str = ""


@dataclass(frozen=True)
class Annotated:
    code: RequestCode
    header_class: str
    actions: tuple[Action, ...]
    fields: tuple[AnnotatedField, ...]
    cluster: bool = False
    """The class's resource is Cluster: with no field value, the context is the broker's cluster."""


def _row(code: RequestCode, header_class: str, actions: tuple[Action, ...],
         fields: tuple[tuple[str, ResourceType] | tuple[str, ResourceType, str], ...],
         cluster: bool = False) -> Annotated:
    return Annotated(code, header_class, actions, tuple(AnnotatedField(*field) for field in fields), cluster)


ANNOTATED: tuple[Annotated, ...] = (
    _row(C.ACK_MESSAGE, "AckMessageRequestHeader", (SUB,), (("consumerGroup", GROUP), ("topic", TOPIC))),
    _row(C.ADD_BROKER, "AddBrokerRequestHeader", (UPDATE,), (), cluster=True),
    _row(C.ADD_WRITE_PERM_OF_BROKER, "AddWritePermOfBrokerRequestHeader", (UPDATE,), (), cluster=True),
    _row(C.AUTH_CREATE_ACL, "CreateAclRequestHeader", (UPDATE,), (), cluster=True),
    _row(C.AUTH_CREATE_USER, "CreateUserRequestHeader", (UPDATE,), (), cluster=True),
    _row(C.AUTH_DELETE_ACL, "DeleteAclRequestHeader", (UPDATE,), (), cluster=True),
    _row(C.AUTH_DELETE_USER, "DeleteUserRequestHeader", (UPDATE,), (), cluster=True),
    _row(C.AUTH_GET_ACL, "GetAclRequestHeader", (GET,), (), cluster=True),
    _row(C.AUTH_GET_USER, "GetUserRequestHeader", (GET,), (), cluster=True),
    _row(C.AUTH_LIST_ACL, "ListAclsRequestHeader", (GET,), (), cluster=True),
    _row(C.AUTH_LIST_USER, "ListUsersRequestHeader", (GET,), (), cluster=True),
    _row(C.AUTH_UPDATE_ACL, "UpdateAclRequestHeader", (UPDATE,), (), cluster=True),
    _row(C.AUTH_UPDATE_USER, "UpdateUserRequestHeader", (UPDATE,), (), cluster=True),
    _row(C.BROKER_HEARTBEAT, "BrokerHeartbeatRequestHeader",
         (UPDATE,), (("clusterName", CLUSTER),), cluster=True),
    _row(C.CHANGE_MESSAGE_INVISIBLETIME, "ChangeInvisibleTimeRequestHeader",
         (SUB,), (("consumerGroup", GROUP), ("topic", TOPIC))),
    _row(C.CHECK_ROCKSDB_CQ_WRITE_PROGRESS, "CheckRocksdbCqWriteProgressRequestHeader",
         (GET,), (("topic", TOPIC),)),
    _row(C.CHECK_TRANSACTION_STATE, "CheckTransactionStateRequestHeader", (PUB,), (("topic", TOPIC),)),
    _row(C.CLEAN_BROKER_DATA, "CleanControllerBrokerDataRequestHeader",
         (UPDATE,), (("clusterName", CLUSTER),), cluster=True),
    _row(C.CLONE_GROUP_OFFSET, "CloneGroupOffsetRequestHeader",
         (UPDATE,), (("destGroup", GROUP), ("topic", TOPIC))),
    _row(C.CONSUME_MESSAGE_DIRECTLY, "ConsumeMessageDirectlyResultRequestHeader",
         (SUB,), (("consumerGroup", GROUP), ("topic", TOPIC))),
    _row(C.CONTROLLER_ALTER_SYNC_STATE_SET, "AlterSyncStateSetRequestHeader", (UPDATE,), (), cluster=True),
    _row(C.CONTROLLER_APPLY_BROKER_ID, "ApplyBrokerIdRequestHeader",
         (UPDATE,), (("clusterName", CLUSTER),), cluster=True),
    _row(C.CONTROLLER_ELECT_MASTER, "ElectMasterRequestHeader",
         (UPDATE,), (("clusterName", CLUSTER),), cluster=True),
    _row(C.CONTROLLER_GET_NEXT_BROKER_ID, "GetNextBrokerIdRequestHeader",
         (GET,), (("clusterName", CLUSTER),), cluster=True),
    _row(C.CONTROLLER_GET_REPLICA_INFO, "GetReplicaInfoRequestHeader", (GET,), (), cluster=True),
    _row(C.CONTROLLER_REGISTER_BROKER, "RegisterBrokerToControllerRequestHeader",
         (UPDATE,), (("clusterName", CLUSTER),), cluster=True),
    _row(C.DELETE_KV_CONFIG, "DeleteKVConfigRequestHeader", (UPDATE,), (), cluster=True),
    _row(C.DELETE_SUBSCRIPTIONGROUP, "DeleteSubscriptionGroupRequestHeader",
         (DELETE,), (("groupName", GROUP),)),
    _row(C.DELETE_TOPIC_IN_BROKER, "DeleteTopicRequestHeader", (DELETE,), (("topic", TOPIC),)),
    _row(C.DELETE_TOPIC_IN_NAMESRV, "DeleteTopicFromNamesrvRequestHeader",
         (UPDATE,), (("clusterName", CLUSTER),), cluster=True),
    _row(C.EXCHANGE_BROKER_HA_INFO, "ExchangeHAInfoRequestHeader", (UPDATE,), (), cluster=True),
    _row(C.EXPORT_ROCKSDB_CONFIG_TO_JSON, "ExportRocksDBConfigToJsonRequestHeader", (GET,), (), cluster=True),
    _row(C.GET_ALL_PRODUCER_INFO, "GetAllProducerInfoRequestHeader", (GET,), (), cluster=True),
    _row(C.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, "GetAllSubscriptionGroupRequestHeader", (GET,), ()),
    _row(C.GET_ALL_TOPIC_CONFIG, "GetAllTopicConfigRequestHeader", (GET,), ()),
    _row(C.GET_BROKER_CONSUME_STATS, "GetConsumeStatsInBrokerHeader", (GET,), (), cluster=True),
    _row(C.GET_BROKER_MEMBER_GROUP, "GetBrokerMemberGroupRequestHeader", (GET,), (("clusterName", CLUSTER),)),
    _row(C.GET_CONSUMER_CONNECTION_LIST, "GetConsumerConnectionListRequestHeader",
         (GET,), (("consumerGroup", GROUP),)),
    _row(C.GET_CONSUMER_RUNNING_INFO, "GetConsumerRunningInfoRequestHeader",
         (GET,), (("consumerGroup", GROUP),)),
    _row(C.GET_CONSUME_STATS, "GetConsumeStatsRequestHeader",
         (GET,), (("consumerGroup", GROUP), ("topic", TOPIC), ("topicList", TOPIC, ";"))),
    _row(C.GET_EARLIEST_MSG_STORETIME, "GetEarliestMsgStoretimeRequestHeader", (GET,), (("topic", TOPIC),)),
    _row(C.GET_KVLIST_BY_NAMESPACE, "GetKVListByNamespaceRequestHeader", (GET,), (), cluster=True),
    _row(C.GET_KV_CONFIG, "GetKVConfigRequestHeader", (GET,), (), cluster=True),
    _row(C.GET_MAX_OFFSET, "GetMaxOffsetRequestHeader", (GET,), (("topic", TOPIC),)),
    _row(C.GET_MIN_OFFSET, "GetMinOffsetRequestHeader", (GET,), (("topic", TOPIC),)),
    _row(C.GET_PRODUCER_CONNECTION_LIST, "GetProducerConnectionListRequestHeader", (GET,), (), cluster=True),
    _row(C.GET_SUBSCRIPTIONGROUP_CONFIG, "GetSubscriptionGroupConfigRequestHeader",
         (GET,), (("group", GROUP),)),
    _row(C.GET_TOPICS_BY_CLUSTER, "GetTopicsByClusterRequestHeader", (LIST,), ()),
    _row(C.GET_TOPIC_CONFIG, "GetTopicConfigRequestHeader", (GET,), (("topic", TOPIC),)),
    _row(C.GET_TOPIC_STATS_INFO, "GetTopicStatsInfoRequestHeader", (GET,), (("topic", TOPIC),)),
    _row(C.INVOKE_BROKER_TO_GET_CONSUMER_STATUS, "GetConsumerStatusRequestHeader",
         (GET,), (("topic", TOPIC), ("group", GROUP))),
    _row(C.INVOKE_BROKER_TO_RESET_OFFSET, "ResetOffsetRequestHeader",
         (UPDATE,), (("group", GROUP), ("topic", TOPIC))),
    _row(C.NOTIFICATION, "NotificationRequestHeader", (SUB,), (("consumerGroup", GROUP), ("topic", TOPIC))),
    _row(C.NOTIFY_BROKER_ROLE_CHANGED, "NotifyBrokerRoleChangedRequestHeader", (UPDATE,), (), cluster=True),
    _row(C.NOTIFY_CONSUMER_IDS_CHANGED, "NotifyConsumerIdsChangedRequestHeader",
         (SUB,), (("consumerGroup", GROUP),)),
    _row(C.NOTIFY_MIN_BROKER_ID_CHANGE, "NotifyMinBrokerIdChangeRequestHeader", (UPDATE,), (), cluster=True),
    _row(C.NOTIFY_UNSUBSCRIBE_LITE, "NotifyUnsubscribeLiteRequestHeader",
         (SUB,), (("consumerGroup", GROUP),)),
    _row(C.PEEK_MESSAGE, "PeekMessageRequestHeader", (SUB,), (("topic", TOPIC), ("consumerGroup", GROUP))),
    _row(C.POLLING_INFO, "PollingInfoRequestHeader", (GET,), (("consumerGroup", GROUP), ("topic", TOPIC))),
    _row(C.POP_MESSAGE, "PopMessageRequestHeader", (SUB,), (("consumerGroup", GROUP), ("topic", TOPIC))),
    _row(C.PUSH_REPLY_MESSAGE_TO_CLIENT, "ReplyMessageRequestHeader",
         (SUB,), (("producerGroup", GROUP), ("topic", TOPIC))),
    _row(C.PUT_KV_CONFIG, "PutKVConfigRequestHeader", (UPDATE,), (), cluster=True),
    _row(C.QUERY_CONSUME_QUEUE, "QueryConsumeQueueRequestHeader",
         (GET,), (("topic", TOPIC), ("consumerGroup", GROUP))),
    _row(C.QUERY_CONSUME_TIME_SPAN, "QueryConsumeTimeSpanRequestHeader",
         (GET,), (("topic", TOPIC), ("group", GROUP))),
    _row(C.QUERY_CORRECTION_OFFSET, "QueryCorrectionOffsetHeader",
         (GET,), (("filterGroups", GROUP, ","), ("compareGroup", GROUP), ("topic", TOPIC))),
    _row(C.QUERY_DATA_VERSION, "QueryDataVersionRequestHeader",
         (GET,), (("clusterName", CLUSTER),), cluster=True),
    _row(C.QUERY_SUBSCRIPTION_BY_CONSUMER, "QuerySubscriptionByConsumerRequestHeader",
         (GET,), (("group", GROUP), ("topic", TOPIC))),
    _row(C.QUERY_TOPICS_BY_CONSUMER, "QueryTopicsByConsumerRequestHeader", (GET,), (("group", GROUP),)),
    _row(C.QUERY_TOPIC_CONSUME_BY_WHO, "QueryTopicConsumeByWhoRequestHeader", (GET,), (("topic", TOPIC),)),
    _row(C.REGISTER_BROKER, "RegisterBrokerRequestHeader",
         (UPDATE,), (("clusterName", CLUSTER),), cluster=True),
    _row(C.REGISTER_TOPIC_IN_NAMESRV, "RegisterTopicRequestHeader", (UPDATE,), (), cluster=True),
    _row(C.REMOVE_BROKER, "RemoveBrokerRequestHeader",
         (UPDATE,), (("brokerClusterName", CLUSTER),), cluster=True),
    _row(C.RESET_MASTER_FLUSH_OFFSET, "ResetMasterFlushOffsetHeader", (UPDATE,), (), cluster=True),
    _row(C.RESUME_CHECK_HALF_MESSAGE, "ResumeCheckHalfMessageRequestHeader", (UPDATE,), (("topic", TOPIC),)),
    _row(C.SEARCH_OFFSET_BY_TIMESTAMP, "SearchOffsetRequestHeader", (GET,), (("topic", TOPIC),)),
    _row(C.UNREGISTER_BROKER, "UnRegisterBrokerRequestHeader",
         (UPDATE,), (("clusterName", CLUSTER),), cluster=True),
    _row(C.UPDATE_AND_CREATE_TOPIC, "CreateTopicRequestHeader", (CREATE,), (("topic", TOPIC),)),
    _row(C.UPDATE_AND_CREATE_TOPIC_LIST, "CreateTopicListRequestHeader", (CREATE,), ()),
    _row(C.UPDATE_AND_GET_GROUP_FORBIDDEN, "UpdateGroupForbiddenRequestHeader",
         (UPDATE,), (("group", GROUP), ("topic", TOPIC))),
    _row(C.VIEW_BROKER_STATS_DATA, "ViewBrokerStatsDataRequestHeader", (GET,), (), cluster=True),
    _row(C.VIEW_MESSAGE_BY_ID, "ViewMessageRequestHeader", (GET,), (("topic", TOPIC),)),
    _row(C.WIPE_WRITE_PERM_OF_BROKER, "WipeWritePermOfBrokerRequestHeader", (UPDATE,), (), cluster=True),

)
ANNOTATED_BY_CODE: dict[int, Annotated] = {int(row.code): row for row in ANNOTATED}
