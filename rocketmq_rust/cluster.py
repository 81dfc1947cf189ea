"""A rocketmq-rust name server and broker on loopback, started from installed binaries.

:class:`RocketMQRust` is to a rocketmq-rust release what :class:`apache_rocketmq.ApacheRocketMQ` is to an
Apache one, with the same attributes (``namesrv_addr``, ``broker_addr``, ``store_path``, ``broker_pid``,
``kill_broker()``), so a test or a run is pointed at either the same way. The broker reads a Java-style
``broker.properties`` (its README's migration path) written into a ``ROCKETMQ_HOME`` of the instance's
own. ``HOME`` is pointed there too, so what the binaries write by default (the name server's
``~/rocketmq-namesrv``) never lands in the user's home directory and two instances share no file.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Self

from admin.operations import Admin
from admin.wire import AdminError
from apache_rocketmq.cluster import (
    DEFAULT_BROKER_CONFIG,
    FAST_PORT_OFFSET,
    HA_PORT_OFFSET,
    LOOPBACK,
    START_TIMEOUT,
    StartFailed,
    free_port,
    listening,
    terminate,
)
from apache_rocketmq.home import write_properties
from rocketmq_rust.cargo import binary_path, require_installed
from rocketmq_rust.releases import Release, release

RENAMED_KEYS = {"transactionTimeOut": "transactionTimeout",
                "osPageCacheBusyTimeOutMills": "osPageCacheBusyTimeoutMills"}
"""Java broker.conf keys rocketmq-rust spells otherwise. Its Java-properties reader refuses a key it does
not map and the broker does not start (rocketmq-broker-1.0.0/src/config/java_properties.rs,
resolve_mapping: UnsupportedKeys), so settings given with Java's names are written with its own."""


class LoopbackServers:
    """The processes of one name server and one broker, and the addresses they serve."""

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
    def grpc_addr(self) -> str:
        """Where a 5.x SDK connects over gRPC; empty: these servers speak remoting only."""
        return ""

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
                terminate(process)
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
        terminate(self._processes.pop("broker"))

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
        return addrs.get(self.broker_config["brokerId"]) == self.broker_addr and listening(self.broker_port)

    def _last_output(self, role: str) -> str:
        path = self.home / "logs" / f"{role}.out"
        try:
            lines = [line for line in path.read_text(encoding="utf-8", errors="replace").splitlines() if line]
        except OSError:
            return "(no output)"
        return " | ".join(lines[-3:]) or "(no output)"


class RocketMQRust(LoopbackServers):
    """A name server and a broker of one release; ``namesrv=`` joins an existing name server instead."""

    def __init__(self, version: str | Release, *, home: Path | None = None, store: Path | None = None,
                 namesrv: str | None = None, broker_port: int = 0,
                 broker_config: Mapping[str, object] | None = None,
                 start_timeout: float = START_TIMEOUT) -> None:
        self.release = version if isinstance(version, Release) else release(version)
        super().__init__(f"rocketmq-rust {self.release.version}", home, store=store,
                         namesrv=namesrv, start_timeout=start_timeout)
        self._broker_port = broker_port
        self._overrides = {key: str(value) for key, value in (broker_config or {}).items()}

    def _prepare(self) -> None:
        require_installed(self.release)
        for directory in ("conf", "logs"):
            (self.home / directory).mkdir(parents=True, exist_ok=True)

    def environment(self) -> dict[str, str]:
        return {**super().environment(), "HOME": str(self.home)}

    def _binary(self, name: str) -> str:
        return str(binary_path(self.release, name))

    def _start_namesrv(self) -> None:
        port = free_port()
        self.namesrv_addr = f"{LOOPBACK}:{port}"
        self._spawn("namesrv", [self._binary(self.release.namesrv.name), "--listenPort", str(port),
                                "--bindAddress", LOOPBACK, "--rocketmqHome", str(self.home),
                                "--kvConfigPath", str(self.home / "namesrv" / "kvConfig.json")])
        self._wait("namesrv", self._namesrv_ready)

    def _start_broker(self) -> None:
        port = self._broker_port or free_port((FAST_PORT_OFFSET, 0, HA_PORT_OFFSET))
        # The broker takes its HA port from haListenPort, not from listenPort + 1 as Java does.
        self.broker_config = {**DEFAULT_BROKER_CONFIG, "listenPort": str(port),
                              "haListenPort": str(port + HA_PORT_OFFSET), "namesrvAddr": self.namesrv_addr,
                              "storePathRootDir": str(self.store_path), **self._overrides}
        own_names = {RENAMED_KEYS.get(key, key): value for key, value in self.broker_config.items()}
        config = write_properties(self.home / "conf" / "broker.properties", own_names)
        self._spawn("broker", [self._binary(self.release.broker.name), "-c", str(config),
                               "-n", self.namesrv_addr])
        self.broker_addr = f"{LOOPBACK}:{self.broker_port}"
        self._wait("broker", self._broker_registered)
