"""A store thread that sleeps on a condition between rounds of work (the flusher, the delay scheduler).

Both are woken early by the put path (a SYNC_FLUSH waiter, a newly delayed message) and both must end
promptly at shutdown, so the condition, the running flag and the bounded join live here once.
"""

from __future__ import annotations

import threading
import time

STOP_JOIN_TIMEOUT_S = 30.0
"""Bound on waiting for a thread to finish its last round at shutdown."""


class ConditionWorker:
    def __init__(self, name: str) -> None:
        self._name = name
        self._cond = threading.Condition()
        self._running = False
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._running = True
        self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        raise NotImplementedError

    def _stop_thread(self) -> bool:
        """Clear the running flag, wake the loop and wait for it; False when the thread never started."""
        with self._cond:
            self._running = False
            self._cond.notify()
        if self._thread is None:
            return False
        self._thread.join(STOP_JOIN_TIMEOUT_S)
        self._thread = None
        return True


class DeliveryWorker(ConditionWorker):
    """A thread delivering parked messages when they fall due (the delay scheduler, the timer wheel): the
    put path wakes it for a new one, it sleeps until the next is due, at most ``idle_wait`` seconds, and
    writes its progress every ``persist_interval`` seconds and once more when it stops."""

    def __init__(self, name: str, idle_wait: float, persist_interval: float) -> None:
        super().__init__(name)
        self._idle_wait = idle_wait
        self._persist_interval = persist_interval
        self._woken = False

    def wake(self) -> None:
        with self._cond:
            self._woken = True
            self._cond.notify()

    def stop(self) -> None:
        if self._stop_thread():
            self._stopped()

    def _stopped(self) -> None:
        """The last step of a stop, after the thread ended: the progress written once more."""
        self.persist()

    def persist(self) -> None:
        raise NotImplementedError

    def _round(self) -> float:
        """Deliver whatever is due; returns the seconds until the next message falls due."""
        raise NotImplementedError

    def _run(self) -> None:
        next_persist = time.monotonic() + self._persist_interval
        while True:
            wait = self._round()
            if time.monotonic() >= next_persist:
                self.persist()
                next_persist = time.monotonic() + self._persist_interval
            with self._cond:
                if not self._running:
                    return
                if not self._woken:
                    self._cond.wait(min(wait, self._idle_wait))
                self._woken = False
