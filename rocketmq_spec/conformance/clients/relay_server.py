"""The judging relay's sockets: one listener per server role, run on an event loop of its own thread.

Each accepted client connection gets an upstream connection to the real server and a
:class:`~.relay.RelayConnection` that decides what crosses. The recording and script in force are read
when a connection is accepted, so a driver started after :meth:`Relay.begin` is judged by that scenario's
rules only; :meth:`Relay.end` cuts every connection still open (a driver that was killed). The client
suite starts a relay per scenario run, so that runs side by side keep their frames and scripts apart.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

from rocketmq_spec.conformance.clients.recording import Recording, Role
from rocketmq_spec.conformance.clients.relay import Close, RelayConnection, ToClient, ToServer
from rocketmq_spec.conformance.clients.script import Script

LOOPBACK = "127.0.0.1"
READ_CHUNK = 65536


@dataclass
class _Scenario:
    recording: Recording = field(default_factory=Recording)
    script: Script = field(default_factory=Script)


class Relay:
    """``upstreams``: the real address of each role. ``addresses`` (after :meth:`start`) holds the relay's
    listening address of each role."""

    def __init__(self, upstreams: dict[Role, str]) -> None:
        self.upstreams = upstreams
        self.addresses: dict[Role, str] = {}
        self._scenario = _Scenario()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="rmq-client-relay", daemon=True)
        self._servers: list[asyncio.Server] = []
        self._writers: set[asyncio.StreamWriter] = set()

    def start(self) -> None:
        self._thread.start()
        for role in self.upstreams:
            server = asyncio.run_coroutine_threadsafe(self._listen(role), self._loop).result()
            self._servers.append(server)
            port = server.sockets[0].getsockname()[1]
            self.addresses[role] = f"{LOOPBACK}:{port}"

    async def _listen(self, role: Role) -> asyncio.Server:
        return await asyncio.start_server(lambda r, w: self._serve(role, r, w), LOOPBACK, 0)

    def stop(self) -> None:
        self.end()
        for server in self._servers:
            self._loop.call_soon_threadsafe(server.close)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        if not self._thread.is_alive():  # a relay per scenario: its loop's selector and pipe go with it
            self._loop.close()

    def begin(self, script: Script) -> Recording:
        """Start a scenario: new connections are recorded in the returned log and follow ``script``."""
        self._scenario = _Scenario(Recording(), script)
        return self._scenario.recording

    def end(self) -> None:
        """Cut every connection still open."""

        async def close_all() -> None:
            for writer in list(self._writers):
                writer.close()

        asyncio.run_coroutine_threadsafe(close_all(), self._loop).result(timeout=5)

    @contextlib.contextmanager
    def scenario(self, script: Script) -> Iterator[Recording]:
        try:
            yield self.begin(script)
        finally:
            self.end()

    def _broker_addresses(self) -> dict[str, str]:
        broker = self.upstreams.get(Role.BROKER)
        return {broker: self.addresses[Role.BROKER]} if broker and Role.BROKER in self.addresses else {}

    async def _serve(self, role: Role, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        scenario = self._scenario
        host, port = self.upstreams[role].rsplit(":", 1)
        try:
            up_reader, up_writer = await asyncio.open_connection(host, int(port))
        except OSError:
            writer.close()
            return
        connection = RelayConnection(role, scenario.recording, scenario.script, self._broker_addresses())
        self._writers |= {writer, up_writer}
        closed = asyncio.Event()

        def apply(actions: list[ToServer | ToClient | Close]) -> None:
            for action in actions:
                if isinstance(action, Close):
                    closed.set()
                elif isinstance(action, ToClient):
                    writer.write(action.data)
                elif action.delay_s > 0:
                    self._loop.call_later(action.delay_s, up_writer.write, action.data)
                else:
                    up_writer.write(action.data)

        async def pump(source: asyncio.StreamReader, from_client: bool) -> None:
            while not closed.is_set():
                data = await source.read(READ_CHUNK)
                if not data:
                    if from_client:
                        connection.client_closed()
                    break
                apply(connection.from_client(data) if from_client else connection.from_server(data))
                await (up_writer if from_client else writer).drain()
            closed.set()

        tasks = [asyncio.ensure_future(pump(reader, True)), asyncio.ensure_future(pump(up_reader, False))]
        await closed.wait()
        for task in tasks:
            task.cancel()
        for w in (writer, up_writer):
            w.close()
            self._writers.discard(w)
