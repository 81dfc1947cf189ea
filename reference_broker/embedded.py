"""Running a name server and a broker inside a Python process, on free loopback ports.

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
from typing import Any

from reference_broker import event_loop
from reference_broker.broker.server import Broker
from reference_broker.config import LOOPBACK, BrokerConfig, NamesrvConfig, validate
from reference_broker.namesrv.server import NameServer

START_TIMEOUT = 10.0
"""Seconds a synchronous caller waits for start or stop before giving up."""


class EmbeddedRocketMQ:
    def __init__(self, store_path: str | Path | None = None, *, broker_config: BrokerConfig | None = None,
                 namesrv_config: NamesrvConfig | None = None) -> None:
        self._own_store = store_path is None and broker_config is None
        self.namesrv_config = namesrv_config or NamesrvConfig(listen_port=0, kv_config_path=None)
        self.broker_config = broker_config or BrokerConfig(listen_port=0)
        if store_path is not None:
            self.broker_config.store_path_root_dir = str(store_path)
        elif self._own_store:
            self.broker_config.store_path_root_dir = tempfile.mkdtemp(prefix="rmq-store-")
        self.namesrv: NameServer | None = None
        self.broker: Broker | None = None

    @property
    def namesrv_addr(self) -> str:
        return self._running(self.namesrv).addr

    @property
    def broker_addr(self) -> str:
        return self._running(self.broker).addr

    @property
    def broker_fast_addr(self) -> str:
        return self._running(self.broker).fast_addr

    @property
    def store_path(self) -> Path:
        return Path(self.broker_config.store_path_root_dir)

    @staticmethod
    def _running(part: Any) -> Any:
        if part is None:
            raise RuntimeError("not started")
        return part

    async def start(self) -> EmbeddedRocketMQ:
        validate(self.broker_config)
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


class SyncEmbeddedRocketMQ:
    """The same, driven from synchronous code: the event loop runs in a daemon thread."""

    def __init__(self, store_path: str | Path | None = None, **kwargs: Any) -> None:
        self.embedded = EmbeddedRocketMQ(store_path, **kwargs)
        self._loop = event_loop.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="rocketmq-embedded", daemon=True)

    def _run(self, coroutine: Any) -> Any:
        future: Future[Any] = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        return future.result(START_TIMEOUT)

    def start(self) -> SyncEmbeddedRocketMQ:
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

    def call(self, coroutine: Any) -> Any:
        """Run a coroutine on the broker's loop (to inspect or change its state safely)."""
        return self._run(coroutine)

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
    def store_path(self) -> Path:
        return self.embedded.store_path

    def __enter__(self) -> SyncEmbeddedRocketMQ:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
