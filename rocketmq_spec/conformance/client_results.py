"""The committed client results: one report per shipped client driver under ``docs/results/clients/``,
checked like the broker results and rendered into docs/clients.md.

    python -m rocketmq_spec.conformance.results check client:java-4.9.7 [client:NAME ...]
    python -m rocketmq_spec.conformance.results update client:java-4.9.7 [client:NAME ...]
    python -m rocketmq_spec.conformance.results check clients       # the drivers of CLIENTS_CHECKED

A client column is ``client:`` and a registry driver name (``rmq-conformance client --driver NAME``,
judged against the embedded reference broker). ``docs/results/clients/<driver>/index.json`` is the run's
report index, ``cases/`` beside it the full record of each case that did not PASS (driver stderr
included). ``check`` runs the driver and compares as :mod:`.results_store` does: a case that differs is
run again, and only one that differs both times fails; the cases of :data:`TIMING_SENSITIVE` are left
out. ``render`` (of :mod:`.results`) fills the ``clients-table`` span of docs/clients.md from the
committed reports: verdict counts per driver, then each non-PASS case with its clause.
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from rocketmq_spec.conformance.clients.registry import DRIVERS
from rocketmq_spec.conformance.report.matrix import Report
from rocketmq_spec.conformance.results_store import (
    INDEX,
    KEPT_DIR,
    RESULTS_DIR,
    ROOT,
    check_summary,
    compare,
    keep_reproducers,
)
from rocketmq_spec.conformance.verdict import VERDICT_ORDER, Verdict

PREFIX = "client:"
ALL = "clients"
"""Names every driver of :data:`CLIENTS_CHECKED` at once."""
CLIENTS_DIR = RESULTS_DIR / "clients"
RUN_TIMEOUT = 900.0
MANY = 3
"""More UNSUPPORTED cases of one reason than this are counted in the table, not named."""
CLIENTS_CHECKED = ("java-4.9.7", "java-5.5.0", "sdk5-python")
"""The drivers ``.ci/run`` checks: Apache's Java client of each line (the clauses' source) and a 5.x SDK,
each installed from Maven Central or PyPI in a few minutes and judged in about two. The other drivers'
committed reports are shown beside them and checked when named."""

TIMING_SENSITIVE: dict[str, dict[str, str]] = {}
"""Driver -> cases whose verdict depends on scheduling, with why: left out of ``check`` (and said so). A
case found to flip is made deterministic instead where its clause allows (``heartbeat_content[producer]``
is judged over ``produce``, which keeps the producer started a whole heartbeat interval after its sends),
so this names none today."""


def is_client(name: str) -> bool:
    return name.startswith(PREFIX) or name == ALL


def drivers(names: Sequence[str]) -> list[str]:
    """The driver names of ``client:NAME`` columns (``clients``: every one of :data:`CLIENTS_CHECKED`)."""
    found: list[str] = []
    for name in names:
        found += list(CLIENTS_CHECKED) if name == ALL else [name.removeprefix(PREFIX)]
    return found


def unknown(names: Sequence[str]) -> list[str]:
    return [f"{PREFIX}{name}" for name in drivers(names) if name not in DRIVERS]


def known() -> list[str]:
    return [f"{PREFIX}{name}" for name in DRIVERS]


def run_driver(driver: str, out: Path, selection: str | None = None) -> Report | None:
    """Run the client suite with ``driver`` into ``out``; its report, or None when the run wrote none."""
    print(f"running client {driver}{' again: ' + selection if selection else ''} ...", flush=True)
    args = ["client", "--driver", driver, "--report", str(out), *(["-k", selection] if selection else [])]
    subprocess.run([sys.executable, "-m", "rocketmq_spec.conformance.cli", *args], check=False,
                   timeout=RUN_TIMEOUT, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    return Report.load(out / INDEX, driver) if (out / INDEX).is_file() else None


def _rerun(driver: str, work: Path) -> Callable[[list[str]], Report | None]:
    def run(cases: list[str]) -> Report | None:
        functions = sorted({case.split("::", 1)[1].split("[", 1)[0] for case in cases})
        return run_driver(driver, work / "rerun" / driver, " or ".join(f"test_{f}" for f in functions))
    return run


def check(names: Sequence[str], keep: Path = KEPT_DIR) -> int:
    """Run each driver and compare its verdicts with the committed ones: 1 if a case differs twice (flaky
    and timing-sensitive cases are listed, not counted); the records of the cases that differed are kept
    under ``keep/clients/<driver>``."""
    changed = 0
    with tempfile.TemporaryDirectory(prefix="rmq-client-results-") as name:
        work = Path(name)
        for driver in drivers(names):
            committed = CLIENTS_DIR / driver / INDEX
            fresh = run_driver(driver, work / driver)
            if not committed.is_file() or fresh is None:
                print(f"client:{driver}: " + ("no committed report " + str(committed.relative_to(ROOT))
                                              if not committed.is_file() else "the run wrote no report"))
                changed += 1
                continue
            column, sensitive = f"{PREFIX}{driver}", TIMING_SENSITIVE.get(driver, {})
            found = compare(Report.load(committed, "committed"), fresh, _rerun(driver, work), sensitive,
                            keep / "clients" / driver)
            changed += found.print_lines(column, sensitive)
    return check_summary(changed, names, "docs/results/clients")


def update(names: Sequence[str]) -> None:
    """Run each driver and replace its committed report and the case files of its non-PASS cases."""
    with tempfile.TemporaryDirectory(prefix="rmq-client-results-") as name:
        work = Path(name)
        for driver in drivers(names):
            if run_driver(driver, work / driver) is None:
                raise SystemExit(f"client:{driver}: the run wrote no report in {work / driver}")
            committed = CLIENTS_DIR / driver
            committed.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(work / driver / INDEX, committed / INDEX)
            keep_reproducers(work / driver, committed)


# -- the clients table of docs/clients.md ----------------------------------------------------------------


def committed() -> list[Report]:
    """Each committed driver report, the drivers CI checks first."""
    found = sorted(path.parent.name for path in CLIENTS_DIR.glob(f"*/{INDEX}"))
    ordered = [d for d in CLIENTS_CHECKED if d in found] + [d for d in found if d not in CLIENTS_CHECKED]
    return [dataclasses.replace(Report.load(CLIENTS_DIR / d / INDEX, d),
                                source=str((CLIENTS_DIR / d / INDEX).relative_to(ROOT))) for d in ordered]


def table() -> str:
    """Verdict counts per driver, then every case that did not PASS with its clause and message (the cases of
    one driver with the same verdict and message in one row: a gRPC driver's remoting cases, say)."""
    verdicts = [v for v in VERDICT_ORDER if v is not Verdict.INFO]
    reports = committed()
    rows = ["| driver | checked in CI | cases | " + " | ".join(v.value for v in verdicts) + " |",
            "|---|---|---:|" + "---:|" * len(verdicts)]
    for report in reports:
        rows.append(f"| `{report.label}` | {'yes' if report.label in CLIENTS_CHECKED else 'when named'} | "
                    f"{len(report.cases)} | " + " | ".join(str(report.total(v)) for v in verdicts) + " |")
    rows += ["", "| driver | cases | clauses | verdict | what the run saw |", "|---|---|---|---|---|"]
    for report in reports:
        alike: dict[tuple[str, str], list[dict[str, str]]] = {}  # cases one reason covers share a row
        for _, entry in sorted(report.cases.items()):
            if entry["verdict"] != Verdict.PASS.value:
                message = " ".join(str(entry.get("message", "")).split()).replace("|", "\\|")
                alike.setdefault((entry["verdict"], message), []).append(entry)
        for (verdict, message), entries in alike.items():
            cases = ", ".join(f"`{entry['case']}`" for entry in entries)
            clauses = ", ".join(dict.fromkeys(str(entry.get("clause", "")) for entry in entries))
            if verdict == Verdict.UNSUPPORTED.value and len(entries) > MANY:  # a scenario the driver lacks
                areas = ", ".join(dict.fromkeys(f"`{entry['case'].split('::', 1)[0]}`" for entry in entries))
                cases, clauses = f"{len(entries)} cases of {areas}", f"{len(clauses.split(', '))} clauses"
            shown = message[:200] + ("…" if len(message) > 200 else "")
            rows.append(f"| `{report.label}` | {cases} | {clauses} | {verdict} | {shown} |")
    return "\n" + "\n".join(rows) + "\n"
