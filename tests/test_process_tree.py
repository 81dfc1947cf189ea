"""A command a test starts takes what it started down with it: on a timeout, on a failure inside the block
that runs it, and when it ends leaving a process in its group (``tests.process_tree``).

The command is a shell that starts a long ``sleep`` the way the project's launchers start a server: in a
session of its own (``setsid``), out of reach of a kill of the shell's group; a second one stays in the
shell's group, orphaned once the shell exits.
"""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from tests.process_tree import run, spawned

TIMEOUT_S = 15.0
"""The shell's timeout: it writes the pids and then waits forever, so it always reaches this bound."""
WRITTEN_S = 60.0
"""Bound on the shell writing its children's pids (milliseconds on an idle machine)."""
LAUNCHER = ('setsid sleep 600 & echo $! > "$1.tmp"; sleep 600 & echo $! >> "$1.tmp"; mv "$1.tmp" "$1"; '
            '[ "$2" = exit ] || sleep 600')
"""``sh -c LAUNCHER sh PIDFILE [exit]``: a server-like child in its own session, one in the shell's group,
their pids in PIDFILE once both run; then the shell waits, or exits at once with ``exit``."""


def launcher(pids: Path, *then: str) -> list[str]:
    return ["sh", "-c", LAUNCHER, "sh", str(pids), *then]


def children(pids: Path) -> list[int]:
    deadline = time.monotonic() + WRITTEN_S
    while not pids.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    return [int(line) for line in pids.read_text().split()]


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@contextlib.contextmanager
def cleanup(pids: Path) -> Iterator[None]:
    """Kill what the test asserts is gone, so that a failing test leaves no sleep behind either."""
    try:
        yield
    finally:
        for pid in children(pids) if pids.exists() else []:
            with contextlib.suppress(psutil.NoSuchProcess):
                psutil.Process(pid).kill()


def test_a_timed_out_command_takes_its_servers_with_it(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    with cleanup(pids):
        with pytest.raises(subprocess.TimeoutExpired):
            run(launcher(pids), timeout=TIMEOUT_S)
        assert [pid for pid in children(pids) if alive(pid)] == []


def test_a_failure_inside_the_block_kills_the_tree(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    with cleanup(pids):
        with pytest.raises(AssertionError), spawned(launcher(pids)):
            started = children(pids)
            assert all(alive(pid) for pid in started)
            raise AssertionError("a check of the test failed")
        assert [pid for pid in started if alive(pid)] == []


def test_a_command_that_ended_leaves_nothing_in_its_group(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    with cleanup(pids):
        done = run(launcher(pids, "exit"), timeout=TIMEOUT_S)
        assert done.returncode == 0
        _, in_group = children(pids)
        assert not alive(in_group)
