"""Running a client driver: one process per scenario, configured by environment, reporting JSON events.

The contract (docs/clients.md): ``DRIVER SCENARIO`` with ``RMQ_*`` variables, one JSON object per stdout
line (``ready``, ``sent``, ``received``, ``error``, ``unsupported``, ``done``), exit status 0 when the
scenario ran, 3 when it is not implemented. A driver that outlives its budget plus a grace period is
killed (its whole process group) and reported as hung; lines that are not JSON events are kept aside, as
a native client library may print on stdout too.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

UNSUPPORTED_EXIT = 3
"""Exit status of a driver that does not implement the scenario."""
GRACE_S = 15.0
"""What a driver gets past its RMQ_TIMEOUT_S before it is killed: a client's shutdown (unregistering,
committing offsets) may run a little past the scenario's own budget."""
STDERR_KEPT = 8000
"""Characters of a driver's stderr kept for the case's log."""


class DriverNotRunnable(Exception):
    """The driver cannot be started at all (no such file, not executable): the run stops with one line."""


@dataclass(frozen=True)
class Event:
    at: float
    """When the suite read the line, on the scenario's recording clock."""
    data: dict[str, Any]

    @property
    def kind(self) -> str:
        return str(self.data.get("event", ""))


@dataclass
class DriverRun:
    scenario: str
    exit_status: int | None = None
    hung: bool = False
    events: list[Event] = field(default_factory=list)
    stray: list[str] = field(default_factory=list)
    stderr: str = ""

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e.data for e in self.events if e.kind == kind]

    def first(self, kind: str) -> Event | None:
        return next((e for e in self.events if e.kind == kind), None)

    @property
    def unsupported(self) -> str | None:
        """The driver's reason when it does not implement the scenario, else None."""
        if self.exit_status != UNSUPPORTED_EXIT and not self.of("unsupported"):
            return None
        reasons = [str(e.get("reason", "")) for e in self.of("unsupported")]
        return "; ".join(r for r in reasons if r) or "the driver does not implement this scenario"

    @property
    def failed(self) -> str | None:
        """Why the driver itself failed (hung, or an exit status other than 0 and 3), else None."""
        if self.hung:
            return "the driver did not finish within its budget and was killed"
        if self.exit_status not in (0, UNSUPPORTED_EXIT):
            tail = self.stderr.strip().splitlines()[-1:] or [""]
            return f"the driver exited with status {self.exit_status}: {tail[0]}"
        return None


def check_runnable(argv: Sequence[str]) -> None:
    """Refuse a driver path that is missing or not executable before any server starts."""
    program = Path(argv[0])
    if program.is_absolute() or "/" in argv[0]:
        if not program.is_file():
            raise DriverNotRunnable(f"driver {argv[0]} does not exist")
        if not os.access(program, os.X_OK):
            raise DriverNotRunnable(
                f"driver {argv[0]} is not executable (chmod +x it, or give an interpreter)"
            )


def run(
    argv: Sequence[str],
    scenario: str,
    env: Mapping[str, str],
    timeout_s: float,
    clock: Callable[[], float] = time.monotonic,
    *,
    cwd: Path | None = None,
) -> DriverRun:
    """Run ``argv SCENARIO`` with ``env`` added to the suite's environment, until it exits or is killed."""
    result = DriverRun(scenario)
    try:
        process = subprocess.Popen(
            [*argv, scenario],
            env={**os.environ, **env},
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        raise DriverNotRunnable(f"driver {argv[0]} cannot be started: {exc}") from None
    stderr_chunks: list[bytes] = []

    def read_stdout() -> None:
        assert process.stdout is not None
        for raw in process.stdout:
            line = raw.decode(errors="replace").strip()
            try:
                data = json.loads(line)
            except json.JSONDecodeError:
                data = None
            if isinstance(data, dict) and "event" in data:
                result.events.append(Event(clock(), data))
            elif line:
                result.stray.append(line)

    def read_stderr() -> None:
        assert process.stderr is not None
        for raw in process.stderr:
            stderr_chunks.append(raw)

    readers = [
        threading.Thread(target=read_stdout, daemon=True),
        threading.Thread(target=read_stderr, daemon=True),
    ]
    for reader in readers:
        reader.start()
    try:
        result.exit_status = process.wait(timeout=timeout_s + GRACE_S)
    except subprocess.TimeoutExpired:
        result.hung = True
    _kill_group(process)
    for reader in readers:
        reader.join(timeout=5)
    result.stderr = b"".join(stderr_chunks).decode(errors="replace")[-STDERR_KEPT:]
    return result


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """Kill what is left of the driver's own process group (a hung driver, or children it left behind)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
