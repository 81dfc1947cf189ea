"""Delta debugging (Zeller's ddmin) over a list of frames, within a budget of replays.

Each replay against a live target costs up to a response timeout, so the number of tests is capped: a
partly minimised reproducer is still a reproducer, and the run must stay bounded in time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")

MAX_TESTS = 32
"""Replays spent on one finding: enough to reduce a 16-frame batch to one frame by halving."""


def ddmin(items: Sequence[T], reproduces: Callable[[list[T]], bool], max_tests: int = MAX_TESTS) -> list[T]:
    """A 1-minimal (or budget-limited) sublist of ``items`` that still ``reproduces``."""
    current = list(items)
    granularity = 2
    tests = 0
    while len(current) >= 2 and tests < max_tests:
        size = -(-len(current) // granularity)
        chunks = [current[i:i + size] for i in range(0, len(current), size)]
        reduced = False
        for index in range(len(chunks)):
            if tests >= max_tests:
                break
            for candidate in (chunks[index], [x for j, c in enumerate(chunks) if j != index for x in c]):
                tests += 1
                if candidate and len(candidate) < len(current) and reproduces(candidate):
                    current, reduced = candidate, True
                    granularity = 2 if candidate is chunks[index] else max(granularity - 1, 2)
                    break
            if reduced:
                break
        if not reduced:
            if granularity >= len(current):
                break
            granularity = min(granularity * 2, len(current))
    return current
