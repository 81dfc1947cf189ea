"""The pytest plugin of the client suite: scenario runs shared by the cases that judge them, verdicts, and
the same reports as the broker suite (console table, index.json, junit.xml, index.html).

The judging server lives in the process that runs pytest (a relay thread and a broker subprocess), so
the plugin is an object handed to ``pytest.main(plugins=[...])`` rather than a module loaded by name,
and client runs are never spread over xdist workers.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from rocketmq_spec.conformance.case import MARKER, spec_of
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.clients.judge import Scenario, ScenarioRun
from rocketmq_spec.conformance.clients.runs import Runs, foreseen
from rocketmq_spec.conformance.plugin import case_id
from rocketmq_spec.conformance.report import console, html, json_files, junit
from rocketmq_spec.conformance.report.matrix import is_failure
from rocketmq_spec.conformance.result import CaseResult, render
from rocketmq_spec.conformance.verdict import Crash, Outcome, Unsupported, Verdict
from rocketmq_spec.spec.clauses import Level

CASES_DIR = Path(__file__).with_name("cases")
LOG_STDERR_CHARS = 2000
"""Driver stderr kept in a case's report when the case did not pass."""


@dataclass
class _CaseState:
    check: Check = field(default_factory=Check)
    runs: list[ScenarioRun] = field(default_factory=list)


_STATE = pytest.StashKey[_CaseState]()


class CaseRunner:
    """A case's handle on the runs: a run the driver could not do ends the case with its verdict."""

    def __init__(self, runs: Runs, state: _CaseState) -> None:
        self._runs = runs
        self._state = state

    def __call__(self, scenario: Scenario) -> ScenarioRun:
        result = self._runs.run(scenario)
        self._state.runs.append(result)
        if (reason := result.driver.unsupported) is not None:
            raise Unsupported(f"scenario {scenario.name}: {reason}")
        if (why := result.driver.failed) is not None:
            raise Crash(f"scenario {scenario.name}: {why}")
        return result


class ClientSuite:
    """The plugin object: ``driver_name`` is what reports call the client under test."""

    def __init__(
        self, runs: Runs, driver_name: str, *, report_dir: Path | None = None, strict: bool = False
    ) -> None:
        self.runs = runs
        self.driver_name = driver_name
        self.report_dir = report_dir
        self.strict = strict
        self.results: list[CaseResult] = []
        self.started = time.time()

    def pytest_configure(self, config: pytest.Config) -> None:
        config.addinivalue_line("markers", f"{MARKER}(spec): a conformance case and the clause it checks")

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Start the selected cases' scenarios before the first case waits on one."""
        self.runs.start(foreseen(session.items))

    @pytest.fixture
    def check(self, request: pytest.FixtureRequest) -> Check:
        return request.node.stash[_STATE].check

    @pytest.fixture
    def run(self, request: pytest.FixtureRequest) -> CaseRunner:
        return CaseRunner(self.runs, request.node.stash[_STATE])

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        item.stash[_STATE] = _CaseState()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        spec = spec_of(item)
        decisive = call.when == "call" or (call.when == "setup" and report.failed)
        if spec is None or not decisive or report.skipped:
            return report
        state = item.stash.get(_STATE, _CaseState())
        verdict, message, expected, actual = _verdict(call)
        if verdict is Verdict.FAIL and spec.level is not Level.MUST:
            verdict, message = Verdict.NON_STRICT, f"{spec.level.value} not met: {message}"
        area, cid = case_id(item)
        frames = [f.to_json() for run in state.runs for f in run.frames]
        if verdict is Verdict.CRASH:
            message += "".join(
                f" [driver stderr: {run.driver.stderr[-LOG_STDERR_CHARS:].strip()}]"
                for run in state.runs
                if run.driver.stderr.strip()
            )
        result = CaseResult(
            case_id=cid,
            area=area,
            clause_id=spec.clause.id,
            clause_text=spec.clause.text,
            level=spec.level.value,
            requirement=spec.requirement,
            verdict=verdict,
            message=message,
            expected=render(expected),
            actual=render(actual),
            duration=report.duration,
            java_note=spec.java_note,
            observations=[
                {
                    "what": o.what,
                    "expected": render(o.expected),
                    "actual": render(o.actual),
                    "ok": o.ok,
                    "tolerated": o.tolerated,
                }
                for o in state.check.observations
            ],
            frames=frames,
        )
        self.results.append(result)
        if is_failure(result, strict=self.strict):
            report.outcome = "failed"
            if call.excinfo is None:
                report.longrepr = f"{verdict.value}: {message}"
        elif verdict is Verdict.UNSUPPORTED:
            report.outcome = "skipped"
            report.longrepr = (str(item.path), item.location[1] or 0, f"UNSUPPORTED: {message}")
        else:
            report.outcome = "passed"
            report.longrepr = None
        return report

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.results:
            terminalreporter.write_sep("=", f"RocketMQ client conformance: {self.driver_name}")
            terminalreporter.write_line(console.summary(self.results))
            times = self.runs.times()
            terminalreporter.write_line(
                f"{len(times)} scenario runs, {sum(times.values()):.0f} s in all, in "
                f"{self.runs.wall():.0f} s with up to {self.runs.jobs} at once"
            )
            if self.report_dir is not None:
                terminalreporter.write_line(f"reports written to {self.report_dir}")

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.runs.finish()
        if self.report_dir is not None:
            self.write_reports()

    def write_reports(self) -> None:
        assert self.report_dir is not None
        directory = self.report_dir
        directory.mkdir(parents=True, exist_ok=True)
        results = sorted(self.results, key=lambda r: r.case_id)
        meta = {
            "title": "RocketMQ client conformance",
            "target": self.driver_name,
            "profile": "none",
            "strict": self.strict,
            "namesrv": self.runs.server.namesrv_addr,
            "broker": self.runs.server.broker_addr,
            "started": self.started,
            "finished": time.time(),
            "jobs": self.runs.jobs,
            "scenario_seconds": self.runs.times(),
            "scenarios_wall_seconds": round(self.runs.wall(), 1),
        }
        json_files.write(directory, results, meta)
        junit.write(
            directory / "junit.xml", results, strict=self.strict, properties={"driver": self.driver_name}
        )
        html.write(
            directory / "index.html",
            results,
            title=f"RocketMQ client conformance: {self.driver_name}",
            strict=self.strict,
        )

    def verdicts(self) -> dict[str, Verdict]:
        return {r.case_id: r.verdict for r in self.results}


def _verdict(call: pytest.CallInfo[None]) -> tuple[Verdict, str, object, object]:
    excinfo = call.excinfo
    if excinfo is None:
        return Verdict.PASS, "", None, None
    error = excinfo.value
    if isinstance(error, Outcome):
        return error.verdict, error.message, error.expected, error.actual
    # anything else is the suite's own fault (a judging bug, a broker that would not start a topic)
    return Verdict.ERROR, f"{type(error).__name__}: {error}", None, None
