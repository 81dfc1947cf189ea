"""Two or more builds of the reference broker side by side, interleaved, under the same Java load.

``python -m benchmarks.builds --build NAME=CHECKOUT --build NAME=CHECKOUT [--rounds N] [--quick]
[--threads N ...]``

A change to the broker is judged against the build it changes in one run: each round measures every build
(its checkout on ``PYTHONPATH``, so each must have its extensions built with
``python setup.py build_ext --inplace``), in turn, the order reversed every other round, so that a machine
whose load drifts during the run weighs on each build alike. Each measurement is the matrix's
(:func:`benchmarks.java_compare.measure`: warm-up, counted seconds, median of the per-second rates, p99,
broker CPU per message, the load and the other processes' cores beside each phase). The summary gives, per
phase, each build's median over the rounds and its ratio to the first build, and says when a phase was not
quiet (:mod:`benchmarks.machine`): such ratios are indicative only and never published.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from benchmarks.java_compare import FULL, QUICK, THREADS, Phase, measure
from benchmarks.machine import MachineWatch
from rocketmq_spec.targets import EMBEDDED


def _build(text: str) -> tuple[str, Path]:
    name, sep, checkout = text.partition("=")
    if not sep or not name or not Path(checkout, "rocketmq_spec").is_dir():
        raise argparse.ArgumentTypeError(
            f"expected NAME=CHECKOUT (a directory holding rocketmq_spec), got {text!r}")
    return name, Path(checkout).resolve()


def _line(name: str, phase: Phase) -> str:
    return (f"{name} {phase.key}: {phase.rate:,.0f} msg/s, p99 {phase.p99_ms:.2f} ms, broker CPU "
            f"{phase.cpu_us:.1f} us/msg, load {phase.load_before:.2f} -> {phase.load_during:.2f}, others "
            f"{phase.others_during:.2f} cores{'' if phase.quiet else ' (NOT QUIET)'}")


def summary(phases: dict[str, dict[str, list[Phase]]], names: Sequence[str]) -> list[str]:
    """Per phase: each build's median rate, p99 and CPU per message over the rounds, and its ratio to the
    first build's median rate."""
    lines = []
    for key, by_build in phases.items():
        base = statistics.median(phase.rate for phase in by_build[names[0]])
        quiet = all(phase.quiet for runs in by_build.values() for phase in runs)
        cells = []
        for name in names:
            runs = by_build.get(name, [])
            if not runs:
                continue
            rate = statistics.median(phase.rate for phase in runs)
            cells.append(f"{name} {rate:,.0f}/s ({rate / base if base else 0.0:.2f}x), p99 "
                         f"{statistics.median(phase.p99_ms for phase in runs):.2f} ms, "
                         f"{statistics.median(phase.cpu_us for phase in runs):.1f} us/msg")
        lines.append(f"{key}: {'; '.join(cells)}{'' if quiet else '  [not quiet: indicative only]'}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--build", dest="builds", type=_build, action="append", required=True,
                        metavar="NAME=CHECKOUT",
                        help="a build to measure (give two or more; the first is the base)")
    parser.add_argument("--rounds", type=int, default=2,
                        help="rounds, each measuring every build (default 2)")
    parser.add_argument("--quick", action="store_true", help="2 s warm-up + 5 s phases, for smoke runs")
    parser.add_argument("--threads", type=int, nargs="+", default=list(THREADS), metavar="N")
    args = parser.parse_args(argv)
    if len(args.builds) < 2:
        parser.error("give at least two --build")
    timing = QUICK if args.quick else FULL
    names = [name for name, _ in args.builds]
    phases: dict[str, dict[str, list[Phase]]] = {}
    with tempfile.TemporaryDirectory(prefix="rmq-builds-") as work, MachineWatch() as watch:
        for round_number in range(args.rounds):
            order = args.builds if round_number % 2 == 0 else args.builds[::-1]
            for name, checkout in order:
                os.environ["PYTHONPATH"] = str(checkout)  # the broker's process imports this build
                workdir = Path(work) / f"{name}-{round_number}"
                try:
                    run = measure(EMBEDDED, workdir, timing, watch, args.threads)
                finally:
                    shutil.rmtree(workdir, ignore_errors=True)
                print(f"round {round_number + 1}, {name}: start {run.start_s} s, idle memory "
                      f"{run.memory_mib:.1f} MiB", flush=True)
                for key, phase in run.phases.items():
                    phases.setdefault(key, {}).setdefault(name, []).append(phase)
                    print("  " + _line(name, phase), flush=True)
    print(f"\nmedians over {args.rounds} rounds, ratios to {names[0]}:")
    print("\n".join(summary(phases, names)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
