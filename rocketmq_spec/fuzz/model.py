"""An in-memory model of what a broker promises about topics, queues and consumer offsets.

It holds only what RocketMQ's semantics fix: each queue is an append-only list whose offsets start at 0
and grow by one per message (a batch takes consecutive offsets), pulled messages are exactly the stored
ones in order, and a committed consumer offset is returned by the next query until overwritten. Timing,
physical offsets and store layout are left to the target.
"""

from __future__ import annotations

from dataclasses import dataclass, field

QueueKey = tuple[str, int]
OffsetKey = tuple[str, str, int]


@dataclass
class BrokerModel:
    topics: dict[str, int] = field(default_factory=dict)
    """Topic name -> number of queues (read = write)."""
    queues: dict[QueueKey, list[bytes]] = field(default_factory=dict)
    offsets: dict[OffsetKey, int] = field(default_factory=dict)

    def create_topic(self, topic: str, queue_count: int) -> None:
        self.topics[topic] = queue_count
        for queue_id in range(queue_count):
            self.queues.setdefault((topic, queue_id), [])

    def append(self, topic: str, queue_id: int, bodies: list[bytes]) -> int:
        """Store messages; returns the queue offset of the first, as a send response reports it."""
        queue = self.queues[(topic, queue_id)]
        first = len(queue)
        queue.extend(bodies)
        return first

    def max_offset(self, topic: str, queue_id: int) -> int:
        return len(self.queues[(topic, queue_id)])

    def messages(self, topic: str, queue_id: int, offset: int, count: int) -> list[bytes]:
        return self.queues[(topic, queue_id)][offset:offset + count]

    def commit(self, group: str, topic: str, queue_id: int, offset: int) -> None:
        self.offsets[(group, topic, queue_id)] = offset

    def committed(self, group: str, topic: str, queue_id: int) -> int | None:
        return self.offsets.get((group, topic, queue_id))


@dataclass
class FiveModel:
    """What a 5.x broker must show of POP and timer messages in one run: a POP topic of one queue popped by
    one group with a long invisible time (nothing comes back within a run), and a timer topic."""

    pop_sent: list[bytes] = field(default_factory=list)
    popped: int = 0
    """Offsets below this were handed out by a pop: the next pop starts here."""
    inflight: dict[int, str] = field(default_factory=dict)
    """Popped, not yet acked: queue offset -> receipt."""
    timers: list[tuple[bytes, int]] = field(default_factory=list)
    """Timer messages sent: (body, the time it is due, ms)."""
