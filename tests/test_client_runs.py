"""The client suite's scenario runs: which scenarios a selection foresees, and in which order they start."""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import cast

import pytest

from rocketmq_spec.conformance.case import MARKER
from rocketmq_spec.conformance.clients import scenarios as sc
from rocketmq_spec.conformance.clients.cli import pytest_args
from rocketmq_spec.conformance.clients.judge import JudgingServer, Scenario, ScenarioRun
from rocketmq_spec.conformance.clients.runs import Runs, foreseen, races_its_send_timeout


class _Server:
    """Stands in for the judging server: records the order runs began in, and how many of those that race
    their send timeout were under way at once."""

    def __init__(self) -> None:
        self.ran: list[str] = []
        self.lock = threading.Lock()
        self.racing = 0
        self.most_racing = 0

    def run(self, argv: list[str], scenario: Scenario, env: dict[str, str]) -> ScenarioRun:
        racing = races_its_send_timeout(scenario)
        with self.lock:
            self.ran.append(scenario.key)
            self.racing += racing
            self.most_racing = max(self.most_racing, self.racing)
        threading.Event().wait(0.05)  # a run takes a while: another worker is free to start meanwhile
        with self.lock:
            self.racing -= racing
        return cast(ScenarioRun, SimpleNamespace(scenario=scenario, seconds=1.0))


def _runs(server: _Server, jobs: int) -> Runs:
    return Runs(cast(JudgingServer, server), ["driver"], jobs=jobs)


def test_foreseen_scenarios_start_longest_first_and_run_once() -> None:
    server = _Server()
    runs = _runs(server, jobs=1)
    runs.start([sc.PRODUCE_ONEWAY, sc.IDLE, sc.PRODUCE, sc.IDLE])
    assert runs.run(sc.PRODUCE_ONEWAY).scenario is sc.PRODUCE_ONEWAY
    runs.finish()
    assert server.ran == ["idle", "produce", "produce-oneway"]
    assert runs.times() == {"idle": 1.0, "produce": 1.0, "produce-oneway": 1.0}


def test_a_scenario_nobody_foresaw_runs_when_a_case_asks() -> None:
    server = _Server()
    runs = _runs(server, jobs=2)
    assert runs.run(sc.SEND_BUSY).scenario is sc.SEND_BUSY
    assert runs.run(sc.SEND_BUSY).scenario is sc.SEND_BUSY
    runs.finish()
    assert server.ran == ["send-system-busy"]


def test_runs_that_race_their_send_timeout_go_one_at_a_time() -> None:
    server = _Server()
    runs = _runs(server, jobs=4)
    racing = [sc.PRODUCE_ONEWAY, sc.PRODUCE_BATCH, sc.SEND_SLOW, sc.SEND_BUSY]
    assert all(map(races_its_send_timeout, racing)) and not races_its_send_timeout(sc.IDLE)
    runs.start([*racing, sc.IDLE])
    assert [runs.run(s).scenario for s in racing] == racing
    runs.finish()
    assert sorted(server.ran) == sorted(s.key for s in [*racing, sc.IDLE])
    assert server.most_racing == 1


def test_jobs_below_one_are_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        _runs(_Server(), jobs=0)


class _Collected:
    def pytest_configure(self, config: pytest.Config) -> None:
        config.addinivalue_line("markers", f"{MARKER}(spec): a conformance case")

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.items = list(session.items)


def test_every_case_foresees_a_scenario_and_all_of_them_are_foreseen() -> None:
    collected = _Collected()
    pytest.main([*pytest_args(None, False), "--collect-only"], plugins=[collected])
    assert collected.items
    assert [item.nodeid for item in collected.items if not foreseen([item])] == []
    declared = {v.key for v in vars(sc).values() if isinstance(v, Scenario)}
    assert {s.key for s in foreseen(collected.items)} == declared
