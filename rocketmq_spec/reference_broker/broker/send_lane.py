"""The send lane (see ``lanes``): a plain SEND_MESSAGE(_V2) checked by ``SendHandlers``' own checks,
stored by the store's ``put_plain`` (the same bytes, entries and notifications as ``put_message``) and
answered from the same template as the general path's answer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rocketmq_spec.codec.request_scan import parse_properties
from rocketmq_spec.reference_broker.broker.send import SendHandlers, born_host
from rocketmq_spec.reference_broker.broker.stats import BrokerStats
from rocketmq_spec.reference_broker.server import Refused
from rocketmq_spec.reference_broker.store import InnerMessage
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.properties import PropertyKey
from rocketmq_spec.spec.system_topics import RETRY_PREFIX

if TYPE_CHECKING:
    from rocketmq_spec.reference_broker.server import Connection

SEND_CODES = (RequestCode.SEND_MESSAGE, RequestCode.SEND_MESSAGE_V2)


class SendLane:
    def __init__(self, sends: SendHandlers, stats: BrokerStats) -> None:
        self._sends = sends
        self._stats = stats
        self._store = sends.store

    def take(self, connection: Connection, opaque: int, header: dict[str, Any], body: bytes) -> bool:
        """Store and answer a send if it is a plain one; False, with nothing done, otherwise."""
        sends = self._sends
        topic_name: str = header["topic"]
        queue_id: int = header["queueId"]
        template = sends.stored_template(ResponseCode.SUCCESS)
        if template is None or header.get("batch") or queue_id < 0 or topic_name.startswith(RETRY_PREFIX):
            return False
        try:
            topic = sends.check(header, connection.peer)
        except Refused:
            return False
        message = InnerMessage(topic_name, queue_id, body, parse_properties(header.get("properties") or ""),
                               header["bornTimestamp"], born_host(connection.peer), header["flag"],
                               sends.sys_flag(header, topic), header.get("reconsumeTimes") or 0)
        if message.properties.get(PropertyKey.TRANSACTION_PREPARED, "").lower() == "true":
            return False
        stored = self._store.put_plain(message)
        if stored is None:
            return False
        self._stats.count_put(topic_name, 1)
        answer = template.frame(opaque, (stored.msg_id, str(queue_id), str(stored.queue_offset)))
        assert answer is not None, "an offsetMsgId and decimal offsets are plain text"
        connection.write_frame(answer)
        return True
