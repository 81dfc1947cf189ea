"""How long the whole client suite takes against one driver (docs/clients.md: under 3 minutes on two cores).

The time a client author waits for ``rmq-conformance client --driver X`` is the figure: the suite starts
its judging server, runs the driver once per scenario and writes the reports. Most of it is the
scenarios' own waits (a producer kept up a heartbeat interval, an ``idle`` run of 40 s), which the suite
runs side by side; the rest is the driver's start (a JVM per scenario for Java's client) and the judging.
Measured end to end as a user runs it, once per driver (a run is minutes long, and its spread is the
drivers' start times, which the load beside it explains), with the machine's 1-minute load before and
after, and the sum of the scenarios' own times beside the wall time (what running them side by side
saved, and how much a loaded machine stretched each one). The drivers: the project's test client (no
install, every case answered) and Apache's Java client 4.9.7 (the slowest to start); ``--quick`` runs the
test client on the frames cases only.

    python -m benchmarks.client_suite [--driver NAME_OR_PATH ...] [--jobs N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.common import Result

ROOT = Path(__file__).resolve().parent.parent
TEST_CLIENT = ROOT / "tests" / "broken_client" / "driver"
DRIVERS = (("test client", str(TEST_CLIENT)), ("java-4.9.7", "java-4.9.7"))
TARGET_S = 180.0
"""docs/clients.md's promise for a whole run against one driver on a two-core machine."""
RUN_TIMEOUT_S = 1800


@dataclass(frozen=True)
class WholeRun:
    seconds: float
    cases: int
    load_before: float
    load_after: float
    scenario_seconds: float
    """The scenarios' own times added up (each from topic creation to its driver's exit)."""
    scenarios: int

    def note(self) -> str:
        return (f"{self.seconds:.0f} s; {self.scenarios} scenarios, {self.scenario_seconds:.0f} s added up; "
                f"load {self.load_before:.2f} before, {self.load_after:.2f} after ({os.cpu_count()} cores)")


def whole_run(driver: str, selection: str | None, jobs: int | None = None) -> WholeRun:
    """One ``rmq-conformance client`` run, as a user starts it."""
    with tempfile.TemporaryDirectory(prefix="rmq-client-bench-") as report:
        argv = [sys.executable, "-m", "rocketmq_spec.conformance.cli", "client", "--driver", driver,
                "--report", report]
        if selection:
            argv += ["-k", selection]
        if jobs is not None:
            argv += ["--jobs", str(jobs)]
        before = os.getloadavg()[0]
        start = time.monotonic()
        done = subprocess.run(argv, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False,
                              cwd=ROOT)
        seconds = time.monotonic() - start
        after = os.getloadavg()[0]
        index = Path(report) / "index.json"
        if done.returncode not in (0, 1) or not index.is_file():
            raise RuntimeError(f"rmq-conformance client --driver {driver} exited {done.returncode}: "
                               f"{(done.stderr or done.stdout).strip()[-500:]}")
        head = json.loads(index.read_text())
    times = head.get("scenario_seconds", {})
    return WholeRun(seconds, sum(head["totals"].values()), before, after, sum(times.values()), len(times))


def run(quick: bool) -> list[Result]:
    drivers = DRIVERS[:1] if quick else DRIVERS
    results = []
    for label, driver in drivers:
        found = whole_run(driver, "frames" if quick else None)
        results.append(Result(
            "client suite", f"whole run, {label} ({found.cases} cases)", found.cases / found.seconds,
            target=f"< {TARGET_S:.0f} s" if not quick else "", note=found.note()))
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--driver", action="append", metavar="NAME_OR_PATH",
                        help="a driver to time (repeatable; default: the test client and java-4.9.7)")
    parser.add_argument("--jobs", type=int, help="scenarios at once (default: the suite's)")
    args = parser.parse_args(argv)
    for driver in args.driver or [d for _, d in DRIVERS]:
        found = whole_run(driver, None, args.jobs)
        verdict = "under" if found.seconds < TARGET_S else "OVER"
        print(f"{driver}: {found.cases} cases, {found.note()} ({verdict} the {TARGET_S:.0f} s target)",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
