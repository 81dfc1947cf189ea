"""A broker in controller mode: the roles its controller gives it, applied to the running broker.

The broker starts fenced: nothing is registered with the name servers until the controller has named a
role (Java's broker is isolated until ``ReplicasManager`` runs). A slave replicates through the
auto-switch HA stream (``AutoSwitchReplicaSession``) from the master its name server names; a master
records its new epoch in the epoch file after its last byte (RMQ-HA2-EPOCH-ORDER,
``AutoSwitchHAService.changeToMaster``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Protocol

from rocketmq_spec.reference_broker.broker.registration import BrokerRegistrar
from rocketmq_spec.reference_broker.config import BrokerConfig
from rocketmq_spec.reference_broker.controller.agent import BrokerStatus, ControllerAgent, ControllerRefused
from rocketmq_spec.reference_broker.controller.roles import BecomeMaster, BecomeSlave, Role
from rocketmq_spec.reference_broker.ha.autoswitch_master import AutoSwitchSlaveSession
from rocketmq_spec.reference_broker.ha.autoswitch_slave import AutoSwitchReplicaSession
from rocketmq_spec.reference_broker.ha.master import HAServer
from rocketmq_spec.reference_broker.ha.settings import HASettings
from rocketmq_spec.reference_broker.ha.slave import Session
from rocketmq_spec.reference_broker.ha.sync_state_set import SyncStateSet
from rocketmq_spec.reference_broker.store.epochs import EpochCache
from rocketmq_spec.reference_broker.store.message_store import MessageStore
from rocketmq_spec.reference_broker.tasks import cancel_and_wait
from rocketmq_spec.spec.checkpoint import confirm_after_recovery
from rocketmq_spec.spec.ha import MASTER_ID, BrokerRole
from rocketmq_spec.spec.ha_autoswitch_acks import need_ack_nums

log = logging.getLogger(__name__)

NO_ID = -1
"""The local id of the placeholder SyncStateSet a broker has before it is master."""


class Broker(Protocol):
    """What controller mode drives of its broker (``broker.server.Broker``, which owns the mode): its
    settings, its registration with the name servers, its HA server's sessions and its replication as a
    slave."""

    config: BrokerConfig
    ha_settings: HASettings
    ha_server: HAServer
    registrar: BrokerRegistrar

    def start_replica(self, store: MessageStore,
                      session: Callable[[MessageStore, float], Session] = ...) -> None: ...

    async def stop_replica(self) -> None: ...


class ControllerMode:
    def __init__(self, broker: Broker, store: MessageStore) -> None:
        self.broker = broker
        self.store = store
        self.epochs = EpochCache(store.root)
        self.agent = ControllerAgent(broker.config, store.root, self.change_role, self.status,
                                     self._controller_set)
        self.role: Role | None = None
        self.members = SyncStateSet(NO_ID)
        """The SyncStateSet while master; a placeholder that reports nothing before."""
        store.confirm_offset = confirm_after_recovery(store.confirm_offset, store.min_phy_offset,
                                                      store.max_phy_offset)
        self.slave_confirm = store.confirm_offset
        """A slave's confirm offset: what its master's transfer headers last said (RMQ-HA2-SLAVE-EPOCH); the
        one the checkpoint kept until the first (RMQ-CKPT-CONFIRM)."""
        store.recorded_confirm = self._recorded_confirm
        self._reports: set[asyncio.Task[None]] = set()
        self._checker: asyncio.Task[None] | None = None
        broker.ha_server.sessions = self._slave_session

    def start(self) -> None:
        self.agent.start()

    async def stop(self) -> None:
        await cancel_and_wait([*self._reports, *([self._checker] if self._checker else [])])
        await self.agent.stop()

    def _slave_session(self, store: MessageStore, now: float) -> AutoSwitchSlaveSession:
        return AutoSwitchSlaveSession(store, self.epochs, self.members, self.broker.ha_settings, now)

    def _controller_set(self, members: frozenset[int], epoch: int) -> None:
        self.members.accepted(members, epoch)
        self.store.confirm_advanced()

    def _slave_confirmed(self, offset: int) -> None:
        self.slave_confirm = offset
        self.store.confirm_advanced()

    def _report(self, members: frozenset[int]) -> None:
        """A SyncStateSet change the master proposes goes to the controller (from the event loop)."""
        task = asyncio.ensure_future(self._alter(members))
        self._reports.add(task)
        task.add_done_callback(self._reports.discard)

    async def _alter(self, members: frozenset[int]) -> None:
        try:
            await self.agent.alter_sync_state_set(members)
        except (OSError, TimeoutError, ControllerRefused) as exc:
            log.info("ALTER_SYNC_STATE_SET %s refused: %s", sorted(members), exc)

    async def _check_sync_state_set(self) -> None:
        """RMQ-HA2-SHRINK (``checkSyncStateSetAndDoReport``): members behind for too long are dropped."""
        config = self.broker.config
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(config.check_sync_state_set_period / 1000)
            behind = self.members.behind(loop.time(), config.ha_max_time_slave_not_catchup / 1000)
            if behind:
                self._report(self.members.current - behind)

    def _recorded_confirm(self) -> int:
        """The confirm offset as last set (``CommitLog.confirmOffset``), which the checkpoint keeps: a
        master's last computed one, else the slave's."""
        if self.role_is_master and self.members.confirmed >= 0:
            return self.members.confirmed
        return self.slave_confirm

    def status(self) -> BrokerStatus:
        """What a heartbeat says: the last epoch, the log's end, the confirm offset (``getConfirmOffset``)."""
        end = self.store.max_phy_offset
        confirm = self.members.confirm_offset(end) if self.role_is_master else min(self.slave_confirm, end)
        return BrokerStatus(self.epochs.last_epoch, end, confirm)

    @property
    def role_is_master(self) -> bool:
        return isinstance(self.role, BecomeMaster)

    @property
    def broker_id(self) -> int:
        assert self.agent.keeper is not None
        return self.agent.keeper.broker_id

    async def change_role(self, role: Role) -> None:
        if isinstance(role, BecomeSlave):
            await self._to_slave(role)
        else:
            await self._to_master(role)
        first = self.role is None
        self.role = role
        if first:
            await self.broker.registrar.start()
        else:
            self.broker.registrar.topics_changed()  # registers again: the name server learns the role

    async def _stop_master(self) -> None:
        if self._checker is not None:
            await cancel_and_wait([self._checker])
            self._checker = None
        self.slave_confirm = self._recorded_confirm()  # Java keeps one field: a demoted master's stays
        self.members = SyncStateSet(NO_ID)

    async def _to_slave(self, role: BecomeSlave) -> None:
        """``ReplicasManager.changeToSlave``: the broker id is the controller's, the HA client follows the
        master the name server names (a new master's address reconnects it)."""
        if self.epochs.last_epoch > role.master_epoch:
            log.warning("not following master epoch %d: the epoch file is at %d", role.master_epoch,
                        self.epochs.last_epoch)
            return
        await self.broker.stop_replica()
        await self._stop_master()
        self.store.in_sync_replicas_enough = None
        self.store.use_replica_waits(None)
        self._gate(lambda end: min(self.slave_confirm, end))
        self.broker.config.broker_id = self.broker_id
        self._set_role(BrokerRole.SLAVE)
        broker_id, epochs = self.broker_id, self.epochs

        def session(store: MessageStore, now: float) -> AutoSwitchReplicaSession:
            return AutoSwitchReplicaSession(store, epochs, broker_id, now, on_confirm=self._slave_confirmed)

        self.broker.start_replica(self.store, session)

    async def _to_master(self, role: BecomeMaster) -> None:
        """``AutoSwitchHAService.changeToMaster``: the new epoch starts at the log's end."""
        await self.broker.stop_replica()
        if self.epochs.last_epoch >= role.master_epoch:
            self.epochs.truncate_from_epoch(role.master_epoch)
        self.epochs.append(role.master_epoch, self.store.max_phy_offset)
        await self._stop_master()
        config, store = self.broker.config, self.store
        members = SyncStateSet(self.broker_id, self._report, end=lambda: store.max_phy_offset,
                               need=lambda: need_ack_nums(config.all_ack_in_sync_state_set,
                                                          config.in_sync_replicas))
        members.confirmed = min(self.slave_confirm, store.max_phy_offset) if self.role is not None else -1
        members.accepted(role.sync_state_set, role.sync_state_set_epoch)
        self.members = members
        self._checker = asyncio.ensure_future(self._check_sync_state_set())
        store.in_sync_replicas_enough = lambda: len(members.counted) >= config.min_in_sync_replicas
        store.use_replica_waits(members)
        self._gate(members.confirm_offset)
        self.broker.config.broker_id = MASTER_ID
        self._set_role(BrokerRole.SYNC_MASTER)  # RMQ-HA2-SYNC-MASTER

    def _gate(self, confirm: Callable[[int], int]) -> None:
        """RMQ-HA2-CONFIRM-READ: consume queues follow the confirm offset unless readUnCommitted."""
        self.store.confirm_gate.limit = None if self.broker.config.read_un_committed else confirm
        self.store.confirm_advanced()

    def _set_role(self, role: BrokerRole) -> None:
        self.broker.config.broker_role = role.value
        self.store.config.broker_role = role
