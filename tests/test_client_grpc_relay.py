"""The gRPC recording relay of ``rmq-conformance client``: messages and metadata both ways, decoded."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from rocketmq_spec.codec.grpc.v2 import definition_pb2 as v2
from rocketmq_spec.conformance.clients.grpc_relay import GrpcRelay
from rocketmq_spec.conformance.grpc_client import ProxyClient
from rocketmq_spec.targets import EMBEDDED, started


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
