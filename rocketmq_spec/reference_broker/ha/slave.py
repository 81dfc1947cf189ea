"""A slave's HA client: it connects to its master's HA port and appends what it receives to its log.

:class:`ReplicaSession` holds the rules (sans I/O): the first report on connecting, a report after each
block that moved the log's end and after haSendHeartbeatInterval of silence, contiguity through the
codec's block decoder. :class:`HAClient` is the asyncio edge, reconnecting after every failure and
whenever the master's address changes (the name server names it in REGISTER_BROKER answers).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Protocol

from rocketmq_spec.codec.ha import BlockDecoder, BlockReceived, StreamRejected, encode_report
from rocketmq_spec.reference_broker.ha.settings import HASettings
from rocketmq_spec.reference_broker.store.message_store import MessageStore
from rocketmq_spec.reference_broker.tasks import cancel_and_wait
from rocketmq_spec.spec.errors import HAStreamError, StoreError

log = logging.getLogger(__name__)

READ_SIZE = 4 * 1024 * 1024
"""The slave's read buffer (``HAClient``: 4 MiB)."""


class ReplicaSession:
    """One connection's replication state on the slave, sans I/O."""

    def __init__(self, store: MessageStore, now: float) -> None:
        self.store = store
        end = store.max_phy_offset
        self.decoder = BlockDecoder(end if end else None)
        self.reported = end
        self.last_write = now

    def first_report(self, now: float) -> bytes:
        self.last_write = now
        return encode_report(self.reported)

    def received(self, data: bytes, now: float) -> bytes | None:
        """Append the complete blocks of ``data``; returns the report to send, if the end moved."""
        for event in self.decoder.receive_data(data):
            if isinstance(event, StreamRejected):
                raise event.error
            assert isinstance(event, BlockReceived)
            if event.data:
                self.store.append_replica(event.offset, event.data)
        end = self.store.max_phy_offset
        if end <= self.reported:
            return None
        self.reported = end
        self.last_write = now
        return encode_report(end)

    def heartbeat(self, now: float, interval: float) -> bytes | None:
        if now - self.last_write <= interval:
            return None
        self.last_write = now
        return encode_report(self.reported)


class Session(Protocol):
    """What :class:`HAClient` drives on each connection: :class:`ReplicaSession`, or the controller-mode
    ``AutoSwitchReplicaSession`` whose opening is a handshake."""

    last_write: float

    def first_report(self, now: float) -> bytes: ...

    def received(self, data: bytes, now: float) -> bytes | None: ...

    def heartbeat(self, now: float, interval: float) -> bytes | None: ...


class HAClient:
    def __init__(self, store: MessageStore, settings: HASettings, master: str | None = None,
                 session: Callable[[MessageStore, float], Session] = ReplicaSession) -> None:
        self.store = store
        self.settings = settings
        self.master = master
        self._session = session
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.connected = asyncio.Event()

    def set_master(self, addr: str | None) -> None:
        """The master's HA address from a REGISTER_BROKER answer: a change reconnects."""
        if addr and addr != self.master:
            log.info("HA master address now %s (was %s)", addr, self.master)
            self.master = addr
            self._changed.set()

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            await cancel_and_wait([self._task])

    async def _run(self) -> None:
        while True:
            self._changed.clear()
            if self.master is None:
                await self._changed.wait()
                continue
            try:
                await self._replicate(self.master)
            except (OSError, HAStreamError, StoreError, TimeoutError) as exc:
                log.info("HA connection to master %s ended: %s", self.master, exc)
            self.connected.clear()
            if not self._changed.is_set():
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self.settings.reconnect_interval):
                        await self._changed.wait()

    async def _replicate(self, master: str) -> None:
        host, _, port = master.rpartition(":")
        # asyncio.timeout, not wait_for, throughout: Python 3.11's wait_for can swallow a cancel that
        # arrives as the inner call completes, and stop() would then wait for ever.
        async with asyncio.timeout(self.settings.housekeeping_interval):
            reader, writer = await asyncio.open_connection(host, int(port))
        loop = asyncio.get_running_loop()
        session = self._session(self.store, loop.time())
        try:
            await self._send(writer, session.first_report(loop.time()))
            self.connected.set()
            while not self._changed.is_set():
                wait = self.settings.heartbeat_interval - (loop.time() - session.last_write) + 0.001
                data = None
                try:
                    async with asyncio.timeout(max(wait, 0.001)):
                        data = await reader.read(READ_SIZE)
                except TimeoutError:
                    pass
                else:
                    if not data:
                        raise ConnectionResetError("master closed the connection")
                report = (session.received(data, loop.time()) if data
                          else session.heartbeat(loop.time(), self.settings.heartbeat_interval))
                if report is not None:
                    await self._send(writer, report)
        finally:
            writer.close()

    async def _send(self, writer: asyncio.StreamWriter, report: bytes) -> None:
        """RMQ-HA-HOUSEKEEPING: a report that cannot be written within the interval ends the connection.

        A transport the master already closed ends it too, as the same ConnectionResetError on every event
        loop: asyncio's transport drops such a write silently, uvloop's raises RuntimeError, which
        :meth:`_run` would not expect."""
        if writer.is_closing():
            raise ConnectionResetError("the connection to the master is closed")
        writer.write(report)
        async with asyncio.timeout(self.settings.housekeeping_interval):
            await writer.drain()
