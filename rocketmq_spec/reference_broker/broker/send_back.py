"""CONSUMER_SEND_MSG_BACK (36): a push consumer hands a message it could not consume back to the broker.

The broker re-reads the message by its commitlog offset and stores a copy for the consumer group: to
``%RETRY%<group>`` behind a delay level (3 + reconsumeTimes unless the consumer names one), so the
copy passes through SCHEDULE_TOPIC_XXXX and comes back later, or to ``%DLQ%<group>`` once the group's
reconsume limit is reached. The checks, their order and their remarks are those of 4.9.8's
``SendMessageProcessor.asyncConsumerSendMsgBack``, because clients log and act on them.

The copy's properties follow Java's map: the stored map, RETRY_TOPIC (the first topic, kept across
retries so the consumer can restore it), WAIT=false, DELAY, ORIGIN_MESSAGE_ID (the first offsetMsgId,
also kept across retries).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.store.record import HostPort, MessageRecord
from rocketmq_spec.reference_broker.broker.send_plan import DLQ_NUMS_PER_GROUP, StoreWriters
from rocketmq_spec.reference_broker.server import Handler, Refused, Request
from rocketmq_spec.reference_broker.store import InnerMessage, PutMessageStatus
from rocketmq_spec.spec import remarks
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.properties import PropertyKey
from rocketmq_spec.spec.redelivery import FIRST_RETRY_DELAY_LEVEL
from rocketmq_spec.spec.sysflag import PERM_READ_WRITE, PermName, TopicSysFlag
from rocketmq_spec.spec.system_topics import DLQ_PREFIX, RETRY_PREFIX
from rocketmq_spec.spec.version import MQVersion


class SendBackHandlers(StoreWriters):
    def table(self) -> dict[RequestCode, Handler]:
        return {RequestCode.CONSUMER_SEND_MSG_BACK: self.send_back}

    async def send_back(self, request: Request) -> RemotingCommand:
        header = request.header()
        try:
            copy = self._retry_copy(request, header)
        except Refused as refused:
            return request.reply(refused.code, refused.remark)
        if copy is None:
            return request.reply()
        message, original_store_host = copy
        result = await self.store.put_send_back_async(message, original_store_host)
        if result.status is not PutMessageStatus.PUT_OK:
            return request.reply(ResponseCode.SYSTEM_ERROR, result.status.name)
        return request.reply()

    def _retry_copy(self, request: Request,
                    header: Mapping[str, Any]) -> tuple[InnerMessage, HostPort] | None:
        """The copy to store with the original's store host, or None when the group keeps no retry queues
        (Java then answers SUCCESS and drops the message)."""
        group_name: str = header["group"]
        group = self.groups.find_or_create(group_name)
        if group is None:
            raise Refused(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST,
                          remarks.SEND_BACK_GROUP_NOT_EXIST.format(group=group_name,
                                                                   version=request.server_version))
        if not self.config.broker_permission & PermName.WRITE:
            raise Refused(ResponseCode.NO_PERMISSION,
                          remarks.BROKER_SEND_FORBIDDEN.format(broker_ip=self.config.broker_ip1))
        if group.retry_queue_nums <= 0:
            return None
        topic_sys_flag = int(TopicSysFlag.UNIT_SUB) if header.get("unitMode") else 0
        retry = self.topics.create_in_send_back(f"{RETRY_PREFIX}{group_name}", group.retry_queue_nums,
                                                int(PERM_READ_WRITE), topic_sys_flag)
        if not retry.perm & PermName.WRITE:
            raise Refused(ResponseCode.NO_PERMISSION,
                          remarks.RETRY_TOPIC_SEND_FORBIDDEN.format(topic=retry.topic_name))
        offset: int = header["offset"]
        original = self.store.read_record(offset)
        if original is None:
            raise Refused(ResponseCode.SYSTEM_ERROR, remarks.SEND_BACK_NOT_FOUND.format(offset=offset))

        limit = group.retry_max_times
        if request.command.version >= MQVersion.V3_4_9 and header.get("maxReconsumeTimes") is not None:
            limit = header["maxReconsumeTimes"]
        delay_level: int = header["delayLevel"]
        properties = dict(original.properties)
        properties.setdefault(PropertyKey.RETRY_TOPIC, original.topic)
        properties[PropertyKey.WAIT] = "false"
        if original.reconsume_times >= limit or delay_level < 0:
            dlq = self.topics.create_in_send_back(f"{DLQ_PREFIX}{group_name}", DLQ_NUMS_PER_GROUP,
                                                  int(PERM_READ_WRITE))
            topic, queue_id = dlq.topic_name, self._random.randrange(DLQ_NUMS_PER_GROUP)
            properties[PropertyKey.DELAY] = "0"
        else:
            topic, queue_id = retry.topic_name, self._random.randrange(group.retry_queue_nums)
            level = delay_level or FIRST_RETRY_DELAY_LEVEL + original.reconsume_times
            properties[PropertyKey.DELAY] = str(level)
        properties[PropertyKey.ORIGIN_MESSAGE_ID] = _origin_message_id(original)
        copy = InnerMessage(topic, queue_id, original.body, properties, original.born_timestamp,
                            original.born_host, original.flag, original.sys_flag,
                            reconsume_times=original.reconsume_times + 1)
        return copy, original.store_host


def _origin_message_id(original: MessageRecord) -> str:
    """The first message's offsetMsgId: a copy already carries it, the first send-back takes its own."""
    existing = original.properties.get(PropertyKey.ORIGIN_MESSAGE_ID, "")
    return existing if existing.strip() else original.offset_msg_id
