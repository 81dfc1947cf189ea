"""``python -m benchmarks.soak``: run the soak scenarios against a broker and print the table.

Against any running broker: ``--broker HOST:PORT`` (and ``--pid`` for RSS and CPU figures). To include
kill -9 cycles the harness must be able to start the broker again: ``--target embedded`` (or
``--reference``) starts the reference broker itself (on free ports unless given), ``--target
apache-VERSION`` a provisioned release of Apache RocketMQ, ``--start CMD --pid-command CMD [--stop CMD]
[--store DIR]`` any broker in the background. ``--quick`` is the short form the default test run uses.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import socket
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path

from benchmarks.soak import crash, hostile, load, wire
from benchmarks.soak.report import Row, as_json, table
from benchmarks.soak.target import (
    CommandLauncher,
    Launcher,
    Target,
    command_launcher,
    raise_fd_limit,
    reference_launcher,
    release_launcher,
    tracebacks,
)
from rocketmq_spec.targets import EMBEDDED, UnknownTarget, parse_target, target_names

SCENARIOS = ("connections", "pulls", "storm", "partial", "kill")
TOPIC = "SoakTopic"
FD_HEADROOM = 1_000


@dataclass
class Sizes:
    connections: int
    pulls: int
    storm_connections: int
    storm_frames: int
    storm_batches: int
    storm_runs: int
    partial_rounds: int
    partial_per_round: int
    partial_mib: float
    kill_cycles: int
    load_seconds: float
    settle: float
    """Seconds the target gets before each RSS reading (and for parked pulls to arrive)."""
    queues: int = 8


FULL = Sizes(connections=10_000, pulls=10_000, storm_connections=50_000, storm_frames=20, storm_batches=100,
             storm_runs=1,
             partial_rounds=12, partial_per_round=16, partial_mib=8.0, kill_cycles=50, load_seconds=1.5,
             settle=3.0)
"""The issue's targets: 10,000 connections and parked pulls, a million malformed frames, 50 kill -9s. After
the storms (``--storm-runs`` of them) a broker the harness runs must have logged no traceback."""
QUICK = Sizes(connections=300, pulls=300, storm_connections=200, storm_frames=20, storm_batches=4,
              storm_runs=1, partial_rounds=2, partial_per_round=4, partial_mib=1.0, kill_cycles=2,
              load_seconds=0.5, settle=0.5)


def _free_port_pair() -> int:
    """A free port P whose P - 2 is free too (the reference broker's fast port)."""
    for _ in range(100):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        try:
            with socket.socket() as low, socket.socket() as main:
                low.bind(("127.0.0.1", port - 2))
                main.bind(("127.0.0.1", port))
            return port
        except OSError:
            continue
    raise RuntimeError("no free port pair")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.soak", description=__doc__.partition("\n")[0])
    where = parser.add_argument_group("target")
    where.add_argument("--broker", help="address of a running broker (HOST:PORT)")
    where.add_argument("--pid", type=int, help="its pid, for RSS and CPU figures")
    where.add_argument("--target", metavar="NAME", help=f"start this target (SYNC_FLUSH): "
                       f"{', '.join(target_names())}")
    where.add_argument("--reference", action="store_true", help="start the reference broker (SYNC_FLUSH)")
    where.add_argument("--namesrv-port", type=int, default=0, help="with --reference (0: free)")
    where.add_argument("--broker-port", type=int, default=0, help="with --reference (0: free)")
    where.add_argument("--start", help="shell command starting the broker in the background (kill cycles)")
    where.add_argument("--pid-command", help="shell command printing the started broker's pid")
    where.add_argument("--stop", help="shell command stopping it cleanly (default SIGTERM)")
    where.add_argument("--store", type=Path, help="its store directory, checked offline after each cycle")
    parser.add_argument("--quick", action="store_true", help="the short form (CI)")
    parser.add_argument("--only", nargs="*", choices=SCENARIOS, default=list(SCENARIOS))
    parser.add_argument("--title", default="soak")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON")
    for size in fields(Sizes):
        parser.add_argument(f"--{size.name.replace('_', '-')}", type=type(getattr(FULL, size.name)))
    return parser


def _sizes(args: argparse.Namespace) -> Sizes:
    base = QUICK if args.quick else FULL
    given = {f.name: getattr(args, f.name) for f in fields(Sizes)}
    return Sizes(**{name: getattr(base, name) if value is None else value for name, value in given.items()})


async def _scenarios(target: Target, sizes: Sizes, only: Sequence[str]) -> list[Row]:
    rows: list[Row] = []
    await wire.create_topic(target.broker, TOPIC, sizes.queues)
    steps = {
        "connections": lambda: load.connections(target, sizes.connections, TOPIC),
        "pulls": lambda: load.parked_pulls(target, sizes.pulls, TOPIC, sizes.queues),
        "storm": lambda: _storms(target, sizes),
        "partial": lambda: hostile.partial_frames(target, sizes.partial_rounds, sizes.partial_per_round,
                                                  int(sizes.partial_mib * 2**20)),
    }
    for name in (n for n in SCENARIOS if n in only and n in steps):
        print(f"running {name} ...", file=sys.stderr, flush=True)
        rows += await steps[name]()
    return rows


async def _storms(target: Target, sizes: Sizes) -> list[Row]:
    """``storm_runs`` storms; then, when the harness runs the broker, the tracebacks in its log."""
    rows: list[Row] = []
    for _ in range(sizes.storm_runs):
        rows += await hostile.storm(target, sizes.storm_connections, sizes.storm_frames, sizes.storm_batches,
                                    TOPIC)
    log = target.launcher.log if isinstance(target.launcher, CommandLauncher) else None
    if log is not None:
        found = tracebacks(log)
        rows.append(Row("malformed storm", f"{found} tracebacks in the broker's log after {sizes.storm_runs} "
                        "storm(s)", found == 0, "0 tracebacks"))
    return rows


def _launcher(args: argparse.Namespace, scratch: Path, stack: contextlib.ExitStack) -> Launcher | None:
    if args.target is not None and parse_target(args.target) is not None:
        return stack.enter_context(release_launcher(args.target, scratch / "apache", sync_flush=True))
    if args.reference or args.target == EMBEDDED:
        broker_port = args.broker_port or _free_port_pair()
        namesrv_port = args.namesrv_port or _free_port_pair()
        return reference_launcher(args.store or scratch / "store", namesrv_port, broker_port, sync_flush=True)
    if args.start:
        if not (args.broker and args.pid_command):
            raise SystemExit("--start needs --broker and --pid-command")
        return command_launcher(args.broker, args.store, args.start, args.pid_command, args.stop)
    return None


def run(args: argparse.Namespace) -> list[Row]:
    sizes = _sizes(args)
    raise_fd_limit(2 * max(sizes.connections, sizes.pulls // load.PULLS_PER_CONNECTION) + FD_HEADROOM)
    with tempfile.TemporaryDirectory(prefix="rmq-soak-") as scratch, contextlib.ExitStack() as stack:
        launcher = _launcher(args, Path(scratch), stack)
        rows: list[Row] = []
        wanted = [n for n in args.only if n != "kill"]
        if wanted:
            if launcher is not None:
                target = launcher.start()
                target.settle = sizes.settle
                try:
                    rows += asyncio.run(_scenarios(target, sizes, wanted))
                finally:
                    launcher.stop(target)
            elif args.broker:
                target = Target(args.broker, args.pid, args.store, settle=sizes.settle)
                rows += asyncio.run(_scenarios(target, sizes, wanted))
            else:
                raise SystemExit("give --broker, --reference or --start")
        if "kill" in args.only:
            if launcher is None:
                rows.append(Row("kill -9 cycles", "skipped: the harness cannot start the target", None))
            else:
                print("running kill -9 cycles ...", file=sys.stderr, flush=True)
                rows += asyncio.run(crash.kill_cycles(launcher, sizes.kill_cycles, f"{TOPIC}Crash",
                                                      sizes.queues, sizes.load_seconds))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.target is not None:
        try:
            parse_target(args.target)
        except UnknownTarget as exc:
            raise SystemExit(f"python -m benchmarks.soak: {exc}") from None
    rows = run(args)
    print(table(rows, args.title))
    if args.json is not None:
        args.json.write_text(as_json(rows, args.title), encoding="utf-8")
    return 0 if all(r.passed is not False for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
