"""``rmq-broker`` as a child process, so a test can crash it the way an operator's ``kill -9`` does.

An in-process broker cannot be crashed for real: whatever stops it still runs in the same interpreter. A
separate process killed with SIGKILL gets no chance to flush, to write its checkpoint or to remove its
abort file, and it can be stopped between any two bytes it writes, which is what recovery must survive.
"""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import IO

from tests.golden import PROJECT_ROOT

START_TIMEOUT_S = 30.0
"""Bound on the broker printing its addresses (it needs a second or two, more on a loaded machine)."""
STOP_TIMEOUT_S = 30.0
"""Bound on a clean stop, or on reaping a killed process."""
LOG_TAIL = 4000
"""Characters of the broker's log quoted in a failure message."""

_BANNERS = (re.compile(r"^name server (?P<namesrv>\S+), broker (?P<broker>\S+) \(fast \S+\)(, gRPC \S+)?, "
                       r"store .+$"),
            re.compile(r"^broker (?P<broker>\S+) \(fast \S+\)(, gRPC \S+)?, store .+, "
                       r"joined name server\(s\) (?P<namesrv>\S+)$"),
            re.compile(r"^name server (?P<namesrv>\S+)$"))
"""The line each role prints once it listens: the all-in-one, a broker that joined name servers, a name
server alone."""
FREE_PORTS = ("--namesrv-port", "0", "--broker-port", "0")


def write_broker_conf(path: Path, properties: dict[str, str]) -> Path:
    """A broker.conf with Java property names, as an operator would write it for ``rmq-broker -c``."""
    path.write_text("".join(f"{key}={value}\n" for key, value in properties.items()), encoding="utf-8")
    return path


class BrokerProcess:
    """One run of ``rmq-broker -c CONF`` on free ports (or of ``rmq-namesrv``, given ``command``); leaving
    the ``with`` block always ends the process (SIGKILL if it is still running), whatever happened inside.
    A broker whose conf names ``namesrvAddr`` joins that name server: give it ``options=("--broker-port",
    "0")``."""

    def __init__(self, conf: Path, log: Path, *, options: tuple[str, ...] = FREE_PORTS,
                 command: str = "main") -> None:
        self.conf = conf
        self.log = log
        self.options = options
        self.command = command
        self.broker_addr = ""
        self.namesrv_addr = ""
        self._process: subprocess.Popen[str] | None = None
        self._log_file: IO[str] | None = None

    @property
    def process(self) -> subprocess.Popen[str]:
        if self._process is None:
            raise RuntimeError("broker process not started")
        return self._process

    def __enter__(self) -> BrokerProcess:
        self._log_file = self.log.open("a", encoding="utf-8")
        self._process = subprocess.Popen(
            [sys.executable, "-c",
             f"import sys, rocketmq_spec.reference_broker.cli as c; sys.exit(c.{self.command}())",
             "-c", str(self.conf), *self.options],
            cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=self._log_file, text=True,
            env={**os.environ, "HOME": str(self.log.parent)})  # Java's default kvConfigPath is under $HOME
        try:
            self._read_banner()
        except BaseException:
            self._end()
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._end()

    def _read_banner(self) -> None:
        """Wait for the line the CLI prints once both servers listen and the store is open."""
        stdout = self.process.stdout
        assert stdout is not None
        deadline = time.monotonic() + START_TIMEOUT_S
        while (left := deadline - time.monotonic()) > 0:
            ready, _, _ = select.select([stdout], [], [], left)
            line = stdout.readline() if ready else ""
            match = next(filter(None, (banner.match(line.strip()) for banner in _BANNERS)), None)
            if match:
                self.namesrv_addr, self.broker_addr = match["namesrv"], match.groupdict().get("broker", "")
                return
            if not line:
                break
        code = self.process.poll()
        raise AssertionError(f"rmq-broker did not start (exit code {code}):\n{self.log_tail()}")

    def kill(self) -> None:
        """SIGKILL, then reap the process so its ports and store lock are certainly released."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(STOP_TIMEOUT_S)

    def stop(self) -> int:
        """SIGTERM, which the CLI turns into a clean shutdown; returns the exit code."""
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(STOP_TIMEOUT_S)

    def log_tail(self) -> str:
        if self._log_file is not None:
            self._log_file.flush()
        return self.log.read_text(encoding="utf-8", errors="replace")[-LOG_TAIL:]

    def _end(self) -> None:
        if self._process is not None:
            if self._process.poll() is None:
                self._process.kill()
            self._process.wait(STOP_TIMEOUT_S)
            if self._process.stdout is not None:
                self._process.stdout.close()
        if self._log_file is not None:
            self._log_file.close()
