"""A ReceiveMessage that overtakes its client's own Settings (RMQ-GRPC-RECEIVE-BEFORE-SETTINGS), against the
reference broker and Apache 5.5.0 (its proxy in local mode): the client's Telemetry stream is open, its
Settings not sent, and the receive is answered INTERNAL_SERVER_ERROR with the text of Apache's
NullPointerException (the Settings are sent only once it is answered); once they have come the same client
is served."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from rocketmq_spec.codec.grpc.v2 import definition_pb2 as v2
from rocketmq_spec.codec.grpc.v2 import service_pb2 as rpc
from rocketmq_spec.conformance.grpc_client import ProxyClient
from rocketmq_spec.spec.grpc_codes import Code
from rocketmq_spec.spec.grpc_rpcs import RECEIVE_BEFORE_SETTINGS_DETAIL
from tests import sdk5_clients as sdk5
from tests.sdk5_clients import Target

pytestmark = pytest.mark.interop


@pytest.fixture(scope="module", params=[sdk5.REFERENCE, pytest.param(sdk5.APACHE, marks=pytest.mark.slow)])
def broker(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    with sdk5.serve(request.param, tmp_path_factory.mktemp("settings-race"), {}) as target:
        yield target


def _receive(client: ProxyClient, topic: str, group: str) -> list[rpc.ReceiveMessageResponse]:
    request = rpc.ReceiveMessageRequest(
        group=v2.Resource(name=group), batch_size=1, auto_renew=False,
        message_queue=v2.MessageQueue(topic=v2.Resource(name=topic), id=-1, permission=v2.READ_WRITE),
        filter_expression=v2.FilterExpression(type=v2.TAG, expression="*"))
    request.invisible_duration.FromSeconds(30)
    request.long_polling_timeout.FromSeconds(1)
    return list(client.stream("ReceiveMessage", request, timeout=30))


def _statuses(responses: list[rpc.ReceiveMessageResponse]) -> list[tuple[int, str]]:
    """The statuses of a receive's stream (its other items are messages and the delivery timestamp)."""
    return [(r.status.code, r.status.message) for r in responses if r.HasField("status")]


def test_receive_before_settings_is_answered_at_once(broker: Target) -> None:
    topic, group = broker.topic(), broker.group()
    with contextlib.closing(ProxyClient(broker.grpc_addr)) as client:
        stream = client.telemetry()  # open, its Settings not sent
        early = _statuses(_receive(client, topic, group))
        assert early == [(int(Code.INTERNAL_SERVER_ERROR), RECEIVE_BEFORE_SETTINGS_DETAIL)]
        stream.send(rpc.TelemetryCommand(settings=client.consumer_settings(group, topic)))
        answer = stream.receive(sdk5.RUN_TIMEOUT_S)
        assert isinstance(answer, rpc.TelemetryCommand) and answer.status.code == Code.OK, answer
        later = _statuses(_receive(client, topic, group))
    assert [code for code, _ in later] == [int(Code.MESSAGE_NOT_FOUND)]
