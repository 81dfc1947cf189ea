"""``rmq-conformance client --driver NAME_OR_PATH``: judge a RocketMQ client through its driver.

    rmq-conformance client --driver py-rocketmq-0.4.4 [--report DIR] [--strict] [-k SEL] [-v] [--jobs N]
    rmq-conformance client --driver ./my-driver [--target embedded] ...

The driver is a registry name (``registry.DRIVERS``; its client is installed into the cache at first
use) or a path to an executable following the contract (docs/clients.md). The suite starts the judging
server (the target's name server and broker; each scenario gets a recording relay of its own), checks
that the driver runs at all (one clear line and status 2 when it is missing, not executable, exits at
once, or hangs: a driver that outlives the probe's budget is killed with its process group), then runs
the cases, their scenarios ``--jobs`` at a time, and prints the verdict table in the cases' order;
``--report`` writes index.json, junit.xml and index.html.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pytest

from rocketmq_spec.conformance.cli_help import ExitStatus
from rocketmq_spec.conformance.clients import driver as drivers
from rocketmq_spec.conformance.clients.judge import JudgingServer, Scenario
from rocketmq_spec.conformance.clients.plugin import CASES_DIR, ClientSuite
from rocketmq_spec.conformance.clients.registry import DRIVERS, UnknownDriver, resolve
from rocketmq_spec.conformance.clients.runs import JOBS, Runs
from rocketmq_spec.conformance.report.matrix import is_failure
from rocketmq_spec.spec.cli import Parser, add_version, fail
from rocketmq_spec.targets import EMBEDDED

PROG = "rmq-conformance client"
PROBE = Scenario("probe", "shutdown", count=0, timeout_s=30)
"""Started then shut down at once: shows that the driver runs before any case depends on it."""


def parser() -> argparse.ArgumentParser:
    p = Parser(
        prog=PROG,
        description=__doc__.splitlines()[0] if __doc__ else "",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="drivers by name: " + ", ".join(sorted(DRIVERS)),
    )
    add_version(p)
    p.add_argument("--driver", required=True, metavar="NAME_OR_PATH", help="a registry name or an executable")
    p.add_argument(
        "--target",
        default=EMBEDDED,
        metavar="NAME",
        help=f"the name server and broker behind the relay (default {EMBEDDED})",
    )
    p.add_argument("--report", type=Path, metavar="DIR", help="write index.json, junit.xml, index.html")
    p.add_argument("--strict", action="store_true", help="NON-STRICT verdicts fail the run")
    p.add_argument("-k", dest="selection", metavar="SELECTION", help="pytest -k expression")
    p.add_argument("-v", dest="verbose", action="store_true", help="one line per case")
    p.add_argument("--jobs", type=_positive, default=JOBS, metavar="N",
                   help=f"scenarios run at once (default {JOBS}; 1 runs them one after another)")
    return p


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, seen {text}")
    return value


def pytest_args(selection: str | None, verbose: bool) -> list[str]:
    argv = [
        str(CASES_DIR),
        "-p",
        "no:cacheprovider",
        "-p",
        "no:benchmark",
        "-p",
        "no:xdist",
        "-r",
        "fE",
        "-m",
        "slow or not slow",
        "-W",
        "ignore::pytest.PytestAssertRewriteWarning",
    ]
    if selection:
        argv += ["-k", selection]
    return [*argv, "-v" if verbose else "-q"]


def run_suite(
    server: JudgingServer,
    runs: Runs,
    name: str,
    *,
    selection: str | None = None,
    verbose: bool = False,
    report: Path | None = None,
    strict: bool = False,
) -> tuple[int | pytest.ExitCode, ClientSuite]:
    """Run the client cases in this process against ``runs``' driver; the suite object holds the verdicts."""
    suite = ClientSuite(runs, name, report_dir=report, strict=strict)
    try:
        code = pytest.main(pytest_args(selection, verbose), plugins=[suite])
    finally:
        runs.finish()
    return code, suite


def _probe_refusal(name: str, probe: drivers.DriverRun) -> str | None:
    """Why the driver cannot be judged at all, from its ``shutdown`` probe: it hung (and was killed), or it
    failed before reporting anything. A driver that reported events and then failed is judged: the cases
    say what went wrong."""
    if probe.hung:
        return (f"driver {name} hangs: it did not finish the {PROBE.name} probe within "
                f"{PROBE.timeout_s + drivers.GRACE_S:g} s and was killed with its process group")
    if probe.failed is not None and not probe.events:
        return f"driver {name} does not run: {probe.failed}"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        resolved = resolve(args.driver)
        drivers.check_runnable(resolved.argv)
    except (UnknownDriver, drivers.DriverNotRunnable) as exc:
        return fail(PROG, exc)
    if resolved.unavailable is not None:
        return fail(PROG, f"driver {resolved.name} cannot run here: {resolved.unavailable}")
    with (
        tempfile.TemporaryDirectory(prefix="rmq-client-") as work,
        JudgingServer(Path(work), args.target) as server,
    ):
        print(
            f"judging server: name server {server.namesrv_addr}, broker {server.broker_addr} "
            f"({args.target}), a recording relay per scenario; driver {resolved.name}",
            flush=True,
        )
        try:
            probe = server.run(resolved.argv, PROBE, resolved.environment)
        except drivers.DriverNotRunnable as exc:
            return fail(PROG, exc)
        if (refused := _probe_refusal(resolved.name, probe.driver)) is not None:
            return fail(PROG, refused)
        runs = Runs(server, resolved.argv, resolved.environment, jobs=args.jobs)
        code, suite = run_suite(
            server,
            runs,
            resolved.name,
            selection=args.selection,
            verbose=args.verbose,
            report=args.report,
            strict=args.strict,
        )
    if code in (pytest.ExitCode.USAGE_ERROR, pytest.ExitCode.NO_TESTS_COLLECTED):
        return int(ExitStatus.BAD_INPUT)
    if any(is_failure(r, strict=args.strict) for r in suite.results):
        return int(ExitStatus.NONCONFORMING)
    return int(ExitStatus.CONFORMS)
