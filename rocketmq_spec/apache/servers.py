"""A name server and a broker as child processes on loopback, whatever implementation they are.

What starting a real RocketMQ pair involves apart from the command lines: free ports (picked again when
another process took one between the pick and the bind), one output file per process in ``HOME/logs``,
waiting until the name server answers and the broker has registered with it (or the process has exited,
quoting its last output), and stopping both — SIGTERM to the process group, SIGKILL after a grace period.
:class:`rocketmq_spec.apache.ApacheRocketMQ` and ``rocketmq_spec.rocketmq_rust.RocketMQRust`` differ only in
how they prepare their home and what they run.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import IO, Self

from rocketmq_spec.admin.operations import Admin
from rocketmq_spec.admin.wire import AdminError
from rocketmq_spec.apache.maven import ProvisionError
from rocketmq_spec.spec.acl_file import ROCKETMQ_HOME_ENV
from rocketmq_spec.spec.behaviour import FAST_PORT_OFFSET
from rocketmq_spec.spec.ha import HA_PORT_OFFSET

LOOPBACK = "127.0.0.1"
START_TIMEOUT = 120.0
"""A cold JVM on a loaded 2-core machine takes 10-30 s to register a broker; this bounds a hung start."""
BIND_ATTEMPTS = 3
STOP_GRACE = 30.0
"""How long a SIGTERM'd server may run its shutdown hooks (a broker flushes and persists its offsets)."""
BROKER_PORT_OFFSETS = (-FAST_PORT_OFFSET, 0, HA_PORT_OFFSET)
"""The ports a broker listens on, from its listenPort: the fast (VIP) channel, itself and HA."""

DEFAULT_BROKER_CONFIG: dict[str, str] = {
    "brokerClusterName": "DefaultCluster",
    "brokerName": "broker-a",
    "brokerId": "0",
    "brokerIP1": LOOPBACK,
    "autoCreateTopicEnable": "true",
    "flushDiskType": "ASYNC_FLUSH",
    "brokerRole": "ASYNC_MASTER",
    "waitTimeMillsInSendQueue": "60000",
    "osPageCacheBusyTimeOutMills": "60000",
}
"""What ``mqbroker`` with an empty broker.conf amounts to, pinned to loopback so routes name 127.0.0.1, and
without flow control on a busy machine: by default a send that waited 200 ms in the broker's queue, or a
page cache locked for 1 s, is answered 2 SYSTEM_BUSY, which a loaded machine produces and an idle one does
not, so every test, check and comparison against a release would depend on the machine's load."""


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


def listening(port: int) -> bool:
    try:
        socket.create_connection((LOOPBACK, port), timeout=2.0).close()
    except OSError:
        return False
    return True


def terminate(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        process.wait(STOP_GRACE)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


class LoopbackServers:
    """The processes of one name server and one broker, and the addresses they serve.

    A subclass prepares the home (:meth:`_prepare`) and starts each server (:meth:`_start_namesrv`,
    :meth:`_start_broker`, which set ``namesrv_addr``, ``broker_config`` and ``broker_addr``)."""

    def __init__(self, label: str, home: Path | None, *, store: Path | None = None,
                 namesrv_port: int = 0, broker_port: int = 0, namesrv: str | None = None,
                 start_timeout: float = START_TIMEOUT) -> None:
        self.label = label
        """The implementation and version, as messages name it (``Apache RocketMQ 5.5.0``)."""
        self._temporary: tempfile.TemporaryDirectory[str] | None = None
        if home is None:
            self._temporary = tempfile.TemporaryDirectory(prefix=f"{label.lower().replace(' ', '-')}-")
            home = Path(self._temporary.name)
        self.home = home
        self.store_path = store or home / "store"
        self._namesrv_port = namesrv_port
        self._broker_port = broker_port
        """The ports given (0: a free one is chosen, and chosen again when another process takes it)."""
        self._external_namesrv = namesrv
        """A running name server to register with instead of starting one."""
        self._start_timeout = start_timeout
        self._processes: dict[str, subprocess.Popen[bytes]] = {}
        self._outputs: list[IO[bytes]] = []
        self.namesrv_addr = ""
        self.broker_addr = ""
        self.grpc_addr = ""
        """Where a 5.x SDK connects over gRPC; empty when the servers speak remoting only."""
        self.broker_config: dict[str, str] = {}
        self.tls_only = False
        """The servers refuse plain text (``tls.server.mode=enforcing``): readiness is asked over TLS."""
        self._overrides: dict[str, str] = {}
        """broker.conf settings over :data:`DEFAULT_BROKER_CONFIG` and the addresses (a subclass fills it)."""

    # -- addresses --------------------------------------------------------------------------------------

    @property
    def broker_port(self) -> int:
        return int(self.broker_config["listenPort"])

    @property
    def broker_fast_addr(self) -> str:
        return f"{LOOPBACK}:{self.broker_port - FAST_PORT_OFFSET}"

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

    # -- life cycle -------------------------------------------------------------------------------------

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> Self:
        """Prepare, start the name server (unless one was given) and the broker; stop both on failure."""
        self._prepare()
        try:
            if self._external_namesrv is None:
                self._with_free_ports("namesrv", self._start_namesrv, chosen=bool(self._namesrv_port))
            else:
                self.namesrv_addr = self._external_namesrv
            self._with_free_ports("broker", self._start_broker, chosen=bool(self._broker_port))
        except BaseException:
            self.stop()
            raise
        return self

    def start_namesrv(self) -> Self:
        """Prepare and start the name server alone, for brokers started by someone else; ``stop`` stops it."""
        self._prepare()
        try:
            self._with_free_ports("namesrv", self._start_namesrv, chosen=bool(self._namesrv_port))
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

    def _broker_settings(self) -> int:
        """Pick the broker's port (its fast and HA ports free too) and set ``broker_config``: Java's
        defaults, the port, the name server and the store, then the overrides; returns the port."""
        port = self._broker_port or free_port(BROKER_PORT_OFFSETS)
        self.broker_config = {**DEFAULT_BROKER_CONFIG, "listenPort": str(port),
                              "namesrvAddr": self.namesrv_addr, "storePathRootDir": str(self.store_path),
                              **self._overrides}
        return port

    def stop(self) -> None:
        """Stop the broker, then the name server (reverse start order), each given time to shut down."""
        others = [role for role in self._processes if role not in ("broker", "namesrv")]
        for role in ("broker", *others, "namesrv"):
            process = self._processes.pop(role, None)
            if process is not None:
                terminate(process)
        for output in self._outputs:
            output.close()
        self._outputs.clear()
        if self._temporary is not None:
            self._temporary.cleanup()
            self._temporary = None

    def kill_broker(self) -> None:
        """SIGKILL the broker (a crash: no shutdown hook runs, the store keeps its ``abort`` file)."""
        process = self._processes.pop("broker")
        process.kill()
        process.wait()

    def stop_broker(self) -> None:
        """Stop the broker cleanly (SIGTERM: it flushes, persists its offsets and removes ``abort``)."""
        terminate(self._processes.pop("broker"))

    def restart_broker(self, broker_id: int | None = None) -> None:
        """Start the broker again after :meth:`kill_broker` or :meth:`stop_broker`, on the same ports, store
        and settings; the name server keeps running. ``broker_id``: the id it registers under this time (a
        broker in controller mode may come back a slave)."""
        assert "broker" not in self._processes, "kill_broker() or stop_broker() first"
        self._broker_port = self.broker_port
        if broker_id is not None:
            self._overrides["brokerId"] = str(broker_id)
        self._start_broker()

    # -- processes --------------------------------------------------------------------------------------

    def environment(self) -> dict[str, str]:
        return {**os.environ, ROCKETMQ_HOME_ENV: str(self.home), "NAMESRV_ADDR": self.namesrv_addr}

    def _spawn(self, role: str, command: list[str]) -> subprocess.Popen[bytes]:
        output = (self.home / "logs" / f"{role}.out").open("ab")
        self._outputs.append(output)
        process = subprocess.Popen(command, cwd=self.home, env=self.environment(), stdout=output,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        self._processes[role] = process
        return process

    def _with_free_ports(self, role: str, start: Callable[[], None], *, chosen: bool) -> None:
        """Start ``role``; when its ports were picked here and another process took one between the pick
        and the server's bind (a shared machine binds ports all the time), pick again."""
        for attempt in range(BIND_ATTEMPTS):
            try:
                start()
                return
            except StartFailed:
                if chosen or attempt + 1 == BIND_ATTEMPTS or not self._bind_failed(role):
                    raise
                self._processes.pop(role, None)
                if role == "broker":  # picked with the broker's port, kept only for a restart
                    self.grpc_addr = ""
                log = self.home / "logs" / f"{role}.out"
                log.rename(log.with_name(f"{role}.out.{attempt}"))

    def _bind_failed(self, role: str) -> bool:
        path = self.home / "logs" / f"{role}.out"
        text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
        # Java's "Address already in use", and the reference broker's up-front port check's lower-case one
        return "address already in use" in text.lower() or "BindException" in text

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
            Admin(self.namesrv_addr, 2.0, tls=self.tls_only).cluster_info()
        except AdminError:
            return False
        return True

    def _broker_registered(self) -> bool:
        try:
            info = Admin(self.namesrv_addr, 2.0, tls=self.tls_only).cluster_info()
        except AdminError:
            return False
        entry = (info.get("brokerAddrTable") or {}).get(self.broker_name) or {}
        addrs = {str(key): value for key, value in (entry.get("brokerAddrs") or {}).items()}
        # a killed broker's registration can outlive it for a moment: its port must answer as well
        registered = (addrs.get(self.broker_config["brokerId"]) == self.broker_addr
                      and listening(self.broker_port))
        return registered and (not self.grpc_addr or listening(int(self.grpc_addr.rsplit(":", 1)[1])))

    def _last_output(self, role: str) -> str:
        path = self.home / "logs" / f"{role}.out"
        try:
            lines = [line for line in path.read_text(encoding="utf-8", errors="replace").splitlines() if line]
        except OSError:
            return "(no output)"
        return " | ".join(lines[-3:]) or "(no output)"


def add_run_options(run: argparse.ArgumentParser) -> None:
    """The options of ``run`` that every kind of :class:`LoopbackServers` takes (``rmq-apache``,
    ``rmq-rust``): where the broker listens, its store and the home it runs in."""
    run.add_argument("--broker-port", type=int, default=0, metavar="N",
                     help="listenPort (default: a free port whose -2 and +1 neighbours are free too)")
    run.add_argument("--store", type=Path, metavar="DIR", help="storePathRootDir (default: HOME/store)")
    run.add_argument("--home", type=Path, metavar="DIR",
                     help="the ROCKETMQ_HOME to run in, kept afterwards (default: a temporary directory)")


def serve_until_signalled(servers: LoopbackServers) -> int:
    """Start ``servers``, print one line with their addresses, and stop them on SIGINT or SIGTERM (what
    ``rmq-apache run`` and ``rmq-rust run`` do)."""

    def _stop(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _stop)
    try:
        servers.start()
        print(f"{servers.label} ready: namesrv {servers.namesrv_addr} broker {servers.broker_addr} "
              f"(broker pid {servers.broker_pid}, home {servers.home})", flush=True)
        signal.pause()
    except KeyboardInterrupt:
        pass
    finally:
        # a second Ctrl-C must not cut the servers' shutdown short and leave them running
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        servers.stop()
    return 0
