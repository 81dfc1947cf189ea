"""Load a broker must hold without growing much: concurrent connections, long polls parked at once.

Growth is the target's RSS once everything is held minus its RSS before, per connection or pull. Parked
pulls are released by one send per queue, and every one must come back with the message.
"""

from __future__ import annotations

import asyncio
import time

from benchmarks.soak import wire
from benchmarks.soak.report import Row
from benchmarks.soak.target import Target, settled_rss_kib
from rocketmq_spec.codec.command import encode
from rocketmq_spec.codec.store import decode_records
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.spec.codes import ResponseCode

GROWTH_TARGET_KIB = 10.0
RSS_RETURN = 0.20
"""RSS once the load is gone may exceed its value before by this fraction at most."""
CONNECT_CONCURRENCY = 200
"""Connects in flight at once: a burst bigger than the backlog is the storm's job, not this one's."""
PULLS_PER_CONNECTION = 500
PARK_MS = 60_000
"""Long-poll hold asked for: longer than the scenario, so only a send releases a pull."""
RELEASE_TIMEOUT_S = 60.0
PULL_GROUP = "SoakPullGroup"


def returned(before: int | None, after: int | None) -> bool | None:
    if before is None or after is None:
        return None
    return after <= before * (1 + RSS_RETURN)


def rss_return_row(scenario: str, what: str, before: int | None, after: int | None) -> Row:
    return Row(scenario, f"RSS once {what} closed", returned(before, after),
               f"within {RSS_RETURN:.0%} of before", before, after, measured=True)


def _growth_row(scenario: str, held: int, unit: str, before: int | None, loaded: int | None) -> Row:
    if before is None or loaded is None:
        return Row(scenario, f"RSS growth per {unit}", None, f"< {GROWTH_TARGET_KIB:.0f} KiB (needs the pid)",
                   measured=True)
    each = (loaded - before) / max(held, 1)
    return Row(scenario, f"RSS growth {each:,.1f} KiB per {unit}", each < GROWTH_TARGET_KIB,
               f"< {GROWTH_TARGET_KIB:.0f} KiB", before, loaded, measured=True)


async def _connect_and_ask(addr: str, topic: str, gate: asyncio.Semaphore,
                           held: list[asyncio.StreamWriter]) -> bool:
    async with gate:
        try:
            reader, writer = await asyncio.open_connection(*wire.host_port(addr))
        except OSError:
            return False
        held.append(writer)
        writer.write(encode(wire.max_offset_request(topic, 0)))
        try:
            answer = await asyncio.wait_for(wire.read_command(reader), 30)
        except (TimeoutError, OSError, asyncio.IncompleteReadError):
            return False
        return answer.code == ResponseCode.SUCCESS


async def connections(target: Target, count: int, topic: str) -> list[Row]:
    """``count`` connections open at once, each having had one request answered."""
    before = await settled_rss_kib(target)
    gate = asyncio.Semaphore(CONNECT_CONCURRENCY)
    held: list[asyncio.StreamWriter] = []
    started = time.perf_counter()
    answered = sum(await asyncio.gather(*(_connect_and_ask(target.broker, topic, gate, held)
                                          for _ in range(count))))
    elapsed = time.perf_counter() - started
    loaded = await settled_rss_kib(target)
    for writer in held:
        writer.close()
    after = await settled_rss_kib(target)
    return [Row("connections", f"{answered:,} of {count:,} open at once, each answered "
                f"({count / elapsed:,.0f}/s)", answered == count, "all answered"),
            _growth_row("connections", answered, "connection", before, loaded),
            rss_return_row("connections", "they", before, after)]


async def parked_pulls(target: Target, count: int, topic: str, queues: int) -> list[Row]:
    """``count`` long polls parked at each queue's end at once, then one send per queue releases them."""
    setup = await RemotingClient.connect(target.broker)
    ends = [await wire.max_offset(setup, topic, q) for q in range(queues)]
    before = await settled_rss_kib(target)
    clients = [await RemotingClient.connect(target.broker)
               for _ in range(-(-count // PULLS_PER_CONNECTION))]
    wait_s = PARK_MS / 1000 + RELEASE_TIMEOUT_S
    pulls = [asyncio.ensure_future(clients[i // PULLS_PER_CONNECTION].invoke(
        wire.pull_request(topic, i % queues, ends[i % queues], group=PULL_GROUP, max_nums=1,
                          suspend_ms=PARK_MS), wait_s)) for i in range(count)]
    loaded = await settled_rss_kib(target)  # also the time the pulls take to arrive and park
    early = sum(p.done() for p in pulls)
    started = time.perf_counter()
    for queue_id in range(queues):
        sent = await setup.invoke(wire.send_request(topic, queue_id, b"release", {"WAIT": "true"}))
        if sent.code != ResponseCode.SUCCESS:
            raise RuntimeError(f"send to release queue {queue_id}: {sent.remark}")
    done, late = await asyncio.wait(pulls, timeout=RELEASE_TIMEOUT_S)
    elapsed = time.perf_counter() - started
    released = sum(1 for p in done if not p.exception() and p.result().code == ResponseCode.SUCCESS
                   and decode_records(p.result().body)[0].body == b"release")
    for p in late:
        p.cancel()
    for client in [*clients, setup]:
        await client.close()
    after = await settled_rss_kib(target)
    return [Row("parked pulls", f"{count - early:,} of {count:,} parked at once", early == 0, "all parked"),
            _growth_row("parked pulls", count - early, "pull", before, loaded),
            Row("parked pulls", f"{released:,} of {count:,} released by {queues} sends in {elapsed:.1f} s",
                released == count, "all released with the message"),
            rss_return_row("parked pulls", "their connections", before, after)]
