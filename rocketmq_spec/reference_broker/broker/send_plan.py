"""What a send does, decided once for both routes a send can take.

A SEND_MESSAGE(_V2) reaches the broker by one of two routes: the send lane, called from the connection's
read callback with the header read straight from the frame (``send_lane``), and the general handler, a task
per request (``send``). Both ask :meth:`SendPlanner.plan` what to do, so every rule of a send lives here
once: Java's checks in ``msgCheck``'s order and their refusals, the queue picked for a negative queueId, the
retry/DLQ redirection, the sysFlag, the message to store and the kind of put, and the answer a stored send
gets. The routes differ only in how the request arrives and how the answer is written.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, NamedTuple

from rocketmq_spec.codec.answer_template import JsonAnswerTemplate
from rocketmq_spec.codec.command import java_hashmap_order
from rocketmq_spec.codec.request_scan import parse_properties
from rocketmq_spec.codec.store.record import HostPort
from rocketmq_spec.reference_broker.broker.subscriptions import SubscriptionGroupManager
from rocketmq_spec.reference_broker.broker.topics import TopicConfig, TopicConfigManager, topic_name_problem
from rocketmq_spec.reference_broker.config import BrokerConfig
from rocketmq_spec.reference_broker.server import Refused
from rocketmq_spec.reference_broker.store import InnerMessage, MessageStore
from rocketmq_spec.spec import remarks
from rocketmq_spec.spec.codes import ResponseCode
from rocketmq_spec.spec.json_header import ext_fields_capacity
from rocketmq_spec.spec.properties import PropertyKey
from rocketmq_spec.spec.release_rules import Rule, holds
from rocketmq_spec.spec.sysflag import PERM_READ_WRITE, MessageSysFlag, perm_to_string
from rocketmq_spec.spec.system_topics import (
    DLQ_PREFIX,
    NOT_ALLOWED_SEND_TOPICS,
    RETRY_PREFIX,
    TOPIC_MAX_LENGTH,
)
from rocketmq_spec.spec.version import MQVersion
from rocketmq_spec.spec.wire_release import wire_release

DLQ_NUMS_PER_GROUP = 1
"""Queues of a ``%DLQ%`` topic (``MixAll.DLQ_NUMS_PER_GROUP``)."""
RETRY_QUEUE_NUMS_ON_SEND = 1
"""Queues of a retry topic created because a producer sent to it (``msgCheck``)."""
STORED_SLOTS = ("msgId", "queueId", "queueOffset")
"""The header fields of a stored send's answer that differ from send to send."""


@lru_cache(maxsize=4096)
def born_host(peer: str) -> HostPort:
    """The producer's address as the broker's socket sees it (``ctx.channel().remoteAddress()``); a
    connection sends many messages, so each peer is parsed once."""
    host, _, port = peer.rpartition(":")
    return HostPort(host.strip("[]"), int(port))


def topic_config_text(topic: TopicConfig) -> str:
    """``TopicConfig.toString()`` of 4.9.8, quoted in the illegal-queueId remark."""
    return (f"TopicConfig [topicName={topic.topic_name}, readQueueNums={topic.read_queue_nums}, "
            f"writeQueueNums={topic.write_queue_nums}, perm={perm_to_string(topic.perm)}, "
            f"topicFilterType={topic.topic_filter_type}, topicSysFlag={topic.topic_sys_flag}, "
            f"order={str(topic.order).lower()}]")


class VersionUnread(Exception):
    """The plan depends on the request's version word (the retry/DLQ rule), which the route did not read:
    the send is left to the route that reads it, with nothing written."""


class SendPlan(NamedTuple):
    """A send that passed every check: what to store and which put stores it."""

    message: InnerMessage
    """The message to store, in its target topic and queue (a retry send past its limit: the DLQ); a
    batch's carries the batch's fields and an empty body, its messages being in the request's body."""
    queue_id: int
    """The queue the answer names: the producer's, or the one picked for a negative queueId."""
    batch: bool
    half: bool
    """A prepared transactional message, which the store parks in the half topic."""

    @property
    def plain(self) -> bool:
        """One message for an ordinary put: the only kind ``MessageStore.put_plain`` may take."""
        return not (self.batch or self.half)


class StoreWriters:
    """What every handler that writes messages needs: the settings, topics, groups and the store, and a
    random source for the queue Java picks at random (a negative queueId, a retry or DLQ queue)."""

    def __init__(self, config: BrokerConfig, topics: TopicConfigManager, groups: SubscriptionGroupManager,
                 store: MessageStore) -> None:
        self.config = config
        self.topics = topics
        self.groups = groups
        self.store = store
        self._random = random.Random()


class SendPlanner(StoreWriters):
    """The rules of a send, for the lane and the general handler alike."""

    def __init__(self, config: BrokerConfig, topics: TopicConfigManager, groups: SubscriptionGroupManager,
                 store: MessageStore) -> None:
        super().__init__(config, topics, groups, store)
        self._templates: dict[tuple[object, ...], JsonAnswerTemplate | None] = {}
        """By answer code and the settings ``send_ext`` reads."""
        release_version = wire_release(config.wire_release).version
        self._version = release_version
        self._bad_send_code = (ResponseCode.INVALID_PARAMETER
                               if holds(Rule.SEND_CHECK_INVALID_PARAMETER, release_version)
                               else ResponseCode.SYSTEM_ERROR)
        """The code of a refused topic name or queueId (spec.release_rules)."""
        self._dlq_past_limit = holds(Rule.RETRY_SEND_DLQ_PAST_LIMIT, release_version)
        """5.x: a retry send at the limit stays in the retry topic; only one past it is dead-lettered."""

    def plan(self, header: Mapping[str, Any], peer: str, body: bytes, client_version: int | None) -> SendPlan:
        """The send of ``header`` and ``body`` from ``peer`` (a client writing ``client_version``, None where
        the route did not read it), or Refused with Java's code and remark for the first check it fails
        (VersionUnread where the rule needs the version). Checking may create the topic (auto-creation, a
        retry or DLQ topic) as Java's does; planning the same send again finds it."""
        topic = self.check(header, peer)
        topic_name: str = header["topic"]
        sys_flag = self.sys_flag(header, topic)
        if header.get("batch"):
            if len(topic_name) > TOPIC_MAX_LENGTH:
                raise Refused(ResponseCode.MESSAGE_ILLEGAL,
                              remarks.BATCH_TOPIC_TOO_LONG.format(length=len(topic_name)))
            if topic_name.startswith(RETRY_PREFIX):
                raise Refused(ResponseCode.MESSAGE_ILLEGAL,
                              remarks.BATCH_RETRY_TOPIC.format(topic=topic_name))
            queue_id = self._queue_id(header, topic)
            return SendPlan(self._message(header, peer, topic_name, queue_id, sys_flag, b""), queue_id,
                            batch=True, half=False)
        queue_id = self._queue_id(header, topic)
        target, target_queue = self._retry_or_dlq(header, queue_id, client_version)
        message = self._message(header, peer, target, target_queue, sys_flag, body)
        half = message.properties.get(PropertyKey.TRANSACTION_PREPARED, "").lower() == "true"
        if half and self.config.reject_transaction_message:
            raise Refused(ResponseCode.NO_PERMISSION,
                          remarks.TRANSACTION_SEND_FORBIDDEN.format(broker_ip=self.config.broker_ip1))
        return SendPlan(message, queue_id, batch=False, half=half)

    def check(self, header: Mapping[str, Any], peer: str) -> TopicConfig:
        """``msgCheck``: name, forbidden system topics, auto-creation, queue id range."""
        topic_name = header["topic"]
        problem = topic_name_problem(topic_name)
        if problem is not None:
            raise Refused(self._bad_send_code, problem)
        if topic_name in NOT_ALLOWED_SEND_TOPICS:
            raise Refused(ResponseCode.NO_PERMISSION, remarks.TOPIC_SEND_FORBIDDEN.format(topic=topic_name))
        topic = self.topics.get(topic_name)
        if topic is None:
            topic = self.topics.create_in_send(topic_name, header["defaultTopic"],
                                               header["defaultTopicQueueNums"])
            if topic is None and topic_name.startswith(RETRY_PREFIX):
                topic = self.topics.create_in_send_back(topic_name, RETRY_QUEUE_NUMS_ON_SEND)
            if topic is None:
                raise Refused(ResponseCode.TOPIC_NOT_EXIST,
                              remarks.SEND_TOPIC_NOT_EXIST.format(topic=topic_name, version=self._version))
        queue_id = header["queueId"]
        if queue_id >= max(topic.write_queue_nums, topic.read_queue_nums):
            raise Refused(self._bad_send_code, remarks.SEND_QUEUE_ILLEGAL.format(
                queue_id=queue_id, topic_config=topic_config_text(topic), producer=peer))
        return topic

    def _queue_id(self, header: Mapping[str, Any], topic: TopicConfig) -> int:
        queue_id: int = header["queueId"]
        return queue_id if queue_id >= 0 else self._random.randrange(topic.write_queue_nums)

    def sys_flag(self, header: Mapping[str, Any], topic: TopicConfig) -> int:
        sys_flag: int = header["sysFlag"]
        if topic.topic_filter_type == "MULTI_TAG":
            sys_flag |= MessageSysFlag.MULTI_TAGS
        return sys_flag

    @staticmethod
    def _message(header: Mapping[str, Any], peer: str, topic: str, queue_id: int, sys_flag: int,
                 body: bytes) -> InnerMessage:
        return InnerMessage(topic, queue_id, body, parse_properties(header.get("properties") or ""),
                            header["bornTimestamp"], born_host(peer), header["flag"], sys_flag,
                            header.get("reconsumeTimes") or 0)

    def _retry_or_dlq(self, header: Mapping[str, Any], queue_id: int,
                      client_version: int | None) -> tuple[str, int]:
        """``handleRetryAndDLQ``: a re-sent message past its group's reconsume limit goes to the DLQ."""
        topic: str = header["topic"]
        if not topic.startswith(RETRY_PREFIX):
            return topic, queue_id
        if client_version is None:
            raise VersionUnread(topic)
        group_name = topic[len(RETRY_PREFIX):]
        group = self.groups.find_or_create(group_name)
        if group is None:
            raise Refused(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST,
                          remarks.SEND_BACK_GROUP_NOT_EXIST.format(group=group_name, version=self._version))
        limit = group.retry_max_times
        if client_version >= MQVersion.V3_4_9 and header.get("maxReconsumeTimes") is not None:
            limit = header["maxReconsumeTimes"]
        reconsumed = header.get("reconsumeTimes") or 0
        if reconsumed < limit or (reconsumed == limit and self._dlq_past_limit):
            return topic, queue_id
        dlq = self.topics.create_in_send_back(f"{DLQ_PREFIX}{group_name}", DLQ_NUMS_PER_GROUP,
                                              int(PERM_READ_WRITE))
        return dlq.topic_name, self._random.randrange(DLQ_NUMS_PER_GROUP)

    @property
    def send_ext(self) -> dict[str, str]:
        """The fields every send answer carries, refused or not (Java adds them before the first check)."""
        return {"MSG_REGION": self.config.region_id, "TRACE_ON": "true" if self.config.trace_on else "false"}

    def stored_template(self, code: int) -> JsonAnswerTemplate | None:
        """The JSON answer of a stored send with ``code``, joined from a template of its header (the same
        bytes as the general encoding, see ``rocketmq_spec.codec.answer_template``): one per answer code and
        broker settings; None when the settings defeat a template (a setting holding a marker), which
        leaves those answers to the general encoding."""
        key = (code, self.config.region_id, self.config.trace_on)
        try:
            return self._templates[key]
        except KeyError:
            pass
        ext = self.send_ext
        try:
            template: JsonAnswerTemplate | None = JsonAnswerTemplate(
                code, java_hashmap_order({**ext, **dict.fromkeys(STORED_SLOTS, "")},
                                         ext_fields_capacity(True, self._version)),
                STORED_SLOTS, version=self._version)
        except ValueError:
            template = None
        self._templates[key] = template
        return template

    @staticmethod
    def stored_values(msg_id: str, queue_id: int, queue_offset: int) -> tuple[str, str, str]:
        """The values of ``STORED_SLOTS`` in a stored send's answer."""
        return msg_id, str(queue_id), str(queue_offset)
