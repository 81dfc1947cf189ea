"""The reference broker under load: synchronous sends of 128-byte messages, then pulls, over loopback.

The broker runs as ``rmq-broker`` in its own process and the producers in this one, so the two share
the machine's cores the way Java's benchmark producer and broker do. Each producer has its own
connection and waits for every answer before sending again (a synchronous send). Targets: >= 2,000
sends/s with one producer and >= 6,500/s with four.

The benchmark measures the broker, so its producers are kept lean: each writes one SEND_MESSAGE_V2 frame
encoded once through the codec, with only the opaque (the one field that differs between sends) put in
per send, and takes the answer's code from the start of its JSON header, where ``code`` is the first key
(RMQ-HDR-JSON-KEYS), instead of decoding the whole response. A full client costs about as much CPU per
send as the broker, and on a machine whose cores the two share it would set the rate instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from benchmarks.common import Result, cpu_seconds
from rocketmq_spec.codec.command import RemotingCommand, encode
from rocketmq_spec.codec.fast import pack_words, unpack_words
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.client_requests import pull_fields, send_fields
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.frame import LENGTH_FIELD_SIZE, TYPE_WORD_SIZE, SerializeType

MESSAGE = b"x" * 128
TOPIC = "BenchTopic"
QUEUES = 4
PRODUCERS = (1, 4, 16)
TARGETS = {1: ">= 2,000/s", 4: ">= 6,500/s"}
START_TIMEOUT = 30.0
"""Seconds the broker process gets to print its addresses."""
PULL_BATCH = 32


@dataclass(frozen=True)
class BrokerProcess:
    addr: str
    pid: int
    namesrv: str


@contextlib.contextmanager
def broker_process(store: Path) -> Iterator[BrokerProcess]:
    """``rmq-broker`` on free ports; yields its addresses and pid, stops it by pid afterwards."""
    command = [sys.executable, "-m", "rocketmq_spec.reference_broker.cli",
               "--store", str(store), "--namesrv-port", "0",
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
        namesrv = line.split("name server ", 1)[1].split(",", 1)[0]
        yield BrokerProcess(addr, process.pid, namesrv)
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


def percentile(sorted_values: list[float], fraction: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * fraction))]


class SendTemplate:
    """A SEND_MESSAGE_V2 request encoded once, split around its opaque's digits so that each send only
    joins the new digits in and writes the two leading words again."""

    MARK = 1_234_567_890
    """An opaque whose digits occur nowhere else in the header."""

    def __init__(self, queue_id: int) -> None:
        fields = send_fields(TOPIC, {"TAGS": "bench", "WAIT": "true"}, queue_id=queue_id)
        request = RemotingCommand.request(RequestCode.SEND_MESSAGE_V2, fields, MESSAGE, opaque=self.MARK)
        frame = encode(request)
        header_end = len(frame) - len(MESSAGE)
        before, after = frame[LENGTH_FIELD_SIZE + TYPE_WORD_SIZE:header_end].split(str(self.MARK).encode())
        self._before, self._after = before, after + MESSAGE
        self._fixed = len(before) + len(after)

    def frame(self, opaque: int) -> bytes:
        digits = str(opaque).encode()
        header_length = self._fixed + len(digits)
        words = pack_words(TYPE_WORD_SIZE + header_length + len(MESSAGE), SerializeType.JSON, header_length)
        return b"".join((words, self._before, digits, self._after))


SUCCESS_PREFIX = f'{{"code":{int(ResponseCode.SUCCESS)},'.encode()
"""How the JSON header of a successful answer starts."""


async def _producer(addr: str, queue_id: int, until: float, latencies: list[float]) -> None:
    host, port = addr.rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    template = SendTemplate(queue_id)
    opaque = 0
    try:
        while time.perf_counter() < until:
            start = time.perf_counter()
            opaque += 1
            writer.write(template.frame(opaque))
            words = await reader.readexactly(LENGTH_FIELD_SIZE + TYPE_WORD_SIZE)
            length, _, header_length = unpack_words(words)
            answer = await reader.readexactly(length - TYPE_WORD_SIZE)
            if not answer.startswith(SUCCESS_PREFIX):
                raise RuntimeError(f"send refused: {answer[:header_length]!r}")
            latencies.append(time.perf_counter() - start)
    finally:
        writer.close()
        await writer.wait_closed()


@dataclass(frozen=True)
class SendRun:
    rate: float
    p50_ms: float
    p99_ms: float
    cpu_us: float
    """Broker CPU per send (0 when the broker's pid is not known)."""


async def timed_sends(addr: str, pid: int, producers: int, seconds: float) -> SendRun:
    """Sends per second of ``producers`` lean producers, their latencies, and the broker's CPU per send
    (``pid`` 0: not measured): on a shared machine the rate moves with everyone else's load, the CPU a
    send costs the broker much less."""
    latencies: list[float] = []
    until = time.perf_counter() + seconds
    start, cpu_start = time.perf_counter(), cpu_seconds(pid) if pid else 0.0
    await asyncio.gather(*(_producer(addr, n % QUEUES, until, latencies) for n in range(producers)))
    elapsed, cpu = time.perf_counter() - start, (cpu_seconds(pid) - cpu_start) if pid else 0.0
    ordered = sorted(latencies)
    return SendRun(len(latencies) / elapsed, percentile(ordered, 0.5) * 1000,
                   percentile(ordered, 0.99) * 1000, cpu / max(len(latencies), 1) * 1e6)


async def _sends(addr: str, pid: int, producers: int, seconds: float) -> Result:
    run = await timed_sends(addr, pid, producers, seconds)
    note = f"p50 {run.p50_ms:.2f} ms, p99 {run.p99_ms:.2f} ms, broker CPU {run.cpu_us:.0f} us/send"
    return Result("broker", f"sync send 128 B, {producers} producer(s)", run.rate,
                  run.rate * len(MESSAGE) / 1e6, TARGETS.get(producers, ""), note)


async def pull_all(addr: str) -> tuple[float, int]:
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
                if answer.code != ResponseCode.SUCCESS or answer.ext_fields is None:
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
          broker_process(Path(store)) as broker):
        addr, pid = broker.addr, broker.pid
        asyncio.run(_sends(addr, pid, 1, 0.2))  # creates the topic and warms the broker up
        for producers in PRODUCERS:
            results.append(asyncio.run(_sends(addr, pid, producers, seconds)))
        elapsed, pulled = asyncio.run(pull_all(addr))
        results.append(Result("broker", f"pull {PULL_BATCH} x 128 B per request", pulled / elapsed,
                              pulled * len(MESSAGE) / elapsed / 1e6, "",
                              f"{pulled} messages; broker RSS {rss_mib(pid):.0f} MiB"))
    return results
