"""The scenario runs of one session: each run once, side by side with a bound, the longest started first.

A whole run is mostly waiting (a producer kept started a heartbeat interval, an ``idle`` client for two,
a JVM starting per scenario), so the suite starts every scenario the selected cases will ask for before
the first case reads one, ``jobs`` at a time, and each case then waits for its own run only. A run has
its own topic, group and relays (:meth:`.judge.JudgingServer.run`), so what one client sends or is
answered never reaches another's recording; the cases still run, and report, in their collection order.
Short producer runs, whose verdicts race the client's own send timeout, go one at a time.
Which scenarios a case asks for is read off the case before it runs (:func:`foreseen`); a scenario that
was not foreseen is run when a case asks for it, so foreseeing changes when a run happens, never what a
case sees.
"""

from __future__ import annotations

import contextlib
import threading
import time
import types
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from rocketmq_spec.conformance.clients import scenarios
from rocketmq_spec.conformance.clients.judge import JudgingServer, Scenario, ScenarioRun

JOBS = 4
"""Scenarios run at once by default. Two cores carry four: most of a run is a client waiting on its own
timers (a heartbeat interval, a consumer's rebalance), and the runs that race a deadline of the client's
own never overlap one another (:func:`races_its_send_timeout`)."""
_DECLARED = {name: value for name, value in vars(scenarios).items() if isinstance(value, Scenario)}


def expected_length(scenario: Scenario) -> tuple[float, float]:
    """What orders the runs, longest first: the time a scenario keeps its client started, then its budget
    (a consumer's budget is long because it waits for deliveries)."""
    return scenario.idle_s, scenario.timeout_s


def races_its_send_timeout(scenario: Scenario) -> bool:
    """A short producer run: its verdicts rest on sends made within the client's own send timeout (Java's
    3 s count from the call, the route lookup of a cold client and every retry included), which a second
    client starting beside it on two cores can use up. Such runs go one at a time, beside the long ones,
    whose clients mostly wait."""
    return scenario.name.startswith("produce") and not scenario.idle_s and not scenario.prefill


def _names(code: types.CodeType) -> Iterator[str]:
    yield from code.co_names
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            yield from _names(constant)


def foreseen(items: Iterable[pytest.Item]) -> list[Scenario]:
    """The scenarios ``items`` will ask for, once each: a case's parameters that are scenarios, and the
    scenarios of :mod:`.scenarios` its function names (``run(sc.PRODUCE)``)."""
    found: dict[str, Scenario] = {}
    for item in items:
        callspec = getattr(item, "callspec", None)
        values: list[object] = list(callspec.params.values()) if callspec is not None else []
        function = getattr(item, "function", None)
        if function is not None:
            values += [_DECLARED[name] for name in _names(function.__code__) if name in _DECLARED]
        for value in values:
            if isinstance(value, Scenario):
                found.setdefault(value.key, value)
    return list(found.values())


class Runs:
    """Runs scenarios for the cases of one session, once per key, at most ``jobs`` at a time."""

    def __init__(
        self,
        server: JudgingServer,
        driver: Sequence[str],
        environment: Mapping[str, str] | None = None,
        *,
        jobs: int = JOBS,
    ) -> None:
        if jobs < 1:
            raise ValueError(f"jobs: expected at least 1, seen {jobs}")
        self.server = server
        self.driver = list(driver)
        self.environment = dict(environment or {})
        self.jobs = jobs
        self._pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="rmq-client-scenario")
        self._started: dict[str, Future[ScenarioRun]] = {}
        self._lock = threading.Lock()
        self._sending = threading.Lock()
        """Held by the run that races its send timeout."""
        self._began: float | None = None
        self._ended: float | None = None

    def start(self, wanted: Iterable[Scenario]) -> None:
        """Queue every scenario of ``wanted`` not queued yet, the longest first."""
        for scenario in sorted(wanted, key=expected_length, reverse=True):
            self._submit(scenario)

    def _submit(self, scenario: Scenario) -> Future[ScenarioRun]:
        with self._lock:
            if self._began is None:
                self._began = time.monotonic()
            future = self._started.get(scenario.key)
            if future is not None:
                return future
            future = self._pool.submit(self._run, scenario)
            self._started[scenario.key] = future
        # outside the lock: a run already done calls back at once, and the callback takes the lock
        future.add_done_callback(self._ran)
        return future

    def _run(self, scenario: Scenario) -> ScenarioRun:
        with self._sending if races_its_send_timeout(scenario) else contextlib.nullcontext():
            return self.server.run(self.driver, scenario, self.environment)

    def _ran(self, _: Future[ScenarioRun]) -> None:
        with self._lock:
            self._ended = time.monotonic()

    def run(self, scenario: Scenario) -> ScenarioRun:
        """The scenario's run, waiting for it (and starting it, when it was not foreseen)."""
        return self._submit(scenario).result()

    def finish(self) -> None:
        """Drop the queued runs no case asked for, and wait for the ones under way (a driver is bounded by
        its budget and grace, then killed)."""
        self._pool.shutdown(wait=True, cancel_futures=True)

    def times(self) -> dict[str, float]:
        """Seconds of each finished run, by key, in the order they were queued."""
        with self._lock:
            started = dict(self._started)
        return {
            key: round(future.result().seconds, 1)
            for key, future in started.items()
            if future.done() and not future.cancelled() and future.exception() is None
        }

    def wall(self) -> float:
        """Seconds from the first run queued to the last one done."""
        with self._lock:
            return 0.0 if self._began is None or self._ended is None else self._ended - self._began
