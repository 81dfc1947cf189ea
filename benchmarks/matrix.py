"""The benchmark matrix: every target × sends and pulls × 1, 4, 16 and 64 threads, in one command.

``python -m benchmarks.matrix [--quick] [--targets NAME ...] [--threads N ...] [--json FILE] [--publish]``

Targets by default: the reference broker (``embedded``), Apache RocketMQ 4.9.7 and 5.5.0, and every
rocketmq-rust release that is installed (``rmq-rust install VERSION``). Each is measured in turn by
:func:`benchmarks.java_compare.measure` (the same Java load generator for all; start time, memory, rates
as medians of per-second samples with their spread, p50/p99, broker CPU per message, and the machine's
load beside each figure).

Figures are published only from a quiet machine (:mod:`benchmarks.machine` defines quiet): a run that was
not prints a warning line above and below its table, and ``--publish`` then exits with status 3 and writes
nothing. ``--publish`` rewrites the matrix section of ``docs/benchmarks.md`` (between :data:`BEGIN` and
:data:`END`) and the raw samples in :data:`RAW`, with the command line, the date and the commit.
``--quick`` runs short phases for smoke runs, says so, and cannot be published.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from benchmarks.java_compare import (
    CLIENT,
    FULL,
    MESSAGE_SIZE,
    MODES,
    QUICK,
    THREADS,
    Phase,
    TargetRun,
    Timing,
    measure,
)
from benchmarks.machine import (
    QUIET_LOAD_PER_CORE,
    QUIET_OTHERS_PER_CORE,
    MachineWatch,
    cores,
    load_1min,
    settle,
)
from rocketmq_spec.apache import ProvisionError
from rocketmq_spec.rocketmq_rust.cargo import installed
from rocketmq_spec.rocketmq_rust.releases import RELEASES as RUST_RELEASES
from rocketmq_spec.targets import EMBEDDED, UnknownTarget, parse_target

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"
RAW = ROOT / "docs" / "benchmarks-matrix.json"
BEGIN = "<!-- benchmark matrix: written by python -m benchmarks.matrix --publish -->"
END = "<!-- end of the benchmark matrix -->"
SETTLE_SECONDS = 120.0
"""How long the run waits for the load average to fall below the quiet limit before it starts anyway."""
NOT_QUIET = 3


def default_targets() -> tuple[list[str], list[str]]:
    """The targets a run measures unless told, and the rocketmq-rust releases left out (not installed)."""
    rust = list(RUST_RELEASES.values())
    return ([EMBEDDED, "apache-4.9.7", "apache-5.5.0", *(row.target_name for row in rust if installed(row))],
            [row.target_name for row in rust if not installed(row)])


@dataclass
class MatrixRun:
    command: str
    commit: str
    timing: Timing
    threads: tuple[int, ...]
    started: str
    ended: str = ""
    load_before_run: float = 0.0
    runs: list[TargetRun] = field(default_factory=list)
    missing: dict[str, str] = field(default_factory=dict)
    """Targets asked for but not measured, with why."""
    left_out: list[str] = field(default_factory=list)
    """Default targets not installed here (rocketmq-rust releases), so not asked for."""


def commit() -> str:
    """The checkout's commit, ``-dirty`` when files it tracks were changed."""
    try:
        return subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty", "--abbrev=12"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def problems(matrix: MatrixRun) -> list[str]:
    """Why the run's figures may not be published (none: they may)."""
    found = []
    if not matrix.timing.publishable:
        found.append(f"{matrix.timing.warmup} s warm-up + {matrix.timing.seconds} s phases (--quick): "
                     f"a publishable run has >= {FULL.warmup} + {FULL.seconds} s")
    limit = QUIET_LOAD_PER_CORE * cores()
    if matrix.load_before_run >= limit:
        found.append(f"load average {matrix.load_before_run:.2f} before the run (quiet: < {limit:.2f})")
    busy = QUIET_OTHERS_PER_CORE * cores()
    found += [f"{run.name} {phase.key}: other processes used "
              f"{max(phase.others_warmup, phase.others_during):.2f} cores (quiet: < {busy:.2f})"
              for run in matrix.runs for phase in run.phases.values() if not phase.quiet]
    found += [f"{name} not measured: {why}" for name, why in matrix.missing.items()]
    return found


# ---------------------------------------------------------------- the tables


def _number(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:,.2f}"


def _ratio(ours: float | None, theirs: float | None) -> str:
    return f"{ours / theirs:.2f}x" if ours is not None and theirs else ""


def _row(label: str, values: Sequence[float | None], reference: float | None, others: Sequence[float | None],
         beside: Sequence[str] = ()) -> str:
    cells = [(_number(value) if value is not None else "n/a") + (f" ({note})" if note else "")
             for value, note in zip(values, beside or [""] * len(values), strict=True)]
    cells += [_ratio(reference, other) for other in others]
    return f"| {label} | " + " | ".join(cells) + " |"


def _load(phase: Phase) -> str:
    return f"load {phase.load_before:.2f} → {phase.load_during:.2f}"


def comparison(runs: Sequence[TargetRun], threads: Sequence[int]) -> str:
    """A column per target, then the reference broker's ratio to each other target."""
    reference = next((run for run in runs if run.name == EMBEDDED), None)
    others = [run for run in runs if run is not reference] if reference else []
    header = ["measure", *(run.name for run in runs), *(f"{EMBEDDED} / {run.name}" for run in others)]
    lines = ["| " + " | ".join(header) + " |", "|---" + "|---:" * (len(header) - 1) + "|"]
    for mode in MODES:
        for count in threads:
            key, count_label = f"{mode}-{count}", f"{count} thread{'s' if count > 1 else ''}"
            for label, attribute in ((f"{mode} msg/s, {count_label} (median)", "rate"),
                                     (f"{mode} p99 ms, {count_label}", "p99_ms"),
                                     (f"{mode} broker CPU us/msg, {count_label}", "cpu_us"),
                                     (f"{mode} client CPU us/msg, {count_label}", "client_cpu_us")):
                values = [getattr(run.phases[key], attribute) for run in runs]
                ours = getattr(reference.phases[key], attribute) if reference else None
                theirs = [getattr(run.phases[key], attribute) for run in others]
                beside = [_load(run.phases[key]) for run in runs] if attribute == "rate" else []
                lines.append(_row(label, values, ours, theirs, beside))
    for label, attribute in (("broker start s (process start to port answering)", "start_s"),
                             ("broker memory MiB (PSS of its tree), idle", "memory_mib"),
                             ("broker memory MiB (PSS of its tree), after the load", "memory_loaded_mib")):
        values = [getattr(run, attribute) for run in runs]
        ours = getattr(reference, attribute) if reference else None
        lines.append(_row(label, values, ours, [getattr(run, attribute) for run in others]))
    return "\n".join(lines)


def phases_table(runs: Sequence[TargetRun]) -> str:
    """Every phase's figures with the machine's state beside them."""
    lines = ["| target | phase | msg/s (median) | p10–p90 | p50 ms | p99 ms | broker CPU us/msg "
             "| client CPU us/msg | failed calls | load before → during | others' cores, warm-up / counted |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for run in runs:
        for phase in run.phases.values():
            low, high = phase.spread
            lines.append(f"| {run.name} | {phase.mode} x{phase.threads} | {phase.rate:,.0f} "
                         f"| {low:,.0f}–{high:,.0f} | {phase.p50_ms:.2f} | {phase.p99_ms:.2f} "
                         f"| {_number(phase.cpu_us)} | {_number(phase.client_cpu_us)} | {phase.failed} "
                         f"| {phase.load_before:.2f} → {phase.load_during:.2f} "
                         f"| {phase.others_warmup:.2f} / {phase.others_during:.2f} |")
    return "\n".join(lines)


def report(matrix: MatrixRun) -> str:
    """The Markdown section: how it was measured, the comparison, every phase."""
    timing = matrix.timing
    head = (f"`{matrix.command}`, {matrix.started} to {matrix.ended} (UTC), commit `{matrix.commit}`, "
            f"{cores()} cores. Load average (1 min) {matrix.load_before_run:.2f} before the run. Every "
            f"target driven by `Bench` on Apache RocketMQ {CLIENT}'s client: synchronous "
            f"{MESSAGE_SIZE}-byte sends, then pulls of 32; each phase {timing.warmup} s of warm-up, then "
            f"{timing.seconds} s counted; a "
            "rate is the median of the counted seconds' rates (their 10th–90th percentiles in the phase "
            "table), p50/p99 over every counted call, broker CPU and memory those of the broker's process "
            "tree, its memory the PSS (resident pages, shared ones split among their sharers), client CPU "
            "that of `Bench`'s JVM, which shares the machine's cores with the broker. The 1-minute "
            "load at each phase's start and its highest during the counted seconds stand beside each rate, "
            "and with the cores other processes used beside every figure in the phase table.")
    others = max((max(phase.others_warmup, phase.others_during) for run in matrix.runs
                  for phase in run.phases.values()), default=0.0)
    head += (f" The machine: load {matrix.load_before_run:.2f} before the run (quiet below "
             f"{QUIET_LOAD_PER_CORE * cores():.2f}), other processes at most {others:.2f} cores in any phase "
             f"(quiet below {QUIET_OTHERS_PER_CORE * cores():.2f}).")
    parts = [head, "", comparison(matrix.runs, matrix.threads), "", phases_table(matrix.runs)]
    if matrix.left_out:
        parts += ["", "Left out, not installed here: " + ", ".join(matrix.left_out)
                  + " (`rmq-rust install VERSION` installs a release)."]
    if matrix.missing:
        parts += ["", "Not measured: " + "; ".join(f"{name} ({why})" for name, why in matrix.missing.items())]
    return "\n".join(parts)


def payload(matrix: MatrixRun) -> str:
    """The run as JSON: every measurement (per-second samples included), and each phase's figures."""
    figures = {run.name: {key: {"rate": phase.rate, "p10": phase.spread[0], "p90": phase.spread[1],
                                "cpu_us": phase.cpu_us, "client_cpu_us": phase.client_cpu_us,
                                "quiet": phase.quiet}
                          for key, phase in run.phases.items()} for run in matrix.runs}
    return json.dumps({**dataclasses.asdict(matrix), "figures": figures}, indent=1) + "\n"


def write_section(doc: Path, section: str, begin: str = BEGIN, end: str = END) -> None:
    """Replace what lies between ``begin`` and ``end`` (default :data:`BEGIN` and :data:`END`) in ``doc``."""
    text = doc.read_text()
    before, found, rest = text.partition(begin)
    _, found_end, after = rest.partition(end)
    if not found or not found_end:
        raise SystemExit(f"{doc}: the markers {begin!r} and {end!r} are missing")
    doc.write_text(f"{before}{begin}\n{section}\n{end}{after}")


# ---------------------------------------------------------------- the command


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def run_matrix(targets: Sequence[str], timing: Timing, threads: Sequence[int], command: str) -> MatrixRun:
    """Measure ``targets`` one after the other; a publishable run first waits for the machine to settle."""
    now = datetime.now(UTC)
    matrix = MatrixRun(command, commit(), timing, tuple(threads), now.strftime("%Y-%m-%d %H:%M"))
    matrix.load_before_run = (settle(QUIET_LOAD_PER_CORE * cores(), SETTLE_SECONDS) if timing.publishable
                              else load_1min())
    with tempfile.TemporaryDirectory(prefix="rmq-matrix-") as work, MachineWatch() as watch:
        for name in targets:
            print(f"measuring {name} ...", file=sys.stderr, flush=True)
            try:
                matrix.runs.append(measure(name, Path(work) / name, timing, watch, threads))
            except (ProvisionError, RuntimeError) as exc:
                matrix.missing[name] = str(exc).splitlines()[0]
                print(f"{name} not measured: {exc}", file=sys.stderr, flush=True)
            finally:  # a target's store holds a few GB after its sends
                shutil.rmtree(Path(work) / name, ignore_errors=True)
    matrix.ended = datetime.now(UTC).strftime("%H:%M")
    return matrix


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"{QUICK.warmup} s warm-up + {QUICK.seconds} s phases, for smoke runs (not for "
                             "publication)")
    parser.add_argument("--targets", nargs="+", metavar="NAME",
                        help="targets to measure (default: embedded apache-4.9.7 apache-5.5.0 and every "
                             "installed rocketmq-rust release)")
    parser.add_argument("--threads", nargs="+", type=int, default=list(THREADS), metavar="N",
                        help="producer and consumer thread counts (default: 1 4 16 64)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the measurements as JSON")
    parser.add_argument("--publish", action="store_true",
                        help=f"write the tables into {_shown(DOC)} (refused unless quiet)")
    args = parser.parse_args(argv)
    if args.quick and args.publish:
        parser.error("--quick runs are not for publication")
    targets, left_out = (args.targets, []) if args.targets else default_targets()
    for name in targets:
        try:
            parse_target(name)
        except UnknownTarget as exc:
            print(f"matrix: {exc}", file=sys.stderr)
            return 2
    command = shlex.join(["python", "-m", "benchmarks.matrix", *(argv if argv is not None else sys.argv[1:])])
    matrix = run_matrix(targets, QUICK if args.quick else FULL, args.threads, command)
    matrix.left_out = left_out
    if not matrix.runs:
        print("matrix: no target measured", file=sys.stderr)
        return 1
    found = problems(matrix)
    warning = "WARNING: NOT FOR PUBLICATION: " + "; ".join(found)
    if args.quick:
        print("QUICK RUN: not for publication")
    if found:
        print(warning)
        print(warning, file=sys.stderr)
    print(report(matrix))
    if found:
        print(warning)
    if args.json:
        args.json.write_text(payload(matrix))
    if args.publish:
        if found:
            print(f"matrix: refusing to publish; {_shown(DOC)} left as it was", file=sys.stderr)
            return NOT_QUIET
        write_section(DOC, report(matrix))
        RAW.write_text(payload(matrix))
        print(f"matrix: wrote {_shown(DOC)} and {_shown(RAW)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
