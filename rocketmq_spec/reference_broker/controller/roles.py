"""Which role a controller's answer gives the broker (``ReplicasManager.changeBrokerRole``), sans I/O.

Every answer that names the broker-set's master (REGISTER_BROKER, ELECT_MASTER, GET_REPLICA_INFO) is fed
to :class:`RoleKeeper`, which says whether the broker now changes role: only a master epoch greater than
the one it acts on does (RMQ-BROKER-ROLE); an answer of the same epoch may still carry a new SyncStateSet
for a master.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BecomeMaster:
    master_epoch: int
    sync_state_set_epoch: int
    sync_state_set: frozenset[int]


@dataclass(frozen=True)
class BecomeSlave:
    master_addr: str
    master_epoch: int
    master_id: int


@dataclass(frozen=True)
class MasterAnswer:
    """What an answer says of the broker-set; ids and address absent while it has no master."""

    master_id: int | None
    master_addr: str | None
    master_epoch: int
    sync_state_set_epoch: int = 0
    sync_state_set: frozenset[int] = frozenset()


Role = BecomeMaster | BecomeSlave


class RoleKeeper:
    def __init__(self, broker_id: int) -> None:
        self.broker_id = broker_id
        self.master_epoch = 0
        """The epoch the broker acts on (Java starts at 0: any elected master's epoch is greater)."""
        self.master_id: int | None = None
        self.sync_state_set_epoch = 0
        self.sync_state_set: frozenset[int] = frozenset()

    @property
    def is_master(self) -> bool:
        return self.master_id == self.broker_id

    def take(self, answer: MasterAnswer) -> Role | None:
        """The role change the answer calls for, recorded as done; None when nothing changes."""
        if answer.master_id is None or not answer.master_addr or answer.master_epoch <= self.master_epoch:
            if answer.master_epoch == self.master_epoch and self.is_master:
                self._take_set(answer)
            return None
        self.master_epoch = answer.master_epoch
        self.master_id = answer.master_id
        if answer.master_id == self.broker_id:
            self._take_set(answer)
            return BecomeMaster(answer.master_epoch, self.sync_state_set_epoch, self.sync_state_set)
        return BecomeSlave(answer.master_addr, answer.master_epoch, answer.master_id)

    def wants_election(self, answer: MasterAnswer) -> bool:
        """GET_REPLICA_INFO of a newer epoch without a master: the broker asks for an election
        (``schedulingSyncBrokerMetadata``)."""
        headless = answer.master_id is None or not answer.master_addr
        return answer.master_epoch > self.master_epoch and headless

    def _take_set(self, answer: MasterAnswer) -> None:
        """``changeSyncStateSet``: only a newer SyncStateSet epoch replaces the set."""
        if answer.sync_state_set_epoch > self.sync_state_set_epoch:
            self.sync_state_set_epoch = answer.sync_state_set_epoch
            self.sync_state_set = answer.sync_state_set
