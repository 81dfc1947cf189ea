"""PULL_MESSAGE: Java's checks, the store's GetMessageStatus mapped to response codes, long polling.

The store status decides the code and is also the remark (clients log it), and the header always
carries the queue's bounds so a consumer can correct its offset. A pull that finds nothing and may be
suspended is parked; when it wakes (a matching message, or the hold time is over) it runs again without
suspension and its answer goes out the way Java's hold service writes it, in the server's own
serialization.

What a pull does is decided by ``PullHandlers.plan``, ``settle`` and ``commit_requested``, which the pull
lane (``pull_lane``) calls too: the two routes differ only in how the answer is written.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any, NamedTuple

from rocketmq_spec.codec.bodies import encode_body
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.reference_broker.broker.clients import ClientManager
from rocketmq_spec.reference_broker.broker.filter import (
    TagCodes,
    codes_of_subscription,
    is_tag_type,
    parse_tag_expression,
)
from rocketmq_spec.reference_broker.broker.long_polling import PullHold
from rocketmq_spec.reference_broker.broker.offsets import ConsumerOffsetManager
from rocketmq_spec.reference_broker.broker.subscriptions import SubscriptionGroupManager
from rocketmq_spec.reference_broker.broker.topics import TopicConfigManager
from rocketmq_spec.reference_broker.config import BrokerConfig
from rocketmq_spec.reference_broker.server import Handler, Refused, Request
from rocketmq_spec.reference_broker.store import GetMessageStatus, GetResult, InnerMessage, MessageStore
from rocketmq_spec.spec import remarks
from rocketmq_spec.spec.behaviour import LITE_PULL_FORBIDDEN_REMARK
from rocketmq_spec.spec.bodies import OFFSET_MOVED_EVENT
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.ha import MASTER_ID, BrokerRole
from rocketmq_spec.spec.properties import PropertyKey
from rocketmq_spec.spec.release_rules import Rule, holds
from rocketmq_spec.spec.sysflag import ForbiddenType, PermName, PullSysFlag
from rocketmq_spec.spec.system_topics import OFFSET_MOVED_EVENT_TOPIC
from rocketmq_spec.spec.wire_release import wire_release

log = logging.getLogger(__name__)

_STATUS_CODES = {
    GetMessageStatus.FOUND: ResponseCode.SUCCESS,
    GetMessageStatus.MESSAGE_WAS_REMOVING: ResponseCode.PULL_RETRY_IMMEDIATELY,
    GetMessageStatus.NO_MATCHED_MESSAGE: ResponseCode.PULL_RETRY_IMMEDIATELY,
    GetMessageStatus.OFFSET_FOUND_NULL: ResponseCode.PULL_NOT_FOUND,
    GetMessageStatus.OFFSET_OVERFLOW_ONE: ResponseCode.PULL_NOT_FOUND,
    GetMessageStatus.OFFSET_OVERFLOW_BADLY: ResponseCode.PULL_OFFSET_MOVED,
    GetMessageStatus.OFFSET_TOO_SMALL: ResponseCode.PULL_OFFSET_MOVED,
}
"""Status -> code for every status whose code does not depend on the requested offset."""
_COMMIT_OFFSET = int(PullSysFlag.COMMIT_OFFSET)
_SUSPEND = int(PullSysFlag.SUSPEND)
_SUBSCRIPTION = int(PullSysFlag.SUBSCRIPTION)
_READ = int(PermName.READ)
"""The flags a pull's every answer tests, as plain ints: an int ``&`` an IntFlag builds a flag object."""
_SUCCESS, _OFFSET_MOVED, _NOT_FOUND = (ResponseCode.SUCCESS, ResponseCode.PULL_OFFSET_MOVED,
                                       ResponseCode.PULL_NOT_FOUND)
_NO_LOGIC_QUEUE, _NO_MESSAGE = GetMessageStatus.NO_MATCHED_LOGIC_QUEUE, GetMessageStatus.NO_MESSAGE_IN_QUEUE
_SLAVE = BrokerRole.SLAVE
"""Members every pull reads, bound once: reading a member off its Enum class goes through the class's
``__getattr__`` on Python 3.11, a few hundred instructions each."""
_BROKER_FORBIDDEN = {"forbiddenType": str(int(ForbiddenType.BROKER_FORBIDDEN))}
"""The header of a refused 5.x pull: Java sets forbiddenType alone and leaves the offsets null, which the
spec's table (offsets required) cannot encode."""


def pull_status(store_status: GetMessageStatus) -> GetMessageStatus:
    """The status a pull reports for a queue the checks already found in the topic's config.

    Java's ``findConsumeQueue`` creates a configured queue nothing was written to on first sight, so
    ``getMessage`` sees an empty queue (NO_MESSAGE_IN_QUEUE) where our store, which only knows written
    queues, has none at all (NO_MATCHED_LOGIC_QUEUE). Both answer offsets 0, so only the status differs.
    """
    if store_status is _NO_LOGIC_QUEUE:
        return _NO_MESSAGE
    return store_status


def response_code(status: GetMessageStatus, requested_offset: int) -> ResponseCode:
    """An empty queue is "not found" at offset 0 and "offset moved" anywhere else."""
    if status is _NO_MESSAGE:
        return _OFFSET_MOVED if requested_offset != 0 else _NOT_FOUND
    return _STATUS_CODES[status]


class PullPlan(NamedTuple):
    """A pull that passed every check: what the store found and the answer it gets."""

    code: ResponseCode
    status: GetMessageStatus
    """The status the answer reports, which is also its remark."""
    values: dict[str, int]
    """The response header's typed values."""
    result: GetResult
    codes: TagCodes
    """The tag filter, which a parked pull waits on."""
    records: list[bytes] | None
    """The records of a pull that found some, whose concatenation is the answer's body (joined where the
    answer is framed, so that they are copied once); no body otherwise."""

    def parks(self, sys_flag: int) -> bool:
        """Nothing found and the consumer lets the broker hold the request (FLAG_SUSPEND)."""
        return self.code == _NOT_FOUND and bool(sys_flag & _SUSPEND)


class PullHandlers:
    def __init__(self, config: BrokerConfig, topics: TopicConfigManager, groups: SubscriptionGroupManager,
                 clients: ClientManager, offsets: ConsumerOffsetManager, store: MessageStore,
                 hold: PullHold) -> None:
        self.config = config
        self.topics = topics
        self.groups = groups
        self.clients = clients
        self.offsets = offsets
        self.store = store
        self.hold = hold
        version = wire_release(config.wire_release).version
        self._version = version
        self.sys_flags = holds(Rule.PULL_SYS_FLAGS, version)
        self._bad_queue_code = (ResponseCode.INVALID_PARAMETER if holds(Rule.BAD_QUEUE_INVALID_PARAMETER,
                                                                        version)
                                else ResponseCode.SYSTEM_ERROR)

    def table(self) -> dict[RequestCode, Handler]:
        return {RequestCode.PULL_MESSAGE: self.pull, RequestCode.LITE_PULL_MESSAGE: self.lite_pull}

    async def lite_pull(self, request: Request) -> RemotingCommand:
        """RMQ-BRK-LITE-PULL: a lite pull consumer's pull, served as any pull unless the broker forbids it
        (a release that does not declare the code never gets here: the dispatch table leaves it out)."""
        if self.config.broker_permission & PermName.READ and not self.config.lite_pull_message_enable:
            return request.reply(ResponseCode.NO_PERMISSION,
                                 LITE_PULL_FORBIDDEN_REMARK.format(broker_ip1=self.config.broker_ip1),
                                 header={}, extra_fields=_BROKER_FORBIDDEN)
        return await self.pull(request)

    async def pull(self, request: Request) -> RemotingCommand:
        header = request.header()
        peer = request.connection.peer
        try:
            plan = self.plan(peer, header)
        except Refused as refused:
            return request.reply(refused.code, refused.remark, header={})
        self.settle(header, plan)
        self.commit_requested(header)
        if not plan.parks(header["sysFlag"]):
            return self._reply(request, plan, direct=False)
        hold_ms = (header["suspendTimeoutMillis"] if self.config.long_polling_enable
                   else self.config.short_polling_time_mills)
        await self.hold.wait(header["topic"], header["queueId"], header["queueOffset"], plan.codes,
                             max(hold_ms, 0) / 1000)
        # Java runs every check again when it wakes a held pull (executeRequestWhenWakeup ->
        # processRequest): a topic deleted meanwhile is answered TOPIC_NOT_EXIST
        try:
            plan = self.plan(peer, header)
        except Refused as refused:
            return request.reply(refused.code, refused.remark, header={})
        self.settle(header, plan)
        return self._reply(request, plan, direct=True)

    @staticmethod
    def _reply(request: Request, plan: PullPlan, direct: bool) -> RemotingCommand:
        body = None if plan.records is None else b"".join(plan.records)
        return request.reply(plan.code, plan.status.name, header=plan.values, body=body, direct=direct)

    def plan(self, peer: str, header: Mapping[str, Any]) -> PullPlan:
        """The pull of ``header`` from ``peer``: the checks (Refused for the first that fails), the store's
        read, the response code, remark and header; nothing is written yet (``settle`` does that)."""
        codes = self.check(peer, header)
        offset = header["queueOffset"]
        result = self.store.get_messages(header["topic"], header["queueId"], offset, header["maxMsgNums"],
                                         codes)
        status = pull_status(result.status)
        suggest, code = self.suggestion(header["consumerGroup"], response_code(status, offset))
        values = {"suggestWhichBrokerId": suggest, "nextBeginOffset": result.next_begin_offset,
                  "minOffset": result.min_offset, "maxOffset": result.max_offset}
        if self.sys_flags:
            topic = self.topics.get(header["topic"])
            values |= {"topicSysFlag": topic.topic_sys_flag if topic else 0, "groupSysFlag": 0}
        return PullPlan(code, status, values, result, codes,
                        result.messages if code == _SUCCESS else None)

    def settle(self, header: Mapping[str, Any], plan: PullPlan) -> None:
        """What an answered or parked pull writes: the OFFSET_MOVED_EVENT of a corrected offset and the
        queue's pull offset (``queryPullOffset``)."""
        if plan.code == _OFFSET_MOVED:
            self._offset_moved(header, plan.result.next_begin_offset)
        self.offsets.commit_pull(header["consumerGroup"], header["topic"], header["queueId"],
                                 plan.result.next_begin_offset)

    def commit_requested(self, header: Mapping[str, Any]) -> None:
        """FLAG_COMMIT_OFFSET: the consumer's offset, committed once per request (not again when a parked
        pull wakes), and never by a slave."""
        if header["sysFlag"] & _COMMIT_OFFSET and self.config.role is not _SLAVE:
            self.offsets.commit(header["consumerGroup"], header["topic"], header["queueId"],
                                header["commitOffset"])

    def _offset_moved(self, header: Mapping[str, Any], new_offset: int) -> None:
        """``generateOffsetMovedEvent``: tell whoever watches OFFSET_MOVED_EVENT that a group's offset was
        corrected (Java writes TAGS, DELAY=0 and KEYS into the map, in that order)."""
        group = header["consumerGroup"]
        event = {"consumerGroup": group, "offsetNew": new_offset, "offsetRequest": header["queueOffset"],
                 "messageQueue": {"brokerName": self.config.broker_name, "queueId": header["queueId"],
                                  "topic": header["topic"]}}
        properties = {PropertyKey.TAGS: group, PropertyKey.DELAY: "0", PropertyKey.KEYS: group}
        body = encode_body(OFFSET_MOVED_EVENT, event)
        message = InnerMessage(OFFSET_MOVED_EVENT_TOPIC, 0, body, properties, int(time.time() * 1000),
                               self.store.store_host)
        result = self.store.put_broker_message(message)
        if not result.ok:
            log.warning("OFFSET_MOVED_EVENT of %s not written: %s", group, result.status.name)

    def suggestion(self, group_name: str, code: ResponseCode) -> tuple[int, ResponseCode]:
        """RMQ-HA-SLAVE-READ / RMQ-HA-SLAVE-PULL-OFFSETS: which broker the consumer should pull from next,
        and a slave's "retry" where a master corrects the offset. The store never suggests the slave for a
        lagging consumer: it has no memory-ratio reckoning (``isSuggestPullingFromSlave`` stays false)."""
        group = self.groups.find_or_create(group_name)
        group_broker = group.broker_id if group is not None else MASTER_ID
        suggest = group_broker if self.config.slave_read_enable else MASTER_ID
        if code == _OFFSET_MOVED and self.config.role is _SLAVE:
            return group_broker, ResponseCode.PULL_RETRY_IMMEDIATELY
        return suggest, code

    def check(self, peer: str, header: Mapping[str, Any]) -> TagCodes:
        """``PullMessageProcessor.processRequest``'s checks, in its order, for a pull from ``peer``; returns
        the tag filter."""
        group_name, topic_name, queue_id = header["consumerGroup"], header["topic"], header["queueId"]
        if not self.config.broker_permission & _READ:
            raise Refused(ResponseCode.NO_PERMISSION,
                          remarks.BROKER_PULL_FORBIDDEN.format(broker_ip=self.config.broker_ip1))
        group = self.groups.find_or_create(group_name)
        if group is None:
            raise Refused(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST,
                          remarks.PULL_GROUP_NOT_EXIST.format(group=group_name, version=self._version))
        if not group.consume_enable:
            raise Refused(ResponseCode.NO_PERMISSION, remarks.GROUP_NO_PERMISSION.format(group=group_name))
        topic = self.topics.get(topic_name)
        if topic is None:
            raise Refused(ResponseCode.TOPIC_NOT_EXIST,
                          remarks.PULL_TOPIC_NOT_EXIST.format(topic=topic_name, version=self._version))
        if not topic.perm & _READ:
            raise Refused(ResponseCode.NO_PERMISSION, remarks.TOPIC_PULL_FORBIDDEN.format(topic=topic_name))
        if queue_id < 0 or queue_id >= topic.read_queue_nums:
            # Java prints channel.remoteAddress(), an InetSocketAddress: "/ip:port".
            raise Refused(self._bad_queue_code,
                          remarks.PULL_QUEUE_ILLEGAL.format(queue_id=queue_id, topic=topic_name,
                                                            read_queues=topic.read_queue_nums,
                                                            consumer=f"/{peer}"))
        if header["sysFlag"] & _SUBSCRIPTION:
            expression_type = header.get("expressionType")
            if not is_tag_type(expression_type) and not header.get("subscription"):
                raise Refused(ResponseCode.SUBSCRIPTION_PARSE_FAILED,
                              remarks.SUBSCRIPTION_PARSE_FAILED.template)
            codes = parse_tag_expression(header.get("subscription"))
        else:
            expression_type, codes = self._registered_subscription(header, group.consume_broadcast_enable)
        if not is_tag_type(expression_type) and not self.config.enable_property_filter:
            raise Refused(ResponseCode.SYSTEM_ERROR,
                          remarks.FILTER_NOT_SUPPORTED.format(expression_type=expression_type))
        return codes

    def _registered_subscription(self, header: Mapping[str, Any],
                                 broadcast_allowed: bool) -> tuple[str | None, TagCodes]:
        """Without FLAG_SUBSCRIPTION the filter is the one the consumer's heartbeat registered."""
        group_name = header["consumerGroup"]
        consumers = self.clients.consumer_group(group_name)
        if consumers is None:
            raise Refused(ResponseCode.SUBSCRIPTION_NOT_EXIST,
                          remarks.GROUP_INFO_NOT_EXIST.format(version=self._version))
        if not broadcast_allowed and consumers.message_model == "BROADCASTING":
            raise Refused(ResponseCode.NO_PERMISSION,
                          remarks.BROADCAST_FORBIDDEN.format(group=group_name))
        subscription = consumers.subscriptions.get(header["topic"])
        if subscription is None:
            raise Refused(ResponseCode.SUBSCRIPTION_NOT_EXIST,
                          remarks.SUBSCRIPTION_NOT_EXIST.format(version=self._version))
        if int(subscription.get("subVersion", 0)) < header["subVersion"]:
            raise Refused(ResponseCode.SUBSCRIPTION_NOT_LATEST, remarks.SUBSCRIPTION_NOT_LATEST.template)
        return (subscription.get("expressionType"),
                codes_of_subscription(subscription.get("subString"), subscription.get("codeSet") or ()))
