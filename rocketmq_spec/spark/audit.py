"""Delivery audit in the style of OpenChaos: what was sent against what arrived.

A copy job is at-least-once: a micro-batch replayed after a failure sends its messages again, so
duplicates are allowed but must be counted, while a lost message or a message overtaking an earlier one
of the same queue is a failure. Each sent message carries a unique key and its position in its queue; an
arrival is judged by its first occurrence only, so a replayed run (1 2 3 2 3 4) is two duplicates and no
reordering.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Sent:
    key: str
    queue: str
    """The ordering domain: the source queue (broker/queueId) whose order must be kept."""
    sequence: int
    """Position of the message among the messages sent to its queue."""


@dataclass(frozen=True)
class Arrived:
    key: str
    queue: str
    """The destination queue the message was read from."""
    offset: int
    """Its queue offset there: arrival order within the destination queue."""


@dataclass
class AuditReport:
    sent: int
    arrived: int
    lost: list[str] = field(default_factory=list)
    duplicated: dict[str, int] = field(default_factory=dict)
    """Key -> extra copies beyond the first."""
    reordered: list[str] = field(default_factory=list)
    """Keys that arrived before a message sent earlier to the same queue."""
    unexpected: list[str] = field(default_factory=list)
    """Keys that arrived but were never sent."""

    @property
    def duplicates(self) -> int:
        return sum(self.duplicated.values())

    @property
    def ok(self) -> bool:
        """At-least-once with per-queue order: duplicates are tolerated, nothing else is."""
        return not (self.lost or self.reordered or self.unexpected)

    def summary(self) -> str:
        return (f"sent {self.sent}, arrived {self.arrived}, lost {len(self.lost)}, duplicated "
                f"{self.duplicates}, reordered {len(self.reordered)}, unexpected {len(self.unexpected)}")


def audit(sent: Iterable[Sent], arrived: Iterable[Arrived]) -> AuditReport:
    by_key = {s.key: s for s in sent}
    arrivals = sorted(arrived, key=lambda a: (a.queue, a.offset))
    counts = Counter(a.key for a in arrivals)
    report = AuditReport(sent=len(by_key), arrived=len(arrivals))
    report.lost = sorted(by_key.keys() - counts.keys())
    report.duplicated = {key: n - 1 for key, n in sorted(counts.items()) if n > 1}
    report.unexpected = sorted(counts.keys() - by_key.keys())
    highest: dict[tuple[str, str], int] = defaultdict(lambda: -1)
    seen: set[str] = set()
    for arrival in arrivals:
        origin = by_key.get(arrival.key)
        if origin is None or arrival.key in seen:
            continue
        seen.add(arrival.key)
        domain = (origin.queue, arrival.queue)
        if origin.sequence < highest[domain]:
            report.reordered.append(arrival.key)
        highest[domain] = max(highest[domain], origin.sequence)
    return report
