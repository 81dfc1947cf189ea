"""Cases that need the target to themselves: the ``alone`` marker.

Some streams keep a target busy for seconds: Apache RocketMQ 4.9.x spins a Netty decoder thread on a JSON
header cut inside an enum value (rocketmq_spec/conformance/regressions/slow-close-*), and every other
connection that thread serves waits meanwhile. A case running beside one would then see a slow answer for
reasons of its own neighbour, and its verdict would depend on scheduling. So a case marked ``alone`` runs
while no other case runs, and no other case starts until it has finished.

Across pytest-xdist workers this is a readers-writer lock on one file per run: every case holds it shared,
an ``alone`` case exclusively. The controller creates the file and hands its path to the workers; a run
without workers runs one case at a time anyway and takes no lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

MARKER = "alone"
WORKER_INPUT = "rmq_alone_lock"


class AloneLock:
    """The pytest plugin holding the run's lock around each case (registered by
    ``rocketmq_spec.conformance.plugin``)."""
    def __init__(self, config: pytest.Config) -> None:
        self.path: Path | None = None
        self._owned = False
        worker_input: dict[str, Any] | None = getattr(config, "workerinput", None)
        if worker_input is not None:
            self.path = Path(worker_input[WORKER_INPUT]) if WORKER_INPUT in worker_input else None
        elif config.pluginmanager.hasplugin("xdist"):
            handle, name = tempfile.mkstemp(prefix="rmq-conformance-", suffix=".lock")
            os.close(handle)
            self.path, self._owned = Path(name), True

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        if self.path is not None:
            node.workerinput[WORKER_INPUT] = str(self.path)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
        with self._held(exclusive=item.get_closest_marker(MARKER) is not None):
            return (yield)

    @contextlib.contextmanager
    def _held(self, *, exclusive: bool) -> Iterator[None]:
        if self.path is None or self._owned:  # no workers: cases run one at a time already
            yield
            return
        with self.path.open("a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def pytest_unconfigure(self) -> None:
        if self._owned and self.path is not None:
            self.path.unlink(missing_ok=True)
