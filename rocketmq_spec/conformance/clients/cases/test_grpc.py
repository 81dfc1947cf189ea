"""A 5.x SDK over gRPC: call metadata, the Telemetry session, heartbeats, acks and termination."""

from __future__ import annotations

from rocketmq_spec.codec.grpc.v2 import definition_pb2 as v2
from rocketmq_spec.conformance.case import Row, case, table
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.clients import scenarios as sc
from rocketmq_spec.conformance.clients.grpc_relay import GrpcMessage
from rocketmq_spec.conformance.clients.judge import Scenario, ScenarioRun
from rocketmq_spec.conformance.clients.plugin import CaseRunner

REQUIRED_METADATA = (
    "x-mq-language",
    "x-mq-protocol",
    "x-mq-client-version",
    "x-mq-date-time",
    "x-mq-request-id",
    "x-mq-client-id",
)
BOTH = [Row("producer", "", "", sc.GRPC_PRODUCE), Row("consumer", "", "", sc.GRPC_POP)]


def _rows(clause_id: str, requirement: str) -> list[Row]:
    return [Row(row.id, clause_id, requirement, row.data) for row in BOTH]


def _calls(check: Check, result: ScenarioRun, rpc: str) -> list[GrpcMessage]:
    found = [m for m in result.grpc if m.rpc == rpc and m.outbound]
    check.that(f"{rpc} calls", bool(found), expected="at least one", actual=0)
    return found


@table("scenario", _rows("RMQ-GCLIENT-METADATA", "Every call carries the x-mq-* metadata"))
def test_metadata(run: CaseRunner, check: Check, scenario: Scenario) -> None:
    result = run(scenario)
    check.that("calls seen", bool(result.grpc), expected="at least one", actual=0)
    missing = sorted(
        {
            (m.rpc, key)
            for m in result.grpc
            if m.outbound
            for key in REQUIRED_METADATA
            if not dict(m.metadata).get(key)
        }
    )
    check.that("(rpc, metadata key) missing", not missing, expected=[], actual=missing)


@table(
    "scenario", _rows("RMQ-GCLIENT-SETTINGS-FIRST", "Each Telemetry stream opens with the client's Settings")
)
def test_settings_first(run: CaseRunner, check: Check, scenario: Scenario) -> None:
    result = run(scenario)
    telemetry = _calls(check, result, "Telemetry")
    first: dict[int, GrpcMessage] = {}
    for message in telemetry:
        first.setdefault(message.call, message)
    kinds = [m.decoded().WhichOneof("command") for m in first.values()]
    check.that(
        "first command of each stream", all(k == "settings" for k in kinds), expected="settings", actual=kinds
    )
    settings = next(iter(first.values())).decoded().settings
    if scenario.name == "consume-pop":
        check.equal("subscription group", result.group, settings.subscription.group.name)
    else:
        check.that(
            "published topics",
            result.topic in [t.name for t in settings.publishing.topics],
            expected=result.topic,
            actual=[t.name for t in settings.publishing.topics],
        )


@table(
    "scenario",
    [
        Row(
            "producer",
            "RMQ-GCLIENT-HEARTBEAT",
            "A producer that sent heartbeats within a 10 s interval after it (produce, started 15 s more)",
            sc.GRPC_PRODUCE,
        ),
        Row(
            "consumer",
            "RMQ-GCLIENT-HEARTBEAT",
            "A consumer heartbeats within a 10 s interval, naming its group (idle, 15 s)",
            sc.GRPC_IDLE,
        ),
    ],
)
def test_heartbeat(run: CaseRunner, check: Check, scenario: Scenario) -> None:
    result = run(scenario)
    beats = [m.decoded() for m in _calls(check, result, "Heartbeat")]
    check.that(
        "client_type",
        all(b.client_type for b in beats),
        expected="set",
        actual=[b.client_type for b in beats],
    )
    if scenario.name == "idle":
        consumers = [b for b in beats if b.client_type != v2.PRODUCER]
        check.that(
            "heartbeats of a consumer client_type", bool(consumers), expected="at least one", actual=0
        )
        check.that(
            "group",
            all(b.group.name == result.group for b in consumers),
            expected=result.group,
            actual=[b.group.name for b in consumers],
        )


@case("RMQ-GCLIENT-ACK-HANDLE", "AckMessage names the receipt handles ReceiveMessage gave")
def test_ack_handle(run: CaseRunner, check: Check) -> None:
    result = run(sc.GRPC_POP)
    given = {
        item.message.system_properties.message_id: item.message.system_properties.receipt_handle
        for item in (m.decoded() for m in result.grpc if m.rpc == "ReceiveMessage" and not m.outbound)
        if item.WhichOneof("content") == "message"
    }
    check.that("messages received", bool(given), expected="at least one", actual=0)
    entries = [e for m in _calls(check, result, "AckMessage") for e in m.decoded().entries]
    wrong = [e.message_id for e in entries if given.get(e.message_id) != e.receipt_handle]
    check.that("acks whose receipt handle is not the one given", not wrong, expected=[], actual=wrong)


@table("scenario", _rows("RMQ-GCLIENT-TERMINATION", "A shutting down SDK sends NotifyClientTermination"))
def test_termination(run: CaseRunner, check: Check, scenario: Scenario) -> None:
    _calls(check, run(scenario), "NotifyClientTermination")
