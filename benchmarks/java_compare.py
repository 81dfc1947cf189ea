"""The reference broker side by side with Apache RocketMQ 4.9.8, back to back on one machine.

Given a running Java 4.9.8 name server and broker (``RMQ_JAVA_NAMESRV``, ``RMQ_JAVA_BROKER``, and
``RMQ_JAVA_BROKER_PID`` for its CPU) and an existing build of the 4.9.8 client with its examples
(``RMQ_JAVA_CLASSPATH``), each broker in turn takes:

- Java's own benchmark producer (``org.apache.rocketmq.example.benchmark.Producer -w N -s 128``: N threads
  of synchronous 128-byte sends through the Java client), whose ten-second TPS and average RT are compared;
- this project's lean producers (``broker_bench``) with the same thread counts, which time every send and
  so give the p99 latency Java's producer does not print, and the broker's CPU per send;
- this project's pull benchmark over what was sent.

Targets: the reference broker at >= 0.8x Java's send rate with 4 and 16 threads and p99 <= 2x Java's,
and >= 0.8x Java's pull rate. Without the Java settings only the reference broker's rows are measured.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from benchmarks.broker_bench import MESSAGE, broker_process, pull_all, timed_sends
from benchmarks.common import Result

JAVA_PRODUCER = "org.apache.rocketmq.example.benchmark.Producer"
JAVA_OPTIONS = ["-Xms64m", "-Xmx256m", "-Djava.net.preferIPv4Stack=true",
                *(f"--add-opens=java.base/{package}=ALL-UNNAMED"
                  for package in ("java.nio", "sun.nio.ch", "java.lang", "java.util"))]
THREADS = (4, 16)
WINDOWS = 2
"""Java's producer prints its rate over the last ten seconds every ten seconds; the second line is taken
(the first covers the client's start and JIT warm-up)."""
STATS = re.compile(r"Send TPS: (\d+) Max RT\(ms\): (\d+) Average RT\(ms\):\s*([\d.]+) "
                   r"Send Failed: (\d+) Response Failed: (\d+)")


@dataclass(frozen=True)
class JavaPeer:
    classpath: str
    namesrv: str
    broker: str
    broker_pid: int | None

    @classmethod
    def from_environment(cls) -> JavaPeer | None:
        names = ("RMQ_JAVA_CLASSPATH", "RMQ_JAVA_NAMESRV", "RMQ_JAVA_BROKER")
        if not all(os.environ.get(name) for name in names):
            return None
        pid = os.environ.get("RMQ_JAVA_BROKER_PID")
        return cls(*(os.environ[name] for name in names), int(pid) if pid else None)


@dataclass(frozen=True)
class ProducerRun:
    tps: int
    average_rt_ms: float
    failed: int


def java_producer(classpath: str, namesrv: str, threads: int, windows: int, work: Path) -> ProducerRun:
    """Java's benchmark producer, sending until it has printed ``windows`` ten-second rate lines; the
    last of them."""
    command = ["java", *JAVA_OPTIONS, f"-Duser.home={work}", f"-Drocketmq.client.logRoot={work / 'logs'}",
               "-cp", classpath, JAVA_PRODUCER, "-n", namesrv, "-w", str(threads), "-s", str(len(MESSAGE)),
               "-t", f"JavaBench{threads}"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen: list[re.Match[str]] = []
    tail: list[str] = []
    try:
        assert process.stdout is not None
        for line in process.stdout:
            tail = [*tail[-20:], line]
            match = STATS.search(line)
            if match is not None:
                seen.append(match)
                if len(seen) == windows:
                    break
    finally:
        process.kill()
        process.wait()
    if len(seen) < windows:
        raise RuntimeError("Java benchmark producer ended before printing its rates:\n" + "".join(tail))
    last = seen[-1]
    return ProducerRun(int(last[1]), float(last[3]), int(last[4]) + int(last[5]))


def _producer_rows(peer: JavaPeer, namesrv: str, work: Path, quick: bool) -> list[Result]:
    results = []
    for threads in THREADS:
        windows = 1 if quick else WINDOWS
        java = java_producer(peer.classpath, peer.namesrv, threads, windows, work)
        ours = java_producer(peer.classpath, namesrv, threads, windows, work)
        results.append(Result(
            "vs Java 4.9.8", f"Java benchmark Producer -w {threads} -s 128 (sync)", ours.tps,
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
        targets["Java"] = (peer.broker, peer.broker_pid or 0)
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
        results.append(Result("vs Java 4.9.8", f"lean sync send 128 B, {threads} producers", ours.rate,
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
    results.append(Result("vs Java 4.9.8", "pull 32 x 128 B per request", pulled / seconds_ours,
                          pulled * len(MESSAGE) / seconds_ours / 1e6, target, note))
    return results


def run(quick: bool = False) -> list[Result]:
    peer = JavaPeer.from_environment()
    with (tempfile.TemporaryDirectory(prefix="rmq-java-compare-") as work,
          broker_process(Path(work) / "store") as broker):
        results = _producer_rows(peer, broker.namesrv, Path(work), quick) if peer is not None else []
        return results + _lean_rows(peer, broker.addr, broker.pid, quick)


if __name__ == "__main__":
    import sys

    from benchmarks.run import table

    print(table(run(quick="--quick" in sys.argv)))
