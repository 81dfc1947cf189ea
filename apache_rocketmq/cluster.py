"""A real Apache RocketMQ name server and broker on loopback, started from provisioned jars.

:class:`ApacheRocketMQ` is to a release what ``reference_broker.embedded.SyncEmbeddedRocketMQ`` is to the
reference broker: a context manager that starts a name server and a broker on free ports, returns once
the broker has registered with the name server, and stops both (SIGTERM, then SIGKILL after a grace
period) on exit. Each instance runs in a ``ROCKETMQ_HOME`` of its own (:mod:`apache_rocketmq.home`).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from admin.operations import Admin
from admin.wire import AdminError
from apache_rocketmq.home import read_properties, write_home, write_properties
from apache_rocketmq.jdk import Jdk, find_jdk
from apache_rocketmq.maven import ProvisionError, resolve
from apache_rocketmq.releases import Release, release

NAMESRV_MAIN = "org.apache.rocketmq.namesrv.NamesrvStartup"
BROKER_MAIN = "org.apache.rocketmq.broker.BrokerStartup"
MQADMIN_MAIN = "org.apache.rocketmq.tools.command.MQAdminStartup"
PROXY_MAIN = "org.apache.rocketmq.proxy.ProxyStartup"
"""Run with ``-pm local`` it creates the broker from broker.conf in its own JVM and serves gRPC beside it
(``ProxyStartup.createBrokerController``)."""

LOOPBACK = "127.0.0.1"
START_TIMEOUT = 120.0
"""A cold JVM on a loaded 2-core machine takes 10-30 s to register a broker; this bounds a hung start."""
BIND_ATTEMPTS = 3
STOP_GRACE = 30.0
"""How long a SIGTERM'd JVM may run its shutdown hooks (a broker flushes and persists its offsets)."""
FAST_PORT_OFFSET = -2
HA_PORT_OFFSET = 1
"""BrokerStartup serves the fast (VIP) channel on listenPort - 2 and HA on listenPort + 1."""

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


class ApacheRocketMQ:
    """A name server and a broker of one release; ``namesrv=`` joins an existing name server instead."""

    def __init__(self, version: str | Release, *, home: Path | None = None, store: Path | None = None,
                 namesrv_port: int = 0, broker_port: int = 0, namesrv: str | None = None,
                 broker_config: Mapping[str, object] | None = None, config_file: Path | None = None,
                 heap_mb: int = 512, start_timeout: float = START_TIMEOUT, progress: bool = False,
                 grpc: bool = False) -> None:
        self.release = version if isinstance(version, Release) else release(version)
        if grpc and not self.release.has_proxy:
            raise ProvisionError(f"Apache RocketMQ {self.release.version} has no rocketmq-proxy to serve "
                                 "gRPC", expected="a 5.x release", seen=self.release.version)
        self._grpc = grpc
        self.grpc_addr = ""
        """The gRPC port of the release's proxy, when started with ``grpc=True`` (local mode)."""
        self._temporary: tempfile.TemporaryDirectory[str] | None = None
        if home is None:
            self._temporary = tempfile.TemporaryDirectory(prefix=f"apache-rocketmq-{self.release.version}-")
            home = Path(self._temporary.name)
        self.home = home
        self.store_path = store or home / "store"
        self._namesrv_port = namesrv_port
        self._broker_port = broker_port
        self._external_namesrv = namesrv
        self._overrides = dict(read_properties(config_file)) if config_file else {}
        self._overrides.update({key: str(value) for key, value in (broker_config or {}).items()})
        self._heap_mb = heap_mb
        self._start_timeout = start_timeout
        self._progress = progress
        self._processes: dict[str, subprocess.Popen[bytes]] = {}
        self._outputs: list[IO[bytes]] = []
        self.jdk: Jdk | None = None
        self.classpath: list[Path] = []
        self.namesrv_addr = ""
        self.broker_addr = ""
        self.broker_config: dict[str, str] = {}

    # -- addresses --------------------------------------------------------------------------------------

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

    # -- life cycle -------------------------------------------------------------------------------------

    def __enter__(self) -> ApacheRocketMQ:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> ApacheRocketMQ:
        self.jdk = find_jdk(self.release.min_java)
        self.classpath = resolve(self.release, progress=self._progress)
        write_home(self.home, self.release)
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

    def stop(self) -> None:
        """Stop the broker, then the name server (reverse start order), each given time to shut down."""
        for role in ("broker", "namesrv"):
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

    def restart_broker(self) -> None:
        """Start the broker again after :meth:`kill_broker` or :meth:`stop_broker`, on the same ports, store
        and settings; the name server keeps running."""
        assert "broker" not in self._processes, "kill_broker() or stop_broker() first"
        self._broker_port = self.broker_port
        self._start_broker()

    # -- processes --------------------------------------------------------------------------------------

    def java_command(self, main_class: str, *args: str, heap_mb: int | None = None) -> list[str]:
        """The command line running ``main_class`` of this release (also mqadmin and the clients)."""
        assert self.jdk is not None, "start() or provision() first"
        return [str(self.jdk.java), *java_options(self.release, self.home, heap_mb or 256),
                "-cp", os.pathsep.join(map(str, self.classpath)), main_class, *args]

    def environment(self) -> dict[str, str]:
        return {**os.environ, "ROCKETMQ_HOME": str(self.home), "NAMESRV_ADDR": self.namesrv_addr}

    def _spawn(self, role: str, command: list[str]) -> subprocess.Popen[bytes]:
        output = (self.home / "logs" / f"{role}.out").open("ab")
        self._outputs.append(output)
        process = subprocess.Popen(command, cwd=self.home, env=self.environment(), stdout=output,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        self._processes[role] = process
        return process

    def _with_free_ports(self, role: str, start: Callable[[], None], *, chosen: bool) -> None:
        """Start ``role``; when its ports were picked here and another process took one between the pick
        and the JVM's bind (a shared machine binds ports all the time), pick again."""
        for attempt in range(BIND_ATTEMPTS):
            try:
                start()
                return
            except StartFailed:
                if chosen or attempt + 1 == BIND_ATTEMPTS or not self._bind_failed(role):
                    raise
                self._processes.pop(role, None)
                log = self.home / "logs" / f"{role}.out"
                log.rename(log.with_name(f"{role}.out.{attempt}"))

    def _bind_failed(self, role: str) -> bool:
        path = self.home / "logs" / f"{role}.out"
        text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
        return "Address already in use" in text or "BindException" in text

    def _start_namesrv(self) -> None:
        port = self._namesrv_port or free_port()
        config = write_properties(self.home / "conf" / "namesrv.conf", {"listenPort": port})
        self.namesrv_addr = f"{LOOPBACK}:{port}"
        self._spawn("namesrv", self.java_command(NAMESRV_MAIN, "-c", str(config), heap_mb=256))
        self._wait("namesrv", self._namesrv_ready)

    def _start_broker(self) -> None:
        port = self._broker_port or free_port((FAST_PORT_OFFSET, 0, HA_PORT_OFFSET))
        self.broker_config = {**DEFAULT_BROKER_CONFIG, "listenPort": str(port),
                              "namesrvAddr": self.namesrv_addr, "storePathRootDir": str(self.store_path),
                              **self._overrides}
        config = write_properties(self.home / "conf" / "broker.conf", self.broker_config)
        if self._grpc:
            self._spawn("broker", self.java_command(PROXY_MAIN, "-pm", "local", "-bc", str(config), "-pc",
                                                    str(self._proxy_config()), heap_mb=self._heap_mb))
        else:
            self._spawn("broker", self.java_command(BROKER_MAIN, "-c", str(config), heap_mb=self._heap_mb))
        self.broker_addr = f"{LOOPBACK}:{self.broker_port}"
        self._wait("broker", self._broker_registered)

    def _proxy_config(self) -> Path:
        """rmq-proxy.json of a local-mode proxy: free gRPC and remoting ports (8081 and 8080 by default)."""
        grpc_port = int(self.grpc_addr.rsplit(":", 1)[1]) if self.grpc_addr else free_port()
        self.grpc_addr = f"{LOOPBACK}:{grpc_port}"
        path = self.home / "conf" / "rmq-proxy.json"
        path.write_text(json.dumps({"rocketMQClusterName": self.broker_config["brokerClusterName"],
                                    "grpcServerPort": grpc_port, "remotingListenPort": free_port(),
                                    "namesrvAddr": self.namesrv_addr}), encoding="utf-8")
        return path

    def _wait(self, role: str, ready: Any) -> None:
        deadline = time.monotonic() + self._start_timeout
        process = self._processes[role]
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise StartFailed(f"Apache RocketMQ {self.release.version} {role} exited with status "
                                  f"{process.returncode}: {self._last_output(role)}",
                                  expected=f"a running {role}", seen=f"exit {process.returncode}")
            if ready():
                return
            time.sleep(0.25)
        raise StartFailed(f"Apache RocketMQ {self.release.version} {role} was not ready within "
                          f"{self._start_timeout:.0f} s: {self._last_output(role)}",
                          expected=f"a ready {role}", seen="timeout")

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
        registered = (addrs.get(self.broker_config["brokerId"]) == self.broker_addr
                      and _listening(self.broker_port))
        return registered and (not self.grpc_addr or _listening(int(self.grpc_addr.rsplit(":", 1)[1])))

    def _last_output(self, role: str) -> str:
        path = self.home / "logs" / f"{role}.out"
        try:
            lines = [line for line in path.read_text(encoding="utf-8", errors="replace").splitlines() if line]
        except OSError:
            return "(no output)"
        return " | ".join(lines[-3:]) or "(no output)"


def java_options(row: Release, home: Path, heap_mb: int) -> list[str]:
    """What every JVM of a release runs with: a modest heap, ``home`` as its home directory (so the logs
    and files it writes by default stay there) and the options the release needs on this Java."""
    return [f"-Xmx{heap_mb}m", f"-Duser.home={home}", f"-Drocketmq.home.dir={home}",
            f"-Drocketmq.client.logRoot={home / 'logs'}", "-Djava.net.preferIPv4Stack=true",
            *row.java_options]


def _listening(port: int) -> bool:
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


def provision(version: str, *, progress: bool = False) -> tuple[Release, Jdk, list[Path]]:
    """Resolve a release without starting anything: its row, the JDK chosen for it and its class path."""
    row = release(version)
    jdk = find_jdk(row.min_java)
    return row, jdk, resolve(row, progress=progress)
