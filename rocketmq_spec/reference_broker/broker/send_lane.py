"""The send lane (see ``lanes``): a SEND_MESSAGE(_V2) whose plan (``send_plan``, the general handler's
too) is one message for an ordinary put, stored by the store's ``put_plain`` (the same bytes, entries and
notifications as ``put_message``) and answered from the plan's template.

The lane differs from the general route in transport only: it writes the answer frame itself, and its scan
does not read the request's version word, so a send whose plan needs it (a retry topic) is left to the
general route, as is a send the plan refuses or whose put needs more than an append, before anything is
written."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rocketmq_spec.reference_broker.broker.send_plan import SendPlanner, VersionUnread
from rocketmq_spec.reference_broker.broker.stats import BrokerStats
from rocketmq_spec.reference_broker.server import Refused
from rocketmq_spec.spec.codes import RequestCode, ResponseCode

if TYPE_CHECKING:
    from rocketmq_spec.reference_broker.server import Connection

SEND_CODES = (RequestCode.SEND_MESSAGE, RequestCode.SEND_MESSAGE_V2)
SUCCESS = ResponseCode.SUCCESS
"""Bound once: an Enum member read off its class costs a ``__getattr__`` call per send on Python 3.11."""


class SendLane:
    def __init__(self, planner: SendPlanner, stats: BrokerStats) -> None:
        self._planner = planner
        self._stats = stats
        self._store = planner.store

    def take(self, connection: Connection, opaque: int, header: dict[str, Any], body: bytes) -> bool:
        """Store and answer a send if its plan is a plain put; False, with nothing written, otherwise."""
        planner = self._planner
        template = planner.stored_template(SUCCESS)
        if template is None:
            return False
        try:
            plan = planner.plan(header, connection.peer, body, client_version=None)
        except (Refused, VersionUnread):
            return False
        if not plan.plain:
            return False
        stored = self._store.put_plain(plan.message)
        if stored is None:
            return False
        self._stats.count_put(plan.message.topic, 1)
        answer = template.frame(opaque, planner.stored_values(stored.msg_id, plan.queue_id,
                                                              stored.queue_offset))
        assert answer is not None, "an offsetMsgId and decimal offsets are plain text"
        connection.write_frame(answer)
        return True
