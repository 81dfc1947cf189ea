"""A controller-mode master's SyncStateSet and confirm offset (``AutoSwitchHAService``), sans I/O.

The set the controller last accepted is ``members``; a change the master proposes (a slave that caught
up, one that left) is reported through ``on_change`` and stays ``pending`` until the controller accepts a
set; meanwhile the union of both counts, as Java counts the set it marked as synchronizing (RMQ-HA2-EXPAND,
RMQ-HA2-SHRINK, RMQ-HA2-MIN-ISR). The confirm offset is the smallest
acknowledgement of the connected members, the master's end when it is alone (RMQ-HA2-CONFIRM).
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class SyncStateSet:
    def __init__(self, local_id: int, on_change: Callable[[frozenset[int]], None] = lambda members: None,
                 ) -> None:
        self.local_id = local_id
        self.members: frozenset[int] = frozenset({local_id})
        self.pending: frozenset[int] | None = None
        self.epoch = 0
        self.acks: dict[int, int] = {}
        """Connected slaves' last acknowledgements, by broker id."""
        self.caught_up_at: dict[int, float] = {}
        self._on_change = on_change
        self._lock = threading.Lock()

    def accepted(self, members: frozenset[int], epoch: int) -> None:
        """The controller's set (``changeSyncStateSet``): only a newer epoch replaces it."""
        with self._lock:
            if epoch > self.epoch:
                self.epoch = epoch
                self.members = members | {self.local_id}
                self.pending = None

    @property
    def counted(self) -> frozenset[int]:
        """The members a put counts (``inSyncReplicasNums``): with a change pending, both sets'."""
        with self._lock:
            return self.members | (self.pending or frozenset())

    @property
    def current(self) -> frozenset[int]:
        """The set as the master now sees it: the pending one, else the accepted one."""
        with self._lock:
            return self.pending if self.pending is not None else self.members

    def confirm_offset(self, max_offset: int) -> int:
        with self._lock:
            acks = [ack for member, ack in self.acks.items() if member in self.members and ack > 0]
        return min([max_offset, *acks])

    def acked(self, slave_id: int, offset: int, max_offset: int, epoch_start: int, now: float, *,
              learner: bool = False) -> None:
        """A slave's report: one that reaches the confirm offset and the current epoch joins."""
        with self._lock:
            self.acks[slave_id] = offset
            if offset >= max_offset:
                self.caught_up_at[slave_id] = now
        current = self.current
        if learner or slave_id in current:
            return
        if offset >= self.confirm_offset(max_offset) and offset >= epoch_start:
            self._propose(current | {slave_id})

    def gone(self, slave_id: int) -> None:
        """The slave's connection closed (``removeConnection``): it leaves the set."""
        with self._lock:
            self.acks.pop(slave_id, None)
            self.caught_up_at.pop(slave_id, None)
        current = self.current
        if slave_id in current:
            self._propose(current - {slave_id})

    def behind(self, now: float, max_catchup_s: float) -> frozenset[int]:
        """Members that have not caught up for ``haMaxTimeSlaveNotCatchup`` (``maybeShrinkSyncStateSet``)."""
        with self._lock:
            current = self.pending if self.pending is not None else self.members
            return frozenset(member for member in current if member != self.local_id
                             and now - self.caught_up_at.get(member, float("-inf")) > max_catchup_s)

    def _propose(self, members: frozenset[int]) -> None:
        with self._lock:
            self.pending = members
        self._on_change(members)
