"""How busy the machine is besides the benchmark, read off ``/proc`` while it runs.

A rate measured on a shared machine says as much about everyone else's load as about the broker, so every
figure of the benchmark matrix carries the machine's state beside it, and a run on a machine that was not
quiet is not published. The 1-minute load average alone cannot tell: during a phase it counts the
benchmark's own broker and load generator, and before a phase the 1-minute average still remembers the
previous one. So the watch splits the machine's CPU three ways, sampled every quarter second:

- the benchmark's own: every process in this process's tree (the load generator's JVM, the brokers and
  name servers it started, whatever they fork), each process's own utime + stime
  (:class:`benchmarks.common.CpuAccount`), and for a child this process reaped (a master killed in a
  failover cycle) what it used after its last sample, its exit's teardown included (:class:`ReapedChildren`);
- the kernel's threads (children of ``kthreadd``, pid 2: softirq work for loopback traffic shows up there
  and is the benchmark's doing);
- the others': the machine's busy time from ``/proc/stat`` (user, nice, system, steal; guest time is in
  user) minus those two. Processes outside this container, or too short-lived to be sampled, still count
  here, through ``/proc/stat``.

**Quiet** (the definition ``docs/benchmarks.md`` quotes): the 1-minute load average is below
:data:`QUIET_LOAD_PER_CORE` per core before the run starts (nothing of the benchmark running yet), and
during every phase, warm-up included, the others' CPU averages below :data:`QUIET_OTHERS_PER_CORE` per
core.
"""

from __future__ import annotations

import contextlib
import os
import resource
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks.common import CpuAccount, PeriodicSampler, descendants, process_table

QUIET_LOAD_PER_CORE = 0.5
"""The 1-minute load average before the run, per core, below which the machine counts as quiet."""
QUIET_OTHERS_PER_CORE = 0.1
"""Other processes' CPU during a phase, in cores per core, below which the phase counts as quiet: on two
cores 0.2 of a core, which moves a CPU-bound rate by about a tenth at most."""
KTHREADD = 2
"""The parent of every kernel thread."""
_BUSY_FIELDS = (0, 1, 2, 7)
"""user, nice, system, steal of the ``cpu`` line of ``/proc/stat`` (idle, iowait, irq and softirq are not a
process's doing; guest time is already inside user)."""


def cores() -> int:
    return os.cpu_count() or 1


def load_1min() -> float:
    return os.getloadavg()[0]


def settle(limit: float, seconds: float) -> float:
    """The 1-minute load average once it fell below ``limit``, or after ``seconds`` of waiting."""
    deadline = time.monotonic() + seconds
    load = load_1min()
    while load >= limit and time.monotonic() < deadline:
        print(f"waiting for the load average to fall below {limit:.2f} (now {load:.2f}) ...", file=sys.stderr,
              flush=True)
        time.sleep(5)
        load = load_1min()
    return load


def busy_seconds() -> float:
    """CPU seconds the whole machine has been busy since boot."""
    with open("/proc/stat") as stat:
        fields = stat.readline().split()[1:]
    return sum(int(fields[i]) for i in _BUSY_FIELDS) / os.sysconf("SC_CLK_TCK")


def tree_memory_mib(root: int) -> float:
    """Memory of the process tree under ``root``: the sum of each process's proportional set size
    (``Pss`` of ``/proc/PID/smaps_rollup``, its resident pages with shared ones split among their sharers,
    so forked workers do not count a page twice), or of its ``VmRSS`` where the kernel has no rollup."""
    total_kib = 0
    for pid in descendants(process_table(), [root]):
        with contextlib.suppress(OSError):
            total_kib += _pss_kib(pid)
    return total_kib / 1024


def _pss_kib(pid: int) -> int:
    rollup = Path(f"/proc/{pid}/smaps_rollup")
    if rollup.is_file():
        for line in rollup.read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


@dataclass(frozen=True)
class Reading:
    """The machine at one moment: counters since the watch started, so two readings give an interval."""

    at: float
    """``time.monotonic()``."""
    load_1min: float
    busy_s: float
    own_s: float
    kernel_s: float
    broker_s: float
    """The broker's process tree (a part of ``own_s``) since :meth:`MachineWatch.watch_broker`."""
    client_s: float
    """The load generator's process tree (a part of ``own_s``) since :meth:`MachineWatch.watch_client`."""

    def others_cores(self, before: Reading) -> float:
        """Cores the processes outside the benchmark kept busy between ``before`` and this reading."""
        elapsed = self.at - before.at
        if elapsed <= 0:
            return 0.0
        others = ((self.busy_s - before.busy_s) - (self.own_s - before.own_s)
                  - (self.kernel_s - before.kernel_s))
        return max(others, 0.0) / elapsed


class ReapedChildren:
    """What this process's own children used after their last sample, known once they are reaped.

    A SIGKILLed JVM vanishes from ``/proc`` with its last quarter second and its exit (unmapping a heap of
    hundreds of MiB) unsampled; counted as nobody's, that CPU lands in the others' share and a cycle of a few
    hundred milliseconds reads as a busy machine. The kernel adds a reaped child's whole utime + stime to
    ``getrusage(RUSAGE_CHILDREN)``; less the ticks its samples already counted, that is the missing part.
    Only direct children are corrected: a grandchild reaped by its parent is in that parent's total, not
    here, and stays as :class:`benchmarks.common.CpuAccount` counts it."""

    def __init__(self) -> None:
        self._opened_s: float | None = None
        self._last_s: dict[int, float] = {}
        self._gone_s = 0.0

    def add(self, table: dict[int, tuple[int, int]]) -> None:
        """One sample: note each live child's ticks, retire the ones that vanished since the last."""
        if self._opened_s is None:
            self._opened_s = _children_cpu_s()
        tick = os.sysconf("SC_CLK_TCK")
        for pid in [pid for pid in self._last_s if pid not in table]:
            self._gone_s += self._last_s.pop(pid)
        me = os.getpid()
        self._last_s.update({pid: ticks / tick for pid, (parent, ticks) in table.items() if parent == me})

    @property
    def seconds(self) -> float:
        """CPU seconds the reaped children used beyond their samples (never negative: a child reaped between
        the table's read and the counters' is settled by the next sample)."""
        if self._opened_s is None:
            return 0.0
        return max(_children_cpu_s() - self._opened_s - self._gone_s, 0.0)


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class MachineWatch(PeriodicSampler):
    """Samples ``/proc`` every ``interval`` seconds in a thread while the context is open; :meth:`read`
    samples once more and returns the counters."""

    def __init__(self, interval: float = 0.25) -> None:
        super().__init__(interval)
        self._own, self._kernel = CpuAccount(), CpuAccount()
        self._reaped = ReapedChildren()
        self._watched: dict[str, tuple[int, CpuAccount]] = {}
        """The trees counted apart, by role (``broker``, ``client``): root pid and its account."""
        self._lock = threading.Lock()

    def watch_broker(self, root: int | None) -> None:
        """Count the tree under ``root`` as the broker's from now on (None: no broker)."""
        self._watch("broker", root)

    def watch_client(self, root: int | None) -> None:
        """Count the tree under ``root`` as the load generator's from now on (None: none)."""
        self._watch("client", root)

    def _watch(self, role: str, root: int | None) -> None:
        with self._lock:
            if root is None:
                self._watched.pop(role, None)
            else:
                self._watched[role] = (root, CpuAccount())
        self._sample()

    def _seconds(self, role: str) -> float:
        watched = self._watched.get(role)
        return watched[1].seconds if watched else 0.0

    def _sample(self) -> None:
        table = process_table()
        own = descendants(table, [os.getpid()])
        kernel = {pid for pid, (parent, _) in table.items() if parent == KTHREADD or pid == KTHREADD}
        with self._lock:
            self._own.add(table, own)
            self._reaped.add(table)
            self._kernel.add(table, kernel - own)
            for root, account in self._watched.values():
                account.add(table, descendants(table, [root]))

    def read(self) -> Reading:
        self._sample()
        with self._lock:
            return Reading(time.monotonic(), load_1min(), busy_seconds(),
                           self._own.seconds + self._reaped.seconds,
                           self._kernel.seconds, self._seconds("broker"), self._seconds("client"))

