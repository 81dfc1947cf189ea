"""Test traffic over the wire: numbered messages produced round-robin over a topic's queues, and every
message of a topic drained back.

Every produced message carries a unique key (its KEYS property) and is recorded as a :class:`Sent` with
its position among the messages of its queue; a drained message becomes an :class:`Arrived` with its
queue offset. Those are what the delivery audit compares.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path

from rocketmq_spec.codec.store import MessageRecord
from rocketmq_spec.spark import broker_api as api
from rocketmq_spec.spark.audit import Arrived, Sent
from rocketmq_spec.spark.wire import WireClient
from rocketmq_spec.targets.reference import ReferenceAllInOne

PRODUCER_GROUP = "rmq-spark-test-producer"


def message_key(topic: str, number: int) -> str:
    return f"{topic}-{number:09d}"


def prepare_topic(namesrv: str, broker: str, topic: str, queues: int) -> None:
    """Create ``topic`` on ``broker`` and wait until the name server routes it."""
    with WireClient(broker) as client:
        api.create_topic(client, topic, queues)
    with WireClient(namesrv) as ns:
        api.await_route(ns, topic, queues)


def produce(namesrv: str, topic: str, count: int, body: Callable[[int], bytes], *, first: int = 0,
            tags: str = "produced") -> list[Sent]:
    """Send messages ``first`` .. ``first + count - 1`` to a routed topic; message ``n`` has body
    ``body(n)`` and key :func:`message_key`, and goes to write queue ``n`` modulo the number of queues
    (so a topic filled in several calls keeps one sequence per queue)."""
    with WireClient(namesrv) as ns:
        routes = api.topic_route(ns, topic, writable=True)
    if not routes:
        raise ValueError(f"the name server has no route for {topic}")
    clients = {addr: WireClient(addr) for addr in {r.broker_addr for r in routes}}
    before, extra = divmod(first, len(routes))
    positions: Counter[str] = Counter({r.key: before + (q < extra) for q, r in enumerate(routes)})
    sent: list[Sent] = []
    try:
        for number in range(first, first + count):
            route = routes[number % len(routes)]
            key = message_key(topic, number)
            api.send(clients[route.broker_addr], route, topic, body(number), producer_group=PRODUCER_GROUP,
                     tags=tags, keys=key)
            sent.append(Sent(key, route.key, positions[route.key]))
            positions[route.key] += 1
    finally:
        for client in clients.values():
            client.close()
    return sent


def drain(namesrv: str, topic: str, group: str) -> list[tuple[Arrived, MessageRecord]]:
    """Every message of every read queue of ``topic``, pulled from min to max offset (not committed)."""
    with WireClient(namesrv) as ns:
        routes = api.topic_route(ns, topic)
    drained: list[tuple[Arrived, MessageRecord]] = []
    for route in routes:
        with WireClient(route.broker_addr) as broker:
            offset = api.min_offset(broker, topic, route.queue_id)
            end = api.max_offset(broker, topic, route.queue_id)
            while offset < end:
                result = api.pull(broker, group, topic, route.queue_id, offset)
                if not result.found:
                    raise RuntimeError(f"{route.key}: nothing to pull at {offset} below max offset {end}")
                drained += [(Arrived(r.keys[0] if r.keys else "", route.key, r.queue_offset), r)
                            for r in result.records]
                offset = result.next_begin_offset
    return drained


RECORD_OVERHEAD = 200
"""Approximate CommitLog bytes per record beyond its body (fixed fields, topic, properties with a key and
a UNIQ_KEY), used only to decide how many messages fill a store of a given size."""


def filler_body(number: int, mean_size: int) -> bytes:
    """Bodies of varying length around ``mean_size`` whose bytes depend on the message number."""
    size = mean_size // 2 + (number * 7919) % mean_size
    return (f"{number:012d}|".encode() * (size // 13 + 1))[:size]


SPREAD_RUN = 64
"""Messages a spread topic gets in a row (see :func:`fill_store`)."""


def fill_store(root: Path, min_bytes: int, *, commitlog_file_size: int, topic: str = "FillTopic",
               queues: int = 8, mean_body: int = 4000, spread: tuple[str, int] | None = None,
               broker_config: Mapping[str, object] | None = None) -> list[Sent]:
    """Run the reference broker on ``root`` and produce until its CommitLog holds ``min_bytes``.

    A small ``commitlog_file_size`` spreads the data over several files, so BLANK markers and file
    boundaries are part of what a scan of the store has to get right; ``broker_config`` holds further
    broker.conf sizes (``mappedFileSizeConsumeQueue``, ``maxHashSlotNum``, ``maxIndexNum``).
    ``spread=(NAME, N)`` gives one message in N to a second topic NAME, in runs of :data:`SPREAD_RUN`
    spread through the whole store. The broker runs as a process of its own (``rocketmq_spec.targets``):
    the jobs meet a broker over TCP, as they meet any other.
    """
    settings = {"mappedFileSizeCommitLog": commitlog_file_size, **(broker_config or {})}
    count = -(-min_bytes // (mean_body + RECORD_OVERHEAD))
    body = functools.partial(filler_body, mean_size=mean_body)
    with ReferenceAllInOne(store=root, broker_config=settings) as broker:
        if spread is None:
            prepare_topic(broker.namesrv_addr, broker.broker_addr, topic, queues)
            return produce(broker.namesrv_addr, topic, count, body)
        name, share = spread
        runs = {topic: SPREAD_RUN * (share - 1), name: SPREAD_RUN}
        wanted = {topic: count - count // share, name: count // share}
        done = dict.fromkeys(runs, 0)
        sent: list[Sent] = []
        for each in runs:
            prepare_topic(broker.namesrv_addr, broker.broker_addr, each, queues)
        while done != wanted:
            for each, run in runs.items():
                batch = min(run, wanted[each] - done[each])
                sent += produce(broker.namesrv_addr, each, batch, body, first=done[each])
                done[each] += batch
        return sent
