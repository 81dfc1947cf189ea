"""The client's session: routes, heartbeats, its id, and how it leaves."""

from __future__ import annotations

import json
import re
from typing import Any

from rocketmq_spec.conformance.case import Row, case, table
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.clients import scenarios as sc
from rocketmq_spec.conformance.clients.cases.timing import check_period
from rocketmq_spec.conformance.clients.judge import Scenario, ScenarioRun
from rocketmq_spec.conformance.clients.plugin import CaseRunner
from rocketmq_spec.conformance.clients.recording import Role, requests
from rocketmq_spec.spec.client import HEARTBEAT_INTERVAL, POLL_NAMESERVER_INTERVAL
from rocketmq_spec.spec.codes import RequestCode

CLIENT_ID = re.compile(r"^[^@]+(@[^@]+)+$")
TOPIC_KEYS = ("topic", "b")


def heartbeats(result: ScenarioRun) -> list[dict[str, Any]]:
    bodies = []
    for f in requests(result.frames, RequestCode.HEART_BEAT):
        try:
            bodies.append(json.loads(f.command.body or b""))
        except ValueError:
            bodies.append({"undecodable": (f.command.body or b"")[:200].decode(errors="replace")})
    return bodies


def route_requests(result: ScenarioRun, topic: str) -> list[Any]:
    return [
        f
        for f in requests(result.frames, RequestCode.GET_ROUTEINFO_BY_TOPIC, role=Role.NAMESRV)
        if (f.command.ext_fields or {}).get("topic") == topic
    ]


@case("RMQ-CLIENT-ROUTE-FIRST", "The topic's route is asked for before the first broker request about it")
def test_route_first(run: CaseRunner, check: Check) -> None:
    result = run(sc.PRODUCE)
    asked = route_requests(result, result.topic)
    about = [
        f
        for f in requests(result.frames, role=Role.BROKER)
        if any((f.command.ext_fields or {}).get(k) == result.topic for k in TOPIC_KEYS)
    ]
    check.that("GET_ROUTEINFO_BY_TOPIC of the topic", bool(asked), expected="at least one", actual=0)
    check.that("broker requests about the topic", bool(about), expected="at least one", actual=0)
    check.that(
        "route asked before the first of them",
        asked[0].at <= about[0].at,
        expected=f"route at or before {about[0].at:.3f} s",
        actual=f"{asked[0].at:.3f} s",
    )


@case("RMQ-CLIENT-ROUTE-POLL", "A started client fetches its topics' routes again every 30 s")
def test_route_poll(run: CaseRunner, check: Check) -> None:
    result = run(sc.IDLE)
    check_period(check, result, route_requests(result, result.topic), POLL_NAMESERVER_INTERVAL)


@table(
    "scenario",
    [
        Row(
            "producer",
            "RMQ-CLIENT-HEARTBEAT-CONTENT",
            "A producer that sent heartbeats its group within a heartbeat interval after (produce, "
            "started 35 s more: before its first send it knows no broker to heartbeat)",
            sc.PRODUCE,
        ),
        Row(
            "consumer",
            "RMQ-CLIENT-HEARTBEAT-CONTENT",
            "A consumer's heartbeat names its group and subscription",
            sc.CONSUME,
        ),
    ],
)
def test_heartbeat_content(run: CaseRunner, check: Check, scenario: Scenario) -> None:
    result = run(scenario)
    bodies = heartbeats(result)
    check.that("heartbeats", bool(bodies), expected="at least one", actual=0)
    for body in bodies:
        check.that("clientID", bool(body.get("clientID")), expected="non-empty", actual=body.get("clientID"))
    consumer = scenario.name.startswith("consume")
    sets = [body.get("consumerDataSet" if consumer else "producerDataSet") or [] for body in bodies]
    groups = {entry.get("groupName") for entries in sets for entry in entries}
    check.that(
        "groups announced", result.group in groups, expected=result.group, actual=sorted(map(str, groups))
    )
    if consumer:
        topics = {
            sub.get("topic")
            for entries in sets
            for entry in entries
            for sub in entry.get("subscriptionDataSet") or []
        }
        check.that(
            "subscribed topics",
            result.topic in topics,
            expected=result.topic,
            actual=sorted(map(str, topics)),
        )


@case("RMQ-CLIENT-HEARTBEAT-START", "A consumer heartbeats before it pulls")
def test_heartbeat_start(run: CaseRunner, check: Check) -> None:
    result = run(sc.CONSUME)
    beats = requests(result.frames, RequestCode.HEART_BEAT)
    pulls = requests(result.frames, RequestCode.PULL_MESSAGE)
    check.that("pulls", bool(pulls), expected="at least one", actual=0)
    check.that(
        "HEART_BEAT before the first pull",
        bool(beats) and beats[0].at <= pulls[0].at,
        expected=f"a heartbeat before {pulls[0].at:.3f} s",
        actual=[round(b.at, 3) for b in beats],
    )


@case("RMQ-CLIENT-HEARTBEAT-PERIOD", "A started client heartbeats every 30 s")
def test_heartbeat_period(run: CaseRunner, check: Check) -> None:
    result = run(sc.IDLE)
    check_period(
        check, result, requests(result.frames, RequestCode.HEART_BEAT, role=Role.BROKER), HEARTBEAT_INTERVAL
    )


@case("RMQ-CLIENT-CLIENT-ID", "clientID is ip@instance[@unit], the same in heartbeats and unregistration")
def test_client_id(run: CaseRunner, check: Check) -> None:
    result = run(sc.PRODUCE)
    ids = {str(body.get("clientID")) for body in heartbeats(result)}
    ids |= {
        (f.command.ext_fields or {}).get("clientID", "")
        for f in requests(result.frames, RequestCode.UNREGISTER_CLIENT)
    }
    check.that(
        "clientIDs",
        len(ids) == 1 and all(CLIENT_ID.match(i) for i in ids),
        expected="one id matching " + CLIENT_ID.pattern,
        actual=sorted(ids),
    )


@table(
    "scenario",
    [
        Row("producer", "RMQ-CLIENT-UNREGISTER", "A producer unregisters its group on shutdown", sc.PRODUCE),
        Row("consumer", "RMQ-CLIENT-UNREGISTER", "A consumer unregisters its group on shutdown", sc.CONSUME),
    ],
)
def test_unregister(run: CaseRunner, check: Check, scenario: Scenario) -> None:
    result = run(scenario)
    kind = "consumerGroup" if scenario.name.startswith("consume") else "producerGroup"
    other = "producerGroup" if kind == "consumerGroup" else "consumerGroup"
    found = [f.command.ext_fields or {} for f in requests(result.frames, RequestCode.UNREGISTER_CLIENT)]
    mine = [fields for fields in found if fields.get(kind) == result.group]
    check.that(
        f"UNREGISTER_CLIENT with {kind} {result.group}", bool(mine), expected="at least one", actual=found
    )
    check.that(
        "clientID and one group per request",
        all(fields.get("clientID") and not fields.get(other) for fields in mine),
        expected=f"clientID set, {other} absent",
        actual=mine,
    )


@case("RMQ-CLIENT-UNREGISTER-LAST", "Nothing but UNREGISTER_CLIENT follows the first UNREGISTER_CLIENT")
def test_unregister_last(run: CaseRunner, check: Check) -> None:
    result = run(sc.PRODUCE)
    broker = requests(result.frames, role=Role.BROKER)
    first = next((i for i, f in enumerate(broker) if f.command.code == RequestCode.UNREGISTER_CLIENT), None)
    check.that("UNREGISTER_CLIENT sent", first is not None, expected="one", actual="none")
    assert first is not None
    after = [f.command.code for f in broker[first:] if f.command.code != RequestCode.UNREGISTER_CLIENT]
    check.that("requests after unregistering", not after, expected=[], actual=after)
