"""How long the whole client suite takes against one driver (docs/clients.md: under 3 minutes on two cores).

The time a client author waits for ``rmq-conformance client --driver X`` is the figure: the suite starts
its judging server, runs the driver once per scenario and writes the reports. Most of it is the
scenarios' own waits (a producer kept up a heartbeat interval, an ``idle`` run of 40 s), which the suite
runs side by side; the rest is the driver's start (a JVM per scenario for Java's client) and the judging.
Measured end to end as a user runs it, once per driver (a run is minutes long, and its spread is the
drivers' start times, which the load beside it explains), with the machine's 1-minute load before and
after. The drivers: the project's test client (no install, every case answered) and Apache's Java client
4.9.7 (the slowest to start); ``--quick`` runs the test client on the frames cases only.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import Result

ROOT = Path(__file__).resolve().parent.parent
TEST_CLIENT = ROOT / "tests" / "broken_client" / "driver"
DRIVERS = (("test client", str(TEST_CLIENT)), ("java-4.9.7", "java-4.9.7"))
TARGET_S = 180.0
"""docs/clients.md's promise for a whole run against one driver on a two-core machine."""
RUN_TIMEOUT_S = 1800


def _whole_run(driver: str, selection: str | None) -> tuple[float, int, float, float]:
    """Seconds, cases judged, load before, load after of one ``rmq-conformance client`` run."""
    with tempfile.TemporaryDirectory(prefix="rmq-client-bench-") as report:
        argv = [sys.executable, "-m", "rocketmq_spec.conformance.cli", "client", "--driver", driver,
                "--report", report]
        if selection:
            argv += ["-k", selection]
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
        cases = sum(json.loads(index.read_text())["totals"].values())
    return seconds, cases, before, after


def run(quick: bool) -> list[Result]:
    drivers = DRIVERS[:1] if quick else DRIVERS
    results = []
    for label, driver in drivers:
        seconds, cases, before, after = _whole_run(driver, "frames" if quick else None)
        results.append(Result(
            "client suite", f"whole run, {label} ({cases} cases)", cases / seconds,
            target=f"< {TARGET_S:.0f} s" if not quick else "",
            note=f"{seconds:.0f} s; load {before:.2f} before, {after:.2f} after ({os.cpu_count()} cores)"))
    return results
