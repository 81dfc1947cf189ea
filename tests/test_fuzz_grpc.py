"""The gRPC fuzzer: its strategies draw requests the spec's messages decode, the reference broker's proxy
survives a short run, and its oracles do report a proxy that stops answering."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from pathlib import Path

import grpc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rocketmq_spec.fuzz.grpc_live import Finding, GrpcSummary, GrpcTarget, check_call, replay, run
from rocketmq_spec.fuzz.memory import MemoryRule, MemoryWatch
from rocketmq_spec.fuzz.strategies.grpc import message_class, request
from rocketmq_spec.reference_broker.embedded import SyncEmbeddedRocketMQ
from rocketmq_spec.spec.grpc_rpcs import RPCS, rpc

FUZZ_SECONDS = float(os.environ.get("RMQ_GRPC_FUZZ_SECONDS", "8"))
"""How long the live run against the reference broker lasts (tox -e fuzz-long sets more)."""


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(RPCS).flatmap(lambda r: st.tuples(st.just(r), request(r))))
def test_drawn_requests_decode_as_their_message(call: tuple) -> None:
    drawn_rpc, payload = call
    message_class(drawn_rpc.request).FromString(payload)


def test_reference_broker_survives_drawn_requests(tmp_path: Path) -> None:
    with SyncEmbeddedRocketMQ(tmp_path / "store") as mq:
        assert mq.grpc_addr is not None
        target = GrpcTarget(mq.grpc_addr, os.getpid())
        try:
            summary = run(target, FUZZ_SECONDS, tmp_path / "findings")
        finally:
            target.close()
    assert summary.findings == []
    assert summary.calls > 20
    assert {key.split(":")[0] for key in summary.outcomes} >= {"SendMessage", "ReceiveMessage", "Telemetry"}


@pytest.fixture
def stalling_proxy() -> Iterator[str]:
    """A server whose SendMessage never answers in time, and whose QueryRoute (the probe) does."""
    release = threading.Event()

    def stall(request: bytes, context: grpc.ServicerContext) -> bytes:
        release.wait(5)
        return b""

    def answer(request: bytes, context: grpc.ServicerContext) -> bytes:
        return b""

    handlers = {"SendMessage": grpc.unary_unary_rpc_method_handler(stall),
                "QueryRoute": grpc.unary_unary_rpc_method_handler(answer)}
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4), options=[("grpc.so_reuseport", 0)])
    service = grpc.method_handlers_generic_handler("apache.rocketmq.v2.MessagingService", handlers)
    server.add_generic_rpc_handlers([service])
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        release.set()
        server.stop(0)


def test_a_call_past_its_deadline_is_a_finding_that_replays(stalling_proxy: str, tmp_path: Path) -> None:
    target = GrpcTarget(stalling_proxy, call_deadline=0.3)
    try:
        with pytest.raises(Finding) as raised:
            check_call(target, MemoryWatch(MemoryRule(), time.monotonic()), GrpcSummary(), rpc("SendMessage"),
                       b"")
        assert raised.value.kind == "timeout"
        summary = run(target, 3.0, tmp_path)
        cases = [Path(found) for found in summary.findings]
        stalled = [case for case in cases if json.loads(case.read_text())["rpc"] == "SendMessage"]
        assert stalled, f"the stalling SendMessage was not among the findings {summary.findings}"
        assert replay(target, stalled[0]) is not None
    finally:
        target.close()
