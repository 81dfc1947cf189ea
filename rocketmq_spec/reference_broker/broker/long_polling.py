"""Parked pulls (``PullRequestHoldService``): a pull that found nothing waits for a matching message.

Java parks the request and re-executes it when the store reports a new entry in the queue at or past the
requested offset whose tag code the subscription accepts, or when the hold time is over; its hold
service also rescans every 5 s. Here each parked pull is a future the store's arrival notifications
resolve, and the waiting handler bounds the wait itself, so a timeout is answered on time instead of at
the next scan.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field

from rocketmq_spec.reference_broker.broker.filter import TagCodes, matches
from rocketmq_spec.reference_broker.store import ArrivalNotifier, MessageArrival


@dataclass(eq=False)
class _Parked:
    offset: int
    codes: TagCodes
    woken: asyncio.Future[None] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class PullHold:
    def __init__(self, arrivals: ArrivalNotifier) -> None:
        self._arrivals = arrivals
        self._parked: dict[tuple[str, int], set[_Parked]] = {}
        """Parked pulls by queue; arrivals are listened to only while it holds any."""

    def close(self) -> None:
        """Stop listening; parked pulls end with their connections when the server stops."""
        self._arrivals.unsubscribe(self._arrived)

    async def wait(self, topic: str, queue_id: int, offset: int, codes: TagCodes, timeout: float) -> bool:
        """Wait until a message the pull can return arrives (True) or ``timeout`` seconds pass (False)."""
        key = (topic, queue_id)
        parked = _Parked(offset, codes)
        if not self._parked:
            self._arrivals.subscribe(self._arrived)
        self._parked.setdefault(key, set()).add(parked)
        try:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await parked.woken
            return parked.woken.done() and not parked.woken.cancelled()
        finally:
            waiters = self._parked.get(key)
            if waiters is not None:
                waiters.discard(parked)
                if not waiters:
                    del self._parked[key]
            if not self._parked:
                self._arrivals.unsubscribe(self._arrived)

    @property
    def parked_count(self) -> int:
        return sum(len(waiters) for waiters in self._parked.values())

    def _arrived(self, arrival: MessageArrival) -> None:
        for parked in self._parked.get((arrival.topic, arrival.queue_id), ()):
            if (not parked.woken.done() and arrival.max_offset > parked.offset
                    and matches(parked.codes, arrival.tags_code)):
                parked.woken.set_result(None)
