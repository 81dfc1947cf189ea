"""Test traffic over the wire: numbered messages produced round-robin over a topic's queues, and every
message of a topic drained back.

Every produced message carries a unique key (its KEYS property) and is recorded as a :class:`Sent` with
its position among the messages of its queue; a drained message becomes an :class:`Arrived` with its
queue offset. Those are what the delivery audit compares.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from codec.store import MessageRecord
from spark_tests import broker_api as api
from spark_tests.audit import Arrived, Sent
from spark_tests.wire import WireClient

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
    positions: Counter[str] = Counter(routes[n % len(routes)].key for n in range(first))
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
