"""A broker's start time: from its process's start to its port answering a request.

The time a target's start takes as a whole (name server, registration, the readiness poll's own period)
says little about the broker; this watch times the broker alone. While the servers start, a thread asks
the broker's port for its runtime info every :data:`POLL_INTERVAL` seconds, and the first complete answer
(whatever its code: a frame came back) ends the clock. The start is the broker process's own start time
(``/proc/PID/stat`` field 22, clock ticks since boot), so neither the name server's start nor the wait for
a free port counts.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time

from rocketmq_spec.apache.servers import LOOPBACK, LoopbackServers
from rocketmq_spec.codec.command import RemotingCommand, encode
from rocketmq_spec.spec.codes import RequestCode
from rocketmq_spec.spec.frame import LENGTH_FIELD_SIZE

POLL_INTERVAL = 0.02
PROBE_TIMEOUT = 1.0
ANSWER_GRACE = 5.0
"""Seconds the poll may still take, once the servers are up, to see the broker answer."""
_START_TIME_FIELD = 19
"""``starttime`` (field 22 of ``/proc/PID/stat``) among the fields after the command name."""


def answers(addr: str, timeout: float = PROBE_TIMEOUT) -> bool:
    """Whether the remoting server at ``addr`` answers a GET_BROKER_RUNTIME_INFO request with a frame."""
    host, port = addr.rsplit(":", 1)
    request = encode(RemotingCommand.request(RequestCode.GET_BROKER_RUNTIME_INFO, {}))
    try:
        with socket.create_connection((host, int(port)), timeout=timeout) as conn:
            conn.sendall(request)
            length = int.from_bytes(_read(conn, LENGTH_FIELD_SIZE), "big")
            _read(conn, length)
    except OSError:
        return False
    return True


def _read(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise ConnectionError(f"closed after {len(data)} of {size} bytes")
        data += chunk
    return data


def process_start(pid: int) -> float:
    """When ``pid`` started, in seconds since boot (``CLOCK_BOOTTIME``'s scale)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return int(fields[_START_TIME_FIELD]) / os.sysconf("SC_CLK_TCK")


class StartWatch:
    """Times ``servers``' broker while the context is open around their start; :attr:`seconds` is None
    until its port answered."""

    def __init__(self, servers: LoopbackServers) -> None:
        self.servers = servers
        self.seconds: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(POLL_INTERVAL):
            with contextlib.suppress(KeyError, OSError):
                pid = self.servers.broker_pid
                port = self.servers.broker_config["listenPort"]
                started = process_start(pid)
                if answers(f"{LOOPBACK}:{port}"):
                    self.seconds = time.clock_gettime(time.CLOCK_BOOTTIME) - started
                    return

    def __enter__(self) -> StartWatch:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        if kind is None:  # started: the port answers now, so give the poll the moment it needs to see it
            self._thread.join(ANSWER_GRACE)
        self._stop.set()
        self._thread.join()
