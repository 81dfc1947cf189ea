"""Regressions: byte streams the live fuzzer (``rmq-fuzz``) found to trouble a target, replayed every run.

Each case file under ``rocketmq_spec/conformance/regressions`` (format ``rmq-fuzz-regression/1``) holds the
minimised frames of one finding, one stream per connection. What a target must do with them follows from the
spec, not from the target they were found on: a stream the codec rejects must get its connection closed
(Java's decoder closes the channel on any decode error; frames completed before the bad one may be answered),
and the target must keep serving fresh connections afterwards.

How long a target takes to close is no part of the verdict: Apache RocketMQ 4.9.x closes some of these
streams only after seconds of a decoder thread's CPU (its fastjson enum spin, a known defect its profile
cites for ``rmq-fuzz``), more on a slower or busier machine. The wait is bounded by :data:`CLOSE_BOUND`, far
beyond any such spin, and the time taken goes into the report as information. Each case runs ``alone``
(``rocketmq_spec.conformance.alone``) so that a spinning thread never delays another case's answers.
"""

from __future__ import annotations

import pytest

from rocketmq_spec.conformance.case import Row, table
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.oracle import Expect
from rocketmq_spec.conformance.regression import SLOW_CLOSE_LIMIT, RegressionCase, load_cases
from rocketmq_spec.conformance.target import Server
from rocketmq_spec.conformance.wire import Wire
from rocketmq_spec.spec.frame import FRAME_CLOSE_ON_ERROR

from .support import expect_closed_and_serving, expect_success

CLOSE_BOUND = SLOW_CLOSE_LIMIT
"""120 s, Java's idle timeout (``serverChannelMaxIdleTimeSeconds``): a target that has not closed the
connection by then is not going to, while a slow close — the 4.9.x spin takes 4-15 s on a loaded 2-core
machine, over a minute at worst — is still a close. The limit ``rmq-fuzz`` gives a slow close before
calling it a timeout."""


def _requirement(case: RegressionCase) -> str:
    closing = sum(c.expect is Expect.CLOSE for c in case.connections)
    mutations = ", ".join(case.mutations) or "unmutated"
    return (f"Fuzz finding {case.id} ({case.finding.value}; {mutations}): {closing} of "
            f"{len(case.connections)} connection(s) closed without an answer; the target keeps serving.")


def _rows(listener: str) -> list[Row]:
    return [Row(case.id, case.clauses[0] if case.clauses else FRAME_CLOSE_ON_ERROR.id, _requirement(case),
                case, marks=(pytest.mark.alone,))
            for case in load_cases() if case.listener.value == listener]


def _replay(case: RegressionCase, server: Server, wire: Wire, check: Check) -> None:
    for stream in case.connections:
        connection = wire.connect(server.endpoint)
        connection.send_bytes(stream.stream)
        if stream.expect is Expect.CLOSE:
            expect_closed_and_serving(check, wire, server, connection, decode=False, within=CLOSE_BOUND)
    if case.expect_alive:
        fresh = wire.connect(server.endpoint)
        expect_success(check, "a fresh connection is still served", server.ping(fresh))


@table("regression", _rows("namesrv"))
def test_namesrv_regression(regression: RegressionCase, namesrv: Server, wire: Wire, check: Check) -> None:
    _replay(regression, namesrv, wire, check)


@table("regression", _rows("broker"))
def test_broker_regression(regression: RegressionCase, broker: Server, wire: Wire, check: Check) -> None:
    _replay(regression, broker, wire, check)
