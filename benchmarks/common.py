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
from typing import Self


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


def process_table() -> dict[int, tuple[int, int]]:
    """Every process's parent and own utime + stime (clock ticks), read off ``/proc`` once."""
    found: dict[int, tuple[int, int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = _stat(int(entry.name))
            except OSError:
                continue
            found[int(entry.name)] = (int(fields[1]), int(fields[11]) + int(fields[12]))
    return found


def descendants(table: dict[int, tuple[int, int]], roots: list[int]) -> set[int]:
    """``roots`` and every process below them in ``table``."""
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    tree, frontier = set(roots), list(roots)
    while frontier:
        for child in children.get(frontier.pop(), ()):
            if child not in tree:
                tree.add(child)
                frontier.append(child)
    return tree


class CpuAccount:
    """CPU used by a changing set of processes from the moment it was opened: each process's own utime +
    stime from its first sample to its last (from zero for one born after the opening sample). Children's
    counters are not used, so nothing counts twice whoever reaps whom; a process loses what it used after
    its last sample (summing children's reaped counters instead loses everything of workers a dying parent
    leaves to init)."""

    def __init__(self) -> None:
        self.first: dict[int, int] = {}
        self.last: dict[int, int] = {}
        self.commands: dict[int, str] = {}
        self._opened = False

    def add(self, table: dict[int, tuple[int, int]], pids: set[int]) -> None:
        """One sample of ``pids`` (whose ticks ``table`` holds)."""
        for pid in pids & table.keys():
            ticks = table[pid][1]
            if pid not in self.first:
                self.first[pid] = 0 if self._opened else ticks
                with contextlib.suppress(OSError):
                    self.commands[pid] = Path(f"/proc/{pid}/comm").read_text().strip()
            self.last[pid] = ticks
        self._opened = True

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


class PeriodicSampler:
    """Calls :meth:`_sample` when the context opens, every ``interval`` seconds on a thread while it is
    open, and once more when it closes."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        raise NotImplementedError

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def __enter__(self) -> Self:
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()


class TreeCpu(CpuAccount, PeriodicSampler):
    """:class:`CpuAccount` of the process trees under ``roots`` while the context is open, sampled every
    ``interval`` seconds (a process loses at most ``interval`` of CPU)."""

    def __init__(self, roots: list[int], interval: float = 0.2) -> None:
        CpuAccount.__init__(self)
        PeriodicSampler.__init__(self, interval)
        self.roots = roots

    def _sample(self) -> None:
        table = process_table()
        self.add(table, descendants(table, self.roots))
