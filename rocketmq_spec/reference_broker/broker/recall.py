"""RECALL_MESSAGE (5.3.2+): cancel a pending timer message by the handle its send answer carried.

The recall is itself a timer message: a marker with TIMER_DEL_UNIQKEY, parked in the wheel for the same
time as the message it names, which the wheel then does not deliver (RMQ-TIMER-RECALL). Java forbids it
unless ``recallMessageEnable`` (false by default in 5.3.3 and 5.5.0).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.store.record import HostPort
from rocketmq_spec.reference_broker.broker.topics import TopicConfigManager
from rocketmq_spec.reference_broker.config import BrokerConfig
from rocketmq_spec.reference_broker.server import Handler, Refused, Request
from rocketmq_spec.reference_broker.store import MessageStore
from rocketmq_spec.reference_broker.store.message import InnerMessage
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.ha import BrokerRole
from rocketmq_spec.spec.properties import PropertyKey
from rocketmq_spec.spec.timer import (
    RECALL_FORBIDDEN_REMARK,
    RECALL_TAG,
    RECALL_UNAVAILABLE_REMARK,
    decode_recall_handle,
    delete_key,
)


class RecallHandlers:
    def __init__(self, config: BrokerConfig, topics: TopicConfigManager, store: MessageStore) -> None:
        self.config = config
        self.topics = topics
        self.store = store

    def table(self) -> dict[RequestCode, Handler]:
        return {RequestCode.RECALL_MESSAGE: self.recall}

    async def recall(self, request: Request) -> RemotingCommand:
        """``RecallMessageProcessor.processRequest``: its checks in its order, then the marker."""
        header = request.header()
        region = {"MSG_REGION": self.config.region_id}
        try:
            handle_topic, uniq, stamp = self._checked(header)
        except Refused as refused:
            return request.reply(refused.code, refused.remark, header={}, extra_fields=region)
        now = int(time.time() * 1000)
        host, port = request.connection.peer.rsplit(":", 1)
        properties = {PropertyKey.TAGS: RECALL_TAG,
                      PropertyKey.TIMER_DEL_UNIQKEY: delete_key(handle_topic, uniq),
                      PropertyKey.UNIQ_KEY: uniq,
                      PropertyKey.TIMER_DELIVER_MS: stamp,
                      PropertyKey.BORN_TIMESTAMP: str(now), "TRACE_CONTEXT": "",
                      PropertyKey.PRODUCER_GROUP: header.get("producerGroup") or ""}
        marker = InnerMessage(handle_topic, 0, b"0", properties, now, HostPort(host, int(port)))
        if not (await self.store.put_message_async(marker)).status.stored:
            return request.reply(ResponseCode.SYSTEM_ERROR, "recall failed, execute error", header={},
                                 extra_fields=region)
        return request.reply(header={"msgId": uniq}, extra_fields=region)

    def _checked(self, header: Mapping[str, Any]) -> tuple[str, str, str]:
        """The handle's topic, UNIQ_KEY and time once every check passed; Refused otherwise."""
        if not self.config.recall_message_enable:
            raise Refused(ResponseCode.NO_PERMISSION, RECALL_FORBIDDEN_REMARK)
        if self.config.role is BrokerRole.SLAVE:
            raise Refused(ResponseCode.SLAVE_NOT_AVAILABLE, RECALL_UNAVAILABLE_REMARK)
        topic = header["topic"]
        if self.topics.get(topic) is None:
            raise Refused(ResponseCode.TOPIC_NOT_EXIST, f"recall failed, the topic[{topic}] not exist")
        try:
            handle_topic, broker_name, stamp, uniq = decode_recall_handle(header["recallHandle"])
        except ValueError as exc:
            raise Refused(ResponseCode.ILLEGAL_OPERATION, str(exc)) from None
        if topic != handle_topic:
            raise Refused(ResponseCode.ILLEGAL_OPERATION, "recall failed, topic not match")
        if broker_name != self.config.broker_name:
            raise Refused(ResponseCode.ILLEGAL_OPERATION, RECALL_UNAVAILABLE_REMARK)
        left = (int(stamp) if stamp.lstrip("-").isdigit() else -1) - int(time.time() * 1000)
        if left <= 0 or left >= self.config.timer_max_delay_sec * 1000:
            raise Refused(ResponseCode.ILLEGAL_OPERATION, "recall failed, timestamp invalid")
        return handle_topic, uniq, stamp
