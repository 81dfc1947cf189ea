"""The broker's handlers that need no message store: topics, clients, consumer offsets, queue locks.

Each handler decodes through the spec's header tables (``request.header()``), calls one manager, and
answers with exactly the response shape the 4.9.8 broker gives (golden frames show, e.g., that
UPDATE_AND_CREATE_TOPIC keeps the default remark and that HEART_BEAT answers without extFields).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from rocketmq_spec.codec.bodies import encode_body
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.reference_broker.broker.clients import ClientChannel, ClientManager
from rocketmq_spec.reference_broker.broker.locks import MessageQueue, RebalanceLockManager
from rocketmq_spec.reference_broker.broker.offsets import ConsumerOffsetManager
from rocketmq_spec.reference_broker.broker.subscriptions import SubscriptionGroupManager
from rocketmq_spec.reference_broker.broker.topics import TopicConfig, TopicConfigManager, topic_name_problem
from rocketmq_spec.reference_broker.server import LEGACY_VERSION, Handler, Request
from rocketmq_spec.spec import remarks
from rocketmq_spec.spec.bodies import (
    CONSUMER_LIST,
    HEARTBEAT_DATA,
    LOCK_BATCH_REQUEST,
    LOCK_BATCH_RESPONSE,
    TOPIC_CONFIG_WRAPPER,
)
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.release_rules import Rule, holds
from rocketmq_spec.spec.system_topics import RETRY_PREFIX
from rocketmq_spec.spec.topic_attributes import TopicAttributeError
from rocketmq_spec.spec.topic_attributes import apply as apply_attributes

log = logging.getLogger(__name__)

"""The remark Java's ``createResponseCommand`` starts with; UPDATE_AND_CREATE_TOPIC never clears it."""
QUERY_OFFSET_NOT_FOUND = "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first"

Notifier = Callable[[str], Awaitable[None]]
"""Sends NOTIFY_CONSUMER_IDS_CHANGED to every member of a consumer group."""
MinOffset = Callable[[str, int], int]
"""Minimum logical offset of a queue, from the message store."""


def _queues(body: dict[str, Any]) -> list[MessageQueue]:
    return [(mq["topic"], mq["brokerName"], mq["queueId"]) for mq in body["mqSet"]]


class BrokerHandlers:
    def __init__(self, topics: TopicConfigManager, groups: SubscriptionGroupManager,
                 clients: ClientManager, offsets: ConsumerOffsetManager, locks: RebalanceLockManager,
                 notify: Notifier, min_offset: MinOffset, release_version: int = LEGACY_VERSION) -> None:
        self.topics = topics
        self.groups = groups
        self.clients = clients
        self.offsets = offsets
        self.locks = locks
        self._notify = notify
        self._min_offset = min_offset
        self._release_version = release_version
        """The wire release's version word: the release rules (``rocketmq_spec.spec.release_rules``) it
        follows."""

    def table(self) -> dict[RequestCode, Handler]:
        return {
            RequestCode.UPDATE_AND_CREATE_TOPIC: self.create_topic,
            RequestCode.DELETE_TOPIC_IN_BROKER: self.delete_topic,
            RequestCode.GET_ALL_TOPIC_CONFIG: self.get_all_topic_config,
            RequestCode.HEART_BEAT: self.heart_beat,
            RequestCode.UNREGISTER_CLIENT: self.unregister_client,
            RequestCode.GET_CONSUMER_LIST_BY_GROUP: self.get_consumer_list,
            RequestCode.QUERY_CONSUMER_OFFSET: self.query_consumer_offset,
            RequestCode.UPDATE_CONSUMER_OFFSET: self.update_consumer_offset,
            RequestCode.LOCK_BATCH_MQ: self.lock_batch,
            RequestCode.UNLOCK_BATCH_MQ: self.unlock_batch,
        }

    async def create_topic(self, request: Request) -> RemotingCommand:
        header = request.header()
        topic = header["topic"]
        problem = topic_name_problem(topic)
        if problem is None and self.topics.is_system_topic(topic):
            problem = f"The topic[{topic}] is conflict with system topic."
        if problem is not None:
            invalid = holds(Rule.TOPIC_CONFLICT_INVALID_PARAMETER, self._release_version)
            return request.reply(ResponseCode.INVALID_PARAMETER if invalid else ResponseCode.SYSTEM_ERROR,
                                 problem)
        existing = self.topics.topics.get(topic)
        try:
            attributes = apply_attributes(existing.attributes if existing else {},
                                          header.get("attributes") or "")
        except TopicAttributeError as exc:
            return request.reply(ResponseCode.SYSTEM_ERROR, str(exc))
        self.topics.put(TopicConfig(topic, header["readQueueNums"], header["writeQueueNums"], header["perm"],
                                    header["topicFilterType"], header.get("topicSysFlag", 0),
                                    attributes=attributes))
        return request.reply(remark=remarks.UNSET.template)

    async def delete_topic(self, request: Request) -> RemotingCommand:
        topic = request.header()["topic"]
        self.topics.delete(topic)
        self.offsets.remove_topic(topic)
        return request.reply()

    async def get_all_topic_config(self, request: Request) -> RemotingCommand:
        return request.reply(header={}, body=encode_body(TOPIC_CONFIG_WRAPPER, self.topics.wrapper_json()))

    async def heart_beat(self, request: Request) -> RemotingCommand:
        data = request.body(HEARTBEAT_DATA)
        info = ClientChannel(data["clientID"], request.command.language, request.command.version,
                             time.monotonic())
        for consumer in data["consumerDataSet"]:
            group_name = consumer["groupName"]
            group = self.groups.find_or_create(group_name)
            if group is not None and group.retry_queue_nums > 0:
                self.topics.create_in_send_back(f"{RETRY_PREFIX}{group_name}", group.retry_queue_nums)
            changed = self.clients.register_consumer(group_name, request.connection, info, consumer,
                                                     int(time.time() * 1000))
            if changed and (group is None or group.notify_consumer_ids_changed_enable):
                await self._notify(group_name)
        for producer in data["producerDataSet"]:
            self.clients.register_producer(producer["groupName"], request.connection, info)
        return request.reply()

    async def unregister_client(self, request: Request) -> RemotingCommand:
        header = request.header()
        if header.get("producerGroup"):
            self.clients.unregister_producer(header["producerGroup"], request.connection)
        group_name = header.get("consumerGroup")
        if group_name and self.clients.unregister_consumer(group_name, request.connection):
            group = self.groups.groups.get(group_name)
            if group is None or group.notify_consumer_ids_changed_enable:
                await self._notify(group_name)
        return request.reply(header={})

    async def get_consumer_list(self, request: Request) -> RemotingCommand:
        group_name = request.header()["consumerGroup"]
        group = self.clients.consumer_group(group_name)
        if group is None or not group.channels:
            return request.reply(ResponseCode.SYSTEM_ERROR, remarks.NO_CONSUMER.format(group=group_name))
        body = encode_body(CONSUMER_LIST, {"consumerIdList": group.client_ids()})
        return request.reply(header={}, body=body)

    async def query_consumer_offset(self, request: Request) -> RemotingCommand:
        header = request.header()
        group, topic, queue_id = header["consumerGroup"], header["topic"], header["queueId"]
        offset = self.offsets.query(group, topic, queue_id)
        if offset < 0 and self._min_offset(topic, queue_id) <= 0:
            # Java answers 0 when the queue starts at 0 and its first message is still in memory,
            # which is always the case for this broker's store.
            offset = 0
        if offset < 0:
            return request.reply(ResponseCode.QUERY_NOT_FOUND, QUERY_OFFSET_NOT_FOUND, header={})
        return request.reply(header={"offset": offset})

    async def update_consumer_offset(self, request: Request) -> RemotingCommand:
        header = request.header()
        if holds(Rule.OFFSET_COMMIT_NEEDS_GROUP_AND_TOPIC, self._release_version):
            group, topic = header["consumerGroup"], header["topic"]
            if group not in self.groups.groups:
                return request.reply(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST,
                                     remarks.OFFSET_GROUP_NOT_EXIST.format(group=group), header={})
            if self.topics.get(topic) is None:
                return request.reply(ResponseCode.TOPIC_NOT_EXIST,
                                     remarks.OFFSET_TOPIC_NOT_EXIST.format(topic=topic), header={})
        self.offsets.commit(header["consumerGroup"], header["topic"], header["queueId"],
                            header["commitOffset"])
        return request.reply(header={})

    async def lock_batch(self, request: Request) -> RemotingCommand:
        body = request.body(LOCK_BATCH_REQUEST)
        locked = self.locks.try_lock_batch(body["consumerGroup"], _queues(body), body["clientId"],
                                           time.monotonic())
        answer = {"lockOKMQSet": [{"brokerName": b, "queueId": q, "topic": t} for t, b, q in locked]}
        return request.reply(body=encode_body(LOCK_BATCH_RESPONSE, answer))

    async def unlock_batch(self, request: Request) -> RemotingCommand:
        body = request.body(LOCK_BATCH_REQUEST)
        self.locks.unlock_batch(body["consumerGroup"], _queues(body), body["clientId"])
        return request.reply()
