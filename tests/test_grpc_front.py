"""The permissive gRPC port's front (``reference_broker.proxy.front``): both kinds of connection reach the
same grpc server, and handlers see the caller's own address, not the front's."""

from __future__ import annotations

from rocketmq_spec.conformance.grpc_client import ProxyClient
from rocketmq_spec.reference_broker.embedded import SyncEmbeddedRocketMQ


def test_handlers_see_the_callers_address() -> None:
    with SyncEmbeddedRocketMQ() as mq:
        assert mq.grpc_addr is not None and mq.embedded.broker is not None
        proxy = mq.embedded.broker.grpc
        assert proxy is not None and proxy._front is not None
        client = ProxyClient(mq.grpc_addr)
        try:
            client.announce(client.producer_settings("front_topic"))
            channel = proxy.channels.find(client.client_id)
            spliced = dict(proxy._front._peers)
        finally:
            client.close()
    assert channel is not None
    assert list(spliced.values()) == [channel.peer]  # the caller's, not the front's own towards grpc
    assert channel.peer not in spliced
