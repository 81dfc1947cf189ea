"""A master's book of slave acknowledgements: what a SYNC_MASTER put waits on (``GroupTransferService``).

The HA server (on the event loop) records each slave's offset reports here; a put (on the loop or on the
delay scheduler's thread) asks whether a slave is close enough to wait for and, if so, for a future that
completes once a report reaches its end. Futures are ``concurrent.futures`` ones, like the flush service's,
so both kinds of waiter use them.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from typing import Protocol


class ReplicaWaits(Protocol):
    """What a SYNC_MASTER put asks of the acknowledgements it waits for: this classic book, or a
    controller-mode master's SyncStateSet (``reference_broker.ha.sync_state_set``)."""

    def slave_ok(self, end: int) -> bool: ...

    def request(self, end: int) -> Future[bool]: ...

    def forget(self, future: Future[bool]) -> None: ...


class ReplicaAcks:
    def __init__(self, fall_behind_max: int) -> None:
        self.fall_behind_max = fall_behind_max
        self._lock = threading.Lock()
        self._acked = 0
        self._connections = 0
        self._waiters: list[tuple[int, Future[bool]]] = []

    @property
    def acked(self) -> int:
        """``push2SlaveMaxOffset``: the furthest any slave has reported."""
        return self._acked

    @property
    def connections(self) -> int:
        return self._connections

    def connected(self) -> None:
        with self._lock:
            self._connections += 1

    def disconnected(self) -> None:
        with self._lock:
            self._connections -= 1

    def slave_ok(self, end: int) -> bool:
        """``HAService.isSlaveOK``: a slave is connected and its best ack is close enough to ``end``."""
        return self._connections > 0 and end - self._acked < self.fall_behind_max

    def ack(self, offset: int) -> None:
        """A slave reported ``offset``: complete every wait for an end at or before it."""
        with self._lock:
            if offset <= self._acked:
                return
            self._acked = offset
            done = [f for end, f in self._waiters if end <= offset]
            self._waiters = [(end, f) for end, f in self._waiters if end > offset]
        for future in done:
            if not future.done():
                future.set_result(True)

    def request(self, end: int) -> Future[bool]:
        """A future that becomes True once a slave has acknowledged ``end``; the caller bounds the wait."""
        future: Future[bool] = Future()
        with self._lock:
            if end <= self._acked:
                future.set_result(True)
            else:
                self._waiters.append((end, future))
        return future

    def forget(self, future: Future[bool]) -> None:
        """Drop a wait that timed out, so abandoned futures do not pile up."""
        with self._lock:
            self._waiters = [(end, f) for end, f in self._waiters if f is not future]
