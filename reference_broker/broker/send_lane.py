"""The send lane: a plain SEND_MESSAGE(_V2) stored and answered as soon as its frame is decoded.

Nearly every request a producer makes is the same: a JSON SEND_MESSAGE_V2 to an existing topic and queue,
no delay, no transaction, no batch, and (under ASYNC_FLUSH) nothing to wait for once the record is in
the log. For such a request the general path spends most of its time on structure, not on work: a task
per request, the request and handler objects, the message, draft, record and result objects and the
futures of a wait that is not needed. The lane does the same work in one synchronous call from the
connection's read callback: the same checks (``SendHandlers``' own), the store's ``put_plain`` (the same
bytes, entries and notifications as ``put_message``), the answer joined from the same template.

Anything else, including every request a check refuses, is left to the general path (``take`` returns
False before anything is written), which answers it as before; ``tests/test_send_lane.py`` holds the two
paths equal on the answer bytes and the store they leave.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from codec.send_request import SendScanner, parse_properties
from reference_broker.broker.send import SendHandlers, born_host
from reference_broker.broker.stats import BrokerStats
from reference_broker.broker.topics import RETRY_PREFIX
from reference_broker.server import Refused
from reference_broker.store import InnerMessage
from spec.codes import RequestCode, ResponseCode
from spec.headers import HeaderSpec, header_for
from spec.properties import PropertyKey

if TYPE_CHECKING:
    from reference_broker.server import Connection

_SEND_CODES = (RequestCode.SEND_MESSAGE, RequestCode.SEND_MESSAGE_V2)


def _request_headers() -> dict[int, HeaderSpec]:
    headers = {}
    for code in _SEND_CODES:
        spec = header_for(code, is_response=False)
        if spec is None:
            raise LookupError(f"the spec has no request header for {code.name}")
        headers[int(code)] = spec
    return headers


class SendLane:
    def __init__(self, sends: SendHandlers, stats: BrokerStats) -> None:
        self._sends = sends
        self._stats = stats
        self._store = sends.store
        self._scanner = SendScanner(_request_headers())

    def take(self, connection: Connection, frame: bytes) -> bool:
        """Store and answer the request in ``frame`` if it is a plain send; False, with nothing done,
        otherwise."""
        request = self._scanner.scan(frame)
        if request is None:
            return False
        opaque, header, body = request
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
