"""Admin commands 5.x added that 5.x mqadmin relies on: GET_TOPIC_CONFIG (351, topicStatus and
consumerProgress ask it first), GET_SUBSCRIPTIONGROUP_CONFIG (352) and POP_ROLLBACK (200056,
exportPopRecord).

They are registered for every release; the dispatch table leaves them out for a release that does not
declare them (4.9.8), which then answers REQUEST_CODE_NOT_SUPPORTED as it does.
"""

from __future__ import annotations

from rocketmq_spec.codec.bodies import encode_body
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.reference_broker.broker.subscriptions import SubscriptionGroupManager
from rocketmq_spec.reference_broker.broker.topics import TopicConfigManager
from rocketmq_spec.reference_broker.server import Handler, Request
from rocketmq_spec.spec import admin
from rocketmq_spec.spec.admin_bodies import SUBSCRIPTION_GROUP_CONFIG, TOPIC_CONFIG_AND_QUEUE_MAPPING
from rocketmq_spec.spec.codes import RequestCode, ResponseCode


class Admin5Handlers:
    def __init__(self, topics: TopicConfigManager, groups: SubscriptionGroupManager) -> None:
        self.topics = topics
        self.groups = groups

    def table(self) -> dict[RequestCode, Handler]:
        return {RequestCode.GET_TOPIC_CONFIG: self.topic_config,
                RequestCode.GET_SUBSCRIPTIONGROUP_CONFIG: self.group_config,
                RequestCode.POP_ROLLBACK: self.pop_rollback}

    async def topic_config(self, request: Request) -> RemotingCommand:
        """RMQ-ADMIN-GET-TOPIC-CONFIG (no static topics here: the mapping is always absent)."""
        name = request.header()["topic"]
        topic = self.topics.get(name)
        if topic is None:
            return request.reply(ResponseCode.TOPIC_NOT_EXIST,
                                 admin.GET_TOPIC_CONFIG_NOT_EXIST_REMARK.format(topic=name))
        return request.reply(body=encode_body(TOPIC_CONFIG_AND_QUEUE_MAPPING,
                                              {"attributes": {}, **topic.as_json()}))

    async def group_config(self, request: Request) -> RemotingCommand:
        """RMQ-ADMIN-GET-GROUP-CONFIG."""
        group = self.groups.find_or_create(request.header()["group"])
        if group is None:
            return request.reply(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST,
                                 admin.GET_GROUP_CONFIG_NOT_EXIST_REMARK)
        return request.reply(body=encode_body(SUBSCRIPTION_GROUP_CONFIG, group.as_json()))

    @staticmethod
    async def pop_rollback(request: Request) -> RemotingCommand:
        """RMQ-ADMIN-POP-ROLLBACK: pop state already lives in the revive log, Java's file store; there is
        nothing to move back from a RocksDB pop store, so the answer is Java's success (no header)."""
        return request.reply()
