"""A controller-mode master's SyncStateSet, confirm offset and put waits (``AutoSwitchHAService``), sans I/O.

The set the controller last accepted is ``members``; a change the master proposes (a slave that caught
up, one that left) is reported through ``on_change`` and stays ``pending`` until the controller accepts a
set; meanwhile the union of both counts, as Java counts the set it marked as synchronizing (RMQ-HA2-EXPAND,
RMQ-HA2-SHRINK, RMQ-HA2-MIN-ISR), except that a slave whose connection closed leaves ``members`` at once
(``removeConnection``).

With ``allAckInSyncStateSet`` the confirm offset is the smallest acknowledgement of the members' connections,
kept as it was while a member has none, and a put waits until every member has acknowledged its end;
otherwise the confirm offset is the master's end and a put waits for ``inSyncReplicas`` acknowledgements
(RMQ-HA2-CONFIRM, RMQ-HA2-ALL-ACK, ``rocketmq_spec.spec.ha_autoswitch_acks``). Waits are
``concurrent.futures`` futures, as the store's classic :class:`~..store.replication.ReplicaAcks` gives, so
the store's :class:`~..store.put_wait.PutWaiter` waits on either.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future

from rocketmq_spec.spec.ha_autoswitch_acks import ALL_ACK_IN_SYNC_STATE_SET, waits_for_replicas


class SyncStateSet:
    def __init__(self, local_id: int, on_change: Callable[[frozenset[int]], None] = lambda members: None,
                 *, end: Callable[[], int] = lambda: 0, need: Callable[[], int] = lambda: 1) -> None:
        self.local_id = local_id
        self.members: frozenset[int] = frozenset({local_id})
        self.pending: frozenset[int] | None = None
        self.epoch = 0
        self.acks: dict[int, int] = {}
        """Connected slaves' last acknowledgements, by broker id."""
        self.caught_up_at: dict[int, float] = {}
        self.need = need
        """The acknowledgements a put waits for (``need_ack_nums``), read at each use as Java reads
        allAckInSyncStateSet and inSyncReplicas: UPDATE_BROKER_CONFIG changes them on a running master."""
        self.confirmed = -1
        """The confirm offset kept while allAckInSyncStateSet counts (-1: not computed yet)."""
        self._end = end
        self._on_change = on_change
        self._lock = threading.Lock()
        self._waits: list[tuple[int, int, Future[bool]]] = []
        """Puts waiting: their end, the acknowledgements decided when they were put, their future."""

    def accepted(self, members: frozenset[int], epoch: int) -> None:
        """The controller's set (``setSyncStateSet``): only a newer epoch replaces it."""
        with self._lock:
            if epoch > self.epoch:
                self.epoch = epoch
                self.members = members | {self.local_id}
                self.pending = None
                self.confirmed = self._compute()
        self._settle()

    @property
    def counted(self) -> frozenset[int]:
        """The members a put counts (``getSyncStateSet``): with a change pending, both sets'."""
        with self._lock:
            return self._union()

    @property
    def current(self) -> frozenset[int]:
        """The set as the master now sees it: the pending one, else the accepted one."""
        with self._lock:
            return self.pending if self.pending is not None else self.members

    def confirm_offset(self, max_offset: int) -> int:
        """``CommitLog.getConfirmOffset`` of a master: its end when alone or without allAckInSyncStateSet."""
        with self._lock:
            if len(self.members) == 1 or self.need() != ALL_ACK_IN_SYNC_STATE_SET:
                return max_offset
            if self.confirmed < 0:
                self.confirmed = self._compute(max_offset)
            return min(self.confirmed, max_offset)

    def acked(self, slave_id: int, offset: int, max_offset: int, epoch_start: int, now: float, *,
              learner: bool = False) -> None:
        """A slave's report: a member's moves the confirm offset; one that reaches the confirm offset and
        the current epoch joins."""
        with self._lock:
            self.acks[slave_id] = offset
            if offset >= max_offset:
                self.caught_up_at[slave_id] = now
            if slave_id in self.members:  # updateConfirmOffsetWhenSlaveAck
                self.confirmed = self._compute(max_offset)
        self._settle()
        current = self.current
        if learner or slave_id in current:
            return
        if offset >= self.confirm_offset(max_offset) and offset >= epoch_start:
            self._propose(current | {slave_id})

    def gone(self, slave_id: int) -> None:
        """The slave's connection closed (``removeConnection``): it leaves the set at once."""
        with self._lock:
            self.acks.pop(slave_id, None)
            self.caught_up_at.pop(slave_id, None)
            leaves = slave_id in self.members
            if leaves:
                self.members = self.members - {slave_id}
        if leaves:
            self._propose(self.members)
        self._settle()

    def behind(self, now: float, max_catchup_s: float) -> frozenset[int]:
        """Members that have not caught up for ``haMaxTimeSlaveNotCatchup`` (``maybeShrinkSyncStateSet``)."""
        with self._lock:
            current = self.pending if self.pending is not None else self.members
            return frozenset(member for member in current if member != self.local_id
                             and now - self.caught_up_at.get(member, float("-inf")) > max_catchup_s)

    # -- what a put waits for (``GroupTransferService``) -----------------------------------------------------

    def slave_ok(self, end: int) -> bool:
        """Always: controller mode never answers SLAVE_NOT_AVAILABLE (RMQ-HA2-ALL-ACK)."""
        return True

    def request(self, end: int) -> Future[bool]:
        """A future that becomes True once the acknowledgements a put needs reach ``end``."""
        future: Future[bool] = Future()
        with self._lock:
            need = self.need()
            done = not waits_for_replicas(need) or self._satisfied(end, need)
            if not done:
                self._waits.append((end, need, future))
        if done:
            future.set_result(True)
        return future

    def forget(self, future: Future[bool]) -> None:
        with self._lock:
            self._waits = [wait for wait in self._waits if wait[2] is not future]

    # -- under the lock ------------------------------------------------------------------------------------

    def _union(self) -> frozenset[int]:
        return self.members | (self.pending or frozenset())

    def _compute(self, max_offset: int | None = None) -> int:
        """``computeConfirmOffset``: the smallest positive ack of the set's connections, at most the end;
        unchanged while a member has no connection (once computed)."""
        end = self._end() if max_offset is None else max_offset
        members = self._union() - {self.local_id}
        if self.confirmed >= 0 and any(member not in self.acks for member in members):
            return self.confirmed
        return min([end, *(self.acks[m] for m in members if self.acks.get(m, 0) > 0)])

    def _satisfied(self, end: int, need: int) -> bool:
        if need == ALL_ACK_IN_SYNC_STATE_SET:
            members = self._union()
            return len(members) <= 1 or 1 + sum(
                1 for m in members - {self.local_id} if self.acks.get(m, -1) >= end) >= len(members)
        return 1 + sum(1 for ack in self.acks.values() if ack >= end) >= need

    def _settle(self) -> None:
        """Complete the waits the acknowledgements and the set now satisfy."""
        with self._lock:
            done = [f for end, need, f in self._waits if self._satisfied(end, need)]
            self._waits = [wait for wait in self._waits if wait[2] not in done]
        for future in done:
            if not future.done():
                future.set_result(True)

    def _propose(self, members: frozenset[int]) -> None:
        with self._lock:
            self.pending = members
        self._on_change(members)
