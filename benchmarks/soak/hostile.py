"""Hostile input: a storm of malformed frames with control probes, and frames abandoned half-way.

The storm's connections each send a run of frames a broker must refuse but that leave the connection
open (a code nobody serves, a header lacking required fields, a body that is not the bean it must be, a
response to nothing), then one that breaks the framing and ends the connection (a negative length, an
unknown serialize type, a header longer than its frame, a header that is not JSON). After every batch a
fresh connection asks a normal question and must be answered. The rate that counts is frames per second
of the target's own CPU time ("on one core"), since the harness shares the machine with it.
"""

from __future__ import annotations

import asyncio
import itertools
import struct
import time

from benchmarks.soak import wire
from benchmarks.soak.load import rss_return_row
from benchmarks.soak.report import Row
from benchmarks.soak.target import Target, cpu_seconds, rss_kib, settled_rss_kib
from rocketmq_spec.codec.command import encode
from rocketmq_spec.codec.fast import pack_words
from rocketmq_spec.spec.codes import RequestCode
from rocketmq_spec.spec.frame import Flag, SerializeType

STORM_RATE_TARGET = 20_000
"""Malformed frames rejected per second of the target's CPU time."""
STORM_CONCURRENCY = 64
PARTIAL_HOLD_S = 0.5
"""How long an abandoning connection stays open after its bytes were taken."""
PARTIAL_FRAME = (1 << 24) - 4
"""The largest length word a 4.9.8 broker accepts (16 MiB frames)."""


def _json_frame(header: bytes, body: bytes = b"") -> bytes:
    return pack_words(4 + len(header) + len(body), SerializeType.JSON, len(header)) + header + body


def _refusals() -> list[bytes]:
    """Well-framed requests a broker must refuse without closing the connection."""
    return [
        encode(wire.request(9_999, {"k": "v"})),
        encode(wire.request(RequestCode.PULL_MESSAGE, {})),
        encode(wire.request(RequestCode.SEND_MESSAGE_V2, {"b": "T"}, b"body")),
        encode(wire.request(RequestCode.LOCK_BATCH_MQ, None, b'{"mqSet":[{"topic":null}]}')),
        encode(wire.request(RequestCode.HEART_BEAT, None, b'{"producerDataSet":[{}]')),
        encode(wire.request(RequestCode.GET_MAX_OFFSET, {"topic": "T", "queueId": "x"})),
        encode(wire.request(RequestCode.SEND_MESSAGE, None, None, flag=Flag.RESPONSE)),
    ]


def _breakers() -> list[bytes]:
    """Frames that break the framing: the broker closes the connection after the frames before them."""
    return [
        struct.pack(">i", -1),
        struct.pack(">iI", 8, (7 << 24) | 2) + b"xxxx",
        struct.pack(">iI", 6, 100) + b"xx",
        _json_frame(b"{not json"),
        _json_frame(b"[" * 5000),
    ]


async def _storm_connection(addr: str, frames: bytes) -> int:
    """Send a connection's run of frames and read until the broker closes; returns answers read."""
    try:
        reader, writer = await asyncio.open_connection(*wire.host_port(addr))
    except OSError:
        return 0
    answers = 0
    try:
        writer.write(frames)
        async with asyncio.timeout(30):
            while True:
                await wire.read_command(reader)
                answers += 1
    except (asyncio.IncompleteReadError, OSError, TimeoutError):
        pass
    finally:
        writer.close()
    return answers


async def storm(target: Target, connections: int, frames_per_connection: int, batches: int,
                probe_topic: str) -> list[Row]:
    refusals, breakers = _refusals(), _breakers()
    before = await settled_rss_kib(target)
    cpu_before = cpu_seconds(target.pid)
    started = time.perf_counter()
    sent = answered = 0
    failed_probes: list[int] = []
    slowest = 0.0
    rotation = itertools.count()
    per_batch = -(-connections // batches)
    peak = before
    gate = asyncio.Semaphore(STORM_CONCURRENCY)

    async def bounded(frames: bytes) -> int:
        async with gate:
            return await _storm_connection(target.broker, frames)

    for batch in range(batches):
        runs = []
        for _ in range(min(per_batch, connections - batch * per_batch)):
            n = next(rotation)
            frames = [refusals[(n + i) % len(refusals)] for i in range(frames_per_connection - 1)]
            runs.append(b"".join(frames) + breakers[n % len(breakers)])
            sent += frames_per_connection
        answered += sum(await asyncio.gather(*(bounded(run) for run in runs)))
        peak = max(filter(None, (peak, rss_kib(target.pid))), default=None)
        latency = await wire.probe(target.broker, probe_topic)
        if latency is None:
            failed_probes.append(batch)
        else:
            slowest = max(slowest, latency)
    elapsed = time.perf_counter() - started
    cpu_after = cpu_seconds(target.pid)
    after = await settled_rss_kib(target)
    wall = f"{sent:,} frames on {connections:,} connections, {sent / elapsed:,.0f}/s wall"
    rows = []
    if cpu_before is not None and cpu_after is not None and cpu_after > cpu_before:
        per_cpu = sent / (cpu_after - cpu_before)
        rows.append(Row("malformed storm", f"{per_cpu:,.0f} frames per target CPU-second ({wall})",
                        per_cpu >= STORM_RATE_TARGET, f">= {STORM_RATE_TARGET:,}/s on one core", before, peak,
                        measured=True))
    else:
        rows.append(Row("malformed storm", wall, None, "rate per CPU-second needs the pid", measured=True))
    rows.append(Row("malformed storm", f"{batches - len(failed_probes)} of {batches} control probes answered "
                    f"(slowest {slowest * 1000:,.0f} ms); {answered:,} refusals answered before the close",
                    not failed_probes, "every probe answered"))
    rows.append(rss_return_row("malformed storm", "the storm's connections", before, after))
    return rows


async def _abandon(addr: str, partial: int) -> None:
    """Announce a 16 MiB frame, send ``partial`` bytes of it, wait until they are taken, close."""
    try:
        _, writer = await asyncio.open_connection(*wire.host_port(addr))
    except OSError:
        return
    try:
        writer.write(pack_words(PARTIAL_FRAME, SerializeType.JSON, 64) + bytes(partial - 8))
        await writer.drain()
        await asyncio.sleep(PARTIAL_HOLD_S)
    except OSError:
        pass
    finally:
        writer.close()


async def partial_frames(target: Target, rounds: int, per_round: int, partial: int) -> list[Row]:
    before = await settled_rss_kib(target)
    peak = before
    for _ in range(rounds):
        await asyncio.gather(*(_abandon(target.broker, partial) for _ in range(per_round)))
        peak = max(filter(None, (peak, rss_kib(target.pid))), default=None)
    after = await settled_rss_kib(target)
    figure = (f"{rounds} rounds of {per_round} connections abandoning {partial / 2**20:,.1f} MiB of a 16 MiB "
              "frame" + ("" if peak is None else f" (peak RSS {peak / 1024:,.0f} MiB)"))
    row = rss_return_row("partial frames", "they", before, after)
    return [Row(row.scenario, f"{figure}: {row.figure}", row.passed, row.target, before, after,
                measured=True)]
