"""The pytest plugin: turns test outcomes into verdicts and writes the reports.

Cases stay ordinary pytest functions; this plugin gives them their target (``namesrv``, ``broker``,
``store_dir``), a ``check`` for observations and a ``wire`` whose bytes are logged, then judges each
case once it has run. The verdict travels to the pytest-xdist controller in ``user_properties`` and the
controller writes the reports, so a parallel run produces one report. Its options and the target they
describe are in :mod:`rocketmq_spec.conformance.options`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from rocketmq_spec.apache.servers import StartFailed
from rocketmq_spec.codec.acl import Credentials
from rocketmq_spec.conformance import alone
from rocketmq_spec.conformance import profile as profiles
from rocketmq_spec.conformance.case import MARKER, WAITS_MARKER, CaseSpec, spec_of
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.cli_help import ExitStatus
from rocketmq_spec.conformance.launcher import Launcher
from rocketmq_spec.conformance.options import add_options, parse_index_sizes, target_of
from rocketmq_spec.conformance.policy import decide
from rocketmq_spec.conformance.recorder import Exchange
from rocketmq_spec.conformance.report import console, html, json_files, junit
from rocketmq_spec.conformance.report.html_page import CLAUSE_PAGE
from rocketmq_spec.conformance.report.matrix import is_failure
from rocketmq_spec.conformance.result import USER_PROPERTY, CaseResult, render
from rocketmq_spec.conformance.target import NEEDS_FIXTURE, ROLES, SERVER_FIXTURE, FedSlave, Server, Target
from rocketmq_spec.conformance.tls import ClientTls
from rocketmq_spec.conformance.verdict import Outcome, SuiteError, Verdict
from rocketmq_spec.conformance.wire import Endpoint, Wire, WireError
from rocketmq_spec.spec.errors import RocketMQSpecError
from rocketmq_spec.targets import EMBEDDED

RUN_FAILED = int(ExitStatus.RUN_FAILED)


@dataclass
class CaseRun:
    check: Check = field(default_factory=Check)
    wire: Wire = field(default_factory=lambda: Wire(Exchange()))


RUN = pytest.StashKey[CaseRun]()
STATE = pytest.StashKey["RunState"]()


@dataclass
class RunState:
    target: Target
    choice: profiles.Choice
    strict: bool
    report_dir: Path | None
    index_counts: tuple[int, int] | None = None
    """(maxHashSlotNum, maxIndexNum) of the store's index files, when given rather than inferred."""
    related: list[tuple[str, str]] = field(default_factory=list)
    """(link, text) of other pages of the run, shown on the HTML report."""
    clauses: str = CLAUSE_PAGE
    """The clause page's address from the HTML report (written beside it when it is the default)."""
    results: list[CaseResult] = field(default_factory=list)
    started: float = field(default_factory=time.time)
    target_name: str = ""
    """The target's name when the run started it (``embedded``, ``apache-5.5.0``)."""

    @property
    def profile(self) -> profiles.Profile:
        return self.choice.profile

    def profile_line(self) -> str:
        return f"profile: {self.profile.name} ({self.choice.how})"


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}(spec): a conformance case and the clause it checks")
    config.addinivalue_line("markers", "slow: a case that waits for a target timeout (left out by default)")
    config.addinivalue_line("markers", f"{alone.MARKER}: a case that runs while no other case runs "
                                       "(conformance.alone)")
    config.pluginmanager.register(alone.AloneLock(config), "rmq-conformance-alone")
    config.addinivalue_line("markers", f"{WAITS_MARKER}: waits on a timer of the target (runs first)")
    option = config.getoption
    chosen = option("--rmq-profile")
    index_sizes = option("--rmq-index-sizes")
    target = target_of(config)
    strict = bool(option("--rmq-strict"))
    state = RunState(
        target=target,
        choice=_choose_profile(profiles.Request(chosen, strict, option("--rmq-target-name") or ""), target),
        strict=strict,
        report_dir=Path(option("--rmq-report")) if option("--rmq-report") else None,
        index_counts=parse_index_sizes(index_sizes) if index_sizes else None,
        related=[(href, text) for href, _, text in (link.partition("=") for link in option("--rmq-related"))],
        clauses=option("--rmq-clause-page"),
        target_name=option("--rmq-target-name") or "",
    )
    config.stash[STATE] = state
    config.pluginmanager.register(Reporter(state), "rmq-conformance-reporter")


def _choose_profile(request: profiles.Request, target: Target) -> profiles.Choice:
    """The run's profile; the target is asked for its version when the choice, or the deviations of a
    named profile that hold for some releases only, depend on it."""
    announced = None
    if not request.strict and request.target_name != EMBEDDED:
        announced = target.announced_version()
    try:
        if announced is None:
            return profiles.choose(request, None)
        return profiles.choose(request, *announced)
    except profiles.ProfileError as exc:
        raise pytest.UsageError(str(exc)) from None


EXCLUSIVE = ("acl", "authn")
"""Target parts that refuse the other cases' unsigned requests: with one, only the cases needing it run."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect cases whose part of the target was not given, so a store-only run is not full of skips."""
    target = config.stash[STATE].target
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        needs = [part for fixture, part in NEEDS_FIXTURE.items() if fixture in fixtures]
        if SERVER_FIXTURE in fixtures:
            needs.append(item.callspec.params[SERVER_FIXTURE])  # type: ignore[attr-defined]
        wanted = all(target.has(p) for p in needs) and all((p in needs) == target.has(p) for p in EXCLUSIVE)
        (keep if spec_of(item) is None or wanted else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = sorted(keep, key=lambda item: item.get_closest_marker(WAITS_MARKER) is None)


# -- fixtures ------------------------------------------------------------------------------------------


def _target(request: pytest.FixtureRequest) -> Target:
    return request.config.stash[STATE].target


@pytest.fixture(scope="session")
def namesrv(request: pytest.FixtureRequest) -> Server:
    return _target(request).server("namesrv")


@pytest.fixture(scope="session")
def broker(request: pytest.FixtureRequest) -> Server:
    return _target(request).server("broker")


@pytest.fixture(scope="session")
def proxy(request: pytest.FixtureRequest) -> Endpoint:
    endpoint = _target(request).proxy
    assert endpoint is not None, "deselected when absent"
    return endpoint


@pytest.fixture(scope="session")
def controller(request: pytest.FixtureRequest) -> Server:
    return _target(request).server("controller")


@pytest.fixture(scope="session")
def follower_controller(request: pytest.FixtureRequest) -> Server:
    endpoint = _target(request).follower_controller
    assert endpoint is not None, "deselected when absent"
    return Server("controller", endpoint)


@pytest.fixture(scope="session")
def controller_broker(request: pytest.FixtureRequest) -> Server:
    return _target(request).server("controller_broker")


@pytest.fixture(scope="session", params=ROLES)
def server(request: pytest.FixtureRequest) -> Server:
    """Either role: for framing and header rules that every remoting server follows."""
    return _target(request).server(request.param)


@pytest.fixture(scope="session")
def ha_master(request: pytest.FixtureRequest) -> Endpoint:
    endpoint = _target(request).ha_master
    assert endpoint is not None, "deselected when absent"
    return endpoint


@pytest.fixture(scope="session")
def sync_master(request: pytest.FixtureRequest) -> Server:
    return _target(request).server("sync_master")


@pytest.fixture(scope="session")
def fed_slave(request: pytest.FixtureRequest) -> FedSlave:
    target = _target(request)
    assert target.ha_feed is not None, "deselected when absent"
    return FedSlave(target.server("ha_slave"), target.ha_feed)


@pytest.fixture(scope="session")
def launcher(request: pytest.FixtureRequest) -> Launcher:
    found = _target(request).launcher
    assert found is not None, "cases needing a launcher are deselected without one"
    return found


@pytest.fixture(scope="session")
def commitlog_file_size(request: pytest.FixtureRequest) -> int:
    return _target(request).commitlog_file_size


@pytest.fixture(scope="session")
def replica_dir(request: pytest.FixtureRequest) -> Path:
    path = _target(request).replica
    assert path is not None, "deselected when absent"
    return path


@pytest.fixture(scope="session")
def client_tls(request: pytest.FixtureRequest) -> ClientTls:
    """How the run reaches the target over TLS (``--tls``); the tls area's cases need it."""
    tls = _target(request).tls
    assert tls is not None, "deselected when absent"
    return tls


@pytest.fixture(scope="session")
def store_dir(request: pytest.FixtureRequest) -> Path:
    path = _target(request).store
    assert path is not None, "deselected when absent"
    return path


@pytest.fixture(scope="session")
def auth_user(request: pytest.FixtureRequest) -> Credentials:
    credentials = _target(request).authn
    assert credentials is not None, "deselected when absent"
    return credentials


@pytest.fixture(scope="session")
def acl_file(request: pytest.FixtureRequest) -> Path:
    path = _target(request).acl
    assert path is not None, "deselected when absent"
    return path


@pytest.fixture(scope="session")
def index_counts(request: pytest.FixtureRequest) -> tuple[int, int] | None:
    """The store's (slot, entry) counts when given; None means each index file's size tells them."""
    return request.config.stash[STATE].index_counts


@pytest.fixture
def check(request: pytest.FixtureRequest) -> Check:
    return request.node.stash[RUN].check


@pytest.fixture
def wire(request: pytest.FixtureRequest) -> Iterator[Wire]:
    run_wire = request.node.stash[RUN].wire
    yield run_wire
    run_wire.close()


# -- judging -------------------------------------------------------------------------------------------


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    item.stash[RUN] = CaseRun(wire=Wire(Exchange(), item.config.stash[STATE].target.connection_tls))


def case_id(item: pytest.Item) -> tuple[str, str]:
    """``(area, id)``: the area is the case module without ``test_``, the id ``area::name[row]``."""
    area = Path(str(item.path)).stem.removeprefix("test_")
    return area, f"{area}::{item.name.removeprefix('test_')}"


TARGET_ERRORS = (Outcome, WireError, OSError, RocketMQSpecError)
"""What the target's answers (or silence) raise; anything else a fixture raises is the suite's fault."""


def _verdict(state: RunState, call: pytest.CallInfo[None],
             run: CaseRun) -> tuple[Verdict, str, object, object, str]:
    """The verdict, its message, expected and seen, and the clause it is charged to when not the case's."""
    excinfo = call.excinfo
    if excinfo is None:
        tolerated, informative = run.check.tolerated, run.check.informative
        if tolerated:
            why = "; ".join(f"{o.what}: {o.tolerated}" for o in tolerated)
            return Verdict.NON_STRICT, why, None, None, ""
        if informative:
            return Verdict.INFO, "; ".join(f"{o.what} (not judged: no Java client acts on it)"
                                           for o in informative), None, None, ""
        return Verdict.PASS, "", None, None, ""
    error = excinfo.value
    if isinstance(error, SuiteError) or (call.when == "setup" and not isinstance(error, TARGET_ERRORS)):
        return Verdict.ERROR, f"{type(error).__name__}: {error}", None, None, ""
    if isinstance(error, StartFailed):
        # a broker the case launched for itself did not come up: what the case is about was never reached,
        # so nothing is judged (a case about a start catches StartFailed itself)
        return Verdict.ERROR, f"the broker this case starts did not start: {error}", None, None, ""
    if isinstance(error, Outcome):
        return error.verdict, error.message, error.expected, error.actual, error.clause
    if isinstance(error, WireError | OSError):
        dead = [str(e) for e in run.wire.endpoints if not state.target.alive(e)]
        if dead:
            return Verdict.CRASH, f"{error}; target no longer answers at {', '.join(dead)}", None, None, ""
        return Verdict.FAIL, str(error), None, None, ""
    if isinstance(error, RocketMQSpecError):
        return Verdict.FAIL, error.message, error.expected, error.seen, ""
    return Verdict.FAIL, f"{type(error).__name__}: {error}", None, None, ""


def judge(item: pytest.Item, spec: CaseSpec, call: pytest.CallInfo[None], duration: float) -> CaseResult:
    state = item.config.stash[STATE]
    run = item.stash.get(RUN, CaseRun())
    verdict, message, expected, actual, charged = _verdict(state, call, run)
    area, cid = case_id(item)
    decided = decide(spec, state.profile, cid, verdict, message, charged)
    return CaseResult(
        case_id=cid, area=area, clause_id=decided.clause.id, clause_text=decided.clause.text,
        level=decided.level.value, requirement=spec.requirement, verdict=decided.verdict,
        message=decided.message, expected=expected, actual=actual, duration=duration,
        java_note=spec.java_note,
        deviation=decided.deviation, basis=decided.basis.value if decided.basis else "",
        case_clause=decided.case_clause,
        observations=[{"what": o.what, "expected": render(o.expected), "actual": render(o.actual), "ok": o.ok,
                       "tolerated": o.tolerated, "info": o.info} for o in run.check.observations],
        frames=[r.to_json() for r in run.wire.exchange.records],
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[
        None, pytest.TestReport, pytest.TestReport]:
    report = yield
    spec = spec_of(item)
    decisive = call.when == "call" or (call.when == "setup" and report.failed)
    if spec is None or not decisive or report.skipped:
        return report
    state = item.config.stash[STATE]
    result = judge(item, spec, call, report.duration)
    # Observation values are arbitrary objects: render them before they cross to the controller.
    report.user_properties.append((USER_PROPERTY, result.dumps()))
    if is_failure(result, strict=state.strict):
        report.outcome = "failed"
        if call.excinfo is None:
            report.longrepr = f"{result.verdict.value}: {result.message}"
    elif result.verdict is Verdict.UNSUPPORTED:
        report.outcome = "skipped"
        report.longrepr = (str(item.path), item.location[1] or 0, f"UNSUPPORTED: {result.message}")
    else:
        report.outcome = "passed"
        report.longrepr = None
    return report


class Reporter:
    """Collects verdicts (in an xdist run the controller sees every worker's reports) and writes them."""

    def __init__(self, state: RunState) -> None:
        self.state = state

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for name, value in report.user_properties:
            if name == USER_PROPERTY:
                self.state.results.append(CaseResult.from_json(json.loads(str(value))))

    def pytest_report_header(self) -> list[str]:
        return [f"rmq-conformance {self.state.profile_line()}"]

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.state.results:
            terminalreporter.write_sep("=", "RocketMQ conformance")
            terminalreporter.write_line(console.summary(self.state.results))
            terminalreporter.write_line(self.state.profile_line())
            if self.state.report_dir is not None:
                terminalreporter.write_line(f"reports written to {self.state.report_dir}")

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if hasattr(session.config, "workerinput"):
            return
        judged = [r for r in self.state.results if r.verdict is not Verdict.ERROR]
        if len(judged) < len(self.state.results) and not any(is_failure(r, strict=self.state.strict)
                                                             for r in judged):
            session.exitstatus = RUN_FAILED  # only the run's own faults failed: nothing is said of the target
        if self.state.report_dir is not None:
            write_reports(self.state)


def write_reports(state: RunState) -> None:
    directory = state.report_dir
    assert directory is not None
    directory.mkdir(parents=True, exist_ok=True)
    results = sorted(state.results, key=lambda r: r.case_id)
    target = state.target
    meta = {"title": "RocketMQ conformance", "target": state.target_name, "profile": state.profile.name,
            "profile_file": state.profile.file, "profile_chosen": state.choice.how,
            "announced_version": state.choice.announced, "strict": state.strict,
            "namesrv": str(target.namesrv or ""), "broker": str(target.broker or ""),
            "store": str(target.store or ""), "started": state.started, "finished": time.time()}
    json_files.write(directory, results, meta)
    junit.write(directory / "junit.xml", results, strict=state.strict,
                properties={"target": state.target_name, "profile": state.profile.name,
                            "profile_chosen": state.choice.how})
    html.write(directory / "index.html", results, title=f"RocketMQ conformance: {_describe(state)}",
               strict=state.strict, profile=state.profile_line(), related=state.related,
               clauses=state.clauses)


def _describe(state: RunState) -> str:
    target = state.target
    parts = [f"{name} {value}" for name, value in
             (("namesrv", target.namesrv), ("broker", target.broker), ("store", target.store)) if value]
    where = ", ".join(parts) or "no target"
    return f"{state.target_name} ({where})" if state.target_name else where
