"""The broker process: its managers, its two listening ports, its background duties.

The main port serves every handler; the fast port (listenPort - 2) serves the same table without
PULL_MESSAGE and LITE_PULL_MESSAGE, as Java's fast remoting server does. Background tasks are the
client-channel expiry scan and the periodic consumer-offset flush; registration with name servers lives in
``registration``.

The message store is opened (recovering whatever a previous run left) after the main port is bound and
before it accepts anything: records carry the broker's ``brokerIP1:listenPort`` as store host, and a
port of 0 is only known once bound. It is closed after both ports have stopped, so no handler can put
into a closed store.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.custom_header import encode_header
from rocketmq_spec.reference_broker.acl.admin import AclAdminHandlers
from rocketmq_spec.reference_broker.acl.guard import AccessGuard, access_guard
from rocketmq_spec.reference_broker.auth.authentication import Authenticator, whitelist
from rocketmq_spec.reference_broker.auth.authorization import Authorizer
from rocketmq_spec.reference_broker.auth.handlers import AuthAdminHandlers
from rocketmq_spec.reference_broker.auth.metadata import AuthMetadata
from rocketmq_spec.reference_broker.broker.admin import AdminHandlers, BrokerParts
from rocketmq_spec.reference_broker.broker.admin5 import Admin5Handlers
from rocketmq_spec.reference_broker.broker.clients import ClientManager
from rocketmq_spec.reference_broker.broker.handlers import BrokerHandlers
from rocketmq_spec.reference_broker.broker.lanes import Lanes
from rocketmq_spec.reference_broker.broker.locks import RebalanceLockManager
from rocketmq_spec.reference_broker.broker.long_polling import PullHold
from rocketmq_spec.reference_broker.broker.lookup import LookupHandlers
from rocketmq_spec.reference_broker.broker.metadata import MetadataHandlers
from rocketmq_spec.reference_broker.broker.offsets import ConsumerOffsetManager
from rocketmq_spec.reference_broker.broker.pull import PullHandlers
from rocketmq_spec.reference_broker.broker.pull_lane import PullLane
from rocketmq_spec.reference_broker.broker.recall import RecallHandlers
from rocketmq_spec.reference_broker.broker.registration import BrokerRegistrar
from rocketmq_spec.reference_broker.broker.relay import RelayHandlers
from rocketmq_spec.reference_broker.broker.send import SendHandlers
from rocketmq_spec.reference_broker.broker.send_back import SendBackHandlers
from rocketmq_spec.reference_broker.broker.send_lane import SEND_CODES, SendLane
from rocketmq_spec.reference_broker.broker.slave_sync import SlaveSynchronizer
from rocketmq_spec.reference_broker.broker.stats import BrokerStats
from rocketmq_spec.reference_broker.broker.subscriptions import SubscriptionGroupManager
from rocketmq_spec.reference_broker.broker.topics import DataVersion, TopicConfigManager
from rocketmq_spec.reference_broker.broker.transactions import TransactionChecker
from rocketmq_spec.reference_broker.client import next_opaque
from rocketmq_spec.reference_broker.config import GRPC_DISABLED, BrokerConfig, validate
from rocketmq_spec.reference_broker.controller.mode import ControllerMode
from rocketmq_spec.reference_broker.ha.master import HAServer
from rocketmq_spec.reference_broker.ha.settings import HASettings
from rocketmq_spec.reference_broker.ha.slave import HAClient, ReplicaSession, Session
from rocketmq_spec.reference_broker.persistence import ConfigFiles
from rocketmq_spec.reference_broker.pop.handlers import PopHandlers, PopHold
from rocketmq_spec.reference_broker.pop.modes import RequestModeHandlers
from rocketmq_spec.reference_broker.pop.order_locks import OrderLocks
from rocketmq_spec.reference_broker.pop.revive import ReviveService
from rocketmq_spec.reference_broker.pop.service import PopService
from rocketmq_spec.reference_broker.preflight import check_store
from rocketmq_spec.reference_broker.proxy.server import GrpcProxy
from rocketmq_spec.reference_broker.server import (
    Channel,
    Connection,
    DispatchTable,
    Guard,
    Handler,
    RemotingServer,
    shut_down_gracefully,
)
from rocketmq_spec.reference_broker.store import MessageStore, StoreConfig
from rocketmq_spec.reference_broker.tasks import cancel_and_wait
from rocketmq_spec.reference_broker.tls import TlsPolicy
from rocketmq_spec.spec.codes import RequestCode
from rocketmq_spec.spec.ha import MASTER_ID, BrokerRole
from rocketmq_spec.spec.headers import CHECK_TRANSACTION_STATE_REQUEST
from rocketmq_spec.spec.wire_release import wire_release

log = logging.getLogger(__name__)

ACL_WATCH_INTERVAL = 1.0
"""Seconds between looks at the ACL files' modification times: Java looks every 5 s
(``rocketmq_spec.spec.acl_file.RELOAD_INTERVAL_S``); looking more often keeps within that bound."""


def _check_role(config: BrokerConfig) -> None:
    """RMQ-HA-ROLE-ID, as BrokerStartup: a master is brokerId 0, a slave must have an id > 0."""
    if config.role is BrokerRole.SLAVE:
        if config.broker_id <= 0:
            raise ValueError(f"Slave's brokerId must be > 0, got {config.broker_id}")
    else:
        config.broker_id = MASTER_ID

PULL_CODES = (RequestCode.PULL_MESSAGE, RequestCode.LITE_PULL_MESSAGE)
"""The pull processor's codes: served on the main port only (RMQ-BRK-FAST-PORT)."""


def _guards(*checks: Guard | None) -> Guard | None:
    """The checks a request passes before dispatch, in order (ACL 2.0 authentication and authorization,
    then ACL 1.0)."""
    present = [check for check in checks if check is not None]
    if len(present) <= 1:
        return present[0] if present else None

    def all_of(command: RemotingCommand, peer: str) -> None:
        for check in present:
            check(command, peer)
    return all_of

FREE_PORT_ATTEMPTS = 16
"""Free main ports tried before giving up on finding one whose ``port - 2`` is free as well."""


class Broker:
    def __init__(self, config: BrokerConfig | None = None) -> None:
        self.config = config or BrokerConfig()
        _check_role(self.config)
        check_store(self.config, probe_lock=False)  # before the config files below are written
        files = ConfigFiles(self.config.config_dir)
        self.registrar = BrokerRegistrar(self.config, lambda: self.topics.registration_json(),
                                         self._registered)
        self.topics = TopicConfigManager(self.config, files, self.registrar.topics_changed)
        self.topics.persist()
        self.groups = SubscriptionGroupManager(files, self.config.auto_create_subscription_group)
        self.clients = ClientManager(self.config.channel_expired_timeout / 1000)
        self.offsets = ConsumerOffsetManager(files)
        self.locks = RebalanceLockManager(self.config.lock_max_live_time / 1000)
        self.store: MessageStore | None = None
        self.stats = BrokerStats()
        self.config_version = DataVersion()
        self.hold: PullHold | None = None
        self.pop: PopService | None = None
        """The POP service (5.x releases): the broker's API for everything that pops (the remoting
        handlers, the gRPC proxy)."""
        self._pop_hold: PopHold | None = None
        self._files = files
        self.auth = AuthMetadata(files, bool(self.config.authentication_metadata_provider),
                                 bool(self.config.authorization_metadata_provider))
        """ACL 2.0's users and ACLs (the AUTH_* commands of 5.3.0+ releases)."""
        self.release = wire_release(self.config.wire_release)
        self.handlers = BrokerHandlers(self.topics, self.groups, self.clients, self.offsets, self.locks,
                                       self.notify_consumer_ids_changed, self._min_offset,
                                       self.release.version)
        self.guard = access_guard(self.config, self.release.version)
        self.authenticator = self._authenticator()
        """ACL 2.0 authentication (None when off): the remoting guard's first check and the gRPC proxy's."""
        self.authorizer = self._authorizer()
        """ACL 2.0 authorization (None when off): checked after authentication, by remoting and gRPC."""
        guard_check = _guards(self.authenticator.check if self.authenticator is not None else None,
                              self.authorizer.check if self.authorizer is not None else None,
                              self.guard.check if self.guard is not None else None)
        dispatch = DispatchTable(self.handlers.table(), self.release.request_codes)
        backlog, version = self.config.server_socket_backlog, self.release.version
        tls = TlsPolicy.of(self.config.tls)  # RMQ-TLS-EVERY-PORT: the fast port is a server of its own
        self.server = RemotingServer("broker", dispatch, on_close=self._closed, guard=guard_check,
                                     backlog=backlog, version=version, tls=tls)
        self.fast_server = RemotingServer("broker-fast", dispatch.without(*PULL_CODES),
                                          on_close=self._closed, guard=guard_check, backlog=backlog,
                                          version=version, tls=tls)
        self._tasks: list[asyncio.Task[Any]] = []
        self._notifications: set[asyncio.Task[Any]] = set()
        self._producer_turn = 0
        self.ha_settings = HASettings.from_broker(self.config)
        self.ha_server = HAServer(self.ha_settings)
        self.ha_client: HAClient | None = None
        self.controller_mode: ControllerMode | None = None
        self.slave_sync: SlaveSynchronizer | None = None
        self.grpc: GrpcProxy | None = None

    def _authenticator(self) -> Authenticator | None:
        """ACL 2.0's check of each request (``authenticationEnabled``, 5.3.0+ releases only), with the
        initAuthenticationUser created first."""
        c = self.config
        if c.init_authentication_user and self.release.serves(RequestCode.AUTH_CREATE_USER):
            self.auth.init_user(c.init_authentication_user)
        if not c.authentication_enabled:
            return None
        if not self.release.serves(RequestCode.AUTH_CREATE_USER):
            raise ValueError(f"authenticationEnabled needs a 5.3.0+ wire release, not {self.release.name}")
        return Authenticator(self.auth, whitelist(c.authentication_whitelist))

    def _authorizer(self) -> Authorizer | None:
        """ACL 2.0's decision on each request (``authorizationEnabled``, 5.3.0+ releases only)."""
        c = self.config
        if not c.authorization_enabled:
            return None
        if not self.release.serves(RequestCode.AUTH_CREATE_ACL):
            raise ValueError(f"authorizationEnabled needs a 5.3.0+ wire release, not {self.release.name}")
        return Authorizer(self.auth, whitelist(c.authorization_whitelist), c.broker_cluster_name)

    def _min_offset(self, topic: str, queue_id: int) -> int:
        return self.store.min_offset(topic, queue_id) if self.store is not None else 0

    @property
    def addr(self) -> str:
        return f"{self.config.bind_address}:{self.server.port}"

    @property
    def fast_addr(self) -> str:
        return f"{self.config.bind_address}:{self.fast_server.port}"

    @property
    def ha_addr(self) -> str:
        return f"{self.config.bind_address}:{self.ha_server.port}"

    @property
    def grpc_addr(self) -> str | None:
        """Where the 5.x SDKs connect (the in-process gRPC proxy), None when it is off."""
        return f"{self.config.bind_address}:{self.grpc.port}" if self.grpc is not None else None

    async def start(self) -> None:
        validate(self.config)
        grpc_port = self.config.resolved_grpc_port  # before binding gives a free listen_port its number
        await self._bind_ports()
        try:
            dispatch = self._open_store()
        except BaseException:
            await self.fast_server.stop()
            await self.server.stop()
            raise
        assert self.store is not None
        await self.ha_server.serve(self.store)
        if self.config.enable_controller_mode:
            self.controller_mode = ControllerMode(self, self.store)
        elif self.config.role is BrokerRole.SLAVE:
            self.start_replica(self.store)
        await self.server.serve(dispatch)
        await self.fast_server.serve(dispatch.without(*PULL_CODES))
        if grpc_port != GRPC_DISABLED:
            self.grpc = GrpcProxy(self)
            try:
                await self.grpc.start(self.config.bind_address, grpc_port)
            except BaseException:
                await self.stop()
                raise
        if self.controller_mode is not None:
            self.controller_mode.start()  # registers with the name servers once it has a role
        else:
            await self.registrar.start()
        self._tasks = [asyncio.ensure_future(self._scan_clients()),
                       asyncio.ensure_future(self._flush_offsets()),
                       asyncio.ensure_future(self._check_transactions())]
        if self.guard is not None:
            self._tasks.append(asyncio.ensure_future(self._watch_acl(self.guard)))
        if self.pop is not None and self.config.role is not BrokerRole.SLAVE:
            self._tasks.append(asyncio.ensure_future(self._revive()))

    async def _bind_ports(self) -> None:
        """Bind the main port, the fast port at ``listenPort - 2`` and the HA port at ``listenPort + 1``.

        Asked for a free port, the kernel picks the main port alone and its neighbours may be taken;
        then all are given back and another set is tried, so the Java rules (which clients, slaves and
        the conformance suite rely on to find the other ports) hold for free ports too.
        """
        c = self.config
        wanted = (c.listen_port, c.fast_listen_port, c.ha_listen_port)
        derived = c.fast_listen_port is None or c.ha_listen_port is None
        attempts = FREE_PORT_ATTEMPTS if c.listen_port == 0 and derived else 1
        for attempt in range(1, attempts + 1):
            port = c.listen_port = await self.server.bind(c.bind_address, wanted[0])
            try:
                c.fast_listen_port = await self.fast_server.bind(c.bind_address, c.resolved_fast_port)
                c.ha_listen_port = await self.ha_server.bind(c.bind_address, c.resolved_ha_port)
                return
            except OSError as exc:
                await self.fast_server.stop()
                await self.server.stop()
                c.listen_port, c.fast_listen_port, c.ha_listen_port = wanted
                if attempt == attempts:
                    raise
                log.info("fast or HA port beside free port %d unavailable (%s); trying again", port, exc)

    def _open_store(self) -> DispatchTable:
        """Open the store for the bound port and return the full dispatch table over it."""
        store = self.store = MessageStore(StoreConfig.from_broker(self.config)).open()
        store.arrivals.bind_loop(asyncio.get_running_loop())
        self.hold = PullHold(store.arrivals)
        parts = BrokerParts(self.config, self.topics, self.groups, self.clients, self.offsets, store,
                            self.stats, self.config_version, self._permission_changed)
        sends = SendHandlers(self.config, self.topics, self.groups, store)
        pulls = PullHandlers(self.config, self.topics, self.groups, self.clients, self.offsets, store,
                             self.hold)
        if self.server.guard is None:  # a guard sees every request first: no lanes
            send_lanes = dict.fromkeys(SEND_CODES, SendLane(sends, self.stats).take)
            pull_lane = {RequestCode.PULL_MESSAGE: PullLane(pulls, self.stats, self.release.version).take}
            self.server.use_lane(Lanes({**send_lanes, **pull_lane}))
            self.fast_server.use_lane(Lanes(send_lanes))  # the fast port serves no pulls
        handlers = {
            **self.handlers.table(),
            **sends.table(),
            **SendBackHandlers(self.config, self.topics, self.groups, store).table(),
            **pulls.table(),
            **LookupHandlers(store, self.release.version).table(),
            **(AclAdminHandlers(self.guard, self.config).table() if self.guard is not None else {}),
            **MetadataHandlers(self.offsets, self.groups, lambda: store.scheduler.offsets).table(),
            **AdminHandlers(parts).table(),
            **RelayHandlers(parts).table(),
            **Admin5Handlers(self.topics, self.groups).table(),
            **RecallHandlers(self.config, self.topics, store).table(),
            **AuthAdminHandlers(self.auth).table(),
            **self._pop_handlers(store),
        }
        for send in (RequestCode.SEND_MESSAGE, RequestCode.SEND_MESSAGE_V2, RequestCode.SEND_BATCH_MESSAGE):
            handlers[send] = self.stats.counting_sends(handlers[send])
        for pull in PULL_CODES:
            handlers[pull] = self.stats.counting_pulls(handlers[pull])
        return DispatchTable(handlers, self.release.request_codes)

    def _pop_handlers(self, store: MessageStore) -> dict[RequestCode, Handler]:
        """POP and its request modes, for a 5.x release only (a 4.9.8 broker has no such processor)."""
        if not self.release.is_5x:
            return {}
        c = self.config
        self._pop_hold = PopHold(store.arrivals, c.pop_polling_size)
        self.pop = PopService(c.broker_name, c.broker_cluster_name, self.topics, self.offsets, store,
                              c.revive_queue_num, self._pop_hold.wake, OrderLocks(self._files))
        return {**PopHandlers(c, self.topics, self.groups, self.pop, self._pop_hold).table(),
                **RequestModeHandlers(c.broker_name, self.topics, self.clients, self._files).table()}

    async def _revive(self) -> None:
        """``PopReviveService``: every reviveInterval, send back what the pops' consumers did not ack."""
        assert self.store is not None and self.pop is not None
        reviver = ReviveService(self.pop.revive_topic, self.config.revive_queue_num, self.topics,
                                self.offsets,
                                self.store)
        while True:
            await asyncio.sleep(self.config.revive_interval / 1000)
            try:
                reviver.revive(int(time.time() * 1000))
            except Exception:  # as Java's revive thread logs and tries again next round
                log.exception("revive round failed")

    def start_replica(self, store: MessageStore,
                      session: Callable[[MessageStore, float], Session] = ReplicaSession) -> None:
        """A slave replicates the log from its master's HA port and copies its metadata (RMQ-HA-*);
        ``session`` speaks the stream (the auto-switch one in controller mode)."""
        self.ha_client = HAClient(store, self.ha_settings, self.config.ha_master_address, session)
        self.ha_client.start()

        def save_delay_offsets(offsets: dict[int, int]) -> None:
            store.scheduler.offsets = offsets
            store.scheduler.persist()

        self.slave_sync = SlaveSynchronizer(self.addr, self.config.slave_sync_interval / 1000, self.topics,
                                            self.offsets, self.groups, save_delay_offsets,
                                            tls=self.config.tls.client_tls)
        self.slave_sync.start()

    async def stop_replica(self) -> None:
        """The broker is a slave no more (or of another master): replication and the metadata copy end."""
        if self.slave_sync is not None:
            await self.slave_sync.stop()
            self.slave_sync = None
        if self.ha_client is not None:
            await self.ha_client.stop()
            self.ha_client = None

    def _registered(self, answer: dict[str, str]) -> None:
        """RMQ-HA-MASTER-ADDR: a slave follows the master its name server names."""
        if self.ha_client is not None and self.config.ha_master_address is None:
            self.ha_client.set_master(answer.get("haServerAddr"))
        if self.slave_sync is not None:
            self.slave_sync.master_addr = answer.get("masterAddr") or None

    async def stop(self) -> None:
        # Java's order: unregister, then the servers' graceful wait, while everything still runs
        await self.registrar.stop()
        await shut_down_gracefully([self.server, self.fast_server], self.config)
        await cancel_and_wait([*self._tasks, *self._notifications])
        if self.controller_mode is not None:
            await self.controller_mode.stop()
        await self.stop_replica()
        await self.ha_server.stop()
        if self.grpc is not None:
            await self.grpc.stop()
        await self.fast_server.stop()
        await self.server.stop()
        self.offsets.persist()
        if self.pop is not None:
            self.pop.orders.persist()
        if self.hold is not None:
            self.hold.close()
        if self._pop_hold is not None:
            self._pop_hold.close()
        if self.store is not None:
            self.store.close()

    async def notify_consumer_ids_changed(self, group: str) -> None:
        """Tell every member of ``group`` to rebalance (oneway, as Java sends it), unless
        ``notifyConsumerIdsChangedEnable`` is off."""
        if not self.config.notify_consumer_ids_changed_enable:
            return
        entry = self.clients.consumer_group(group)
        for channel in list(entry.channels) if entry else ():
            if isinstance(channel, Channel):
                await channel.send(RemotingCommand.request(
                    RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, {"consumerGroup": group}, opaque=next_opaque(),
                    oneway=True, version=self.release.version,
                    serialize_type=self.server.default_serialize_type))

    def _permission_changed(self) -> None:
        """brokerPermission was updated: a new data version makes the name servers re-read the topics."""
        self.topics.data_version.bump()
        self.registrar.topics_changed()

    def _closed(self, connection: Connection) -> None:
        for group in self.clients.channel_gone(connection):
            task = asyncio.ensure_future(self.notify_consumer_ids_changed(group))
            self._notifications.add(task)
            task.add_done_callback(self._notifications.discard)

    async def _scan_clients(self) -> None:
        while True:
            await asyncio.sleep(self.config.client_scan_interval / 1000)
            stale, groups = self.clients.expire(time.monotonic())
            for channel in stale:
                if isinstance(channel, Channel):
                    channel.close()
            for group in groups:
                await self.notify_consumer_ids_changed(group)

    @staticmethod
    async def _watch_acl(guard: AccessGuard) -> None:
        while True:
            await asyncio.sleep(ACL_WATCH_INTERVAL)
            guard.reload_if_changed()

    async def _check_transactions(self) -> None:
        """``TransactionalMessageCheckService``: every ``transactionCheckInterval``, check back the half
        messages nobody ended with a live producer of their group."""
        assert self.store is not None
        checker = TransactionChecker(self.config, self.topics, self.offsets, self.store)
        while True:
            await asyncio.sleep(self.config.transaction_check_interval / 1000)
            try:
                checks = checker.check()
            except Exception:  # as Java's check() logs and waits for the next interval
                log.exception("transaction check failed")
                continue
            for check in checks:
                channel = self._available_producer(check.producer_group)
                if channel is None:
                    log.warning("no producer of group %s to check transaction %s", check.producer_group,
                                check.header["msgId"])
                    continue
                header = encode_header(CHECK_TRANSACTION_STATE_REQUEST, check.header)
                await channel.send(RemotingCommand.request(
                    RequestCode.CHECK_TRANSACTION_STATE, header, body=check.body, opaque=next_opaque(),
                    oneway=True, version=self.release.version,
                    serialize_type=self.server.default_serialize_type))

    def _available_producer(self, group: str) -> Channel | None:
        """``ProducerManager.getAvailableChannel``: producers of the group in turn, a writable one first,
        else one that is at least open."""
        channels = [c for c in self.clients.producer_channels(group)
                    if isinstance(c, Channel) and not c.closed.is_set()]
        if not channels:
            return None
        self._producer_turn += 1
        turn = self._producer_turn % len(channels)
        ordered = channels[turn:] + channels[:turn]
        return next((c for c in ordered if not c.paused), ordered[0])

    async def _flush_offsets(self) -> None:
        while True:
            await asyncio.sleep(self.config.flush_consumer_offset_interval / 1000)
            if self.offsets.dirty:
                self.offsets.persist()
            if self.pop is not None and self.pop.orders.dirty:
                self.pop.orders.persist()
