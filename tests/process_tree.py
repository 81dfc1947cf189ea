"""Commands a test starts end with the test, children and grandchildren included.

``subprocess.run(..., timeout=...)`` kills the command it started, not what that command started: an
``rmq-conformance`` run killed on its timeout leaves the reference broker, the name server or an Apache
JVM it launched running, holding ports, store locks and CPU for every test after it. Those servers are
started in sessions of their own (``rocketmq_spec.apache.servers``, so that a whole Java start script can be
signalled), so killing the command's process group does not reach them either. Here the whole tree is
collected while its root is still alive (an orphan is re-parented to init and cannot be found from its
parent any more) and killed, and then every process left in the command's own group.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import psutil

REAP_TIMEOUT_S = 30.0
"""Bound on waiting for killed processes to go (SIGKILL cannot be refused; this only bounds the reaping)."""

POLL_S = 0.05

Argv = Sequence[str | Path]


def kill_tree(process: subprocess.Popen[Any]) -> None:
    """SIGKILL ``process``, every descendant of it whatever its session, and what is left in the process
    group it leads (started with ``start_new_session``). The tree is walked only while ``process`` has not
    been reaped: once it has, its pid may already belong to an unrelated process, while its group id
    cannot be handed out again as long as a member of the group lives."""
    family = []
    if process.poll() is None:
        with contextlib.suppress(psutil.NoSuchProcess):
            root = psutil.Process(process.pid)
            family = root.children(recursive=True)
    for member in family:
        with contextlib.suppress(psutil.NoSuchProcess):
            member.kill()
    process.kill()
    process.wait(REAP_TIMEOUT_S)
    psutil.wait_procs(family, timeout=REAP_TIMEOUT_S)
    deadline = time.monotonic() + REAP_TIMEOUT_S
    with contextlib.suppress(ProcessLookupError, PermissionError):
        while time.monotonic() < deadline:  # until the group has no member left, zombies included
            os.killpg(process.pid, signal.SIGKILL)
            time.sleep(POLL_S)


@contextlib.contextmanager
def spawned(argv: Argv, **popen: Any) -> Iterator[subprocess.Popen[Any]]:
    """``subprocess.Popen`` in a group of its own, whose whole tree is killed when the block is left,
    however it is left (a failed assertion, a timeout, a clean end)."""
    process = subprocess.Popen(argv, start_new_session=True, **popen)
    try:
        yield process
    finally:
        kill_tree(process)
        process.communicate()  # closes the pipes; the process itself is reaped already


def run(argv: Argv, *, timeout: float, check: bool = False, capture_output: bool = False,
        input: str | bytes | None = None, **popen: Any) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run`` for a command that may start servers: on its timeout (or any error while it
    runs) its whole tree is killed before ``TimeoutExpired`` is raised, and once it ends nothing it left
    in its group keeps running."""
    if capture_output:
        popen.update(stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if input is not None:
        popen["stdin"] = subprocess.PIPE
    with spawned(argv, **popen) as process:
        stdout, stderr = process.communicate(input, timeout=timeout)
    done = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    if check:
        done.check_returncode()
    return done
