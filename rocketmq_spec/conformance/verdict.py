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


class Basis(enum.Enum):
    """The row of the verdict policy (``docs/conformance.md#verdict-policy``) a verdict other than PASS rests
    on: every report says which, so a reader can tell a defect from a documented difference at a glance."""

    MUST = "MUST"
    """A MUST clause was not met: FAIL (CRASH when the target stopped answering)."""
    SHOULD = "SHOULD"
    """A SHOULD or MAY clause was not met, or the target was lenient where the spec allows it: NON-STRICT."""
    DEVIATION = "deviation"
    """A cited deviation: a row of the target's profile, with the source that shows it."""
    CHOICE = "choice"
    """A difference the target's makers declared deliberate, with their reason: a ``[[choice]]`` row of its
    profile, shown apart from defects."""
    INFO = "INFO"
    """Reported, not judged: an INFO clause, or an observation no Java client acts on (a remark's text)."""
    ABSENT = "absent"
    """UNSUPPORTED: the target answered that it lacks the feature, or lacks what the case needs."""
    SUITE = "suite"
    """ERROR: the suite could not judge (its own fault, or a setup step that is no clause's)."""

    @staticmethod
    def of(verdict: Verdict) -> Basis | None:
        """The row a verdict rests on when nothing more particular is known (None for PASS)."""
        return _BASIS.get(verdict)


_BASIS = {Verdict.FAIL: Basis.MUST, Verdict.CRASH: Basis.MUST, Verdict.NON_STRICT: Basis.SHOULD,
          Verdict.INFO: Basis.INFO, Verdict.UNSUPPORTED: Basis.ABSENT, Verdict.ERROR: Basis.SUITE}


class Outcome(Exception):
    """A decisive observation: ends the case with ``verdict``, keeping what was expected and seen."""

    verdict: Verdict = Verdict.FAIL

    def __init__(self, message: str, *, expected: Any = None, actual: Any = None, clause: str = "") -> None:
        self.message = message
        self.expected = expected
        self.actual = actual
        self.clause = clause
        """The clause the observation belongs to when it is not the case's: a step the case needed (a
        runtime configuration update before the behaviour it judges) is charged to that step's clause, so
        the verdict never lands on a clause whose own behaviour was not seen."""
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
