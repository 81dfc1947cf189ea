"""The POP family on the wire: POP_MESSAGE, PEEK_MESSAGE, ACK_MESSAGE, BATCH_ACK_MESSAGE,
CHANGE_MESSAGE_INVISIBLETIME, NOTIFICATION and POLLING_INFO, over :class:`PopService`.

Each handler runs Java's checks in Java's order, then calls the service. A pop or notification that finds
nothing is held (:class:`PopHold`) until a message arrives in the topic or its retry topic, or pollTime
passes; a pop then answers POLLING_TIMEOUT, a notification hasMsg=false (RMQ-POP-POLLING-TIMEOUT,
RMQ-POP-NOTIFICATION). Too many held requests of a queue answer POLLING_FULL.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import time
from collections.abc import Mapping
from typing import Any

from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.reference_broker.broker.filter import TagCodes, is_tag_type, parse_tag_expression
from rocketmq_spec.reference_broker.broker.subscriptions import SubscriptionGroupManager
from rocketmq_spec.reference_broker.broker.topics import TopicConfig, TopicConfigManager
from rocketmq_spec.reference_broker.config import BrokerConfig
from rocketmq_spec.reference_broker.pop.service import PopService
from rocketmq_spec.reference_broker.server import Handler, Refused, Request
from rocketmq_spec.reference_broker.store import ArrivalNotifier, MessageArrival
from rocketmq_spec.spec import remarks
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.pop import BATCH_ACK_BODY, MAX_POP_NUMS, POLLING_TIMEOUT_SLACK_MS, pop_retry_topic
from rocketmq_spec.spec.releases import ordinal
from rocketmq_spec.spec.sysflag import PermName
from rocketmq_spec.spec.system_topics import RETRY_PREFIX

POP_RELEASE = ordinal("5.1.0")
"""The release whose FAQ line POP's refusals carry: the releases that pop and a reference broker answers as
(5.3.3, 5.5.0) all have the 5.1.0+ link."""


class PopHold:
    """``PopLongPollingService``: held pops and notifications, woken by any arrival in their topics."""

    def __init__(self, arrivals: ArrivalNotifier, limit: int) -> None:
        self._arrivals = arrivals
        self._limit = limit
        self._held: dict[tuple[str, int], set[asyncio.Future[None]]] = {}
        """Held requests by (topic, queue or -1); arrivals are listened to only while it holds any."""

    def close(self) -> None:
        self._arrivals.unsubscribe(self._arrived)

    def count(self, topic: str, queue_id: int) -> int:
        return len(self._held.get((topic, queue_id), ()))

    def full(self, topic: str, queue_id: int) -> bool:
        return self.count(topic, queue_id) >= self._limit

    async def wait(self, topics: tuple[str, ...], queue_id: int, timeout: float) -> None:
        """Until something arrives in one of ``topics`` (queue ``queue_id``, or any when it is -1)."""
        woken: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        keys = [(topic, queue_id) for topic in topics]
        if not self._held:
            self._arrivals.subscribe(self._arrived)
        for key in keys:
            self._held.setdefault(key, set()).add(woken)
        try:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(max(timeout, 0)):
                    await woken
        finally:
            for key in keys:
                waiting = self._held.get(key)
                if waiting is not None:
                    waiting.discard(woken)
                    if not waiting:
                        del self._held[key]
            if not self._held:
                self._arrivals.unsubscribe(self._arrived)

    def wake(self, topic: str) -> None:
        for (held_topic, _), waiting in list(self._held.items()):
            if held_topic == topic:
                for woken in waiting:
                    if not woken.done():
                        woken.set_result(None)

    def _arrived(self, arrival: MessageArrival) -> None:
        for key in ((arrival.topic, arrival.queue_id), (arrival.topic, -1)):
            for woken in self._held.get(key, ()):
                if not woken.done():
                    woken.set_result(None)


class PopHandlers:
    def __init__(self, config: BrokerConfig, topics: TopicConfigManager, groups: SubscriptionGroupManager,
                 service: PopService, hold: PopHold) -> None:
        self.config = config
        self.topics = topics
        self.groups = groups
        self.service = service
        self.hold = hold

    def table(self) -> dict[RequestCode, Handler]:
        return {
            RequestCode.POP_MESSAGE: self.pop,
            RequestCode.PEEK_MESSAGE: self.peek,
            RequestCode.ACK_MESSAGE: self.ack,
            RequestCode.BATCH_ACK_MESSAGE: self.batch_ack,
            RequestCode.CHANGE_MESSAGE_INVISIBLETIME: self.change_invisible,
            RequestCode.NOTIFICATION: self.notification,
            RequestCode.POLLING_INFO: self.polling_info,
        }

    # ------------------------------------------------------------------ pop, peek, notification

    async def pop(self, request: Request) -> RemotingCommand:
        header = request.header()
        try:
            topic, codes = self._pop_checks(request, header)
        except Refused as refused:
            return request.reply(refused.code, refused.remark, header={})
        group, queue_id, order = header["consumerGroup"], header["queueId"], bool(header.get("order"))
        deadline = time.monotonic() + header["pollTime"] / 1000
        while True:
            result = self.service.pop(group, topic, queue_id, header["maxMsgNums"], header["invisibleTime"],
                                      header["initMode"], codes, order)
            if result.found:
                body = b"".join(m.raw for m in result.messages)
                return request.reply(ResponseCode.SUCCESS, "FOUND", header=result.header(order), body=body)
            if self.hold.full(topic.topic_name, queue_id):
                return request.reply(ResponseCode.POLLING_FULL, "NO_MESSAGE_IN_QUEUE",
                                     header=result.header(order))
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return request.reply(ResponseCode.POLLING_TIMEOUT, "NO_MESSAGE_IN_QUEUE",
                                     header=result.header(order))
            await self.hold.wait(self._watched(topic, group), queue_id, remaining)

    async def peek(self, request: Request) -> RemotingCommand:
        header = request.header()
        topic = self._queue_checks(header)
        if isinstance(topic, Refused):
            return request.reply(topic.code, topic.remark, header={})
        result = self.service.peek(header["consumerGroup"], topic, header["queueId"], header["maxMsgNums"])
        if not result.found:
            return request.reply(ResponseCode.PULL_NOT_FOUND, "NO_MESSAGE_IN_QUEUE",
                                 header=result.header(False))
        return request.reply(ResponseCode.SUCCESS, "FOUND", header=result.header(False),
                             body=b"".join(m.raw for m in result.messages))

    async def notification(self, request: Request) -> RemotingCommand:
        header = request.header()
        topic = self._queue_checks(header)
        if isinstance(topic, Refused):
            return request.reply(topic.code, topic.remark, header={})
        group, queue_id, order = header["consumerGroup"], header["queueId"], bool(header.get("order"))
        deadline = time.monotonic() + header["pollTime"] / 1000
        while not self.service.has_message(group, topic, queue_id, order):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return request.reply(header={"hasMsg": False})
            if self.hold.full(topic.topic_name, queue_id):
                return request.reply(ResponseCode.POLLING_FULL, None, header={"hasMsg": False,
                                                                              "pollingFull": True})
            await self.hold.wait(self._watched(topic, group), queue_id, remaining)
        return request.reply(header={"hasMsg": True})

    async def polling_info(self, request: Request) -> RemotingCommand:
        header = request.header()
        refused = self._queue_checks(header)
        if isinstance(refused, Refused):
            return request.reply(refused.code, refused.remark, header={})
        return request.reply(header={"pollingNum": self.hold.count(header["topic"], header["queueId"])})

    # ------------------------------------------------------------------ ack, batch ack, change

    async def ack(self, request: Request) -> RemotingCommand:
        header = request.header()
        topic_name, queue_id, offset = header["topic"], header["queueId"], header["offset"]
        topic = self.topics.get(topic_name)
        if topic is None:
            return request.reply(ResponseCode.TOPIC_NOT_EXIST,
                                 remarks.POP_TOPIC_NOT_EXIST.format(POP_RELEASE, topic=topic_name))
        if not 0 <= queue_id < topic.read_queue_nums:
            return request.reply(ResponseCode.MESSAGE_ILLEGAL, _illegal_queue(queue_id, topic, request))
        low, high = self.service.store.min_offset(topic_name, queue_id), self.service.store.max_offset(
            topic_name, queue_id)
        extra = header["extraInfo"].split(" ")
        retried = len(extra) > 4 and extra[4] != "0" and not topic_name.startswith(RETRY_PREFIX)
        real = pop_retry_topic(topic_name, header["consumerGroup"]) if retried else None
        if real is not None:
            low, high = self.service.store.min_offset(real, queue_id), self.service.store.max_offset(real,
                                                                                                     queue_id)
        if not low <= offset <= high:
            return request.reply(ResponseCode.NO_MESSAGE, remarks.ACK_OFFSET_ILLEGAL.format(
                key=real or topic_name, queue_id=queue_id, offset=offset, low=low, high=high))
        outcome = self.service.ack(header["consumerGroup"], topic_name, queue_id, header["extraInfo"], offset)
        return request.reply(outcome.code, outcome.remark)

    async def batch_ack(self, request: Request) -> RemotingCommand:
        body = request.body(BATCH_ACK_BODY) if request.command.body else {"acks": []}
        if not body["acks"]:
            return request.reply(ResponseCode.NO_MESSAGE)
        for entry in body["acks"]:
            bits = int.from_bytes(base64.b64decode(entry["b"]), "little")
            offsets = [entry["so"] + i for i in range(bits.bit_length()) if bits >> i & 1]
            self.service.batch_ack(entry["c"], entry["t"], entry["r"], entry["q"], entry["rq"], entry["so"],
                                   entry["pt"], entry["it"], offsets, body.get("brokerName") or "")
        return request.reply()

    async def change_invisible(self, request: Request) -> RemotingCommand:
        header = request.header()
        topic_name, queue_id = header["topic"], header["queueId"]
        topic = self.topics.get(topic_name)
        if topic is None:
            return request.reply(ResponseCode.TOPIC_NOT_EXIST,
                                 remarks.POP_TOPIC_NOT_EXIST.format(POP_RELEASE, topic=topic_name), header={})
        if not 0 <= queue_id < topic.read_queue_nums:
            return request.reply(ResponseCode.MESSAGE_ILLEGAL, _illegal_queue(queue_id, topic, request),
                                 header={})
        group, receipt = header["consumerGroup"], header["extraInfo"]
        outcome = self.service.change_invisible(group, topic_name, queue_id, receipt, header["offset"],
                                                header["invisibleTime"])
        return request.reply(outcome.code, outcome.remark, header=outcome.header)

    # ------------------------------------------------------------------ checks

    def _queue_checks(self, header: Mapping[str, Any]) -> TopicConfig | Refused:
        """The topic and group checks PEEK_MESSAGE, NOTIFICATION and POLLING_INFO share."""
        try:
            topic = self._topic(header["topic"], header["queueId"], ResponseCode.SYSTEM_ERROR, "peeking")
            self._group(header["consumerGroup"])
        except Refused as refused:
            return refused
        return topic

    def _watched(self, topic: TopicConfig, group: str) -> tuple[str, ...]:
        return (topic.topic_name, pop_retry_topic(topic.topic_name, group))

    def _pop_checks(self, request: Request, header: Mapping[str, Any]) -> tuple[TopicConfig, TagCodes]:
        """``PopMessageProcessor.processRequest``'s checks, in its order."""
        ip = self.config.broker_ip1
        born = header["bornTime"]
        if born and now_ms() - born > header["pollTime"] + POLLING_TIMEOUT_SLACK_MS:
            raise Refused(ResponseCode.POLLING_TIMEOUT, remarks.POP_TIMEOUT_TOO_MUCH.format(broker_ip=ip))
        if not self.config.broker_permission & PermName.READ:
            raise Refused(ResponseCode.NO_PERMISSION, remarks.BROKER_POP_FORBIDDEN.format(broker_ip=ip))
        if header["maxMsgNums"] > MAX_POP_NUMS:
            raise Refused(ResponseCode.INVALID_PARAMETER, remarks.POP_TOO_MANY.format(broker_ip=ip))
        topic = self._topic(header["topic"], header["queueId"], ResponseCode.INVALID_PARAMETER, "peeking",
                            request)
        self._group(header["consumerGroup"])
        expression_type = header.get("expType")
        if not is_tag_type(expression_type) and not self.config.enable_property_filter:
            raise Refused(ResponseCode.SUBSCRIPTION_PARSE_FAILED, remarks.SUBSCRIPTION_PARSE_FAILED.template)
        return topic, parse_tag_expression(header.get("exp"))

    def _topic(self, name: str, queue_id: int, bad_queue: int, verb: str, request: Request | None = None
               ) -> TopicConfig:
        topic = self.topics.get(name)
        if topic is None:
            raise Refused(ResponseCode.TOPIC_NOT_EXIST,
                          remarks.POP_TOPIC_NOT_EXIST.format(POP_RELEASE, topic=name))
        if not topic.perm & PermName.READ:
            raise Refused(ResponseCode.NO_PERMISSION,
                          remarks.TOPIC_POP_FORBIDDEN.format(topic=name, verb=verb))
        if queue_id >= topic.read_queue_nums:
            raise Refused(bad_queue, _illegal_queue(queue_id, topic, request))
        return topic

    def _group(self, name: str) -> None:
        group = self.groups.find_or_create(name)
        if group is None:
            raise Refused(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST,
                          remarks.POP_GROUP_NOT_EXIST.format(POP_RELEASE, group=name))
        if not group.consume_enable:
            raise Refused(ResponseCode.NO_PERMISSION, remarks.POP_GROUP_NO_PERMISSION.format(group=name))


def _illegal_queue(queue_id: int, topic: TopicConfig, request: Request | None) -> str:
    peer = f"/{request.connection.peer}" if request is not None else ""
    return remarks.POP_QUEUE_ILLEGAL.format(queue_id=queue_id, topic=topic.topic_name,
                                            read_queues=topic.read_queue_nums, consumer=peer)


def now_ms() -> int:
    return int(time.time() * 1000)
