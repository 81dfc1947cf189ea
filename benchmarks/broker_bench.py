"""The reference broker under load: synchronous sends of 128-byte messages, then pulls, over loopback.

The broker runs as ``rmq-broker`` in its own process and the producers in this one, so the two share
the machine's cores the way Java's benchmark producer and broker do. Each producer has its own
connection and waits for every answer before sending again (a synchronous send). Targets: >= 2,000
sends/s with one producer and >= 6,500/s with four.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from benchmarks.common import Result
from reference_broker.client import RemotingClient
from spec.codes import RequestCode, ResponseCode
from tests.messaging_support import pull_fields, send_fields

MESSAGE = b"x" * 128
TOPIC = "BenchTopic"
QUEUES = 4
PRODUCERS = (1, 4, 16)
TARGETS = {1: ">= 2,000/s", 4: ">= 6,500/s"}
START_TIMEOUT = 30.0
"""Seconds the broker process gets to print its addresses."""
PULL_BATCH = 32


@contextlib.contextmanager
def broker_process(store: Path) -> Iterator[tuple[str, int]]:
    """``rmq-broker`` on free ports; yields its broker address and pid, stops it by pid afterwards."""
    command = [sys.executable, "-m", "reference_broker.cli", "--store", str(store), "--namesrv-port", "0",
               "--broker-port", "0"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        line = ""
        while "broker " not in line and time.monotonic() < deadline and process.poll() is None:
            line = process.stdout.readline() if process.stdout else ""
        if "broker " not in line:
            raise RuntimeError("rmq-broker did not start")
        addr = line.split("broker ", 1)[1].split(" ", 1)[0]
        yield addr, process.pid
    finally:
        process.terminate()
        try:
            process.wait(START_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(START_TIMEOUT)


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_seconds(pid: int) -> float:
    """User plus system CPU the process has used so far (``/proc/<pid>/stat`` utime + stime)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(sorted_values: list[float], fraction: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * fraction))]


async def _producer(addr: str, queue_id: int, until: float, latencies: list[float]) -> None:
    client = await RemotingClient.connect(addr)
    fields = send_fields(TOPIC, {"TAGS": "bench", "WAIT": "true"}, queue_id=queue_id)
    try:
        while time.perf_counter() < until:
            start = time.perf_counter()
            answer = await client.invoke(client.request(RequestCode.SEND_MESSAGE_V2, fields, MESSAGE))
            if answer.code != ResponseCode.SUCCESS:
                raise RuntimeError(f"send refused: {answer.code} {answer.remark}")
            latencies.append(time.perf_counter() - start)
    finally:
        await client.close()


async def _sends(addr: str, pid: int, producers: int, seconds: float) -> Result:
    """Sends per second, with the broker's CPU per send in the note: on a shared machine the rate moves
    with everyone else's load, the CPU a send costs the broker much less."""
    latencies: list[float] = []
    until = time.perf_counter() + seconds
    start, cpu_start = time.perf_counter(), cpu_seconds(pid)
    await asyncio.gather(*(_producer(addr, n % QUEUES, until, latencies) for n in range(producers)))
    elapsed, cpu = time.perf_counter() - start, cpu_seconds(pid) - cpu_start
    rate = len(latencies) / elapsed
    ordered = sorted(latencies)
    note = (f"p50 {percentile(ordered, 0.5) * 1000:.2f} ms, p99 {percentile(ordered, 0.99) * 1000:.2f} ms, "
            f"broker CPU {cpu / max(len(latencies), 1) * 1e6:.0f} us/send")
    return Result("broker", f"sync send 128 B, {producers} producer(s)", rate, rate * len(MESSAGE) / 1e6,
                  TARGETS.get(producers, ""), note)


async def _pulls(addr: str) -> tuple[float, int]:
    """Pull every queue from offset 0 to its end in batches of 32; returns (seconds, messages)."""
    client = await RemotingClient.connect(addr)
    pulled = 0
    start = time.perf_counter()
    try:
        for queue_id in range(QUEUES):
            offset = 0
            while True:
                answer = await client.invoke(client.request(RequestCode.PULL_MESSAGE, pull_fields(
                    TOPIC, queue_id, offset, max_nums=PULL_BATCH)))
                if answer.code != ResponseCode.SUCCESS:
                    break
                next_offset = int(answer.ext_fields["nextBeginOffset"])
                pulled += next_offset - offset
                offset = next_offset
    finally:
        await client.close()
    return time.perf_counter() - start, pulled


def run(quick: bool) -> list[Result]:
    seconds = 1.0 if quick else 5.0
    results = []
    with (tempfile.TemporaryDirectory(prefix="rmq-bench-") as store,
          broker_process(Path(store)) as (addr, pid)):
        asyncio.run(_sends(addr, pid, 1, 0.2))  # creates the topic and warms the broker up
        for producers in PRODUCERS:
            results.append(asyncio.run(_sends(addr, pid, producers, seconds)))
        elapsed, pulled = asyncio.run(_pulls(addr))
        results.append(Result("broker", f"pull {PULL_BATCH} x 128 B per request", pulled / elapsed,
                              pulled * len(MESSAGE) / elapsed / 1e6, "",
                              f"{pulled} messages; broker RSS {rss_mib(pid):.0f} MiB"))
    return results
