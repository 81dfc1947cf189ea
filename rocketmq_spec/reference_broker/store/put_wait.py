"""What a put waits for before it answers: its flush (SYNC_FLUSH) and a slave's ack (SYNC_MASTER).

Both waits start when the records are appended, each with its own deadline (``syncFlushTimeout``,
``slaveTimeout``), as Java's group commit requests do; the message is stored whatever comes of them, only
the status changes: FLUSH_DISK_TIMEOUT, then FLUSH_SLAVE_TIMEOUT or SLAVE_NOT_AVAILABLE, the replica's
status winning when both fail (``CommitLog.asyncPutMessage``'s ``thenCombine``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from concurrent.futures import Future
from typing import NamedTuple

from rocketmq_spec.reference_broker.store.config import StoreConfig
from rocketmq_spec.reference_broker.store.flush import FlushService
from rocketmq_spec.reference_broker.store.replication import ReplicaWaits
from rocketmq_spec.reference_broker.store.status import PutMessageStatus, PutResult


class Appended(NamedTuple):
    result: PutResult
    flush_to: int | None
    """Commitlog offset the put must see flushed before it answers (SYNC_FLUSH with WAIT=true)."""
    replica_to: int | None = None
    """Commitlog offset a slave must acknowledge before the put answers (SYNC_MASTER with WAIT=true)."""


_Wait = tuple[Future[bool] | None, float, PutMessageStatus]
"""A future, its deadline on ``time.monotonic``, the status if it does not come true in time."""


class PutWaiter:
    def __init__(self, config: StoreConfig, flusher: FlushService, replicas: ReplicaWaits) -> None:
        self.config = config
        self.flusher = flusher
        self.replicas: ReplicaWaits = replicas

    def _waits(self, appended: Appended) -> list[_Wait]:
        """Flush first, then replica. A SYNC_MASTER with no slave close enough answers
        SLAVE_NOT_AVAILABLE at once (a None future)."""
        now = time.monotonic()
        waits: list[_Wait] = []
        if appended.flush_to is not None:
            deadline = now + self.config.sync_flush_timeout_ms / 1000
            flushed = self.flusher.request(appended.flush_to)
            waits.append((flushed, deadline, PutMessageStatus.FLUSH_DISK_TIMEOUT))
        if appended.replica_to is not None:
            if self.replicas.slave_ok(appended.replica_to):
                deadline = now + self.config.slave_timeout_ms / 1000
                waits.append((self.replicas.request(appended.replica_to), deadline,
                              PutMessageStatus.FLUSH_SLAVE_TIMEOUT))
            else:
                waits.append((None, now, PutMessageStatus.SLAVE_NOT_AVAILABLE))
        return waits

    def wait(self, appended: Appended) -> PutResult:
        """Block until every wait of the put has come true or passed its deadline."""
        result = appended.result
        for future, deadline, failure in self._waits(appended):
            try:
                done = future is not None and future.result(max(0.0, deadline - time.monotonic()))
            except TimeoutError:
                done = False
            result = result if done else self._failed(result, future, failure)
        return result

    async def wait_async(self, appended: Appended) -> PutResult:
        """The same for the event loop: the append was immediate, the waits are awaited."""
        result = appended.result
        for future, deadline, failure in self._waits(appended):
            try:
                async with asyncio.timeout(max(0.0, deadline - time.monotonic())):
                    done = future is not None and await asyncio.wrap_future(future)
            except TimeoutError:
                done = False
            result = result if done else self._failed(result, future, failure)
        return result

    def _failed(self, result: PutResult, future: Future[bool] | None, status: PutMessageStatus) -> PutResult:
        if future is not None:
            self.replicas.forget(future)
        return dataclasses.replace(result, status=status)
