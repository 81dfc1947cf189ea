"""Running a name server and a broker (or a master and its slave) inside a Python process, on free ports.

``EmbeddedRocketMQ`` is the asyncio form; ``SyncEmbeddedRocketMQ`` runs the same thing on an event loop
in a background thread for synchronous callers (tests, notebooks). Both own a temporary store directory
unless given one, and remove only what they created.
"""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
import tempfile
import threading
from concurrent.futures import Future
from pathlib import Path
from types import TracebackType
from typing import Any, Generic, Protocol, Self, TypeVar

from rocketmq_spec.reference_broker import event_loop
from rocketmq_spec.reference_broker.broker.server import Broker
from rocketmq_spec.reference_broker.config import LOOPBACK, BrokerConfig, NamesrvConfig, validate
from rocketmq_spec.reference_broker.namesrv.server import NameServer
from rocketmq_spec.spec.ha import BrokerRole

_Part = TypeVar("_Part")

START_TIMEOUT = 10.0
"""Seconds a synchronous caller waits for start or stop before giving up."""


class EmbeddedRocketMQ:
    """A broker and, unless its config names name servers to join (``namesrv_addr``), a name server of
    its own that it registers with: the all-in-one of ``rmq-broker`` without ``namesrvAddr``. With
    ``namesrv_addr`` the broker joins those name servers (Apache RocketMQ's or another reference broker's)
    and starts none, as ``mqbroker -n`` does."""

    def __init__(self, store_path: str | Path | None = None, *, broker_config: BrokerConfig | None = None,
                 namesrv_config: NamesrvConfig | None = None, wire_release: str | None = None) -> None:
        """``wire_release`` (``"4.9.8"``, ``"5.5.0"`` ...) makes both processes answer as that release."""
        self._own_store = store_path is None and broker_config is None
        self.namesrv_config = namesrv_config or NamesrvConfig(listen_port=0, kv_config_path=None)
        self.broker_config = broker_config or BrokerConfig(listen_port=0)
        if wire_release is not None:
            self.namesrv_config.wire_release = self.broker_config.wire_release = wire_release
        self.joins_cluster = bool(self.broker_config.namesrv_addr)
        """Whether the broker joins name servers named in its config rather than starting its own."""
        if store_path is not None:
            self.broker_config.store_path_root_dir = str(store_path)
        elif self._own_store:
            self.broker_config.store_path_root_dir = tempfile.mkdtemp(prefix="rmq-store-")
        self.namesrv: NameServer | None = None
        self.broker: Broker | None = None

    @property
    def namesrv_addr(self) -> str:
        """The name server the broker registered with first: its own, or the first it joined."""
        if self.namesrv is None and self.broker is not None:
            return self.broker.config.namesrv_addrs[0]
        return self._running(self.namesrv).addr

    @property
    def broker_addr(self) -> str:
        return self._running(self.broker).addr

    @property
    def broker_fast_addr(self) -> str:
        return self._running(self.broker).fast_addr

    @property
    def broker_ha_addr(self) -> str:
        return self._running(self.broker).ha_addr

    @property
    def grpc_addr(self) -> str | None:
        """The gRPC proxy's ``host:port`` (RocketMQ 5's SDKs); None when ``grpc_server_port`` is -1."""
        return self._running(self.broker).grpc_addr

    @property
    def store_path(self) -> Path:
        return Path(self.broker_config.store_path_root_dir)

    @staticmethod
    def _running(part: _Part | None) -> _Part:
        if part is None:
            raise RuntimeError("not started")
        return part

    async def start(self) -> EmbeddedRocketMQ:
        validate(self.broker_config)
        if not self.joins_cluster:
            self.namesrv = NameServer(self.namesrv_config)
            await self.namesrv.start()
            advertised = LOOPBACK if self.namesrv_config.bind_address in ("0.0.0.0", "") else None
            host = advertised or self.namesrv_config.bind_address
            self.broker_config = dataclasses.replace(self.broker_config,
                                                     namesrv_addr=f"{host}:{self.namesrv.server.port}")
        try:
            self.broker = Broker(self.broker_config)
            await self.broker.start()
        except BaseException:
            if self.namesrv is not None:
                await self.namesrv.stop()
            raise
        return self

    async def stop(self) -> None:
        if self.broker is not None:
            await self.broker.stop()
        if self.namesrv is not None:
            await self.namesrv.stop()
        if self._own_store:
            shutil.rmtree(self.store_path, ignore_errors=True)

    async def __aenter__(self) -> EmbeddedRocketMQ:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


class EmbeddedMasterSlave:
    """A name server, a master and its slave (same brokerName, brokerId 1) on free loopback ports.

    The slave finds its master through the name server, as a deployed one does (RMQ-HA-MASTER-ADDR).
    ``master_config`` / ``slave_config`` override settings of either broker (file sizes, HA intervals);
    the pair owns a temporary directory holding both stores unless ``root`` is given.
    """

    def __init__(self, root: str | Path | None = None, *, role: BrokerRole = BrokerRole.ASYNC_MASTER,
                 master_config: dict[str, Any] | None = None, slave_config: dict[str, Any] | None = None,
                 namesrv_config: NamesrvConfig | None = None) -> None:
        self._own_root = root is None
        self.root = Path(root) if root is not None else Path(tempfile.mkdtemp(prefix="rmq-pair-"))
        self.namesrv_config = namesrv_config or NamesrvConfig(listen_port=0, kv_config_path=None)
        common = {"listen_port": 0, **(master_config or {})}
        self.master_config = BrokerConfig(**{**common, "broker_role": role.value,
                                             "store_path_root_dir": str(self.root / "master")})
        self.slave_config = BrokerConfig(**{**common, **(slave_config or {}), "broker_role": "SLAVE",
                                            "broker_id": 1, "store_path_root_dir": str(self.root / "slave")})
        self.namesrv: NameServer | None = None
        self.master: Broker | None = None
        self.slave: Broker | None = None

    @property
    def namesrv_addr(self) -> str:
        return EmbeddedRocketMQ._running(self.namesrv).addr

    @property
    def master_addr(self) -> str:
        return EmbeddedRocketMQ._running(self.master).addr

    @property
    def slave_addr(self) -> str:
        return EmbeddedRocketMQ._running(self.slave).addr

    @property
    def master_ha_addr(self) -> str:
        return EmbeddedRocketMQ._running(self.master).ha_addr

    @property
    def master_store_path(self) -> Path:
        return Path(self.master_config.store_path_root_dir)

    @property
    def slave_store_path(self) -> Path:
        return Path(self.slave_config.store_path_root_dir)

    async def start(self) -> EmbeddedMasterSlave:
        self.namesrv = NameServer(self.namesrv_config)
        await self.namesrv.start()
        namesrv = f"{LOOPBACK}:{self.namesrv.server.port}"
        try:
            self.master = Broker(dataclasses.replace(self.master_config, namesrv_addr=namesrv))
            await self.master.start()
            self.slave = Broker(dataclasses.replace(self.slave_config, namesrv_addr=namesrv))
            await self.slave.start()
        except BaseException:
            await self.stop()
            raise
        return self

    async def wait_replicated(self, timeout: float = START_TIMEOUT) -> int:
        """Wait until the slave's CommitLog ends where the master's does and the slave knows every topic of
        the master (its config sync runs every few seconds, so a consumer falling back to the slave right
        after the data arrived could be told the topic does not exist); returns the CommitLog offset."""
        running = EmbeddedRocketMQ._running
        master, slave = running(self.master), running(self.slave)
        master_store, slave_store = running(master.store), running(slave.store)
        async with asyncio.timeout(timeout):
            while (slave_store.max_phy_offset != master_store.max_phy_offset
                   or not master.topics.topics.keys() <= slave.topics.topics.keys()):
                await asyncio.sleep(0.01)
        return int(slave_store.max_phy_offset)

    async def stop_master(self) -> None:
        """Stop the master only (a consumer then falls back to the slave)."""
        if self.master is not None:
            await self.master.stop()
            self.master = None

    async def stop_slave(self) -> None:
        if self.slave is not None:
            await self.slave.stop()
            self.slave = None

    async def start_slave(self) -> None:
        """Start the slave again on its store (after :meth:`stop_slave`): it catches up from its end."""
        if self.slave is None:
            self.slave = Broker(dataclasses.replace(self.slave_config, namesrv_addr=self.namesrv_addr))
            await self.slave.start()

    async def stop(self) -> None:
        for part in (self.slave, self.master, self.namesrv):
            if part is not None:
                await part.stop()
        self.slave = self.master = self.namesrv = None
        if self._own_root:
            shutil.rmtree(self.root, ignore_errors=True)

    async def __aenter__(self) -> EmbeddedMasterSlave:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


class _Lifecycle(Protocol):
    async def start(self) -> Any: ...

    async def stop(self) -> None: ...


_Embedded = TypeVar("_Embedded", bound=_Lifecycle)


class _BackgroundLoop(Generic[_Embedded]):
    """An asyncio form (``embedded``) driven from synchronous code: its event loop runs in a daemon
    thread, which starts with it and ends with it."""

    def __init__(self, embedded: _Embedded) -> None:
        self.embedded = embedded
        self._loop = event_loop.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="rocketmq-embedded", daemon=True)

    def _run(self, coroutine: Any) -> Any:
        future: Future[Any] = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        return future.result(START_TIMEOUT)

    def call(self, coroutine: Any) -> Any:
        """Run a coroutine on the brokers' loop (to inspect or change their state safely)."""
        return self._run(coroutine)

    def start(self) -> Self:
        self._thread.start()
        self._run(self.embedded.start())
        return self

    def stop(self) -> None:
        try:
            self._run(self.embedded.stop())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(START_TIMEOUT)
            if not self._thread.is_alive():
                self._loop.close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


class SyncEmbeddedMasterSlave(_BackgroundLoop[EmbeddedMasterSlave]):
    """:class:`EmbeddedMasterSlave` driven from synchronous code."""

    def __init__(self, root: str | Path | None = None, **kwargs: Any) -> None:
        super().__init__(EmbeddedMasterSlave(root, **kwargs))

    def wait_replicated(self, timeout: float = START_TIMEOUT) -> int:
        return int(self._run(self.embedded.wait_replicated(timeout)))

    def stop_master(self) -> None:
        self._run(self.embedded.stop_master())

    def stop_slave(self) -> None:
        self._run(self.embedded.stop_slave())

    def start_slave(self) -> None:
        self._run(self.embedded.start_slave())

    def __getattr__(self, name: str) -> Any:
        """Addresses and store paths of the pair (``namesrv_addr``, ``master_addr``, ``slave_addr`` ...)."""
        if name == "embedded":
            raise AttributeError(name)
        return getattr(self.embedded, name)


class SyncEmbeddedRocketMQ(_BackgroundLoop[EmbeddedRocketMQ]):
    """The same, driven from synchronous code: the event loop runs in a daemon thread."""

    def __init__(self, store_path: str | Path | None = None, **kwargs: Any) -> None:
        super().__init__(EmbeddedRocketMQ(store_path, **kwargs))

    @property
    def namesrv_addr(self) -> str:
        return self.embedded.namesrv_addr

    @property
    def broker_addr(self) -> str:
        return self.embedded.broker_addr

    @property
    def broker_fast_addr(self) -> str:
        return self.embedded.broker_fast_addr

    @property
    def broker_ha_addr(self) -> str:
        return self.embedded.broker_ha_addr

    @property
    def grpc_addr(self) -> str | None:
        return self.embedded.grpc_addr

    @property
    def store_path(self) -> Path:
        return self.embedded.store_path
