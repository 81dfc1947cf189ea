"""A master's HA server: each connected slave gets its CommitLog from the offset it asks for.

The per-slave rules live in :class:`SlaveSession`, which does no I/O: it is told what the slave sent and
what the clock says, and answers what to write (a data block, a heartbeat, nothing) or that the
connection is to be closed. :class:`HAServer` is the asyncio edge: it accepts connections, feeds
sessions and sleeps until the log grows, a heartbeat is due or the slave speaks.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Protocol

from rocketmq_spec.codec.ha import OffsetReported, ReportDecoder, StreamRejected, encode_block
from rocketmq_spec.reference_broker.ha.settings import HASettings
from rocketmq_spec.reference_broker.store.message_store import MessageStore
from rocketmq_spec.reference_broker.tasks import cancel_and_wait
from rocketmq_spec.spec.errors import HAStreamError
from rocketmq_spec.spec.ha import RMQ_HA_REPORT_AHEAD, initial_transfer_offset

log = logging.getLogger(__name__)

READ_SIZE = 1024 * 1024
"""The master's read buffer (``HAConnection.ReadSocketService``: 1 MiB)."""


class SlaveSession:
    """One slave's replication state on the master (``HAConnection``), sans I/O."""

    def __init__(self, store: MessageStore, settings: HASettings, now: float) -> None:
        self.store = store
        self.settings = settings
        self.decoder = ReportDecoder()
        self.request_offset: int | None = None
        """The slave's first report: where it asked the transfer to start (RMQ-HA-START)."""
        self.next_offset: int | None = None
        self.last_read = now
        self.last_write = now

    def received(self, data: bytes, now: float) -> HAStreamError | None:
        """Take the slave's bytes; returns why the connection must close, if it must."""
        self.last_read = now
        events = self.decoder.receive_data(data)
        if not events:
            return None
        last = events[-1]
        if isinstance(last, StreamRejected):
            return last.error
        assert isinstance(last, OffsetReported)
        # Java reads whole 8-byte units and keeps only the last one of what arrived (RMQ-HA-REPORT)
        if self.request_offset is None:
            self.request_offset = last.offset
        elif last.offset > self.store.max_phy_offset and self.settings.report_ahead_closes:
            return HAStreamError("slave reported an offset beyond the master's CommitLog",
                                 expected=f"<= {self.store.max_phy_offset}", seen=last.offset,
                                 clause=RMQ_HA_REPORT_AHEAD.id)
        self.store.replicas.ack(last.offset)
        return None

    def expired(self, now: float) -> bool:
        """RMQ-HA-HOUSEKEEPING: nothing read from the slave for haHousekeepingInterval."""
        return now - self.last_read > self.settings.housekeeping_interval

    def next_write(self, now: float) -> bytes | None:
        """The block to send now: log data from the next offset, else a heartbeat when one is due."""
        if self.request_offset is None:
            return None
        if self.next_offset is None:
            self.next_offset = initial_transfer_offset(self.request_offset, self.store.max_phy_offset,
                                                       self.store.config.mapped_file_size_commit_log)
        data = self.store.commitlog.data_from(self.next_offset, self.settings.transfer_batch_size)
        if data is None and now - self.last_write <= self.settings.heartbeat_interval:
            return None
        block = encode_block(self.next_offset, data or b"")
        self.next_offset += len(data or b"")
        self.last_write = now
        return block

    def idle_for(self, now: float) -> float:
        """Seconds until something is due without any news: a heartbeat or the housekeeping check."""
        heartbeat = self.last_write + self.settings.heartbeat_interval - now
        housekeeping = self.last_read + self.settings.housekeeping_interval - now
        return max(0.001, min(heartbeat, housekeeping) + 0.001)

    def closed(self) -> None:
        """The connection ended: a classic master keeps nothing per slave."""


class Session(Protocol):
    """What :class:`HAServer` drives per connection: :class:`SlaveSession`, or the controller-mode
    ``AutoSwitchSlaveSession``."""

    settings: HASettings

    def received(self, data: bytes, now: float) -> HAStreamError | None: ...

    def expired(self, now: float) -> bool: ...

    def next_write(self, now: float) -> bytes | None: ...

    def idle_for(self, now: float) -> float: ...

    def closed(self) -> None: ...


class HAServer:
    """Bound with the broker's other ports, serving once the store is open (every broker listens on its
    HA port, a slave too, as Java's HAService does)."""

    def __init__(self, settings: HASettings) -> None:
        self.settings = settings
        self._store: MessageStore | None = None
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._wakes: set[asyncio.Event] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self.port = 0
        self.sessions: Callable[[MessageStore, float], Session] = \
            lambda store, now: SlaveSession(store, settings, now)
        """Makes each connection's session (controller mode swaps in the auto-switch one)."""

    async def bind(self, host: str, port: int) -> int:
        self._loop = asyncio.get_running_loop()
        self._server = await asyncio.start_server(self._serve, host, port, start_serving=False)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    @property
    def store(self) -> MessageStore:
        if self._store is None:
            raise RuntimeError("HA server has no store yet")
        return self._store

    async def serve(self, store: MessageStore) -> None:
        if self._server is None:
            raise RuntimeError("HA server is not bound")
        self._store = store
        store.on_append = self.wake
        await self._server.start_serving()

    def wake(self) -> None:
        """The log grew: wake every slave's writer (callable from any thread)."""
        if self._wakes and self._loop is not None:
            self._loop.call_soon_threadsafe(self._wake_all)

    def _wake_all(self) -> None:
        for event in list(self._wakes):
            event.set()

    async def stop(self) -> None:
        if self._store is not None:
            self._store.on_append = None
        if self._server is not None:
            self._server.close()
        await cancel_and_wait(list(self._tasks))
        if self._server is not None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(5):
                    await self._server.wait_closed()
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        loop = asyncio.get_running_loop()
        session = self.sessions(self.store, loop.time())
        wake = asyncio.Event()
        self._wakes.add(wake)
        self.store.replicas.connected()
        peer = writer.get_extra_info("peername")
        reading = asyncio.ensure_future(self._read(reader, session, wake))
        try:
            await self._write(writer, session, wake, reading)
        except (OSError, HAStreamError) as exc:
            log.info("HA connection of slave %s closed: %s", peer, exc)
        finally:
            session.closed()
            self.store.replicas.disconnected()
            self._wakes.discard(wake)
            reading.cancel()
            await asyncio.wait([reading])
            if not reading.cancelled():
                reading.exception()  # already reported through _write, or moot once the writer failed
            writer.close()
            self._tasks.discard(task)

    @staticmethod
    async def _read(reader: asyncio.StreamReader, session: Session, wake: asyncio.Event) -> None:
        loop = asyncio.get_running_loop()
        while True:
            data = await reader.read(READ_SIZE)
            if not data:
                raise ConnectionResetError("slave closed the connection")
            error = session.received(data, loop.time())
            if error is not None:
                raise error
            wake.set()

    @staticmethod
    async def _write(writer: asyncio.StreamWriter, session: Session, wake: asyncio.Event,
                     reading: asyncio.Future[None]) -> None:
        loop = asyncio.get_running_loop()
        while not reading.done():
            wake.clear()
            block = session.next_write(loop.time())
            if block is not None:
                writer.write(block)
                await writer.drain()
                continue
            if session.expired(loop.time()):
                raise HAStreamError("HA housekeeping: nothing read from the slave",
                                    expected=f"a report within {session.settings.housekeeping_interval} s",
                                    seen="silence")
            woken: asyncio.Future[None] = asyncio.ensure_future(_wait(wake))
            try:
                await asyncio.wait([reading, woken], timeout=session.idle_for(loop.time()),
                                   return_when=asyncio.FIRST_COMPLETED)
            finally:
                woken.cancel()
        reading.result()


async def _wait(event: asyncio.Event) -> None:
    await event.wait()
