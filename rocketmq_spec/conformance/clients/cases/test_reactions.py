"""How a producer reacts to refused, late and lost answers and to a missing route."""

from __future__ import annotations

from rocketmq_spec.conformance.case import case
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.clients import scenarios as sc
from rocketmq_spec.conformance.clients.observe import sends
from rocketmq_spec.conformance.clients.plugin import CaseRunner
from rocketmq_spec.conformance.clients.recording import Role, answer_to, requests
from rocketmq_spec.spec.client import SEND_RETRIES
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.properties import PropertyKey
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC


@case(
    "RMQ-CLIENT-SEND-RETRY", "A send refused with SYSTEM_ERROR is retried with its UNIQ_KEY and a new opaque"
)
def test_send_retry(run: CaseRunner, check: Check) -> None:
    result = run(sc.SEND_ERROR_ONCE)
    attempts = sends(result.frames)
    check.that("attempts", len(attempts) >= 2, expected=">= 2", actual=len(attempts))
    first, second = attempts[0], attempts[1]
    check.equal(
        "UNIQ_KEY of the retry",
        first.properties.get(PropertyKey.UNIQ_KEY),
        second.properties.get(PropertyKey.UNIQ_KEY),
    )
    check.that(
        "opaque of the retry",
        first.frame.command.opaque != second.frame.command.opaque,
        expected=f"not {first.frame.command.opaque}",
        actual=second.frame.command.opaque,
    )
    check.that(
        "the send succeeded",
        bool(result.driver.of("sent")),
        expected="a sent event",
        actual=result.driver.of("error"),
    )


@case("RMQ-CLIENT-SEND-RETRY-BOUND", "A send that keeps failing is given up after 1 + 2 attempts")
def test_send_retry_bound(run: CaseRunner, check: Check) -> None:
    result = run(sc.SEND_ERROR_ALWAYS)
    attempts = len(sends(result.frames))
    check.that(
        "attempts",
        1 <= attempts <= 1 + SEND_RETRIES.value,
        expected=f"1..{1 + SEND_RETRIES.value}",
        actual=attempts,
    )
    check.that(
        "error reported",
        bool(result.driver.of("error")),
        expected="an error event",
        actual=[e.data for e in result.driver.events],
    )


@case("RMQ-CLIENT-SEND-NO-RETRY", "A send refused with MESSAGE_ILLEGAL is not retried")
def test_send_no_retry(run: CaseRunner, check: Check) -> None:
    result = run(sc.SEND_ILLEGAL)
    check.equal("attempts", 1, len(sends(result.frames)))
    check.that(
        "error reported",
        bool(result.driver.of("error")),
        expected="an error event",
        actual=[e.data for e in result.driver.events],
    )


@case("RMQ-CLIENT-SLOW-ANSWER", "A send answered 1.5 s late succeeds")
def test_slow_answer(run: CaseRunner, check: Check) -> None:
    result = run(sc.SEND_SLOW)
    check.equal(
        "send requests (a late answer is no reason to resend)", sc.SEND_SLOW.count, len(sends(result.frames))
    )
    check.equal("sends acknowledged", sc.SEND_SLOW.count, len(result.driver.of("sent")))
    check.equal("errors", [], result.driver.of("error"))


@case("RMQ-CLIENT-RECONNECT", "After the broker connection drops, the next request opens a new connection")
def test_reconnect(run: CaseRunner, check: Check) -> None:
    result = run(sc.SEND_DROPPED)
    attempts = sends(result.frames)
    check.that("sends", bool(attempts), expected="at least one", actual=0)
    first = attempts[0].frame
    later = [
        f
        for f in requests(result.frames, role=Role.BROKER)
        if f.connection != first.connection and f.at > first.at
    ]
    check.that("requests on a new connection", bool(later), expected="at least one", actual=0)
    check.that(
        "later sends acknowledged",
        len(result.driver.of("sent")) >= sc.SEND_DROPPED.count - 1,
        expected=f">= {sc.SEND_DROPPED.count - 1}",
        actual=len(result.driver.of("sent")),
    )


@case("RMQ-CLIENT-TOPIC-NOT-EXIST", "A producer denied a route asks for TBW102's and sends through it")
def test_topic_not_exist(run: CaseRunner, check: Check) -> None:
    result = run(sc.ROUTE_DENIED)
    routes = requests(result.frames, RequestCode.GET_ROUTEINFO_BY_TOPIC, role=Role.NAMESRV)
    denied = [
        f
        for f in routes
        if (a := answer_to(result.frames, f)) is not None and a.command.code == ResponseCode.TOPIC_NOT_EXIST
    ]
    check.that("route denied", bool(denied), expected="a TOPIC_NOT_EXIST answer", actual=0)
    template = [
        f
        for f in routes
        if (f.command.ext_fields or {}).get("topic") == DEFAULT_TOPIC and f.at >= denied[0].at
    ]
    check.that(
        "route of TBW102 asked",
        bool(template),
        expected=DEFAULT_TOPIC,
        actual=[(f.command.ext_fields or {}).get("topic") for f in routes],
    )
    topics = [s.fields.get("topic") for s in sends(result.frames)]
    check.that("a send to the topic", result.topic in topics, expected=result.topic, actual=topics)
