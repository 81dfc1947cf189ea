"""The reference broker side by side with a release of Apache RocketMQ, back to back on one machine.

The release is provisioned for the run (``--target apache-VERSION``, default :data:`DEFAULT_PEER`; see
:func:`java_peer`, the part other benchmarks reuse) and each broker in turn takes:

- a Java producer (the project's ``Produce`` driver on the release's client: N threads of synchronous
  128-byte sends through ``DefaultMQProducer``, the load of Apache's benchmark ``Producer -w N -s 128``),
  whose rate and average RT over its steady windows are compared;
- this project's lean producers (``broker_bench``) with the same thread counts, which time every send and
  so give the p99 latency the Java producer does not print, and the broker's CPU per send;
- this project's pull benchmark over what was sent.

Targets: the reference broker at >= 0.8x Java's send rate with 4 and 16 threads and p99 <= 2x Java's,
and >= 0.8x Java's pull rate. Where the release cannot be provisioned (no Java or Maven, a repository that
does not serve it) only the reference broker's rows are measured, and the table says why.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from apache_rocketmq import NotServed, ToolMissing
from apache_rocketmq.drivers import driver_command
from apache_rocketmq.releases import Release
from apache_rocketmq.targets import parse_target, started
from benchmarks.broker_bench import MESSAGE, broker_process, pull_all, timed_sends
from benchmarks.common import Result

DEFAULT_PEER = "apache-4.9.7"
"""The 4.x release the reference broker reproduces, as served by the project's Maven repository."""
THREADS = (4, 16)
SECONDS = {False: 30, True: 16}
"""How long each Java producer run sends (quick or not); its first two-second windows are warm-up."""
WARMUP_WINDOWS = 2
WINDOW = re.compile(r"window sent=(\d+) failed=(\d+) avg_rt_ms=([\d.]+)")
WINDOW_SECONDS = 2.0
"""``Produce`` prints one line every two seconds."""


@dataclass(frozen=True)
class JavaPeer:
    """A provisioned release: its broker's addresses and pid, and the release whose client drives it."""

    release: Release
    namesrv: str
    broker: str
    broker_pid: int


@contextlib.contextmanager
def java_peer(name: str, workdir: Path) -> Iterator[JavaPeer]:
    """Start the release ``name`` (``apache-5.5.0``) for a benchmark; stopped when the block ends."""
    found = parse_target(name)
    if found is None:
        raise ValueError(f"{name} is not an Apache RocketMQ release")
    with started(name, workdir) as running:
        yield JavaPeer(found, running.namesrv_addr, running.broker_addr, running.broker_pid)


@dataclass(frozen=True)
class ProducerRun:
    tps: int
    average_rt_ms: float
    failed: int


def java_producer(peer: JavaPeer, namesrv: str, threads: int, seconds: int, work: Path) -> ProducerRun:
    """The release's client sending for ``seconds`` to ``namesrv``'s cluster: the rate and average RT of
    the windows after warm-up."""
    topic = f"JavaBench{threads}"
    command = driver_command(peer.release, "Produce", namesrv, topic, str(threads), str(len(MESSAGE)), "0",
                             str(seconds), home=work)
    done = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 120, check=False)
    windows = list(WINDOW.finditer(done.stdout))[WARMUP_WINDOWS:]
    if not windows:
        raise RuntimeError("the Java producer printed no steady window:\n"
                           f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
    sent = sum(int(m[1]) for m in windows)
    rt = sum(float(m[3]) * (int(m[1]) + int(m[2])) for m in windows) / max(sent, 1)
    return ProducerRun(int(sent / (len(windows) * WINDOW_SECONDS)), rt, sum(int(m[2]) for m in windows))


def _producer_rows(peer: JavaPeer, namesrv: str, work: Path, quick: bool) -> list[Result]:
    results = []
    for threads in THREADS:
        java = java_producer(peer, peer.namesrv, threads, SECONDS[quick], work)
        ours = java_producer(peer, namesrv, threads, SECONDS[quick], work)
        results.append(Result(
            _group(peer), f"Java producer ({peer.release.version} client), {threads} threads, 128 B sync",
            ours.tps,
            ours.tps * len(MESSAGE) / 1e6, ">= 0.8x Java",
            f"{ours.tps / max(java.tps, 1):.2f}x Java ({java.tps:,}/s); "
            f"average RT {ours.average_rt_ms:.2f} ms vs {java.average_rt_ms:.2f} ms; "
            f"failed {ours.failed} vs {java.failed}"))
    return results


def _lean_rows(peer: JavaPeer | None, addr: str, pid: int, quick: bool) -> list[Result]:
    """This project's producers and pulls against the reference broker and, given one, the Java broker."""
    seconds = 1.0 if quick else 5.0
    results = []
    targets = {"reference": (addr, pid)}
    if peer is not None:
        targets["Java"] = (peer.broker, peer.broker_pid)
    for threads in THREADS:
        runs = {name: asyncio.run(timed_sends(target, broker_pid, threads, seconds))
                for name, (target, broker_pid) in targets.items()}
        ours = runs["reference"]
        note = f"p50 {ours.p50_ms:.2f} ms, p99 {ours.p99_ms:.2f} ms, broker CPU {ours.cpu_us:.0f} us/send"
        target = ""
        if "Java" in runs:
            java = runs["Java"]
            target = "p99 <= 2x Java"
            note += (f"; Java {java.rate:,.0f}/s, p99 {java.p99_ms:.2f} ms "
                     f"({ours.p99_ms / java.p99_ms:.2f}x), rate {ours.rate / java.rate:.2f}x Java")
            if java.cpu_us:
                note += f", Java broker CPU {java.cpu_us:.0f} us/send"
        results.append(Result(_group(peer), f"lean sync send 128 B, {threads} producers", ours.rate,
                              ours.rate * len(MESSAGE) / 1e6, target, note))
    pulls = {name: asyncio.run(pull_all(target)) for name, (target, _) in targets.items()}
    seconds_ours, pulled = pulls["reference"]
    note = f"{pulled:,} messages"
    target = ""
    if "Java" in pulls:
        seconds_java, pulled_java = pulls["Java"]
        target = ">= 0.8x Java"
        note += (f"; Java {pulled_java / seconds_java:,.0f}/s, "
                 f"{(pulled / seconds_ours) / (pulled_java / seconds_java):.2f}x Java")
    results.append(Result(_group(peer), "pull 32 x 128 B per request", pulled / seconds_ours,
                          pulled * len(MESSAGE) / seconds_ours / 1e6, target, note))
    return results


def _group(peer: JavaPeer | None) -> str:
    return f"vs Apache RocketMQ {peer.release.version}" if peer else "vs Apache RocketMQ"


def run(quick: bool = False, peer_name: str = DEFAULT_PEER) -> list[Result]:
    with (tempfile.TemporaryDirectory(prefix="rmq-java-compare-") as work,
          broker_process(Path(work) / "store") as broker, contextlib.ExitStack() as stack):
        try:
            peer: JavaPeer | None = stack.enter_context(java_peer(peer_name, Path(work) / "peer"))
        except (ToolMissing, NotServed) as exc:
            peer = None
            print(f"{peer_name} not measured: {exc}", file=sys.stderr)
        results = _producer_rows(peer, broker.namesrv, Path(work), quick) if peer is not None else []
        return results + _lean_rows(peer, broker.addr, broker.pid, quick)


if __name__ == "__main__":
    from benchmarks.run import table

    target = next((arg.split("=", 1)[1] for arg in sys.argv if arg.startswith("--target=")), DEFAULT_PEER)
    print(table(run(quick="--quick" in sys.argv, peer_name=target)))
