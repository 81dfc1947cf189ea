"""What every benchmark module returns, and the one timing loop they share.

Speed and memory targets are checked here, by people reading the table, never by timed asserts in tests.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Result:
    group: str
    name: str
    ops_per_s: float
    mb_per_s: float | None = None
    target: str = ""
    note: str = ""


def measure(fn: Callable[[], int], *, min_seconds: float = 1.0) -> tuple[float, int]:
    """Run ``fn`` (which returns how many operations it did) until ``min_seconds`` have passed.

    Returns (seconds, operations). One warm-up call is made first so imports and caches do not count.
    """
    fn()
    ops = 0
    start = time.perf_counter()
    while True:
        ops += fn()
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            return elapsed, ops
