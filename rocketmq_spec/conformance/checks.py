"""Observations a case makes: each one keeps what the spec expected beside what the target did.

Reports show every observation, not only the failing one, so a reader can see why a case passed. A
tolerated observation is a lenient behaviour the spec allows (or a documented Java deviation): it does
not stop the case but turns its verdict into NON-STRICT.
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


class Check:
    def __init__(self) -> None:
        self.observations: list[Observation] = []

    @property
    def tolerated(self) -> list[Observation]:
        return [o for o in self.observations if o.tolerated]

    def that(self, what: str, ok: bool, *, expected: Any, actual: Any) -> None:
        self.observations.append(Observation(what, expected, actual, ok))
        if not ok:
            raise Failure(what, expected=expected, actual=actual)

    def equal(self, what: str, expected: Any, actual: Any) -> None:
        self.that(what, expected == actual, expected=expected, actual=actual)

    def tolerate(self, what: str, *, expected: Any, actual: Any, why: str) -> None:
        """Record a deviation the spec permits; the case goes on and ends NON-STRICT."""
        self.observations.append(Observation(what, expected, actual, False, why))

    def note(self, what: str, actual: Any) -> None:
        """Record a value without judging it (sizes, timings of INFO cases)."""
        self.observations.append(Observation(what, None, actual, True))
