"""Queue locks for orderly consumption (LOCK_BATCH_MQ / UNLOCK_BATCH_MQ) with Java's 60 s lease.

A lock belongs to a client id within a consumer group; it is granted when the queue is free, already
held by that client, or held by a client whose lease ran out. Sans-IO: callers pass ``now`` in seconds.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

MessageQueue = tuple[str, str, int]
"""(topic, brokerName, queueId): the identity of a queue in LockBatchRequestBody."""


@dataclass
class _Lock:
    client_id: str
    last_update: float


class RebalanceLockManager:
    def __init__(self, lease_seconds: float) -> None:
        self.lease = lease_seconds
        self._locks: dict[str, dict[MessageQueue, _Lock]] = {}

    def _held_by_other(self, lock: _Lock | None, client_id: str, now: float) -> bool:
        return lock is not None and lock.client_id != client_id and now - lock.last_update <= self.lease

    def try_lock_batch(self, group: str, queues: Iterable[MessageQueue], client_id: str,
                       now: float) -> list[MessageQueue]:
        """Lock every queue that can be locked; returns those now held by ``client_id``."""
        table = self._locks.setdefault(group, {})
        locked = []
        for queue in queues:
            if self._held_by_other(table.get(queue), client_id, now):
                continue
            table[queue] = _Lock(client_id, now)
            locked.append(queue)
        return locked

    def unlock_batch(self, group: str, queues: Iterable[MessageQueue], client_id: str) -> None:
        table = self._locks.get(group, {})
        for queue in queues:
            lock = table.get(queue)
            if lock is not None and lock.client_id == client_id:
                del table[queue]
