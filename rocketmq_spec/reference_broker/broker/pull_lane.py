"""The pull lane (see ``lanes``): a PULL_MESSAGE answered at once when it needs no wait.

The pull's plan is the general handler's (``PullHandlers.plan``: the checks, the store's read, the code,
remark and header), and so is what it writes (``settle``, ``commit_requested``); the lane only joins the
answer from a template per answer code and status and writes it itself. A pull the plan would park
(nothing found, SUSPEND set) or refuses is left to the general path before anything is written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rocketmq_spec.codec.answer_template import JsonAnswerTemplate
from rocketmq_spec.codec.command import java_hashmap_order
from rocketmq_spec.codec.custom_header import encode_header
from rocketmq_spec.reference_broker.broker.pull import PullHandlers
from rocketmq_spec.reference_broker.broker.stats import BrokerStats
from rocketmq_spec.reference_broker.server import Refused
from rocketmq_spec.reference_broker.store import GetMessageStatus
from rocketmq_spec.spec.codes import ResponseCode
from rocketmq_spec.spec.headers import PULL_MESSAGE_RESPONSE

if TYPE_CHECKING:
    from rocketmq_spec.reference_broker.server import Connection

_REQUIRED = {field.key: 0 for field in PULL_MESSAGE_RESPONSE.fields if field.required}
_SYS_FLAGS = {"topicSysFlag": 0, "groupSysFlag": 0}


def _slots(sys_flags: bool) -> tuple[str, ...]:
    """The response header's keys in the order the general path writes them (Java HashMap order): the
    required fields, and the topic's and group's sys flags where the release answers them (the other
    optional fields are 5.x static-topic fields neither path writes)."""
    return tuple(java_hashmap_order(encode_header(PULL_MESSAGE_RESPONSE,
                                                  _REQUIRED | (_SYS_FLAGS if sys_flags else {}))))


class PullLane:
    def __init__(self, pulls: PullHandlers, stats: BrokerStats, version: int) -> None:
        self._pulls = pulls
        self._stats = stats
        self._version = version
        """The MQVersion word of the server's answers (its wire release)."""
        self._slots = _slots(pulls.sys_flags)
        self._templates: dict[tuple[ResponseCode, GetMessageStatus], JsonAnswerTemplate] = {}

    def take(self, connection: Connection, opaque: int, header: dict[str, Any], body: bytes) -> bool:
        """Answer a pull that needs no wait; False, with nothing written, for any other."""
        pulls = self._pulls
        try:
            plan = pulls.plan(connection.peer, header)
        except Refused:
            return False
        if plan.parks(header["sysFlag"]):
            return False
        pulls.settle(header, plan)
        pulls.commit_requested(header)
        values, records = plan.values, plan.records
        answer = self._template(plan.code, plan.status).frame(
            opaque, [str(values[key]) for key in self._slots], records or ())
        assert answer is not None, "decimal numbers are plain text"
        connection.write_frame(answer)
        if records:
            self._stats.count_get(header["consumerGroup"], header["topic"], len(records))
        return True

    def _template(self, code: ResponseCode, status: GetMessageStatus) -> JsonAnswerTemplate:
        """The answer of ``code`` whose remark is the status's name (by member, not name: an Enum member's
        ``name`` is a descriptor call)."""
        template = self._templates.get((code, status))
        if template is None:
            template = self._templates[(code, status)] = JsonAnswerTemplate(
                int(code), dict.fromkeys(self._slots, ""), self._slots, version=self._version,
                remark=status.name)
        return template
