"""A 5.x SDK over gRPC: call metadata, the Telemetry session, heartbeats, acks and termination, FIFO
message groups, invisible-duration changes and transactions with their recovery."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

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


def _delivered(result: ScenarioRun) -> Iterator[tuple[GrpcMessage, v2.Message]]:
    """Every message a ReceiveMessage answer delivered, with the answer that carried it."""
    for answer in (m for m in result.grpc if m.rpc == "ReceiveMessage" and not m.outbound):
        item = answer.decoded()
        if item.WhichOneof("content") == "message":
            yield answer, item.message


def _sends(check: Check, result: ScenarioRun) -> list[tuple[GrpcMessage, GrpcMessage | None]]:
    """Each SendMessage request with its answer (None: unanswered)."""
    answers = {m.call: m for m in result.grpc if m.rpc == "SendMessage" and not m.outbound}
    return [(request, answers.get(request.call)) for request in _calls(check, result, "SendMessage")]


@case("RMQ-GCLIENT-FIFO-SEND", "A message group is sent as FIFO, each group's messages in order")
def test_fifo_send(run: CaseRunner, check: Check) -> None:
    result = run(sc.GRPC_FIFO)
    sends = _sends(check, result)
    sent = [m for request, _ in sends for m in request.decoded().messages]
    check.that(
        "messages without message_group or not FIFO",
        all(m.system_properties.message_group and m.system_properties.message_type == v2.FIFO for m in sent),
        expected=[],
        actual=[(m.system_properties.message_group, v2.MessageType.Name(m.system_properties.message_type))
                for m in sent
                if not m.system_properties.message_group or m.system_properties.message_type != v2.FIFO],
    )
    index = {e["msgId"]: e["index"] for e in result.driver.of("sent")}
    check.that("sends reported", len(index) == sc.GRPC_FIFO.count, expected=sc.GRPC_FIFO.count,
               actual=len(index))
    last_answer: dict[str, float] = {}
    order: dict[str, list[int]] = {}
    overtaking = []
    for request, answer in sends:
        for m in request.decoded().messages:
            group = m.system_properties.message_group
            order.setdefault(group, []).append(index.get(m.system_properties.message_id, -1))
            if request.at < last_answer.get(group, -1.0):
                overtaking.append(m.system_properties.message_id)
            if answer is not None:
                last_answer[group] = answer.at
    check.that("groups sent out of the order of the application's sends",
               all(o == sorted(o) and -1 not in o for o in order.values()), expected="ascending indices",
               actual=order)
    check.that("messages sent before the answer to their group's previous send", not overtaking,
               expected=[], actual=overtaking)


@case("RMQ-GCLIENT-FIFO-CONSUME", "An orderly group's messages are acked in order, each before the next")
def test_fifo_consume(run: CaseRunner, check: Check) -> None:
    result = run(sc.GRPC_FIFO_CONSUME)
    deliveries: dict[str, list[tuple[str, float, int]]] = {}
    for answer, m in _delivered(result):
        deliveries.setdefault(m.system_properties.message_group, []).append(
            (m.system_properties.message_id, answer.at, answer.call))
    check.that("message groups delivered", len(deliveries) == sc.GRPC_FIFO_GROUPS,
               expected=sc.GRPC_FIFO_GROUPS, actual=sorted(deliveries))
    acked: dict[str, float] = {}
    ack_order: list[str] = []
    for request in _calls(check, result, "AckMessage"):
        for entry in request.decoded().entries:
            acked.setdefault(entry.message_id, request.at)
            ack_order.append(entry.message_id)
    for group, delivered in deliveries.items():
        ids = [message_id for message_id, _, _ in delivered]
        check.equal(f"acks of group {group} in delivery order", ids,
                    [message_id for message_id in ack_order if message_id in ids])
        early = [
            later
            for (earlier, _, call), (later, at, later_call) in itertools.pairwise(delivered)
            if later_call != call and acked.get(earlier, at) >= at
        ]
        check.that(f"group {group}: messages delivered before the previous one was acked", not early,
                   expected=[], actual=early)


@table(
    "scenario",
    [
        Row("nack", "RMQ-GCLIENT-CHANGE-HANDLE", "A nack names the receive's handle, an ack the newest",
            sc.GRPC_NACK),
        Row("extend", "RMQ-GCLIENT-CHANGE-HANDLE", "An ack after a change names the handle the change gave",
            sc.GRPC_EXTEND),
    ],
)
def test_change_handle(run: CaseRunner, check: Check, scenario: Scenario) -> None:
    result = run(scenario)
    newest: dict[str, str] = {}
    """Per message id, the newest receipt handle the server gave: of a receive or of a change."""
    from_change: set[str] = set()
    """Message ids whose newest handle came from a ChangeInvisibleDuration answer."""
    changes: dict[int, str] = {}
    acks_after_change, stale, negative = [], [], []
    for m in result.grpc:
        decoded = m.decoded()
        if m.rpc == "ReceiveMessage" and not m.outbound and decoded.WhichOneof("content") == "message":
            properties = decoded.message.system_properties
            newest[properties.message_id] = properties.receipt_handle
            from_change.discard(properties.message_id)
        elif m.rpc == "ChangeInvisibleDuration" and m.outbound:
            changes[m.call] = decoded.message_id
            if newest.get(decoded.message_id) != decoded.receipt_handle:
                stale.append(("ChangeInvisibleDuration", decoded.message_id))
            if decoded.invisible_duration.seconds < 0 or decoded.invisible_duration.nanos < 0:
                negative.append(decoded.message_id)
        elif m.rpc == "ChangeInvisibleDuration" and m.call in changes and decoded.receipt_handle:
            newest[changes[m.call]] = decoded.receipt_handle
            from_change.add(changes[m.call])
        elif m.rpc == "AckMessage" and m.outbound:
            for entry in decoded.entries:
                if newest.get(entry.message_id) != entry.receipt_handle:
                    stale.append(("AckMessage", entry.message_id))
                if entry.message_id in from_change:
                    acks_after_change.append(entry.message_id)
    check.that("ChangeInvisibleDuration calls", bool(changes), expected="at least one", actual=0)
    if scenario is sc.GRPC_EXTEND:
        check.that("acks of a delivery whose invisible duration was changed", bool(acks_after_change),
                   expected="at least one", actual=0)
    check.that("negative invisible durations", not negative, expected=[], actual=negative)
    check.that("calls not naming the newest receipt handle", not stale, expected=[], actual=stale)


@case("RMQ-GCLIENT-TXN-SEND", "A half message is TRANSACTION, its EndTransaction names the send's ids")
def test_txn_send(run: CaseRunner, check: Check) -> None:
    result = run(sc.GRPC_TRANSACTION)
    sends = _sends(check, result)
    types = [v2.MessageType.Name(m.system_properties.message_type)
             for request, _ in sends for m in request.decoded().messages]
    check.that("message types", set(types) == {"TRANSACTION"}, expected="TRANSACTION", actual=types)
    given = {(e.message_id, e.transaction_id)
             for _, answer in sends if answer is not None for e in answer.decoded().entries}
    check.that("half messages answered", len(given) == sc.GRPC_TRANSACTION.count,
               expected=sc.GRPC_TRANSACTION.count, actual=len(given))
    ends = [m.decoded() for m in _calls(check, result, "EndTransaction")]
    named = {(e.message_id, e.transaction_id) for e in ends}
    check.equal("(message_id, transaction_id) of EndTransaction", sorted(given), sorted(named))
    # a proxy tells only SOURCE_SERVER_CHECK apart: an unset source ends a transaction as SOURCE_CLIENT does
    check.that("sources", v2.SOURCE_SERVER_CHECK not in {e.source for e in ends},
               expected="SOURCE_CLIENT or unset", actual=[v2.TransactionSource.Name(e.source) for e in ends])
    check.that("topics", all(e.topic.name == result.topic for e in ends), expected=result.topic,
               actual=[e.topic.name for e in ends])
    check.that("resolutions", all(e.resolution == v2.COMMIT for e in ends), expected="COMMIT",
               actual=[v2.TransactionResolution.Name(e.resolution) for e in ends])


@case("RMQ-GCLIENT-TXN-RECOVER", "A recovery command is answered by EndTransaction with the check's answer")
def test_txn_recover(run: CaseRunner, check: Check) -> None:
    result = run(sc.GRPC_TRANSACTION_RECOVERED)
    commands = [
        (m.at, c.recover_orphaned_transaction_command)
        for m in result.grpc if m.rpc == "Telemetry" and not m.outbound
        for c in [m.decoded()] if c.WhichOneof("command") == "recover_orphaned_transaction_command"
    ]
    check.that("RecoverOrphanedTransactionCommand sent by the proxy", bool(commands), expected="at least one",
               actual=0)
    asked = {(c.message.system_properties.message_id, c.transaction_id): at for at, c in commands}
    ends = [(m.at, m.decoded()) for m in _calls(check, result, "EndTransaction")]
    checked = [e for at, e in ends if e.source == v2.SOURCE_SERVER_CHECK]
    check.that("EndTransaction with source SOURCE_SERVER_CHECK", bool(checked), expected="at least one",
               actual=[v2.TransactionSource.Name(e.source) for _, e in ends])
    unasked = [(e.message_id, e.transaction_id) for at, e in ends if e.source == v2.SOURCE_SERVER_CHECK
               and asked.get((e.message_id, e.transaction_id), at) >= at]
    check.that("checked ends naming no earlier command's (message_id, transaction_id)", not unasked,
               expected=[], actual=unasked)
    expected = v2.TransactionResolution.Name({"commit": v2.COMMIT, "rollback": v2.ROLLBACK}[
        sc.GRPC_TRANSACTION_RECOVERED.tx_check_answer])
    check.that("resolutions", all(v2.TransactionResolution.Name(e.resolution) == expected for e in checked),
               expected=expected, actual=[v2.TransactionResolution.Name(e.resolution) for e in checked])
