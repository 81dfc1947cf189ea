"""A store thread that sleeps on a condition between rounds of work (the flusher, the delay scheduler).

Both are woken early by the put path (a SYNC_FLUSH waiter, a newly delayed message) and both must end
promptly at shutdown, so the condition, the running flag and the bounded join live here once.
"""

from __future__ import annotations

import threading

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
