"""What a push consumer pulls, where it starts, what it hands over and how it commits."""

from __future__ import annotations

import base64
from collections import Counter

from rocketmq_spec.conformance.case import case
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.clients import scenarios as sc
from rocketmq_spec.conformance.clients.cases.timing import check_period
from rocketmq_spec.conformance.clients.judge import ScenarioRun
from rocketmq_spec.conformance.clients.plugin import CaseRunner
from rocketmq_spec.conformance.clients.recording import Frame, answer_to, requests
from rocketmq_spec.spec.client import PERSIST_OFFSET_INTERVAL, PULL_SUSPEND
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.sysflag import PullSysFlag
from rocketmq_spec.spec.system_topics import RETRY_PREFIX

NEXT_OFFSET_CODES = (ResponseCode.SUCCESS, ResponseCode.PULL_NOT_FOUND, ResponseCode.PULL_RETRY_IMMEDIATELY)


def _field(frame: Frame, name: str) -> str:
    return (frame.command.ext_fields or {}).get(name, "")


def _of_topic(result: ScenarioRun, *codes: int) -> list[Frame]:
    """The client's requests of ``codes`` about the subscribed topic (a Java push consumer also consumes
    its group's %RETRY% topic, which is another subscription, judged by nothing here)."""
    return [f for f in requests(result.frames, *codes) if _field(f, "topic") == result.topic]


def _pulls(check: Check, result: ScenarioRun) -> list[Frame]:
    pulls = _of_topic(result, RequestCode.PULL_MESSAGE)
    check.that("pulls of the topic seen", bool(pulls), expected="at least one", actual=0)
    return pulls


def _first_pull_offsets(pulls: list[Frame]) -> dict[str, int]:
    first: dict[str, int] = {}
    for pull in pulls:
        first.setdefault(_field(pull, "queueId"), int(_field(pull, "queueOffset") or -1))
    return first


@case("RMQ-CLIENT-PULL-QUEUE", "Pulls name the group, the topic and a queue of the route")
def test_pull_queue(run: CaseRunner, check: Check) -> None:
    result = run(sc.CONSUME)
    valid = {str(q) for q in range(sc.CONSUME.queues)}
    _pulls(check, result)
    bad = [
        (_field(p, "consumerGroup"), _field(p, "topic"), _field(p, "queueId"))
        for p in requests(result.frames, RequestCode.PULL_MESSAGE)
        if _field(p, "consumerGroup") != result.group
        or _field(p, "topic") not in (result.topic, RETRY_PREFIX + result.group)
        or (_field(p, "topic") == result.topic and _field(p, "queueId") not in valid)
    ]
    check.that("pulls outside the route or group", not bad, expected=[], actual=bad)


@case("RMQ-CLIENT-PULL-NEXT", "The next pull of a queue starts at the previous answer's nextBeginOffset")
def test_pull_next(run: CaseRunner, check: Check) -> None:
    result = run(sc.CONSUME)
    pulls = _pulls(check, result)
    wrong = []
    for index, pull in enumerate(pulls):
        answer = answer_to(result.frames, pull)
        if answer is None or answer.command.code not in NEXT_OFFSET_CODES:
            continue
        queue = _field(pull, "queueId")
        following = next((p for p in pulls[index + 1 :] if _field(p, "queueId") == queue), None)
        expected = _field(answer, "nextBeginOffset")
        if following is not None and _field(following, "queueOffset") != expected:
            wrong.append((queue, expected, _field(following, "queueOffset")))
    check.that(
        "(queue, nextBeginOffset, next pull's offset) that differ", not wrong, expected=[], actual=wrong
    )


@case("RMQ-CLIENT-PULL-SUSPEND", "A push consumer's pulls may be held: suspend bit, at most 15 s")
def test_pull_suspend(run: CaseRunner, check: Check) -> None:
    for pull in _pulls(check, run(sc.CONSUME)):
        flag = int(_field(pull, "sysFlag") or 0)
        suspend = int(_field(pull, "suspendTimeoutMillis") or 0)
        check.that(
            "suspend bit", bool(flag & PullSysFlag.SUSPEND), expected=int(PullSysFlag.SUSPEND), actual=flag
        )
        check.that(
            "suspendTimeoutMillis",
            0 < suspend <= PULL_SUSPEND.value,
            expected=f"1..{PULL_SUSPEND.value}",
            actual=suspend,
        )


@case("RMQ-CLIENT-OFFSET-MOVED", "After PULL_OFFSET_MOVED the refused offset is not pulled again")
def test_offset_moved(run: CaseRunner, check: Check) -> None:
    result = run(sc.OFFSET_MOVED)
    pulls = _pulls(check, result)
    refused = [
        p
        for p in pulls
        if (a := answer_to(result.frames, p)) is not None and a.command.code == ResponseCode.PULL_OFFSET_MOVED
    ]
    check.that("a pull was refused", bool(refused), expected="queue 0 pulled at offset 0", actual=0)
    again = [
        (_field(p, "queueId"), _field(p, "queueOffset"))
        for p in pulls
        if p.at > refused[0].at
        and _field(p, "queueId") == "0"
        and int(_field(p, "queueOffset") or 0) < sc.OFFSET_MOVED_TO
    ]
    check.that("pulls of queue 0 below nextBeginOffset afterwards", not again, expected=[], actual=again)


@case("RMQ-CLIENT-DELIVERY", "Every message pulled reaches the application unchanged")
def test_delivery(run: CaseRunner, check: Check) -> None:
    result = run(sc.CONSUME)
    got = Counter(
        base64.b64decode(e.get("body_b64") or "")
        for e in result.driver.of("received")
        if e.get("topic") in (None, result.topic)
    )
    missing = [body for body in result.prefilled if not got[body]]
    check.that(
        "stored messages not delivered as stored",
        not missing,
        expected=len(result.prefilled),
        actual=[m[-8:] for m in missing],
    )


@case("RMQ-CLIENT-QUERY-OFFSET", "A consumer asks for the group's offset before pulling a queue")
def test_query_offset(run: CaseRunner, check: Check) -> None:
    result = run(sc.CONSUME)
    pulls = _pulls(check, result)
    queries = _of_topic(result, RequestCode.QUERY_CONSUMER_OFFSET)
    unasked = [
        q
        for q in _first_pull_offsets(pulls)
        if not any(
            _field(x, "queueId") == q and x.at <= next(p.at for p in pulls if _field(p, "queueId") == q)
            for x in queries
        )
    ]
    check.that("queues pulled without QUERY_CONSUMER_OFFSET first", not unasked, expected=[], actual=unasked)


@case("RMQ-CLIENT-CONSUME-FROM-WHERE", "A group without offset starts at 0 or the queue's max offset")
def test_consume_from_where(run: CaseRunner, check: Check) -> None:
    result = run(sc.NO_OFFSET)
    pulls = _pulls(check, result)
    given: dict[str, set[int]] = {}
    for ask in _of_topic(result, RequestCode.GET_MAX_OFFSET, RequestCode.SEARCH_OFFSET_BY_TIMESTAMP):
        answer = answer_to(result.frames, ask)
        if answer is not None and _field(answer, "offset"):
            given.setdefault(_field(ask, "queueId"), set()).add(int(_field(answer, "offset")))
    wrong = {q: o for q, o in _first_pull_offsets(pulls).items() if o != 0 and o not in given.get(q, set())}
    check.that("first pulls at offsets the broker did not give", not wrong, expected={}, actual=wrong)


def _commits(result: ScenarioRun) -> list[Frame]:
    return _of_topic(result, RequestCode.UPDATE_CONSUMER_OFFSET)


@case("RMQ-CLIENT-OFFSET-COMMIT", "A consumer commits what it consumed, never past what it pulled")
def test_offset_commit(run: CaseRunner, check: Check) -> None:
    result = run(sc.CONSUME)
    pulled: dict[str, int] = {}
    for pull in _pulls(check, result):
        answer = answer_to(result.frames, pull)
        if answer is not None and answer.command.code == ResponseCode.SUCCESS:
            queue = _field(pull, "queueId")
            pulled[queue] = max(pulled.get(queue, 0), int(_field(answer, "nextBeginOffset") or 0))
    committed: dict[str, int] = {}
    for commit in _commits(result):
        committed[_field(commit, "queueId")] = int(_field(commit, "commitOffset") or 0)
    for pull in _of_topic(result, RequestCode.PULL_MESSAGE):
        if int(_field(pull, "sysFlag") or 0) & PullSysFlag.COMMIT_OFFSET:
            committed.setdefault(_field(pull, "queueId"), int(_field(pull, "commitOffset") or 0))
    check.that(
        "queues consumed and committed",
        bool(pulled) and set(pulled) <= set(committed),
        expected=sorted(pulled),
        actual=sorted(committed),
    )
    beyond = {q: o for q, o in committed.items() if o > pulled.get(q, 0)}
    check.that("commits past the pulled nextBeginOffset", not beyond, expected={}, actual=beyond)


@case("RMQ-CLIENT-OFFSET-PERIOD", "A started consumer commits its offsets every 5 s")
def test_offset_period(run: CaseRunner, check: Check) -> None:
    result = run(sc.IDLE)
    commits = _commits(result)
    per_queue = [
        c for c in commits if _field(c, "queueId") == (_field(commits[0], "queueId") if commits else "")
    ]
    check_period(check, result, per_queue, PERSIST_OFFSET_INTERVAL)


@case("RMQ-CLIENT-OFFSET-SHUTDOWN", "A consumer commits its offsets just before unregistering")
def test_offset_shutdown(run: CaseRunner, check: Check) -> None:
    result = run(sc.CONSUME)
    unregister = [
        f
        for f in requests(result.frames, RequestCode.UNREGISTER_CLIENT)
        if _field(f, "consumerGroup") == result.group
    ]
    check.that("consumer unregistered", bool(unregister), expected="UNREGISTER_CLIENT", actual=0)
    pulls = _of_topic(result, RequestCode.PULL_MESSAGE)
    last_pull = max(pulls, key=lambda p: p.at) if pulls else None
    final = [c for c in _commits(result)
             if (last_pull is None or _issued_before(last_pull, c)) and _issued_before(c, unregister[0])]
    check.that(
        "UPDATE_CONSUMER_OFFSET between the last pull and UNREGISTER_CLIENT",
        bool(final),
        expected="at least one",
        actual=[(round(c.at, 3), c.command.opaque) for c in _commits(result)],
    )


def _issued_before(first: Frame, then: Frame) -> bool:
    """Whether the client issued ``first`` before ``then``: by their request ids where both crossed one
    connection (a client numbers its requests in the order it makes them, while the writes of several
    threads may cross on the wire: Java 5.5.0's oneway commits at shutdown reach the socket just after the
    UNREGISTER_CLIENT it made after them), else by the times the relay read them."""
    if first.connection == then.connection:
        return first.command.opaque < then.command.opaque
    return first.at <= then.at
