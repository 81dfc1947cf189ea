"""Helpers shared by the cases: names that cannot collide between parallel cases, and answer checks.

Every case that expects a particular answer goes through :func:`expect_code`, so that a target which
does not implement a command is reported UNSUPPORTED in one place instead of FAIL in many.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import TypeVar

from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.target import Server
from rocketmq_spec.conformance.verdict import Unsupported
from rocketmq_spec.conformance.wire import CLOSE_WAIT, Connection, Wire
from rocketmq_spec.spec.codes import ResponseCode

T = TypeVar("T")

POLL_INTERVAL = 0.2
"""Seconds between two looks at state the target updates asynchronously (routes after a registration)."""

EVENTUAL_WAIT = 10.0
"""Seconds given to asynchronous effects: a 4.9.8 broker re-registers at once after a topic change, so a
route shows up in milliseconds; the bound only keeps a broken target from hanging the run."""


def unique(prefix: str) -> str:
    """A topic, group or broker name no other case (or earlier run) uses: cases run in parallel."""
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


def expect_code(check: Check, what: str, response: RemotingCommand, expected: int, *,
                clause: str = "") -> RemotingCommand:
    """The response's code must be ``expected``; 3 REQUEST_CODE_NOT_SUPPORTED means the feature is absent.
    ``clause`` charges a wrong code to a step's own clause (``Check.that``)."""
    if response.code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED and expected != response.code:
        raise Unsupported(f"{what}: {response.remark or 'request code not supported'}",
                          expected=expected, actual=response.code)
    check.that(f"{what}: response code", response.code == expected, expected=expected,
               actual=f"{response.code} {response.remark or ''}".strip(), clause=clause)
    return response


def expect_success(check: Check, what: str, response: RemotingCommand, *,
                   clause: str = "") -> RemotingCommand:
    return expect_code(check, what, response, ResponseCode.SUCCESS, clause=clause)


def expect_refused(check: Check, what: str, response: RemotingCommand) -> RemotingCommand:
    """Any answer but SUCCESS (and not "unsupported", which says nothing about the rule)."""
    if response.code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED:
        raise Unsupported(f"{what}: {response.remark or 'request code not supported'}", actual=response.code)
    check.that(f"{what}: refused", response.code != ResponseCode.SUCCESS, expected="a code other than 0",
               actual=f"{response.code} {response.remark or ''}".strip())
    return response


def expect_closed_and_serving(check: Check, wire: Wire, server: Server, connection: Connection, *,
                              decode: bool = True, within: float = CLOSE_WAIT) -> None:
    """The connection is closed without an answer, and a fresh connection is still served.

    ``within`` bounds the wait; the time the close took is noted for the report, never judged."""
    started = time.monotonic()
    closed = connection.wait_closed(within, decode=decode)
    check.that("connection closed by the target", closed, expected="closed", actual="closed" if closed
               else f"still open after {within} s")
    check.note("seconds until the target closed the connection", round(time.monotonic() - started, 3))
    if decode:
        check.equal("frames sent back before closing", 0, len(connection.drain()))
    expect_success(check, "a fresh connection is still served", server.ping(wire.connect(server.endpoint)))


def eventually(probe: Callable[[], T], done: Callable[[T], bool], timeout: float = EVENTUAL_WAIT) -> T:
    """Poll ``probe`` until ``done`` accepts its value or ``timeout`` passes; returns the last value."""
    deadline = time.monotonic() + timeout
    value = probe()
    while not done(value) and time.monotonic() < deadline:
        time.sleep(POLL_INTERVAL)
        value = probe()
    return value

