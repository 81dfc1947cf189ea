"""One target of the benchmark matrix, driven by the same Java program as every other.

Each target is started on free loopback ports (``rocketmq_spec.targets.servers``), its broker's start timed
(:mod:`benchmarks.startup`) and its memory taken, then loaded by the project's ``Bench`` program on one
client release (:data:`CLIENT`, whatever the target; compiled at run time against that release's jars):
128-byte synchronous sends with each thread count of :data:`THREADS`, then pulls of 32 with each. Every
phase runs a warm-up that is not counted (the JIT compiles the client's and a Java broker's paths, pools
fill), then a counted part, and ``Bench`` prints what it completed in each counted second. While it runs,
a :class:`benchmarks.machine.MachineWatch` reads the broker's and the client's CPU (their process trees',
from ``/proc``), the load average and the other processes' CPU at each of those seconds, so each figure is
taken over exactly the counted window:

- the rate is the median of the per-second rates, with their 10th and 90th percentiles as the spread;
- p50 and p99 are over every counted call (``Bench`` times each);
- broker CPU per message is the broker tree's CPU over the counted seconds over the messages in them, and
  client CPU per message the same of ``Bench``'s JVM, which shares the cores with the broker;
- the 1-minute load average at the phase's start and the highest during its counted seconds, and the
  other processes' CPU during its warm-up and its counted part, stand beside the figures.

The command that runs the matrix and publishes it is :mod:`benchmarks.matrix`.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.machine import QUIET_OTHERS_PER_CORE, MachineWatch, Reading, cores, tree_memory_mib
from benchmarks.startup import StartWatch
from rocketmq_spec.apache.drivers import driver_command
from rocketmq_spec.targets import servers

CLIENT = "4.9.7"
"""The client release every target is driven with: one load generator for all, so the comparison is fair
(the 4.x remoting protocol, which 5.x brokers and rocketmq-rust serve too)."""
THREADS = (1, 4, 16, 64)
MODES = ("send", "pull")
MESSAGE_SIZE = 128
TOPIC = "SideBySide"
BENCH_TIMEOUT_MARGIN = 180.0
"""Seconds the load program may take beyond its phases (JVM start, client start, route lookups)."""


@dataclass(frozen=True)
class Timing:
    """Seconds of each phase's warm-up and of its counted part."""

    warmup: int
    seconds: int

    @property
    def publishable(self) -> bool:
        return self.seconds >= FULL.seconds and self.warmup >= FULL.warmup


FULL = Timing(warmup=10, seconds=30)
QUICK = Timing(warmup=2, seconds=5)
"""Smoke runs only: too short for a JVM's JIT, never published (``--quick``)."""


@dataclass(frozen=True)
class Phase:
    mode: str
    threads: int
    samples: tuple[int, ...]
    """Messages completed in each counted second."""
    p50_ms: float
    p99_ms: float
    failed: int
    broker_cpu_s: float
    """The broker tree's CPU over the counted seconds."""
    client_cpu_s: float
    """The load generator's (``Bench``'s JVM) CPU over the counted seconds: on a machine whose cores the
    broker and the client share, what the client spends per message decides the rate as much as the
    broker's."""
    load_before: float
    """1-minute load average when the phase (its warm-up) started."""
    load_during: float
    """The highest 1-minute load average read at the end of a counted second."""
    others_warmup: float
    others_during: float
    """Cores kept busy by processes outside the benchmark, over the warm-up and over the counted part."""

    @property
    def key(self) -> str:
        return f"{self.mode}-{self.threads}"

    @property
    def rate(self) -> float:
        """Messages per second: the median of the per-second samples."""
        return float(statistics.median(self.samples)) if self.samples else 0.0

    @property
    def spread(self) -> tuple[float, float]:
        """The 10th and 90th percentiles of the per-second samples."""
        if len(self.samples) < 2:
            return (self.rate, self.rate)
        deciles = statistics.quantiles(self.samples, n=10, method="inclusive")
        return (deciles[0], deciles[-1])

    @property
    def cpu_us(self) -> float:
        """Broker CPU per message over the counted seconds."""
        return self.broker_cpu_s / max(sum(self.samples), 1) * 1e6

    @property
    def client_cpu_us(self) -> float:
        """The load generator's CPU per message over the counted seconds."""
        return self.client_cpu_s / max(sum(self.samples), 1) * 1e6

    @property
    def quiet(self) -> bool:
        return max(self.others_warmup, self.others_during) < QUIET_OTHERS_PER_CORE * cores()


@dataclass
class TargetRun:
    name: str
    start_s: float | None
    """Broker process start to its port answering a request (None: the watch never saw it answer)."""
    memory_mib: float
    """The broker tree's memory (PSS) once started, before any load."""
    memory_loaded_mib: float = 0.0
    phases: dict[str, Phase] = field(default_factory=dict)
    """Keyed ``send-4``, ``pull-16`` ..."""


class BenchFailed(RuntimeError):
    """``Bench`` ended without printing every phase."""

    def __init__(self, target: str, expected: int, seen: int, tail: Sequence[str]) -> None:
        super().__init__(f"Bench against {target} printed {seen} of {expected} phases:\n" + "".join(tail))
        self.expected, self.seen = expected, seen


def parse_line(line: str) -> tuple[str, dict[str, str]]:
    """A ``Bench`` line's kind (``warmup``, ``measure``, ``sample``, ``phase``) and its fields."""
    kind, *parts = line.split()
    return kind, dict(part.split("=", 1) for part in parts if "=" in part)


class _PhaseReader:
    """Turns ``Bench``'s lines into phases, reading the machine at each line that starts or ends a second."""

    def __init__(self, watch: MachineWatch) -> None:
        self.watch = watch
        self.phases: list[Phase] = []
        self._warm: Reading | None = None
        self._counted: Reading | None = None
        self._seconds: list[Reading] = []
        self._samples: list[int] = []

    def feed(self, line: str) -> Phase | None:
        kind, fields = parse_line(line) if line.strip() else ("", {})
        if kind == "warmup":
            self._warm, self._counted, self._seconds, self._samples = self.watch.read(), None, [], []
        elif kind == "measure":
            self._counted = self.watch.read()
        elif kind == "sample":
            self._seconds.append(self.watch.read())
            self._samples.append(int(fields["messages"]))
        elif kind == "phase" and self._warm and self._counted and self._seconds:
            last = self._seconds[-1]
            phase = Phase(fields["mode"], int(fields["threads"]), tuple(self._samples),
                          float(fields["p50_ms"]), float(fields["p99_ms"]), int(fields["failed"]),
                          last.broker_s - self._counted.broker_s, last.client_s - self._counted.client_s,
                          self._warm.load_1min,
                          max(reading.load_1min for reading in self._seconds),
                          self._counted.others_cores(self._warm), last.others_cores(self._counted))
            self.phases.append(phase)
            return phase
        return None


def measure(name: str, workdir: Path, timing: Timing, watch: MachineWatch,
            threads: Sequence[int] = THREADS) -> TargetRun:
    """Start ``name``, load it with ``Bench`` and read what it cost; stopped again before returning."""
    cluster = servers(name, workdir / "target")
    with StartWatch(cluster) as start:
        cluster.start()
    try:
        watch.watch_broker(cluster.broker_pid)
        run = TargetRun(name, start.seconds, tree_memory_mib(cluster.broker_pid))
        command = driver_command(CLIENT, "Bench", cluster.namesrv_addr, TOPIC, str(MESSAGE_SIZE),
                                 str(timing.warmup), str(timing.seconds), *map(str, threads),
                                 home=workdir / "client")
        expected = len(MODES) * len(threads)
        reader = _PhaseReader(watch)
        tail: list[str] = []
        with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as bench:
            assert bench.stdout is not None
            watch.watch_client(bench.pid)
            limit = expected * (timing.warmup + timing.seconds) + BENCH_TIMEOUT_MARGIN
            watchdog = threading.Timer(limit, bench.kill)
            watchdog.start()
            try:
                for line in bench.stdout:
                    tail = [*tail[-20:], line]
                    phase = reader.feed(line)
                    if phase is not None:
                        run.phases[phase.key] = phase
                        low, high = phase.spread
                        print(f"  {name}: {phase.mode} x{phase.threads}: {phase.rate:,.0f} msg/s "
                              f"(p10-p90 {low:,.0f}-{high:,.0f}), p99 {phase.p99_ms:.2f} ms, "
                              f"CPU/msg broker {phase.cpu_us:.1f} us, client {phase.client_cpu_us:.1f} us, "
                              f"load {phase.load_before:.2f} -> {phase.load_during:.2f}, others "
                              f"{phase.others_during:.2f} cores", file=sys.stderr, flush=True)
            finally:
                watchdog.cancel()
                bench.kill()
                watch.watch_client(None)
        if len(run.phases) < expected:
            raise BenchFailed(name, expected, len(run.phases), tail)
        run.memory_loaded_mib = tree_memory_mib(cluster.broker_pid)
    finally:
        watch.watch_broker(None)
        cluster.stop()
    return run
