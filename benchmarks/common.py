"""What every benchmark module returns, and the one timing loop they share.

Speed and memory targets are checked here, by people reading the table, never by timed asserts in tests.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


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


def _stat(pid: int) -> list[str]:
    """The fields of ``/proc/<pid>/stat`` after the command name (which may hold spaces)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def cpu_seconds(pid: int) -> float:
    """User plus system CPU the process has used so far (``/proc/<pid>/stat`` utime + stime)."""
    fields = _stat(pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _own_cpu_ticks() -> dict[int, tuple[int, int]]:
    """Every process's parent and own utime + stime (clock ticks)."""
    found: dict[int, tuple[int, int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = _stat(int(entry.name))
            except OSError:
                continue
            found[int(entry.name)] = (int(fields[1]), int(fields[11]) + int(fields[12]))
    return found


class TreeCpu:
    """CPU used by the process trees under ``roots`` while the context is open, sampled every
    ``interval`` seconds: each process's own utime + stime from its first sample to its last (from zero
    for one born meanwhile). Children's counters are not used, so nothing counts twice whoever reaps
    whom; a process loses what it used after its last sample, at most ``interval`` of CPU (summing
    children's reaped counters instead loses everything of workers a dying parent leaves to init)."""

    def __init__(self, roots: list[int], interval: float = 0.2) -> None:
        self.roots, self.interval = roots, interval
        self.first: dict[int, int] = {}
        self.last: dict[int, int] = {}
        self.commands: dict[int, str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self, initial: bool = False) -> None:
        table = _own_cpu_ticks()
        tree, frontier = set(self.roots), list(self.roots)
        while frontier:
            parent = frontier.pop()
            children = [pid for pid, (of, _) in table.items() if of == parent and pid not in tree]
            tree.update(children)
            frontier += children
        for pid in tree & table.keys():
            ticks = table[pid][1]
            if pid not in self.first:
                self.first[pid] = ticks if initial else 0
                with contextlib.suppress(OSError):
                    self.commands[pid] = Path(f"/proc/{pid}/comm").read_text().strip()
            self.last[pid] = ticks

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def __enter__(self) -> TreeCpu:
        self._sample(initial=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    @property
    def seconds(self) -> float:
        return sum(self.by_command().values())

    def by_command(self) -> dict[str, float]:
        """The CPU seconds by command name (``java``, ``python3`` ...)."""
        totals: dict[str, float] = {}
        for pid, ticks in self.last.items():
            name = self.commands.get(pid, "?")
            totals[name] = totals.get(name, 0.0) + (ticks - self.first[pid]) / os.sysconf("SC_CLK_TCK")
        return totals
