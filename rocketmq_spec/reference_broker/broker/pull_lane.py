"""The pull lane (see ``lanes``): a PULL_MESSAGE answered at once when it needs no wait.

A pull that finds messages, or finds none and may not be parked, is answered as ``PullHandlers.pull``
answers it (the same checks, the same store call and offset commit, the same response code, remark and
header) with its header joined from a template per answer code and status. A pull that would be parked
(nothing found, SUSPEND set) or whose offset must be corrected (which also writes an OFFSET_MOVED_EVENT)
is left to the general path before anything is done.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rocketmq_spec.codec.answer_template import JsonAnswerTemplate
from rocketmq_spec.codec.command import java_hashmap_order
from rocketmq_spec.codec.custom_header import encode_header
from rocketmq_spec.reference_broker.broker.pull import PullHandlers, pull_status, response_code
from rocketmq_spec.reference_broker.broker.stats import BrokerStats
from rocketmq_spec.reference_broker.server import Refused
from rocketmq_spec.spec.codes import ResponseCode
from rocketmq_spec.spec.ha import BrokerRole
from rocketmq_spec.spec.headers import PULL_MESSAGE_RESPONSE
from rocketmq_spec.spec.sysflag import PullSysFlag

if TYPE_CHECKING:
    from rocketmq_spec.reference_broker.server import Connection

_COMMIT_OFFSET = int(PullSysFlag.COMMIT_OFFSET)
_SUSPEND = int(PullSysFlag.SUSPEND)
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
        self._templates: dict[tuple[int, str], JsonAnswerTemplate] = {}

    def take(self, connection: Connection, opaque: int, header: dict[str, Any], body: bytes) -> bool:
        """Answer a pull that needs no wait; False, with nothing done, for any other."""
        pulls = self._pulls
        try:
            codes = pulls.check(connection.peer, header)
        except Refused:
            return False
        group, topic, queue_id = header["consumerGroup"], header["topic"], header["queueId"]
        offset, flags = header["queueOffset"], header["sysFlag"]
        result = pulls.store.get_messages(topic, queue_id, offset, header["maxMsgNums"], codes)
        status = pull_status(result.status)
        suggest, code = pulls.suggestion(group, response_code(status, offset))
        parked = code == ResponseCode.PULL_NOT_FOUND and flags & _SUSPEND
        if parked or code == ResponseCode.PULL_OFFSET_MOVED:
            return False
        if flags & _COMMIT_OFFSET and pulls.config.role is not BrokerRole.SLAVE:
            pulls.offsets.commit(group, topic, queue_id, header["commitOffset"])
        found = code == ResponseCode.SUCCESS
        values = {"suggestWhichBrokerId": suggest, "nextBeginOffset": result.next_begin_offset,
                  "minOffset": result.min_offset, "maxOffset": result.max_offset}
        if pulls.sys_flags:
            known = pulls.topics.get(topic)
            values |= {"topicSysFlag": known.topic_sys_flag if known else 0, "groupSysFlag": 0}
        answer = self._template(int(code), status.name).frame(
            opaque, tuple(str(values[key]) for key in self._slots), result.body if found else b"")
        assert answer is not None, "decimal numbers are plain text"
        connection.write_frame(answer)
        if found and result.messages:
            self._stats.count_get(group, topic, len(result.messages))
        return True

    def _template(self, code: int, remark: str) -> JsonAnswerTemplate:
        template = self._templates.get((code, remark))
        if template is None:
            template = self._templates[(code, remark)] = JsonAnswerTemplate(
                code, dict.fromkeys(self._slots, ""), self._slots, version=self._version, remark=remark)
        return template
