"""Flushing off the event loop: one thread makes the commitlog durable, periodically or on demand.

Under ASYNC_FLUSH the thread flushes every ``flushIntervalCommitLog``; under SYNC_FLUSH a put that asks
to wait registers the offset it needs and the thread flushes at once. Every waiter whose offset a flush
covered is released together (group commit), so many concurrent SYNC_FLUSH sends share one fdatasync.
Consume queues, index and checkpoint are flushed on their own, slower period by the same thread.
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections.abc import Callable
from concurrent.futures import Future

from rocketmq_spec.reference_broker.store.worker import ConditionWorker


class FlushService(ConditionWorker):
    def __init__(self, flush_commitlog: Callable[[], int], flush_logics: Callable[[], None],
                 commitlog_interval_s: float, logics_interval_s: float) -> None:
        """``flush_commitlog`` makes the log durable and returns the offset it covered; ``flush_logics``
        flushes consume queues, index and checkpoint."""
        super().__init__("store-flush")
        self._flush_commitlog = flush_commitlog
        self._flush_logics = flush_logics
        self._commitlog_interval = commitlog_interval_s
        self._logics_interval = logics_interval_s
        self._waiters: list[tuple[int, int, Future[bool]]] = []
        self._tiebreak = itertools.count()
        self.flushed_offset = 0

    def request(self, offset: int) -> Future[bool]:
        """A future that resolves to True once everything before ``offset`` is durable."""
        future: Future[bool] = Future()
        with self._cond:
            if offset <= self.flushed_offset:
                future.set_result(True)
            else:
                heapq.heappush(self._waiters, (offset, next(self._tiebreak), future))
                self._cond.notify()
        return future

    def _run(self) -> None:
        next_logics = time.monotonic() + self._logics_interval
        while True:
            with self._cond:
                if self._running and not self._waiters:
                    self._cond.wait(self._commitlog_interval)
                running = self._running
            self._flush_once()
            now = time.monotonic()
            if now >= next_logics or not running:
                self._flush_logics()
                next_logics = now + self._logics_interval
            if not running:
                return

    def _flush_once(self) -> None:
        flushed = self._flush_commitlog()
        with self._cond:
            self.flushed_offset = max(self.flushed_offset, flushed)
            while self._waiters and self._waiters[0][0] <= self.flushed_offset:
                heapq.heappop(self._waiters)[2].set_result(True)

    def stop(self) -> None:
        """Flush everything one last time and end the thread; waiters still pending get False."""
        self._stop_thread()
        with self._cond:
            for _, _, future in self._waiters:
                future.set_result(False)
            self._waiters.clear()
