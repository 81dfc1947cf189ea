"""The gRPC fuzzer: requests drawn from the spec (``rocketmq_spec.fuzz.strategies.grpc``) against a running
proxy.

Every drawn call goes to ``/apache.rocketmq.v2.MessagingService/<Rpc>`` as raw bytes, so damaged encodings
reach the server too. The oracles are the remoting fuzzer's: the call must end within its deadline (a long
poll's included) with a response or a gRPC error; afterwards the target must still answer a probe within a few
seconds (a hang), its process must still run and its port accept (a crash), and its resident memory must stay
within the rule of ``rocketmq_spec.fuzz.memory``. Hypothesis draws the calls and, when one breaks an oracle,
shrinks it to the smallest that still does; the finding is saved as JSON (the RPC and its request bytes) that
``replay`` sends again. """

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from hypothesis import HealthCheck, Phase, given, seed, settings

from rocketmq_spec.codec.grpc.v2 import service_pb2 as rpc_pb2
from rocketmq_spec.fuzz.memory import MemoryRule, MemoryWatch, process_rss
from rocketmq_spec.fuzz.strategies.grpc import any_call
from rocketmq_spec.fuzz.target import Health
from rocketmq_spec.spec.grpc_rpcs import RPCS, Rpc
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC

CALL_DEADLINE_S = 10.0
"""Deadline of a unary call or a Telemetry exchange."""
STREAM_DEADLINE_S = 35.0
"""Deadline of a ReceiveMessage or PullMessage: above the 20 s longest long poll a proxy may choose."""
PROBE_TIMEOUT_S = 5.0
HANG_PATIENCE_S = 30.0
"""How long a silent target is given to answer again before the silence is a hang."""
EXAMPLES_PER_ROUND = 50
METADATA = (("x-mq-client-id", "rmq-fuzz-grpc"), ("x-mq-language", "PYTHON"), ("x-mq-protocol", "v2"))


class Finding(AssertionError):
    """An oracle that failed: what kind (crash, hang, timeout, memory) and what was seen."""

    def __init__(self, kind: str, note: str) -> None:
        super().__init__(f"{kind}: {note}")
        self.kind = kind
        self.note = note
        self.call: tuple[str, str] | None = None
        """The RPC and the request bytes (hex) that broke the oracle, once known."""


@dataclass
class GrpcTarget:
    address: str
    pid: int | None = None
    call_deadline: float = CALL_DEADLINE_S
    stream_deadline: float = STREAM_DEADLINE_S
    _channel: grpc.Channel = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._channel = grpc.insecure_channel(self.address, options=[
            ("grpc.max_send_message_length", 8 * 1024 * 1024)])

    def close(self) -> None:
        self._channel.close()

    def call(self, rpc: Rpc, payload: bytes) -> str:
        """Send one call; how it ended (``ok`` or a gRPC status name). DEADLINE_EXCEEDED is a timeout."""
        deadline = self.stream_deadline if rpc.server_streaming and not rpc.client_streaming \
            else self.call_deadline
        identity: Callable[[bytes], bytes] = lambda data: data  # noqa: E731  (bytes go out as drawn)
        try:
            if rpc.client_streaming:
                stream = self._channel.stream_stream(rpc.path, request_serializer=identity,
                                                     response_deserializer=identity)
                for _ in stream(iter([payload]), metadata=METADATA, timeout=deadline):
                    pass
            elif rpc.server_streaming:
                stream = self._channel.unary_stream(rpc.path, request_serializer=identity,
                                                    response_deserializer=identity)
                for _ in stream(payload, metadata=METADATA, timeout=deadline):
                    pass
            else:
                unary = self._channel.unary_unary(rpc.path, request_serializer=identity,
                                                  response_deserializer=identity)
                unary(payload, metadata=METADATA, timeout=deadline)
        except grpc.RpcError as error:
            code: grpc.StatusCode = error.code()
            if code is grpc.StatusCode.DEADLINE_EXCEEDED and not rpc.client_streaming:
                raise Finding("timeout", f"{rpc.name} did not end within {deadline} s") from None
            return code.name
        return "ok"

    def health(self) -> Health:
        """OK when a QueryRoute is answered in time; CRASH when the process or the port is gone."""
        if self.pid is not None and not Path(f"/proc/{self.pid}").exists():
            return Health.CRASH
        probe = rpc_pb2.QueryRouteRequest()
        probe.topic.name = DEFAULT_TOPIC
        try:
            query = self._channel.unary_unary(
                RPCS[0].path, request_serializer=rpc_pb2.QueryRouteRequest.SerializeToString,
                response_deserializer=rpc_pb2.QueryRouteResponse.FromString)
            query(probe, metadata=METADATA, timeout=PROBE_TIMEOUT_S)
        except grpc.RpcError as error:
            code = error.code()
            return Health.CRASH if code is grpc.StatusCode.UNAVAILABLE else Health.HANG
        return Health.OK

    def settled_health(self) -> Health:
        started = time.monotonic()
        health = self.health()
        while health is Health.HANG and time.monotonic() - started < HANG_PATIENCE_S:
            time.sleep(1.0)
            health = self.health()
        return health

    def rss_bytes(self) -> int | None:
        return process_rss(self.pid)


@dataclass
class GrpcSummary:
    calls: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    findings: list[str] = field(default_factory=list)


def check_call(target: GrpcTarget, memory: MemoryWatch, summary: GrpcSummary, rpc: Rpc,
               payload: bytes) -> None:
    """One call and the oracles after it; raises Finding."""
    outcome = target.call(rpc, payload)
    summary.calls += 1
    summary.outcomes[f"{rpc.name}:{outcome}"] = summary.outcomes.get(f"{rpc.name}:{outcome}", 0) + 1
    health = target.health()
    if health is not Health.OK and (health := target.settled_health()) is not Health.OK:
        raise Finding(health.value, f"after {rpc.name} with {len(payload)} request bytes")
    rss = target.rss_bytes()
    note = memory.sample(time.monotonic(), rss) if rss is not None else None
    if note is not None:
        raise Finding("memory", note)


def run(target: GrpcTarget, seconds: float, out: Path, *, first_seed: int = 0,
        rule: MemoryRule | None = None) -> GrpcSummary:
    """Rounds of drawn calls until ``seconds`` pass; each finding is shrunk and saved under ``out``."""
    summary = GrpcSummary()
    memory = MemoryWatch(rule or MemoryRule(), time.monotonic())
    deadline = time.monotonic() + seconds
    round_seed = first_seed
    out.mkdir(parents=True, exist_ok=True)
    while time.monotonic() < deadline and len(summary.findings) < 5:

        @seed(round_seed)
        @settings(max_examples=EXAMPLES_PER_ROUND, deadline=None, database=None, derandomize=False,
                  phases=(Phase.generate, Phase.shrink), suppress_health_check=list(HealthCheck))
        @given(any_call())
        def one(call: tuple[Rpc, bytes]) -> None:
            if time.monotonic() < deadline:
                try:
                    check_call(target, memory, summary, *call)
                except Finding as broken:
                    broken.call = (call[0].name, call[1].hex())
                    raise

        try:
            one()
        except Exception as failure:  # hypothesis re-raises the shrunk example's failure last
            finding = _finding_in(failure)
            if finding is None:
                raise
            summary.findings.append(str(_save(out, finding)))
        round_seed += 1
    return summary


def _finding_in(failure: BaseException) -> Finding | None:
    """The Finding a failure is or holds: hypothesis wraps one that did not fail again on a rerun (a hang
    that cleared, the time limit reached) in an exception group."""
    if isinstance(failure, Finding):
        return failure
    for inner in getattr(failure, "exceptions", ()):
        if (found := _finding_in(inner)) is not None:
            return found
    return None


def _save(out: Path, finding: Finding) -> Path:
    path = out / f"grpc-{finding.kind}-{int(time.time() * 1000)}.json"
    rpc_name, payload = finding.call or ("", "")
    path.write_text(json.dumps({"kind": finding.kind, "note": finding.note, "rpc": rpc_name,
                                "request_hex": payload}, indent=2), encoding="utf-8")
    return path


def replay(target: GrpcTarget, path: Path) -> str | None:
    """Send a saved case again; the oracle it breaks now, or None."""
    case = json.loads(path.read_text(encoding="utf-8"))
    rpc = next(r for r in RPCS if r.name == case["rpc"])
    try:
        check_call(target, MemoryWatch(MemoryRule(), time.monotonic()), GrpcSummary(), rpc,
                   bytes.fromhex(case["request_hex"]))
    except Finding as finding:
        return str(finding)
    return None
