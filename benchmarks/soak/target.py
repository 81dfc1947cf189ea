"""The broker under test: its addresses, its process (when known) and how to start, kill and stop it.

The harness reaches a broker only by address. Figures about the broker's own cost (RSS, CPU seconds)
need its pid and are read from ``/proc``; kill -9 cycles need a way to start it again, either a command
line (any broker, Java's included), the reference broker, which the harness can start itself, or a
release of Apache RocketMQ it provisions (``--target apache-VERSION``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from benchmarks.soak import wire
from rocketmq_spec.apache.servers import LoopbackServers
from rocketmq_spec.targets import servers

START_TIMEOUT_S = 120.0
"""A JVM on a loaded machine can take a minute to listen."""
STOP_TIMEOUT_S = 60.0
ROOT = Path(__file__).resolve().parents[2]


def raise_fd_limit(wanted: int) -> int:
    """Raise this process's open-file limit towards ``wanted`` (children inherit it); returns the limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        soft = target
    return soft


def rss_kib(pid: int | None) -> int | None:
    """Resident set of ``pid`` in KiB (``VmRSS``), None without a pid or once the process is gone."""
    if pid is None:
        return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def cpu_seconds(pid: int | None) -> float | None:
    """User plus system CPU time ``pid`` has used so far."""
    if pid is None:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def settled_rss_kib(target: Target) -> int | None:
    """RSS after giving the target a moment to release what closed connections held."""
    await asyncio.sleep(target.settle)
    return rss_kib(target.pid)


class Launcher(Protocol):
    """Starts a broker (``start`` returns once it answers), kills it (SIGKILL) and stops it cleanly."""

    def start(self) -> Target: ...

    def kill(self, target: Target) -> None: ...

    def stop(self, target: Target) -> None: ...


@dataclass
class Target:
    """A running broker: where it listens and, when known, its pid."""

    broker: str
    pid: int | None = None
    store: Path | None = None
    """Its store directory, for the offline check after a crash."""
    launcher: Launcher | None = None
    """How to start it again after a kill; None when the harness may not kill it."""
    settle: float = 2.0
    """Seconds given to the target to take in, or let go of, what a step did before its RSS is read."""


@dataclass
class CommandLauncher:
    """Starts a broker with a command and reports its pid; ``start`` blocks until it answers."""

    broker: str
    store: Path | None
    command: list[str] = field(default_factory=list)
    """Runs the broker in the foreground (the harness owns the process), or starts it in the
    background and exits (then ``pid_command`` names the broker's pid)."""
    pid_command: str | None = None
    stop_command: str | None = None
    log: Path | None = None
    """Where the broker's output goes (appended across restarts), when the harness runs it itself."""
    _process: subprocess.Popen[bytes] | None = None

    def start(self) -> Target:
        output = self.log.open("ab") if self.log is not None else subprocess.DEVNULL
        try:
            self._process = subprocess.Popen(self.command, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=output,
                                             stderr=subprocess.STDOUT, start_new_session=True)
        finally:
            if self.log is not None:
                output.close()  # type: ignore[union-attr]
        if self.pid_command is not None:
            self._process.wait(START_TIMEOUT_S)
        wire.wait_until_answering(self.broker, START_TIMEOUT_S)
        return Target(self.broker, self._pid(), self.store, self)

    def _pid(self) -> int:
        if self.pid_command is None:
            assert self._process is not None
            return self._process.pid
        done = subprocess.run(self.pid_command, shell=True, capture_output=True, text=True, check=True)
        return int(done.stdout.split()[0])

    def kill(self, target: Target) -> None:
        """SIGKILL, and wait until the process is gone (its ports and store lock released)."""
        assert target.pid is not None
        with contextlib.suppress(ProcessLookupError):
            os.kill(target.pid, signal.SIGKILL)
        self._reap(target.pid)

    def stop(self, target: Target) -> None:
        """A clean stop: the stop command, or SIGTERM."""
        assert target.pid is not None
        if self.stop_command is not None:
            subprocess.run(self.stop_command, shell=True, check=False, timeout=STOP_TIMEOUT_S)
        else:
            with contextlib.suppress(ProcessLookupError):
                os.kill(target.pid, signal.SIGTERM)
        self._reap(target.pid)

    def _reap(self, pid: int) -> None:
        if self._process is not None and self._process.pid == pid:
            self._process.wait(STOP_TIMEOUT_S)
            return
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.05)


def reference_launcher(store: Path, namesrv_port: int, broker_port: int, *,
                       sync_flush: bool) -> CommandLauncher:
    """The reference broker (``rmq-broker``) on fixed ports, run by the harness itself."""
    conf = store.parent / f"{store.name}.conf"
    store.mkdir(parents=True, exist_ok=True)
    properties = {"storePathRootDir": str(store),
                  "flushDiskType": "SYNC_FLUSH" if sync_flush else "ASYNC_FLUSH",
                  "mappedFileSizeCommitLog": str(4 * 1024 * 1024)}
    conf.write_text("".join(f"{k}={v}\n" for k, v in properties.items()), encoding="utf-8")
    command = [sys.executable, "-m", "rocketmq_spec.reference_broker.cli", "-c", str(conf), "--namesrv-port",
               str(namesrv_port), "--broker-port", str(broker_port), "--grpc-port", "0"]
    return CommandLauncher(f"127.0.0.1:{broker_port}", store, command, log=store.parent / f"{store.name}.log")


TRACEBACK = "Traceback (most recent call last)"


def tracebacks(log: Path) -> int:
    """Untyped failures the broker logged: Python's traceback header, one per exception."""
    with log.open(encoding="utf-8", errors="replace") as lines:
        return sum(TRACEBACK in line for line in lines)


def command_launcher(broker: str, store: Path | None, start: str, pid_command: str,
                     stop: str | None) -> CommandLauncher:
    """Any broker a shell command starts (in the background) and another one finds the pid of."""
    return CommandLauncher(broker, store, ["/bin/sh", "-c", start], pid_command, stop)


class ReleaseLauncher:
    """A provisioned release: its name server runs for the whole soak, its broker is started, killed and
    stopped on one store (``rocketmq_spec.apache.servers.LoopbackServers``); :func:`release_launcher` stops it
    all."""

    def __init__(self, cluster: LoopbackServers) -> None:
        self.cluster = cluster

    def start(self) -> Target:
        if self.cluster.namesrv_pid is None:
            self.cluster.start()
        else:
            self.cluster.restart_broker()
        return Target(self.cluster.broker_addr, self.cluster.broker_pid, self.cluster.store_path, self)

    def kill(self, target: Target) -> None:
        self.cluster.kill_broker()

    def stop(self, target: Target) -> None:
        self.cluster.stop_broker()


@contextlib.contextmanager
def release_launcher(name: str, home: Path, *, sync_flush: bool) -> Iterator[ReleaseLauncher]:
    """The release a target name (``apache-5.5.0``, ``rocketmq-rust-1.0.0``) names, with its home (and store)
    in ``home``."""
    settings = {"flushDiskType": "SYNC_FLUSH" if sync_flush else "ASYNC_FLUSH"}
    cluster = servers(name, home, broker_config=settings)
    try:
        yield ReleaseLauncher(cluster)
    finally:
        cluster.stop()
