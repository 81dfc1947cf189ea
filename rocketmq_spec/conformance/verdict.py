"""Verdicts and the outcomes a case raises to reach one.

A case proves conformance by running to completion; every other verdict is an exception so that the
first decisive observation ends the case, the way an assertion does in pytest.
"""

from __future__ import annotations

import enum
from typing import Any


class Verdict(enum.Enum):
    PASS = "PASS"
    FAIL = "FAIL"
    NON_STRICT = "NON-STRICT"
    """A SHOULD was not met, or the target was lenient where the spec allows it."""
    UNSUPPORTED = "UNSUPPORTED"
    """The target answered REQUEST_CODE_NOT_SUPPORTED: the feature is absent, not broken."""
    INFO = "INFO"
    """The case reports a property of the target without judging it."""
    CRASH = "CRASH"
    """The target stopped answering during or after the case."""
    ERROR = "ERROR"
    """The suite could not judge the case: a fault of the run itself (a local port it could not bind, a
    fixture that broke), not of the target."""

    @property
    def breaks_conformance(self) -> bool:
        return self in (Verdict.FAIL, Verdict.CRASH)


VERDICT_ORDER: tuple[Verdict, ...] = tuple(Verdict)
"""Column order of summary tables: the order of declaration, success first."""


class Outcome(Exception):
    """A decisive observation: ends the case with ``verdict``, keeping what was expected and seen."""

    verdict: Verdict = Verdict.FAIL

    def __init__(self, message: str, *, expected: Any = None, actual: Any = None) -> None:
        self.message = message
        self.expected = expected
        self.actual = actual
        super().__init__(message)


class Failure(Outcome):
    verdict = Verdict.FAIL


class NonStrict(Outcome):
    verdict = Verdict.NON_STRICT


class Unsupported(Outcome):
    verdict = Verdict.UNSUPPORTED


class Info(Outcome):
    verdict = Verdict.INFO


class Crash(Outcome):
    verdict = Verdict.CRASH


class SuiteError(Exception):
    """A fault on the suite's side (its own listener, lock or fixture): the case gets no verdict on the
    target, and the run reports an error of its own."""
