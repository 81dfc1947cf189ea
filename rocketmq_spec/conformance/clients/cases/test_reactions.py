"""How a producer reacts to refused, late and lost answers and to a missing route."""

from __future__ import annotations

from rocketmq_spec.conformance.case import case
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.clients import scenarios as sc
from rocketmq_spec.conformance.clients.observe import sends
from rocketmq_spec.conformance.clients.plugin import CaseRunner
from rocketmq_spec.conformance.clients.recording import Role, answer_to, requests
from rocketmq_spec.spec.client import SEND_RETRIES
from rocketmq_spec.spec.client_producer import GO_AWAY_RESENT, SEND_BUSY_RETRIED
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.properties import PropertyKey
from rocketmq_spec.spec.releases import release_of_version
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC


@case(
    "RMQ-CLIENT-SEND-RETRY", "A send refused with SYSTEM_ERROR is retried with its UNIQ_KEY and a new opaque"
)
def test_send_retry(run: CaseRunner, check: Check) -> None:
    result = run(sc.SEND_ERROR_ONCE)
    attempts = sends(result.frames)
    answers = [answer_to(result.frames, a.frame) for a in attempts]
    refused = [i for i, answer in enumerate(answers) if answer is not None and answer.scripted]
    check.that("a send refused by the script", bool(refused), expected="one", actual=0)
    after = len(attempts) - refused[0]
    check.that("attempts from the refused one on", after >= 2, expected=">= 2", actual=after)
    first, second = attempts[refused[0]], attempts[refused[0] + 1]
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
    check.equal("sends acknowledged", sc.SEND_ERROR_ONCE.count, len(result.driver.of("sent")))


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


def _release(version: int) -> str:
    """The release a client's version word names, for the report (the Go client writes 317, a 4.x ordinal
    below the covered history)."""
    found = release_of_version(version)
    return f"{version} ({found.name if found else 'before the covered releases'})"


@case(
    "RMQ-CLIENT-SEND-BUSY",
    "A send refused with SYSTEM_BUSY is given up at once before 5.3.0 and retried from 5.3.0",
)
def test_send_busy(run: CaseRunner, check: Check) -> None:
    result = run(sc.SEND_BUSY)
    attempts = sends(result.frames)
    check.that("sends", bool(attempts), expected="at least one", actual=0)
    version = attempts[0].frame.command.version
    check.note("the client's version word", _release(version))
    if not SEND_BUSY_RETRIED.holds_for_version(version):
        check.equal("attempts (SYSTEM_BUSY is outside retryResponseCodes)", 1, len(attempts))
        check.that(
            "error reported",
            bool(result.driver.of("error")),
            expected="an error event",
            actual=[e.data for e in result.driver.events],
        )
        return
    check.that(
        "attempts",
        2 <= len(attempts) <= 1 + SEND_RETRIES.value,
        expected=f"2..{1 + SEND_RETRIES.value}",
        actual=len(attempts),
    )
    check.equal(
        "UNIQ_KEY of the retry",
        attempts[0].properties.get(PropertyKey.UNIQ_KEY),
        attempts[1].properties.get(PropertyKey.UNIQ_KEY),
    )
    check.that(
        "the send succeeded",
        bool(result.driver.of("sent")),
        expected="a sent event",
        actual=result.driver.of("error"),
    )


@case(
    "RMQ-CLIENT-GO-AWAY",
    "A send answered GO_AWAY is not resent on its connection; from 5.2.0 it is resent on a new one",
)
def test_go_away(run: CaseRunner, check: Check) -> None:
    result = run(sc.SEND_GO_AWAY)
    attempts = sends(result.frames)
    check.that("sends", bool(attempts), expected="at least one", actual=0)
    first = attempts[0]
    uniq = first.properties.get(PropertyKey.UNIQ_KEY)
    # The run sends one message, so every later send is that message again, whether or not the client
    # keeps its UNIQ_KEY (the C++ clients set a new one per attempt): a resend is found by place, not key.
    again = [a.frame for a in attempts[1:]]
    check.equal(
        "resends on the connection told to go away (opaques)",
        [],
        [f.command.opaque for f in again if f.connection == first.frame.connection],
    )
    version = first.frame.command.version
    check.note("the client's version word", _release(version))
    sent, errors = result.driver.of("sent"), result.driver.of("error")
    if not GO_AWAY_RESENT.holds_for_version(version):
        check.that(
            "outcome reported (an error, unless a resend on a new connection succeeded)",
            bool(errors) or (bool(again) and bool(sent)),
            expected="an error event",
            actual=[e.data for e in result.driver.events],
        )
        return
    check.that(
        "resent on a new connection",
        bool(again),
        expected=f"a send with UNIQ_KEY {uniq} on another connection",
        actual=[(a.frame.connection, a.properties.get(PropertyKey.UNIQ_KEY)) for a in attempts],
    )
    check.equal("UNIQ_KEY of the resend", uniq, attempts[1].properties.get(PropertyKey.UNIQ_KEY))
    check.that(
        "opaque of the resend",
        again[0].command.opaque != first.frame.command.opaque,
        expected=f"not {first.frame.command.opaque}",
        actual=again[0].command.opaque,
    )
    check.that("the send succeeded", bool(sent), expected="a sent event", actual=errors)
