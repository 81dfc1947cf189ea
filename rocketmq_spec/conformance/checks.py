"""Observations a case makes: each one keeps what the spec expected beside what the target did.

Reports show every observation, not only the failing one, so a reader can see why a case passed. A
tolerated observation is a lenient behaviour the spec allows (or a documented Java deviation): it does
not stop the case but turns its verdict into NON-STRICT. An informative observation (a remark's text, which
no Java client acts on) does not stop the case either: when it does not hold and nothing else failed, the
verdict is INFO (the verdict policy's INFO row, ``docs/conformance.md#verdict-policy``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rocketmq_spec.conformance.verdict import Failure


@dataclass(frozen=True)
class Observation:
    what: str
    expected: Any
    actual: Any
    ok: bool
    tolerated: str = ""
    """Why a mismatch is acceptable, when it is."""
    info: bool = False
    """Reported, not judged: a mismatch makes the case INFO at most."""


class Check:
    def __init__(self) -> None:
        self.observations: list[Observation] = []

    @property
    def tolerated(self) -> list[Observation]:
        return [o for o in self.observations if o.tolerated]

    @property
    def informative(self) -> list[Observation]:
        """Informative observations that did not hold."""
        return [o for o in self.observations if o.info and not o.ok]

    def that(self, what: str, ok: bool, *, expected: Any, actual: Any, clause: str = "") -> None:
        """Judge one observation; ``clause`` charges a mismatch to another clause than the case's (a step
        the case needed, see :attr:`rocketmq_spec.conformance.verdict.Outcome.clause`)."""
        self.observations.append(Observation(what, expected, actual, ok))
        if not ok:
            raise Failure(what, expected=expected, actual=actual, clause=clause)

    def equal(self, what: str, expected: Any, actual: Any) -> None:
        self.that(what, expected == actual, expected=expected, actual=actual)

    def tolerate(self, what: str, *, expected: Any, actual: Any, why: str) -> None:
        """Record a deviation the spec permits; the case goes on and ends NON-STRICT."""
        self.observations.append(Observation(what, expected, actual, False, why))

    def remark(self, what: str, expected: str | None, actual: str | None) -> None:
        """Compare a remark's text with Java's. No Java client branches on a remark (they act on the code;
        the text reaches people through mqadmin and logs), so other words are shown, not judged."""
        self.observations.append(Observation(what, expected, actual, expected == actual, info=True))

    def note(self, what: str, actual: Any) -> None:
        """Record a value without judging it (sizes, timings of INFO cases)."""
        self.observations.append(Observation(what, None, actual, True))
