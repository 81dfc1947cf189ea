"""A name server and a broker as child processes on loopback, whatever implementation they are.

What starting a real RocketMQ pair involves apart from the command lines: free ports, one output file
per process in ``HOME/logs``, waiting until the name server answers and the broker has registered with
it (or the process has exited, quoting its last output), and stopping both — SIGTERM to the process
group, SIGKILL after a grace period. :class:`apache_rocketmq.ApacheRocketMQ` and
``rocketmq_rust.RocketMQRust`` differ only in how they prepare their home and what they run.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Self

from admin.operations import Admin
from admin.wire import AdminError
from apache_rocketmq.maven import ProvisionError

LOOPBACK = "127.0.0.1"
START_TIMEOUT = 120.0
"""A cold JVM on a loaded 2-core machine takes 10-30 s to register a broker; this bounds a hung start."""
FAST_PORT_OFFSET = -2
HA_PORT_OFFSET = 1
"""Brokers serve the fast (VIP) channel on listenPort - 2 and HA on listenPort + 1."""

DEFAULT_BROKER_CONFIG: dict[str, str] = {
    "brokerClusterName": "DefaultCluster",
    "brokerName": "broker-a",
    "brokerId": "0",
    "brokerIP1": LOOPBACK,
    "autoCreateTopicEnable": "true",
    "flushDiskType": "ASYNC_FLUSH",
    "brokerRole": "ASYNC_MASTER",
}
"""What ``mqbroker`` with an empty broker.conf amounts to, pinned to loopback so routes name 127.0.0.1."""


class StartFailed(ProvisionError):
    """A name server or broker exited or did not become ready; the message quotes its last output."""


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("", port))
        except OSError:
            return False
    return True


def free_port(offsets: Sequence[int] = (0,)) -> int:
    """A port ``p`` such that every ``p + offset`` can be bound now (Java binds all interfaces)."""
    for _ in range(200):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind(("", 0))
            port = int(probe.getsockname()[1])
        if all(1024 < port + offset < 65536 and _bindable(port + offset) for offset in offsets):
            return port
    raise ProvisionError("no free port group found on this machine", expected="free ports", seen="none")


class LoopbackServers:
    """The processes of one name server and one broker, and the addresses they serve."""

    stop_grace = 30.0
    """How long a SIGTERM'd server may run its shutdown (a broker flushes and persists its offsets)."""

    def __init__(self, label: str, home: Path | None, *, store: Path | None = None,
                 namesrv: str | None = None, start_timeout: float = START_TIMEOUT) -> None:
        self.label = label
        """The implementation and version, as messages name it (``Apache RocketMQ 5.5.0``)."""
        self._temporary: tempfile.TemporaryDirectory[str] | None = None
        if home is None:
            self._temporary = tempfile.TemporaryDirectory(prefix=f"{label.lower().replace(' ', '-')}-")
            home = Path(self._temporary.name)
        self.home = home
        self.store_path = store or home / "store"
        self._external_namesrv = namesrv
        """A running name server to register with instead of starting one."""
        self._broker_port = 0
        """The broker's listenPort when given (0: a free one is chosen)."""
        self._start_timeout = start_timeout
        self._processes: dict[str, subprocess.Popen[bytes]] = {}
        self._outputs: list[IO[bytes]] = []
        self.namesrv_addr = ""
        self.broker_addr = ""
        self.broker_config: dict[str, str] = {}

    @property
    def broker_port(self) -> int:
        return int(self.broker_config["listenPort"])

    @property
    def broker_fast_addr(self) -> str:
        return f"{LOOPBACK}:{self.broker_port + FAST_PORT_OFFSET}"

    @property
    def ha_addr(self) -> str:
        return f"{LOOPBACK}:{self.broker_port + HA_PORT_OFFSET}"

    @property
    def broker_name(self) -> str:
        return self.broker_config["brokerName"]

    @property
    def broker_pid(self) -> int:
        return self._processes["broker"].pid

    @property
    def namesrv_pid(self) -> int | None:
        process = self._processes.get("namesrv")
        return process.pid if process else None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> Self:
        """Prepare, start the name server (unless one was given) and the broker; stop both on failure."""
        self._prepare()
        try:
            if self._external_namesrv is None:
                self._start_namesrv()
            else:
                self.namesrv_addr = self._external_namesrv
            self._start_broker()
        except BaseException:
            self.stop()
            raise
        return self

    def _prepare(self) -> None:
        """Whatever must exist before a server starts: binaries or jars, the home's files."""
        raise NotImplementedError

    def _start_namesrv(self) -> None:
        raise NotImplementedError

    def _start_broker(self) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        """Stop the broker, then the name server (reverse start order), each given time to shut down."""
        for role in ("broker", "namesrv"):
            process = self._processes.pop(role, None)
            if process is not None:
                terminate(process, self.stop_grace)
        for output in self._outputs:
            output.close()
        self._outputs.clear()
        if self._temporary is not None:
            self._temporary.cleanup()
            self._temporary = None

    def kill_broker(self) -> None:
        """SIGKILL the broker (a crash: nothing is flushed, the store keeps its ``abort`` file)."""
        process = self._processes.pop("broker")
        process.kill()
        process.wait()

    def stop_broker(self) -> None:
        """Stop the broker cleanly (SIGTERM: it flushes, persists its offsets and removes ``abort``)."""
        terminate(self._processes.pop("broker"), self.stop_grace)

    def restart_broker(self) -> None:
        """Start the broker again after :meth:`kill_broker` or :meth:`stop_broker`, on the same ports, store
        and settings; the name server keeps running."""
        assert "broker" not in self._processes, "kill_broker() or stop_broker() first"
        self._broker_port = self.broker_port
        self._start_broker()

    def environment(self) -> dict[str, str]:
        return {**os.environ, "ROCKETMQ_HOME": str(self.home), "NAMESRV_ADDR": self.namesrv_addr}

    def _spawn(self, role: str, command: list[str]) -> subprocess.Popen[bytes]:
        output = (self.home / "logs" / f"{role}.out").open("ab")
        self._outputs.append(output)
        process = subprocess.Popen(command, cwd=self.home, env=self.environment(), stdout=output,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        self._processes[role] = process
        return process

    def _wait(self, role: str, ready: Callable[[], bool]) -> None:
        deadline = time.monotonic() + self._start_timeout
        process = self._processes[role]
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise StartFailed(f"{self.label} {role} exited with status {process.returncode}: "
                                  f"{self._last_output(role)}",
                                  expected=f"a running {role}", seen=f"exit {process.returncode}")
            if ready():
                return
            time.sleep(0.25)
        raise StartFailed(f"{self.label} {role} was not ready within {self._start_timeout:.0f} s: "
                          f"{self._last_output(role)}", expected=f"a ready {role}", seen="timeout")

    def _namesrv_ready(self) -> bool:
        try:
            Admin(self.namesrv_addr, 2.0).cluster_info()
        except AdminError:
            return False
        return True

    def _broker_registered(self) -> bool:
        try:
            info = Admin(self.namesrv_addr, 2.0).cluster_info()
        except AdminError:
            return False
        entry = (info.get("brokerAddrTable") or {}).get(self.broker_name) or {}
        addrs = {str(key): value for key, value in (entry.get("brokerAddrs") or {}).items()}
        # a killed broker's registration can outlive it for a moment: its port must answer as well
        return addrs.get(self.broker_config["brokerId"]) == self.broker_addr and _listening(self.broker_port)

    def _last_output(self, role: str) -> str:
        path = self.home / "logs" / f"{role}.out"
        try:
            lines = [line for line in path.read_text(encoding="utf-8", errors="replace").splitlines() if line]
        except OSError:
            return "(no output)"
        return " | ".join(lines[-3:]) or "(no output)"


def _listening(port: int) -> bool:
    try:
        socket.create_connection((LOOPBACK, port), timeout=2.0).close()
    except OSError:
        return False
    return True


def terminate(process: subprocess.Popen[bytes], grace: float = LoopbackServers.stop_grace) -> None:
    """SIGTERM the process's group, then SIGKILL it if it has not exited within ``grace`` seconds."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
