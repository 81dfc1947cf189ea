"""``rmq-fuzz``: fuzz a name server and broker on loopback, or replay saved regression cases.

``--grpc [HOST:PORT]`` fuzzes a gRPC proxy instead (``rocketmq_spec.fuzz.grpc_live``): a running one, or the
target's.

The target is one the fuzzer starts and stops (``--target embedded|apache-VERSION``, its broker's pid watched
for memory) or a running one (``--namesrv``/``--broker``, ``--pid``). Bounded by ``--seconds`` and
``--max-frames``; progress goes to stderr once a second, the summary to stdout and to ``OUT/summary.json``.
Findings are written to ``OUT/regressions`` in the format of ``rocketmq_spec.conformance.regression``; copy
the ones worth keeping into ``rocketmq_spec/conformance/regressions``.

The target's profile (chosen as ``rmq-conformance`` chooses it: by the version its answers carry, unless
``--profile NAME|none``) cites its known defects: a finding with such a cause goes to
``OUT/regressions/known`` with the citation, is counted as known and does not fail the run
(``rocketmq_spec.fuzz.known``). """

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from rocketmq_spec.apache import ProvisionError
from rocketmq_spec.codec.acl import Credentials
from rocketmq_spec.conformance.profile import Choice, ProfileError, Request, choose
from rocketmq_spec.conformance.regression import REGRESSIONS_DIR, FindingClass, Listener, load_cases
from rocketmq_spec.fuzz import grpc_live
from rocketmq_spec.fuzz.corpus import SeedFrame, load_seeds
from rocketmq_spec.fuzz.grpc_live import GrpcTarget
from rocketmq_spec.fuzz.ha_live import HAFuzzer
from rocketmq_spec.fuzz.known import UnknownCause, matcher
from rocketmq_spec.fuzz.live import FuzzConfig, LiveFuzzer, Summary
from rocketmq_spec.fuzz.memory import MemoryRule, jvm_heap_bytes, process_cmdline
from rocketmq_spec.fuzz.replay import replay
from rocketmq_spec.fuzz.target import Health, Target
from rocketmq_spec.fuzz.wire import parse_loopback
from rocketmq_spec.spec.cli import BadInput, Parser, add_version, fail
from rocketmq_spec.spec.errors import RocketMQSpecError
from rocketmq_spec.spec.golden import golden_dir
from rocketmq_spec.targets import UnknownTarget, parse_target, started, target_names

PROG = "rmq-fuzz"
TARGET_PROXY = "target"
"""``--grpc`` without an address: the gRPC proxy of the ``--target`` the fuzzer starts."""

PROGRESS_INTERVAL = 1.0
MIB = 1024 * 1024
MAX_SECONDS = 24 * 3600
"""A run is always bounded; a day is the longest that makes sense unattended."""


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog=PROG, description=__doc__.splitlines()[0])
    add_version(parser)
    parser.add_argument("--target", metavar="NAME",
                        help=f"start and stop this target: {', '.join(target_names())}")
    parser.add_argument("--namesrv", help="a running name server HOST:PORT (loopback only)")
    parser.add_argument("--broker", help="a running broker HOST:PORT (loopback only)")
    parser.add_argument("--profile", metavar="NAME|FILE",
                        help="the target's profile of known defects (default: chosen by the version it "
                             "announces; 'none' for none)")
    parser.add_argument("--seconds", type=float, default=60.0, help="time limit (default 60)")
    parser.add_argument("--out", type=Path, default=Path("fuzz-out"), help="findings and summary go here")
    parser.add_argument("--max-frames", type=int, default=1_000_000, help="frame limit (default 1000000)")
    parser.add_argument("--batch-size", type=int, default=16, help="frames between liveness checks")
    parser.add_argument("--seed", type=int, default=0, help="random seed; a seed reproduces a run")
    parser.add_argument("--access-key", help="sign broker frames (ACL 1.0) with this access key ...")
    parser.add_argument("--secret-key", help="... and this secret key, before mutating them")
    parser.add_argument("--pid", type=int, help="target process id, to detect crashes and memory growth")
    parser.add_argument("--rss-growth-mb", type=int, default=256,
                        help="VmRSS growth past the warm-up baseline (plus a JVM's -Xmx) that is a finding")
    parser.add_argument("--rss-ceiling-mb", type=int, default=None,
                        help="VmRSS that is a finding whatever the baseline")
    parser.add_argument("--warmup-seconds", type=float, default=30.0,
                        help="seconds whose VmRSS samples only set the baseline (default 30)")
    parser.add_argument("--heap-mb", type=int, default=None,
                        help="heap the target may fill without leaking (default: read from a JVM's -Xmx)")
    parser.add_argument("--idle-timeout", type=float, default=None,
                        help="the target's idle timeout (Java: 120): connections left inside a frame must be "
                             "closed by then; without it they are not judged")
    parser.add_argument("--golden", type=Path, default=None, help=f"golden data (default {golden_dir()})")
    parser.add_argument("--ha", metavar="HOST:PORT",
                        help="fuzz this master HA port with hostile slave streams instead of remoting frames")
    parser.add_argument("--grpc", metavar="HOST:PORT", nargs="?", const=TARGET_PROXY,
                        help="fuzz a gRPC proxy (RocketMQ 5's SDK protocol) with requests drawn from the "
                             "spec instead of remoting frames; without HOST:PORT, the --target's own proxy")
    parser.add_argument("--replay", nargs="*", type=Path, metavar="CASE",
                        help=f"replay regression cases (files or directories; none given: {REGRESSIONS_DIR})")
    return parser


def _replay(target: Target, paths: list[Path]) -> int:
    cases = [case for path in paths or [REGRESSIONS_DIR] for case in load_cases(path)]
    failed = 0
    for case in cases:
        violations = replay(case, target)
        failed += bool(violations)
        print(f"{'FAIL' if violations else 'ok  '} {case.id}" + "".join(f"\n     {v}" for v in violations))
    print(f"{len(cases)} cases, {failed} failed")
    return 1 if failed else 0


def _report(summary: Summary, out: Path, elapsed: float, choice: Choice) -> None:
    out.mkdir(parents=True, exist_ok=True)
    data = {"frames_sent": summary.frames_sent, "batches": summary.batches, "seconds": round(elapsed, 1),
            "stopped": summary.stopped, "profile": choice.profile.name, "profile_chosen": choice.how,
            "findings": dict(summary.findings), "known": dict(summary.known),
            "known_cases": [{"case": str(path), "cited": why} for path, why in summary.known_cases],
            "duplicates": dict(summary.duplicates), "waiting_streams": summary.waiting,
            "idle_judged": summary.idle_judged, "stalls_seconds": summary.stalls, "memory": summary.memory,
            "cases": [str(path) for path in summary.cases]}
    (out / "summary.json").write_text(json.dumps(data, indent=1) + "\n")
    print(f"stopped: {summary.stopped}; {summary.frames_sent} frames in {summary.batches} batches, "
          f"{elapsed:.1f} s")
    for kind in FindingClass:
        print(f"  {kind.value:10} {summary.findings.get(kind.value, 0)}")
    print(f"  {sum(summary.duplicates.values())} more with an already recorded cause; "
          f"{summary.waiting} stream(s) left inside a frame, {summary.idle_judged} judged against the "
          "idle timeout")
    if summary.stalls:
        print(f"  target stalled {len(summary.stalls)} time(s), answering again after {summary.stalls} s")
    for path in summary.cases:
        print(f"  case {path}")
    print(f"profile: {choice.profile.name} ({choice.how})")
    for path, why in summary.known_cases:
        print(f"  known defect of the target, not failing the run: {path}\n    {why}")


def _fuzz_ha(args: argparse.Namespace, target: Target) -> int:
    """``--ha``: the HA port gets the run's time; the broker's health is checked after every round."""
    started = time.monotonic()
    summary = HAFuzzer(args.ha, target, min(args.seconds, MAX_SECONDS), args.seed).run()
    args.out.mkdir(parents=True, exist_ok=True)
    data = {"rounds": summary.rounds, "kinds": dict(summary.kinds), "findings": summary.findings,
            "stopped": summary.stopped, "seconds": round(time.monotonic() - started, 1)}
    (args.out / "summary.json").write_text(json.dumps(data, indent=1) + "\n")
    print(f"stopped: {summary.stopped}; {summary.rounds} HA rounds, {len(summary.findings)} findings")
    for finding in summary.findings:
        print(f"  {finding['kind']}: {finding['finding']}")
    return 1 if summary.findings else 0


def _checked_target(args: argparse.Namespace) -> Target:
    """The target, once both addresses are loopback and both listeners answer; else :class:`BadInput`."""
    if not (args.namesrv and args.broker):
        raise BadInput("give --target NAME, or --namesrv and --broker of a running target")
    for addr in (args.namesrv, args.broker):
        try:
            parse_loopback(addr)
        except (RocketMQSpecError, OSError) as exc:
            raise BadInput(f"{addr}: {exc}") from None
    target = Target(args.namesrv, args.broker, args.pid)
    for listener in Listener:
        health = target.health(listener)
        if health is not Health.OK:
            state = "does not accept connections" if health is Health.CRASH else "does not answer"
            raise BadInput(f"the {listener.value} at {target.addr(listener)} {state}")
    return target


def _seeds(golden: Path | None) -> list[SeedFrame]:
    root = golden or golden_dir()
    try:
        return load_seeds(root)
    except (OSError, ValueError) as exc:
        raise BadInput(f"cannot read the golden frames under {root} (--golden DIR): {exc}") from None


def memory_rule(args: argparse.Namespace) -> MemoryRule:
    heap = args.heap_mb * MIB if args.heap_mb is not None else None
    if heap is None and args.pid is not None:
        heap = jvm_heap_bytes(process_cmdline(args.pid))
    ceiling = args.rss_ceiling_mb * MIB if args.rss_ceiling_mb is not None else None
    return MemoryRule(args.rss_growth_mb * MIB, args.warmup_seconds, ceiling, heap or 0)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        for path in args.replay or ():
            if not path.exists():
                raise BadInput(f"regression case {path} does not exist")
        if (args.access_key is None) != (args.secret_key is None):
            raise BadInput("--access-key and --secret-key go together")
        if args.target is not None:
            if args.namesrv or args.broker or args.pid:
                raise BadInput("--target starts a target of its own: give it or --namesrv/--broker/--pid")
            parse_target(args.target)
        seeds = [] if args.replay is not None or args.ha else _seeds(args.golden)
    except (BadInput, UnknownTarget) as exc:
        return fail(PROG, exc)
    if args.grpc not in (None, TARGET_PROXY) and args.target is None:
        return _fuzz_grpc(args, args.grpc)
    if args.target is None:
        return _run(args, seeds)
    with tempfile.TemporaryDirectory(prefix="rmq-fuzz-") as work, contextlib.ExitStack() as stack:
        try:
            running = stack.enter_context(started(args.target, Path(work)))
        except ProvisionError as exc:
            return fail(PROG, f"{args.target}: {exc}")
        print(f"started {args.target}: namesrv {running.namesrv_addr}, broker {running.broker_addr} "
              f"(pid {running.broker_pid})", file=sys.stderr, flush=True)
        args.namesrv, args.broker, args.pid = running.namesrv_addr, running.broker_addr, running.broker_pid
        if args.grpc is not None:
            if running.proxy_addr is None:
                return fail(PROG, f"{args.target} serves no gRPC (an Apache 5.x target needs its proxy)")
            return _fuzz_grpc(args, running.proxy_addr)
        return _run(args, seeds)


def _fuzz_grpc(args: argparse.Namespace, address: str) -> int:
    """The gRPC fuzzer (``rocketmq_spec.fuzz.grpc_live``): findings under OUT/grpc, a summary on stdout."""
    target = GrpcTarget(address, args.pid)
    try:
        if target.health() is not Health.OK:
            return fail(PROG, f"the gRPC proxy at {address} does not answer a QueryRoute")
        print(f"fuzzing the gRPC proxy at {address} for {args.seconds:.0f} s", file=sys.stderr, flush=True)
        summary = grpc_live.run(target, min(args.seconds, MAX_SECONDS), args.out / "grpc",
                                first_seed=args.seed, rule=memory_rule(args))
    finally:
        target.close()
    print(json.dumps({"calls": summary.calls, "findings": summary.findings, "outcomes": summary.outcomes},
                     indent=2, sort_keys=True))
    return 1 if summary.findings else 0


def _run(args: argparse.Namespace, seeds: list[SeedFrame]) -> int:
    try:
        target = _checked_target(args)
        choice = choose(Request(args.profile, target_name=args.target or ""), target.announced_version(),
                        "the broker")
        known = matcher(choice.profile)
    except (BadInput, ProfileError, UnknownCause) as exc:
        return fail(PROG, exc)
    if args.replay is not None:
        return _replay(target, args.replay)
    if args.ha:
        return _fuzz_ha(args, target)
    credentials = Credentials(args.access_key, args.secret_key) if args.access_key is not None else None
    config = FuzzConfig(target, min(args.seconds, MAX_SECONDS), args.max_frames, args.batch_size, args.seed,
                        memory_rule(args), args.idle_timeout, credentials=credentials, known=known)
    started_at = last = time.monotonic()

    def progress(summary: Summary) -> None:
        nonlocal last
        now = time.monotonic()
        if now - last >= PROGRESS_INTERVAL:
            last = now
            print(summary.line(now - started_at), file=sys.stderr, flush=True)

    summary = LiveFuzzer(config, seeds, args.out / "regressions", progress).run()
    _report(summary, args.out, time.monotonic() - started_at, choice)
    return 1 if summary.findings else 0


if __name__ == "__main__":
    sys.exit(main())
