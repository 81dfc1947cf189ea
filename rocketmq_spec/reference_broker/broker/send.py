"""The producer side of the broker: SEND_MESSAGE (v1 and v2 headers), batches, END_TRANSACTION.

Java checks a send in a fixed order before anything is stored (``AbstractSendMessageProcessor.msgCheck``,
then the retry/DLQ redirection), and the first failing check decides the answer; clients match on those
codes and remarks, so the order and texts here are Java's. Every send response, refused or not, carries
MSG_REGION and TRACE_ON, because Java adds them before the first check.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from rocketmq_spec.codec.answer_template import JsonAnswerTemplate
from rocketmq_spec.codec.batch import decode_batch
from rocketmq_spec.codec.command import RemotingCommand, java_hashmap_order
from rocketmq_spec.codec.store.record import HostPort
from rocketmq_spec.reference_broker.broker.subscriptions import SubscriptionGroupManager
from rocketmq_spec.reference_broker.broker.topics import TopicConfig, TopicConfigManager, topic_name_problem
from rocketmq_spec.reference_broker.config import BrokerConfig
from rocketmq_spec.reference_broker.server import Handler, Refused, Request
from rocketmq_spec.reference_broker.store import (
    BatchItem,
    InnerMessage,
    MessageStore,
    PutMessageStatus,
    PutResult,
)
from rocketmq_spec.reference_broker.store.retention import disk_used_ratio
from rocketmq_spec.spec import remarks
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.frame import SerializeType
from rocketmq_spec.spec.json_header import ext_fields_capacity
from rocketmq_spec.spec.properties import PropertyKey, parse_properties
from rocketmq_spec.spec.release_rules import Rule, holds
from rocketmq_spec.spec.store_layout import CONSUMEQUEUE_DIR, INDEX_DIR
from rocketmq_spec.spec.sysflag import PERM_READ_WRITE, MessageSysFlag, TransactionType, perm_to_string
from rocketmq_spec.spec.system_topics import (
    DLQ_PREFIX,
    NOT_ALLOWED_SEND_TOPICS,
    RETRY_PREFIX,
    TOPIC_MAX_LENGTH,
)
from rocketmq_spec.spec.timer import ILLEGAL_REMARK, recall_handle
from rocketmq_spec.spec.version import MQVersion
from rocketmq_spec.spec.wire_release import wire_release

DLQ_NUMS_PER_GROUP = 1
"""Queues of a ``%DLQ%`` topic (``MixAll.DLQ_NUMS_PER_GROUP``)."""
RETRY_QUEUE_NUMS_ON_SEND = 1
"""Queues of a retry topic created because a producer sent to it (``msgCheck``)."""


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


PUT_FAILURE_REMARKS = {PutMessageStatus.CREATE_MAPEDFILE_FAILED: remarks.CREATE_MAPPED_FILE_FAILED,
                       PutMessageStatus.OS_PAGECACHE_BUSY: remarks.PAGECACHE_BUSY,
                       PutMessageStatus.IN_SYNC_REPLICAS_NOT_ENOUGH: remarks.IN_SYNC_REPLICAS_NOT_ENOUGH,
                       PutMessageStatus.UNKNOWN_ERROR: remarks.PUT_UNKNOWN_ERROR}
"""Store statuses answered SYSTEM_ERROR, by the remark ``handlePutMessageResult`` gives each."""

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


class SendHandlers(StoreWriters):

    def __init__(self, config: BrokerConfig, topics: TopicConfigManager, groups: SubscriptionGroupManager,
                 store: MessageStore) -> None:
        super().__init__(config, topics, groups, store)
        self._templates: dict[tuple[object, ...], JsonAnswerTemplate | None] = {}
        self._recall_handles = RequestCode.RECALL_MESSAGE in wire_release(config.wire_release).request_codes
        """RMQ-TIMER-RECALL-HANDLE: releases with RECALL_MESSAGE answer a parked timer message's handle."""
        release_version = wire_release(config.wire_release).version
        self._version = release_version
        self._bad_send_code = (ResponseCode.INVALID_PARAMETER
                               if holds(Rule.SEND_CHECK_INVALID_PARAMETER, release_version)
                               else ResponseCode.SYSTEM_ERROR)
        """The code of a refused topic name or queueId (spec.release_rules)."""
        self._dlq_past_limit = holds(Rule.RETRY_SEND_DLQ_PAST_LIMIT, release_version)
        """5.x: a retry send at the limit stays in the retry topic; only one past it is dead-lettered."""

    def table(self) -> dict[RequestCode, Handler]:
        return {
            RequestCode.SEND_MESSAGE: self.send,
            RequestCode.SEND_MESSAGE_V2: self.send,
            RequestCode.SEND_BATCH_MESSAGE: self.send,
            RequestCode.END_TRANSACTION: self.end_transaction,
        }

    @property
    def _send_ext(self) -> dict[str, str]:
        return {"MSG_REGION": self.config.region_id, "TRACE_ON": "true" if self.config.trace_on else "false"}

    async def send(self, request: Request) -> RemotingCommand:
        """All three codes: Java decides single or batch by the header's ``batch`` flag alone, so the C++
        1.2 client's SEND_MESSAGE with ``batch=1`` (false to ``Boolean.parseBoolean``) stores one message."""
        header = request.header()
        try:
            topic = self.check(header, request.connection.peer)
            if header.get("batch"):
                result, queue_id = await self._send_batch(request, header, topic)
            else:
                result, queue_id = await self._send_one(request, header, topic)
        except Refused as refused:
            return request.reply(refused.code, refused.remark, header={}, extra_fields=self._send_ext)
        code, remark = self.put_answer(result.status)
        if not result.status.stored:
            return request.reply(code, remark, header={}, extra_fields=self._send_ext)
        if result.timer_out_ms is not None and self._recall_handles and not header.get("batch"):
            uniq = parse_properties(header.get("properties") or "").get(PropertyKey.UNIQ_KEY, "")
            handle = recall_handle(header["topic"], self.config.broker_name, result.timer_out_ms, uniq)
            return request.reply(code, None, extra_fields=self._send_ext, header={
                "msgId": result.msg_id, "queueId": queue_id, "queueOffset": result.queue_offset,
                "recallHandle": handle})
        return self.stored_reply(request, code, result.msg_id, queue_id, result.queue_offset)

    def stored_reply(self, request: Request, code: int, msg_id: str, queue_id: int,
                     queue_offset: int) -> RemotingCommand:
        """The answer to a stored send. A JSON answer is joined from a template of its header (the same bytes
        as the general encoding, see ``rocketmq_spec.codec.answer_template``); anything else is encoded field
        by field through the spec's response table."""
        ext = self._send_ext
        command = request.command
        if command.serialize_type is SerializeType.JSON:
            template = self._template(code, ext)
            answer = None if template is None else template.command(
                command.opaque, (msg_id, str(queue_id), str(queue_offset)))
            if answer is not None:
                return answer
        return request.reply(code, None, extra_fields=ext,
                             header={"msgId": msg_id, "queueId": queue_id, "queueOffset": queue_offset})

    def stored_template(self, code: int) -> JsonAnswerTemplate | None:
        """The template ``stored_reply`` answers a JSON request with, for this code and the settings."""
        return self._template(code, self._send_ext)

    def _template(self, code: int, ext: dict[str, str]) -> JsonAnswerTemplate | None:
        """One template per answer code and broker settings; None when the settings defeat a template
        (a setting holding a marker), which leaves those answers to the general encoding."""
        key = (code, *ext.values())
        version = wire_release(self.config.wire_release).version
        if key not in self._templates:
            try:
                self._templates[key] = JsonAnswerTemplate(
                    code, java_hashmap_order({**ext, "msgId": "", "queueId": "", "queueOffset": ""},
                                             ext_fields_capacity(True, version)),
                    ("msgId", "queueId", "queueOffset"),
                    version=version)
            except ValueError:
                self._templates[key] = None
        return self._templates[key]

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

    def _inner(self, request: Request, header: Mapping[str, Any], topic: str, queue_id: int,
               sys_flag: int, body: bytes) -> InnerMessage:
        return InnerMessage.from_wire(
            topic=topic, queue_id=queue_id, body=body, properties=header.get("properties"),
            born_timestamp=header["bornTimestamp"], born_host=born_host(request.connection.peer),
            flag=header["flag"], sys_flag=sys_flag, reconsume_times=header.get("reconsumeTimes") or 0)

    async def _send_one(self, request: Request, header: Mapping[str, Any],
                        topic: TopicConfig) -> tuple[PutResult, int]:
        queue_id = self._queue_id(header, topic)
        target, target_queue = self._retry_or_dlq(request, header, queue_id)
        message = self._inner(request, header, target, target_queue, self.sys_flag(header, topic),
                              request.command.body or b"")
        if message.properties.get(PropertyKey.TRANSACTION_PREPARED, "").lower() == "true":
            if self.config.reject_transaction_message:
                raise Refused(ResponseCode.NO_PERMISSION,
                              remarks.TRANSACTION_SEND_FORBIDDEN.format(broker_ip=self.config.broker_ip1))
            return await self.store.put_half_message_async(message), queue_id
        return await self.store.put_message_async(message), queue_id

    def _retry_or_dlq(self, request: Request, header: Mapping[str, Any], queue_id: int) -> tuple[str, int]:
        """``handleRetryAndDLQ``: a re-sent message past its group's reconsume limit goes to the DLQ."""
        topic: str = header["topic"]
        if not topic.startswith(RETRY_PREFIX):
            return topic, queue_id
        group_name = topic[len(RETRY_PREFIX):]
        group = self.groups.find_or_create(group_name)
        if group is None:
            raise Refused(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST,
                          remarks.SEND_BACK_GROUP_NOT_EXIST.format(group=group_name,
                                                                   version=self._version))
        limit = group.retry_max_times
        if request.command.version >= MQVersion.V3_4_9 and header.get("maxReconsumeTimes") is not None:
            limit = header["maxReconsumeTimes"]
        reconsumed = header.get("reconsumeTimes") or 0
        if reconsumed < limit or (reconsumed == limit and self._dlq_past_limit):
            return topic, queue_id
        dlq = self.topics.create_in_send_back(f"{DLQ_PREFIX}{group_name}", DLQ_NUMS_PER_GROUP,
                                              int(PERM_READ_WRITE))
        return dlq.topic_name, self._random.randrange(DLQ_NUMS_PER_GROUP)

    async def _send_batch(self, request: Request, header: Mapping[str, Any],
                          topic: TopicConfig) -> tuple[PutResult, int]:
        topic_name: str = header["topic"]
        if len(topic_name) > TOPIC_MAX_LENGTH:
            raise Refused(ResponseCode.MESSAGE_ILLEGAL,
                          remarks.BATCH_TOPIC_TOO_LONG.format(length=len(topic_name)))
        if topic_name.startswith(RETRY_PREFIX):
            raise Refused(ResponseCode.MESSAGE_ILLEGAL,
                          remarks.BATCH_RETRY_TOPIC.format(topic=topic_name))
        queue_id = self._queue_id(header, topic)
        batch = self._inner(request, header, topic_name, queue_id, self.sys_flag(header, topic), b"")
        items = [BatchItem(block.body, block.flag, block.properties)
                 for block in decode_batch(request.command.body or b"")]
        return await self.store.put_batch_async(batch, items), queue_id

    def put_answer(self, status: PutMessageStatus) -> tuple[int, str | None]:
        """``handlePutMessageResult``: the response code and remark for a store status."""
        if status is PutMessageStatus.PUT_OK:
            return ResponseCode.SUCCESS, None
        if status.stored:
            return ResponseCode[status.name], None
        if status in (PutMessageStatus.MESSAGE_ILLEGAL, PutMessageStatus.PROPERTIES_SIZE_EXCEEDED):
            return ResponseCode.MESSAGE_ILLEGAL, remarks.MESSAGE_ILLEGAL.format(
                max_size=self.store.config.max_message_size)
        if status is PutMessageStatus.WHEEL_TIMER_MSG_ILLEGAL:
            return ResponseCode.MESSAGE_ILLEGAL, ILLEGAL_REMARK.format(
                max_ms=self.store.timer_settings.max_delay_sec * 1000)
        if status is PutMessageStatus.SERVICE_NOT_AVAILABLE:
            return ResponseCode.SERVICE_NOT_AVAILABLE, remarks.SERVICE_NOT_AVAILABLE.format(
                disk_use=self._disk_use())
        failure = PUT_FAILURE_REMARKS.get(status, remarks.PUT_UNKNOWN_DEFAULT)
        return ResponseCode.SYSTEM_ERROR, failure.template

    def _disk_use(self) -> str:
        """``diskUtil()``: how full the disks holding the commitlog, the consume queues and the index are,
        measured as retention measures them."""
        config = self.store.config
        paths = (config.commit_log_path, config.root_dir / CONSUMEQUEUE_DIR, config.root_dir / INDEX_DIR)
        ratios = [disk_used_ratio(path) for path in paths]
        return "CL: {:5.2f} CQ: {:5.2f} INDEX: {:5.2f}".format(*ratios)

    async def end_transaction(self, request: Request) -> RemotingCommand | None:
        """COMMIT writes the half message to its real topic, ROLLBACK only marks it done; anything else
        (0 = unknown) is answered by nothing, the broker waits for its own check."""
        header = request.header()
        decision = header["commitOrRollback"]
        if decision not in (TransactionType.COMMIT, TransactionType.ROLLBACK):
            return None
        half = self.store.read_record(header["commitLogOffset"])
        if half is None:
            return request.reply(ResponseCode.SYSTEM_ERROR, remarks.HALF_NOT_FOUND.template)
        if half.properties.get(PropertyKey.PRODUCER_GROUP) != header["producerGroup"]:
            return request.reply(ResponseCode.SYSTEM_ERROR, remarks.PRODUCER_GROUP_WRONG.template)
        if half.queue_offset != header["tranStateTableOffset"]:
            return request.reply(ResponseCode.SYSTEM_ERROR, remarks.TRAN_STATE_OFFSET_WRONG.template)
        if half.physical_offset != header["commitLogOffset"]:
            return request.reply(ResponseCode.SYSTEM_ERROR, remarks.COMMIT_LOG_OFFSET_WRONG.template)
        result = self.store.end_transaction(half.physical_offset, decision == TransactionType.COMMIT)
        code, remark = self.put_answer(result.status)
        return request.reply(code, remark)

