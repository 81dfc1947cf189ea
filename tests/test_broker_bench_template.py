"""The benchmark's lean producer writes the same frames the codec would, whatever the opaque."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from benchmarks.broker_bench import MESSAGE, SUCCESS_PREFIX, TOPIC, SendTemplate
from rocketmq_spec.codec.command import RemotingCommand, encode
from rocketmq_spec.reference_broker.client_requests import send_fields
from rocketmq_spec.spec.codes import RequestCode, ResponseCode


@given(st.integers(0, 3), st.integers(0, (1 << 31) - 1))
def test_template_frame_is_the_codecs_frame(queue_id: int, opaque: int) -> None:
    fields = send_fields(TOPIC, {"TAGS": "bench", "WAIT": "true"}, queue_id=queue_id)
    expected = encode(RemotingCommand.request(RequestCode.SEND_MESSAGE_V2, fields, MESSAGE, opaque=opaque))
    assert SendTemplate(queue_id).frame(opaque) == expected


def test_success_prefix_starts_a_success_answer() -> None:
    answer = encode(RemotingCommand(ResponseCode.SUCCESS, opaque=5, flag=1, ext_fields={"queueId": "0"}))
    assert answer[8:].startswith(SUCCESS_PREFIX)
    refused = encode(RemotingCommand(ResponseCode.SYSTEM_ERROR, opaque=5, flag=1))
    assert not refused[8:].startswith(SUCCESS_PREFIX)
