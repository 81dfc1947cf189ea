"""The broker process: its managers, its two listening ports, its background duties.

The main port serves every handler; the fast port (listenPort - 2) serves the same table without
PULL_MESSAGE, as Java's fast remoting server does. Background tasks are the client-channel expiry scan
and the periodic consumer-offset flush; registration with name servers lives in ``registration``.

The message store is opened (recovering whatever a previous run left) after the main port is bound and
before it accepts anything: records carry the broker's ``brokerIP1:listenPort`` as store host, and a
port of 0 is only known once bound. It is closed after both ports have stopped, so no handler can put
into a closed store.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from codec.command import RemotingCommand
from reference_broker.broker.clients import ClientManager
from reference_broker.broker.handlers import BrokerHandlers
from reference_broker.broker.locks import RebalanceLockManager
from reference_broker.broker.long_polling import PullHold
from reference_broker.broker.lookup import LookupHandlers
from reference_broker.broker.offsets import FLUSH_INTERVAL, ConsumerOffsetManager
from reference_broker.broker.persistence import ConfigFiles
from reference_broker.broker.pull import PullHandlers
from reference_broker.broker.registration import BrokerRegistrar
from reference_broker.broker.send import SendHandlers
from reference_broker.broker.send_back import SendBackHandlers
from reference_broker.broker.subscriptions import SubscriptionGroupManager
from reference_broker.broker.topics import TopicConfigManager
from reference_broker.client import next_opaque
from reference_broker.config import BrokerConfig
from reference_broker.server import SERVER_VERSION, Connection, DispatchTable, RemotingServer
from reference_broker.store import MessageStore, StoreConfig
from reference_broker.tasks import cancel_and_wait
from spec.codes import RequestCode

log = logging.getLogger(__name__)

FREE_PORT_ATTEMPTS = 16
"""Free main ports tried before giving up on finding one whose ``port - 2`` is free as well."""


class Broker:
    def __init__(self, config: BrokerConfig | None = None) -> None:
        self.config = config or BrokerConfig()
        files = ConfigFiles(self.config.config_dir)
        self.registrar = BrokerRegistrar(self.config, lambda: self.topics.wrapper_json())
        self.topics = TopicConfigManager(self.config, files, self.registrar.topics_changed)
        self.topics.persist()
        self.groups = SubscriptionGroupManager(files, self.config.auto_create_subscription_group)
        self.clients = ClientManager(self.config.channel_expired_timeout / 1000)
        self.offsets = ConsumerOffsetManager(files)
        self.locks = RebalanceLockManager(self.config.lock_max_live_time / 1000)
        self.store: MessageStore | None = None
        self.hold: PullHold | None = None
        self.handlers = BrokerHandlers(self.topics, self.groups, self.clients, self.offsets, self.locks,
                                       self.notify_consumer_ids_changed, self._min_offset)
        dispatch = DispatchTable(self.handlers.table())
        backlog = self.config.server_socket_backlog
        self.server = RemotingServer("broker", dispatch, on_close=self._closed, backlog=backlog)
        self.fast_server = RemotingServer("broker-fast", dispatch.without(RequestCode.PULL_MESSAGE),
                                          on_close=self._closed, backlog=backlog)
        self._tasks: list[asyncio.Task[Any]] = []
        self._notifications: set[asyncio.Task[Any]] = set()

    def _min_offset(self, topic: str, queue_id: int) -> int:
        return self.store.min_offset(topic, queue_id) if self.store is not None else 0

    @property
    def addr(self) -> str:
        return f"{self.config.bind_address}:{self.server.port}"

    @property
    def fast_addr(self) -> str:
        return f"{self.config.bind_address}:{self.fast_server.port}"

    async def start(self) -> None:
        await self._bind_ports()
        try:
            dispatch = self._open_store()
        except BaseException:
            await self.fast_server.stop()
            await self.server.stop()
            raise
        await self.server.serve(dispatch)
        await self.fast_server.serve(dispatch.without(RequestCode.PULL_MESSAGE))
        await self.registrar.start()
        self._tasks = [asyncio.ensure_future(self._scan_clients()),
                       asyncio.ensure_future(self._flush_offsets())]

    async def _bind_ports(self) -> None:
        """Bind the main port and the fast port at ``listenPort - 2``.

        Asked for a free port, the kernel picks the main port alone and its neighbour two below may be
        taken; then both are given back and another pair is tried, so the Java rule (which clients and
        the conformance suite rely on to find the fast port) holds for free ports too.
        """
        host, wanted = self.config.bind_address, self.config.listen_port
        attempts = FREE_PORT_ATTEMPTS if wanted == 0 and self.config.fast_listen_port is None else 1
        for attempt in range(1, attempts + 1):
            port = self.config.listen_port = await self.server.bind(host, wanted)
            try:
                fast = self.config.resolved_fast_port
                self.config.fast_listen_port = await self.fast_server.bind(host, fast)
                return
            except OSError as exc:
                await self.server.stop()
                self.config.listen_port = wanted
                if attempt == attempts:
                    raise
                log.info("fast port for free port %d unavailable (%s); trying another pair", port, exc)

    def _open_store(self) -> DispatchTable:
        """Open the store for the bound port and return the full dispatch table over it."""
        store = self.store = MessageStore(StoreConfig.from_broker(self.config)).open()
        store.arrivals.bind_loop(asyncio.get_running_loop())
        self.hold = PullHold(store.arrivals)
        handlers = {
            **self.handlers.table(),
            **SendHandlers(self.config, self.topics, self.groups, store).table(),
            **SendBackHandlers(self.config, self.topics, self.groups, store).table(),
            **PullHandlers(self.config, self.topics, self.groups, self.clients, self.offsets, store,
                           self.hold).table(),
            **LookupHandlers(store).table(),
        }
        return DispatchTable(handlers)

    async def stop(self) -> None:
        await cancel_and_wait([*self._tasks, *self._notifications])
        await self.registrar.stop()
        await self.fast_server.stop()
        await self.server.stop()
        self.offsets.persist()
        if self.hold is not None:
            self.hold.close()
        if self.store is not None:
            self.store.close()

    async def notify_consumer_ids_changed(self, group: str) -> None:
        """Tell every member of ``group`` to rebalance (oneway, as Java sends it)."""
        entry = self.clients.consumer_group(group)
        for channel in list(entry.channels) if entry else ():
            if isinstance(channel, Connection):
                await channel.send(RemotingCommand.request(
                    RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, {"consumerGroup": group}, opaque=next_opaque(),
                    oneway=True, version=SERVER_VERSION, serialize_type=self.server.default_serialize_type))

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
                if isinstance(channel, Connection):
                    channel.close()
            for group in groups:
                await self.notify_consumer_ids_changed(group)

    async def _flush_offsets(self) -> None:
        while True:
            await asyncio.sleep(FLUSH_INTERVAL)
            if self.offsets.dirty:
                self.offsets.persist()
