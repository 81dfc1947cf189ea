"""When a target's resident memory is a finding: growth past a warm-up baseline, or an explicit ceiling.

Memory is read from outside (VmRSS), so normal growth must not be mistaken for a leak. Any process grows
while it warms up (caches, thread pools, JIT), which the baseline absorbs: it is the highest RSS seen
during the warm-up. A JVM also touches its heap lazily: RSS climbs towards ``-Xmx`` (at least ``-Xms``)
as the collector spreads allocations over the heap, long after warm-up, without any leak — and a leak
inside the heap ends in OutOfMemoryError, which the crash and hang probes catch. So for a JVM the heap
it may use is allowed on top of the baseline, and what is judged is growth beyond baseline + heap.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

_SIZE = re.compile(r"(\d+)([kKmMgGtT]?)$")
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_HEAP_OPTIONS = ("-Xmx", "-XX:MaxHeapSize=", "-Xms", "-XX:InitialHeapSize=")
"""Options naming the heap a JVM may touch, the maximum first: a JVM grows its heap up to -Xmx."""
DEFAULT_HEAP_SHARE = 4
"""Without -Xmx a JVM's maximum heap is a quarter of physical memory (MaxRAMPercentage=25)."""


def java_size(text: str) -> int | None:
    """A JVM size option's value (``512m``, ``1g``, ``1048576``) in bytes."""
    match = _SIZE.match(text)
    return int(match[1]) * _UNITS[match[2].lower()] if match else None


def jvm_heap_bytes(cmdline: list[str]) -> int | None:
    """The heap a JVM started with ``cmdline`` may fill without leaking; None when it is not a JVM.

    The last occurrence of an option wins, as in the JVM itself.
    """
    if not cmdline or not (Path(cmdline[0]).name.startswith("java") or any(
            arg.startswith(_HEAP_OPTIONS) for arg in cmdline)):
        return None
    for option in _HEAP_OPTIONS:
        values = [java_size(arg[len(option):]) for arg in cmdline if arg.startswith(option)]
        if values and values[-1] is not None:
            return values[-1]
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // DEFAULT_HEAP_SHARE


def process_cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [arg.decode(errors="replace") for arg in raw.split(b"\0") if arg]


def process_rss(pid: int | None) -> int | None:
    """VmRSS of process ``pid`` in bytes, or None when no pid was given or the process is gone."""
    if pid is None:
        return None
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    line = next((line for line in status.splitlines() if line.startswith("VmRSS:")), None)
    return int(line.split()[1]) * 1024 if line else None


@dataclass(frozen=True)
class MemoryRule:
    growth_bytes: int = 256 << 20
    """Growth past baseline (+ heap, for a JVM) that is reported."""
    warmup_seconds: float = 30.0
    """Samples of the first seconds only raise the baseline."""
    ceiling_bytes: int | None = None
    """RSS that is reported whatever the baseline (an operator's explicit bound)."""
    heap_bytes: int = 0
    """Heap the target may fill without leaking (a JVM's -Xmx), allowed on top of the baseline."""


class MemoryWatch:
    """Feeds on (time, RSS) samples; says when one is a finding. Sans-IO: the caller reads /proc."""

    def __init__(self, rule: MemoryRule, started: float) -> None:
        self.rule = rule
        self.warm_until = started + rule.warmup_seconds
        self.baseline: int | None = None
        self.peak = 0
        self.over_ceiling = False

    def sample(self, now: float, rss: int) -> str | None:
        """A finding's note when ``rss`` breaks the rule; after a finding the baseline moves up to it."""
        self.peak = max(self.peak, rss)
        ceiling = self.rule.ceiling_bytes
        if ceiling is not None and rss > ceiling and not self.over_ceiling:
            self.over_ceiling = True
            self.baseline = rss
            return f"VmRSS {rss} bytes is over the ceiling of {ceiling} bytes"
        if now < self.warm_until or self.baseline is None:
            self.baseline = max(self.baseline or 0, rss)
            return None
        limit = self.baseline + self.rule.heap_bytes + self.rule.growth_bytes
        if rss <= limit:
            return None
        note = (f"VmRSS grew to {rss} bytes, past the warm-up baseline {self.baseline} + heap allowance "
                f"{self.rule.heap_bytes} + growth {self.rule.growth_bytes}")
        self.baseline = rss
        return note

    def report(self) -> dict[str, int | float | None]:
        return {"baseline": self.baseline, "peak": self.peak, "heap_allowance": self.rule.heap_bytes,
                "growth": self.rule.growth_bytes, "ceiling": self.rule.ceiling_bytes,
                "warmup_seconds": self.rule.warmup_seconds}
