"""The gRPC recording relay of ``rmq-conformance client``: messages and metadata both ways, decoded."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rocketmq_spec.codec.grpc.v2 import definition_pb2 as v2
from rocketmq_spec.codec.grpc.v2 import service_pb2 as rpc
from rocketmq_spec.conformance.clients.grpc_relay import GrpcRelay
from rocketmq_spec.conformance.grpc_client import ProxyClient
from rocketmq_spec.spec.grpc_rpcs import RPCS
from rocketmq_spec.targets import EMBEDDED, started

BY_NAME = {r.name: r for r in RPCS}


@pytest.fixture(scope="module")
def relay(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GrpcRelay]:
    with started(EMBEDDED, Path(tmp_path_factory.mktemp("grpc-relay"))) as running:
        assert running.proxy_addr is not None
        found = GrpcRelay(running.proxy_addr)
        found.start()
        try:
            yield found
        finally:
            found.stop()


def test_unary_calls_cross_and_are_recorded_with_their_metadata(relay: GrpcRelay) -> None:
    recording = relay.begin()
    client = ProxyClient(relay.address, client_id="relay-test-client")
    answer = client.query_route("NoSuchTopicForTheRelay")
    assert answer.status.code == v2.TOPIC_NOT_FOUND
    (asked,) = recording.of("QueryRoute")
    (told,) = recording.of("QueryRoute", outbound=False)
    assert asked.decoded().topic.name == "NoSuchTopicForTheRelay"
    assert told.decoded().status.code == v2.TOPIC_NOT_FOUND
    assert ("x-mq-client-id", "relay-test-client") in asked.metadata


def test_a_telemetry_stream_records_the_clients_first_command(relay: GrpcRelay) -> None:
    recording = relay.begin()
    client = ProxyClient(relay.address)
    stream, first = client.announce(client.producer_settings("AnyTopic"))
    stream.close()
    assert not isinstance(first, Exception) and first is not None and first.HasField("settings")
    sent = recording.of("Telemetry")
    assert sent and sent[0].decoded().HasField("settings")
    assert recording.of("Telemetry", outbound=False)[0].decoded().HasField("settings")


def test_route_answers_name_the_relay_as_every_brokers_endpoint(relay: GrpcRelay) -> None:
    """A proxy names itself in its routes; an SDK told so would send past the relay, unrecorded."""
    proxy = v2.Endpoints(scheme=v2.IPv4, addresses=[v2.Address(host="127.0.0.1", port=1)])
    queue = v2.MessageQueue(topic=v2.Resource(name="t"), id=0, broker=v2.Broker(name="b", endpoints=proxy))
    route = rpc.QueryRouteResponse(message_queues=[queue])
    assignment = rpc.QueryAssignmentResponse(assignments=[v2.Assignment(message_queue=queue)])
    told_route = rpc.QueryRouteResponse.FromString(
        relay.through_relay(BY_NAME["QueryRoute"], route.SerializeToString()))
    told_assignment = rpc.QueryAssignmentResponse.FromString(
        relay.through_relay(BY_NAME["QueryAssignment"], assignment.SerializeToString()))
    host, port = relay.address.rsplit(":", 1)
    for queues in (list(told_route.message_queues), [a.message_queue for a in told_assignment.assignments]):
        assert [(a.host, a.port) for q in queues for a in q.broker.endpoints.addresses] == [(host, int(port))]
    ack = rpc.AckMessageResponse().SerializeToString()
    assert relay.through_relay(BY_NAME["AckMessage"], ack) == ack
