"""Telling the long-polling hold service that a consume queue grew.

Puts happen on the broker's event loop, but the delay scheduler re-puts from its own thread; listeners
are asyncio code, so a notification raised off the loop thread is handed to the loop with
``call_soon_threadsafe`` and one raised on it is delivered at once (no extra loop iteration per send).
Without a bound loop (tests, tools) listeners are called directly.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import NamedTuple


class MessageArrival(NamedTuple):
    topic: str
    queue_id: int
    max_offset: int
    """The queue's max offset after the new entry: a parked pull for offset < max_offset can be served."""
    tags_code: int
    store_timestamp: int


ArrivalListener = Callable[[MessageArrival], None]


class ArrivalNotifier:
    def __init__(self) -> None:
        self._listeners: list[ArrivalListener] = []
        self.listening = False
        """Whether any listener is subscribed. Listeners subscribe only while they hold a request, so a put
        on the loop's thread (the send lane's) builds its arrival only then: every send puts, and few find
        a pull or POP held for them. A put from another thread (the delay scheduler's) notifies whatever
        this says, since a request may be held on the loop before its notification is delivered there."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None

    def bind_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        """Deliver to listeners on ``loop``; call from the loop's own thread."""
        self._loop = loop
        self._loop_thread = threading.get_ident()

    def subscribe(self, listener: ArrivalListener) -> None:
        self._listeners.append(listener)
        self.listening = True

    def unsubscribe(self, listener: ArrivalListener) -> None:
        """Stop calling ``listener``; nothing happens when it is not subscribed."""
        if listener in self._listeners:
            self._listeners.remove(listener)
        self.listening = bool(self._listeners)

    def notify(self, arrival: MessageArrival) -> None:
        if not self._listeners:
            return
        loop = self._loop
        if loop is None or threading.get_ident() == self._loop_thread:
            self._deliver(arrival)
        elif not loop.is_closed():
            loop.call_soon_threadsafe(self._deliver, arrival)

    def _deliver(self, arrival: MessageArrival) -> None:
        for listener in list(self._listeners):
            listener(arrival)
