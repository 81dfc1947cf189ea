"""Replaying streams against a live target: what the fuzzer and ``rmq-fuzz --replay`` observe.

Each stream goes on a fresh connection to one listener; what the target owes it comes from the case
(``rocketmq_spec.conformance.regression``), how long it is watched from here.
"""

from __future__ import annotations

import time

from rocketmq_spec.conformance.oracle import Expect
from rocketmq_spec.conformance.regression import Listener, RegressionCase
from rocketmq_spec.fuzz.target import Health, Target
from rocketmq_spec.fuzz.wire import Observed, WireConnection
from rocketmq_spec.spec.frame import FRAME_CLOSE_ON_ERROR

RESPONSE_TIMEOUT = 2.0
"""Seconds a target gets to close a connection after a malformed frame; loopback closes take
microseconds, so a target still holding the connection after this has decided not to close it."""


def deliver(target: Target, listener: Listener, stream: bytes, seconds: float = RESPONSE_TIMEOUT) -> Observed:
    """Send ``stream`` on a fresh connection and watch it for ``seconds`` (or until it is closed)."""
    with WireConnection(target.addr(listener)) as conn:
        conn.send(stream, RESPONSE_TIMEOUT)
        return conn.listen(seconds)


def close_delay(target: Target, listener: Listener, stream: bytes, limit: float) -> float | None:
    """Seconds from sending ``stream`` until the target closed the connection; None if it did not close
    (or answered instead) within ``limit``."""
    with WireConnection(target.addr(listener)) as conn:
        conn.send(stream, RESPONSE_TIMEOUT)
        sent = time.monotonic()
        observed = conn.listen(limit)
    if not observed.closed or observed.received_bytes or observed.closed_at is None:
        return None
    return observed.closed_at - sent


def ignored(observed: Observed) -> bool:
    """The target neither closed the connection nor sent anything: how a timeout finding looks."""
    return not observed.closed and observed.received_bytes == 0


def replay(case: RegressionCase, target: Target) -> list[str]:
    """Violations of the case's expected behaviour by ``target`` (empty when it behaves)."""
    violations = []
    for index, connection in enumerate(case.connections):
        observed = deliver(target, case.listener, connection.stream)
        if connection.expect is Expect.CLOSE and not observed.closed:
            violations.append(f"connection {index}: malformed stream left open [{FRAME_CLOSE_ON_ERROR.id}]")
    if case.expect_alive:
        health = target.health(case.listener)
        if health is not Health.OK:
            violations.append(f"{case.listener.value} {health.value} after the case")
    return violations
