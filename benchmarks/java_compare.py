"""The reference broker side by side with Apache RocketMQ releases, back to back on one machine, in one table.

``python -m benchmarks.java_compare [--quick] [--targets embedded apache-4.9.7 apache-5.5.0] [--json]``
provisions each release (``rocketmq_spec.apache``: jars from Maven into the cache), and for each target in
turn:

- starts it on free loopback ports and times the start (launch to registered with its name server), then
  takes the resident memory of its processes (broker and name server);
- runs the same load against it: the project's ``Bench`` program on one client release
  (:data:`CLIENT`, whatever the target), compiled at run time against that release's jars. ``Bench`` sends
  128-byte messages synchronously with 4 and then 16 threads, then pulls them back with 4 and 16 threads
  (32 a request), timing every call; the first third of each phase is warm-up;
- reads the broker's CPU (its processes' user + system time, ``/proc``) over the counted part of each
  phase, per message.

Targets: sends and pulls of the reference broker >= 0.8x each Apache release's at 4 and 16 threads, p99
<= 2x theirs. On a shared machine the rates move with everyone else's load; CPU per message much less, so
the table gives both and says how loaded the machine was.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from benchmarks.broker_bench import rss_mib
from benchmarks.common import Result, cpu_seconds
from rocketmq_spec.apache import ProvisionError
from rocketmq_spec.apache.drivers import driver_command
from rocketmq_spec.targets import EMBEDDED, UnknownTarget, parse_target, servers, started

CLIENT = "4.9.7"
"""The client release every target is driven with: one load generator for all, so the comparison is fair
(the 4.x remoting protocol, which 5.x brokers serve too)."""
DEFAULT_TARGETS = (EMBEDDED, "apache-4.9.7", "apache-5.5.0")
THREADS = (4, 16)
SECONDS = {False: 18, True: 6}
"""Length of each phase (quick or not); a third of it is warm-up."""
MESSAGE_SIZE = 128
TOPIC = "SideBySide"
BENCH_TIMEOUT_MARGIN = 180.0
"""Seconds the load program may take beyond its phases (JVM start, client start, route lookups)."""


@dataclass(frozen=True)
class Phase:
    mode: str
    threads: int
    ops: int
    messages: int
    seconds: float
    p50_ms: float
    p99_ms: float
    failed: int
    cpu_us: float
    """Broker CPU per message over the counted part of the phase."""

    @property
    def rate(self) -> float:
        """Messages per second."""
        return self.messages / self.seconds if self.seconds else 0.0


@dataclass
class TargetRun:
    name: str
    startup_s: float
    rss_mib: float
    """Resident memory of the broker (and name server) once started, before any load."""
    rss_loaded_mib: float = 0.0
    phases: dict[str, Phase] = field(default_factory=dict)
    """Keyed ``send-4``, ``pull-16`` ..."""


@dataclass(frozen=True)
class _Launched:
    namesrv_addr: str
    pids: tuple[int, ...]


@contextlib.contextmanager
def _launched(name: str, workdir: Path) -> Iterator[_Launched]:
    """The target running, with the pids whose memory and CPU count (a release's name server too)."""
    if parse_target(name) is None:
        with started(name, workdir) as running:
            yield _Launched(running.namesrv_addr, (running.broker_pid,))
        return
    with servers(name, workdir) as cluster:  # a release of Apache RocketMQ or of rocketmq-rust
        pids = (cluster.broker_pid, *((cluster.namesrv_pid,) if cluster.namesrv_pid else ()))
        yield _Launched(cluster.namesrv_addr, pids)


def _cpu(pids: Sequence[int]) -> float:
    return sum(cpu_seconds(pid) for pid in pids)


def _parse_phase(line: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in line.split()[1:])


def measure(name: str, workdir: Path, seconds: int) -> TargetRun:
    """Start ``name``, load it with ``Bench`` and read what it cost; stopped again before returning."""
    launched_at = time.monotonic()
    with _launched(name, workdir / "target") as target:
        run = TargetRun(name, time.monotonic() - launched_at, sum(rss_mib(pid) for pid in target.pids))
        command = driver_command(CLIENT, "Bench", target.namesrv_addr, TOPIC, str(MESSAGE_SIZE), str(seconds),
                                 *map(str, THREADS), home=workdir / "client")
        phases = 2 * len(THREADS)
        with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as bench:
            assert bench.stdout is not None
            deadline = time.monotonic() + phases * seconds + BENCH_TIMEOUT_MARGIN
            tail: list[str] = []
            phase_start, cpu_start = time.monotonic(), _cpu(target.pids)
            warm = seconds / 3
            for line in bench.stdout:
                tail = [*tail[-20:], line]
                if not line.startswith("phase "):
                    continue
                cpu_end = _cpu(target.pids)
                fields = _parse_phase(line)
                counted = float(fields["seconds"])
                elapsed = time.monotonic() - phase_start
                # the broker's CPU over the whole phase, scaled to its counted part (after the warm-up)
                share = counted / elapsed if elapsed > warm else 1.0
                messages = int(fields["messages"])
                cpu_us = (cpu_end - cpu_start) * share / max(messages, 1) * 1e6
                phase = Phase(fields["mode"], int(fields["threads"]), int(fields["ops"]), messages, counted,
                              float(fields["p50_ms"]), float(fields["p99_ms"]), int(fields["failed"]), cpu_us)
                run.phases[f"{phase.mode}-{phase.threads}"] = phase
                print(f"  {name}: {phase.mode} x{phase.threads}: {phase.rate:,.0f} msg/s, "
                      f"p99 {phase.p99_ms:.2f} ms", file=sys.stderr, flush=True)
                phase_start, cpu_start = time.monotonic(), cpu_end
                if time.monotonic() > deadline:
                    break
            bench.kill()
        if len(run.phases) < phases:
            raise RuntimeError(f"Bench against {name} printed {len(run.phases)} of {phases} phases:\n"
                               + "".join(tail))
        run.rss_loaded_mib = sum(rss_mib(pid) for pid in target.pids)
    return run


# ---------------------------------------------------------------- the table

_ROWS: tuple[tuple[str, str, str, str], ...] = tuple(
    row for threads in THREADS for row in (
        (f"send msg/s, {threads} threads", f"send-{threads}", "rate", ">= 0.8x"),
        (f"send p99 ms, {threads} threads", f"send-{threads}", "p99_ms", "<= 2x"),
    )) + tuple(
    row for threads in THREADS for row in (
        (f"pull msg/s, {threads} threads", f"pull-{threads}", "rate", ">= 0.8x"),
        (f"pull p99 ms, {threads} threads", f"pull-{threads}", "p99_ms", "<= 2x"),
    )) + (
    ("broker CPU us/send, 16 threads", "send-16", "cpu_us", ""),
    ("broker CPU us/pulled msg, 16 threads", "pull-16", "cpu_us", ""),
)


def _value(run: TargetRun, key: str, attribute: str) -> float:
    return float(getattr(run.phases[key], attribute))


def _format(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:,.2f}"


def _ratio(ours: float, theirs: float, target: str) -> str:
    if not theirs:
        return ""
    ratio = ours / theirs
    met = {">= 0.8x": ratio >= 0.8, "<= 2x": ratio <= 2.0}.get(target)
    return f"{ratio:.2f}x" + ("" if met is None else " ✓" if met else " ✗")


def table(runs: Sequence[TargetRun], load: tuple[float, float, float]) -> str:
    """Markdown: a column per target, then the reference broker's ratio to each other target."""
    reference = next((run for run in runs if run.name == EMBEDDED), None)
    others = [run for run in runs if run is not reference]
    header = ["measure", *(run.name for run in runs), *(f"{EMBEDDED} / {run.name}" for run in others
                                                        if reference is not None)]
    lines = ["| " + " | ".join(header) + " |", "|---" + "|---:" * (len(header) - 1) + "|"]
    for label, key, attribute, target in _ROWS:
        cells = [_format(_value(run, key, attribute)) for run in runs]
        if reference is not None:
            ours = _value(reference, key, attribute)
            cells += [_ratio(ours, _value(run, key, attribute), target) for run in others]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    for label, attribute in (("startup s (launch to registered)", "startup_s"), ("RSS MiB, idle", "rss_mib"),
                             ("RSS MiB, after the load", "rss_loaded_mib")):
        cells = [_format(getattr(run, attribute)) for run in runs]
        if reference is not None:
            cells += [_ratio(getattr(reference, attribute), getattr(run, attribute), "") for run in others]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(f"Load average before the run: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} "
                 f"({os.cpu_count()} CPUs); client: Bench on Apache RocketMQ {CLIENT}'s client, "
                 f"{MESSAGE_SIZE}-byte messages; ✓/✗: the issue's target (sends and pulls >= 0.8x, "
                 "p99 <= 2x).")
    return "\n".join(lines)


def compare(targets: Sequence[str], quick: bool) -> tuple[list[TargetRun], tuple[float, float, float]]:
    load = os.getloadavg()
    runs = []
    with tempfile.TemporaryDirectory(prefix="rmq-side-by-side-") as work:
        for name in targets:
            print(f"measuring {name} ...", file=sys.stderr, flush=True)
            runs.append(measure(name, Path(work) / name, SECONDS[quick]))
    return runs, load


def run(quick: bool = False) -> list[Result]:
    """For ``benchmarks/run.py``: the reference broker's rates, each with its ratios in the note."""
    try:
        runs, _ = compare(DEFAULT_TARGETS, quick)
    except ProvisionError as exc:
        print(f"java_compare not measured: {exc}", file=sys.stderr)
        return []
    reference, others = runs[0], runs[1:]
    results = []
    for label, key, attribute, target in _ROWS[:8]:
        if attribute != "rate":
            continue
        ours = _value(reference, key, attribute)
        notes = [f"{run.name} {_format(_value(run, key, attribute))} "
                 f"({_ratio(ours, _value(run, key, attribute), target)})" for run in others]
        results.append(Result("side by side", label, ours, ours * MESSAGE_SIZE / 1e6, f"{target} Apache",
                               "; ".join(notes)))
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--version", action="version", version="rocketmq-spec java_compare 1")
    parser.add_argument("--quick", action="store_true", help=f"{SECONDS[True]} s phases instead of "
                        f"{SECONDS[False]} s")
    parser.add_argument("--targets", nargs="+", default=list(DEFAULT_TARGETS), metavar="NAME",
                        help=f"targets to compare (default: {' '.join(DEFAULT_TARGETS)})")
    parser.add_argument("--json", action="store_true", help="print the measurements as JSON")
    args = parser.parse_args(argv)
    for name in args.targets:
        try:
            parse_target(name)
        except UnknownTarget as exc:
            print(f"java_compare: {exc}", file=sys.stderr)
            return 2
    try:
        runs, load = compare(args.targets, args.quick)
    except ProvisionError as exc:
        print(f"java_compare: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"load_average": load, "client": CLIENT,
                          "targets": [asdict(run) for run in runs]}, indent=2))
    else:
        print(table(runs, load))
    return 0


if __name__ == "__main__":
    sys.exit(main())
