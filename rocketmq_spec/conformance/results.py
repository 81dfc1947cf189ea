"""The committed results: one report per target under ``docs/results/``, checked on every change, and the
documents generated from them.

    python -m rocketmq_spec.conformance.results check [TARGET ...]   # exit 1 if a verdict differs (twice)
    python -m rocketmq_spec.conformance.results check --keep DIR     # where differing cases' records go
    python -m rocketmq_spec.conformance.results update [TARGET ...]  # run each target, replace its report
    python -m rocketmq_spec.conformance.results update --only controller embedded apache-5.5.0  # one report
    python -m rocketmq_spec.conformance.results render [--check]     # docs/RESULTS.md and the counts

The targets are :data:`rocketmq_spec.targets.PROJECT_TARGETS` (the embedded reference broker and the
newest release of each Apache RocketMQ line the project's Maven repository serves), with the embedded
broker a second time answering as 4.9.8 (:data:`WIRE_RELEASE_COLUMNS`); :data:`OTHER_TARGETS`,
implementations the project did not write and CI does not build (rocketmq-rust), are shown beside them,
and checked or updated when named (``tox -e rocketmq-rust``). ``docs/results/<target>/index.json`` is the
run's report index (verdict, clause, message, policy row and citation of every case), ``cases/`` beside it
the full record (expected, seen, frames) of each case that did not PASS; the embedded broker's directory
also holds ``store/`` (the store it wrote, checked offline) and ``acl/`` (the ``acl``
area against it with ACL on). ``check`` is what ``.ci/run`` runs after the tests: a case whose verdict
differs from the committed one, in the run and again when rerun, fails CI, whichever way it changed, until
the report is updated in the same change that explains it; a case that differs once and not on the rerun
is reported as flaky with both verdicts. Either way the case's records of both runs (expected, seen,
frames) are kept under ``reports/results-check/<target>/<report>/<case>/`` (``--keep``), named on its line.

The TLS columns (:mod:`rocketmq_spec.conformance.results_tls`) are published but run only when named
(CI names them all).

``render`` writes ``docs/RESULTS.md`` (one column per target) and replaces, in ``README.md`` and the guides
under ``docs/``, the text between each ``<!-- generated:NAME -->`` and ``<!-- /generated:NAME -->`` pair by
what :data:`SPANS` makes of the reports; with ``--check`` it writes nothing and exits 1 when a file is stale
(``tests/test_results_docs.py`` does the same). The spans can sit anywhere in those documents.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from rocketmq_spec.conformance import client_results, results_tls
from rocketmq_spec.conformance.report.matrix import Report, render_comparison
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
from rocketmq_spec.rocketmq_rust.releases import RELEASES as RUST_RELEASES
from rocketmq_spec.spec.cli import add_version
from rocketmq_spec.targets import EMBEDDED, PROJECT_TARGETS, parse_target

RESULTS_DOC = ROOT / "docs" / "RESULTS.md"
README = ROOT / "README.md"
STORE, ACL, AUTHN, GRPC, CONTROLLER = "store", "acl", "authn", "grpc", "controller"
"""Subdirectories of a target's results: the embedded broker's store checked offline, its ACL 1.0 run (as
4.9.8), the ACL 2.0 run (authentication and authorization, ``--authn``) of the embedded broker and of
:data:`AUTHN_TARGETS`,
every target's ``grpc`` area against the gRPC proxy it serves (the reference broker's own; an Apache 5.x
release's rocketmq-proxy in local mode), and the ``--controller`` run (the ``controller`` and
``ha_autoswitch`` areas) of the reference controller and broker and of :data:`CONTROLLER_TARGETS`."""
RUN_TIMEOUT = 1800.0
TITLE = ("Conformance results: the embedded reference broker and Apache RocketMQ releases provisioned from "
         "Maven Central (Java 17, ASYNC_MASTER, ASYNC_FLUSH, auto-create on)")
TITLE_WITH_OTHERS = ("Conformance results: the embedded reference broker, Apache RocketMQ releases "
                     "provisioned from Maven Central (Java 17) and rocketmq-rust from crates.io "
                     "(ASYNC_MASTER, ASYNC_FLUSH, auto-create on)")
OTHER_TARGETS = tuple(row.target_name for row in RUST_RELEASES.values())
"""Other implementations, run only when named: building rocketmq-rust takes about an hour, too long for
every change. Their committed reports are shown beside the project's targets."""
WIRE_RELEASE_COLUMNS = {f"{EMBEDDED}-4.9.8": "4.9.8"}
"""Columns of the embedded reference broker answering as another release (``rmq-conformance
--wire-release``): where 4.9.8 and 5.x differ on the wire, it follows the release it is told to be, and
each mode is held to the suite on every change."""
ACL_COLUMN = f"{EMBEDDED}-4.9.8"
"""The column with the ACL 1.0 run: the reference broker answering as a release that has ACL 1.0."""
CHECKED = (EMBEDDED, *WIRE_RELEASE_COLUMNS, *(target for target in PROJECT_TARGETS if target != EMBEDDED))
"""What ``check`` and ``update`` run without targets, and the documents' first columns."""
PUBLISHED = (*CHECKED, *OTHER_TARGETS, *results_tls.TLS_COLUMNS)
AUTHN_TARGETS = ("apache-5.5.0",)
"""Releases with an ``authn`` run (``--target R --grpc --authn``: ACL 2.0 authentication and authorization on
the broker and its proxy): the release the spec's authorization tables were read from."""
CONTROLLER_TARGETS = ("apache-5.5.0",)
"""Releases with a ``controller`` run (``--target R --controller``: the release's name server with its
controller inside and its broker in controller mode): the release the spec's controller tables were read
from."""


def shown() -> list[str]:
    """The targets the documents show: the project's, and each other implementation with a report."""
    return [*CHECKED, *(t for t in OTHER_TARGETS if (RESULTS_DIR / t / INDEX).is_file())]


def _embedded(target: str) -> bool:
    return target == EMBEDDED or target in WIRE_RELEASE_COLUMNS


def _runs(target: str) -> dict[str, list[str]]:
    """Report subdirectory -> the ``rmq-conformance`` arguments producing it (the store report is written
    by the embedded run itself)."""
    if target in results_tls.TLS_COLUMNS:
        return results_tls.runs(target)
    if target in WIRE_RELEASE_COLUMNS:
        as_release = ["--wire-release", WIRE_RELEASE_COLUMNS[target]]
        return {"": as_release, ACL: ["--acl", *as_release]}  # a 4.x broker serves no gRPC
    runs = {"": ["--target", target]}
    if target == EMBEDDED:  # no ACL run: answering as 5.5.0 it has no ACL 1.0, as Apache's 5.3.3+ has none
        runs[AUTHN] = ["--authn"]
        runs[GRPC] = ["-k", GRPC]
        runs[CONTROLLER] = ["--controller"]
    elif (release := parse_target(target)) is not None and release.has_proxy:
        runs[GRPC] = ["--target", target, "--grpc", "-k", GRPC]
        if target in AUTHN_TARGETS:
            runs[AUTHN] = ["--target", target, "--grpc", "--authn"]
    if target in CONTROLLER_TARGETS:
        runs[CONTROLLER] = ["--target", target, "--controller"]
    return runs


def controller_columns() -> list[str]:
    """The controller comparison's columns: the reference controller (embedded), then the releases'."""
    return [EMBEDDED, *CONTROLLER_TARGETS]


def grpc_targets() -> list[str]:
    """The project targets that serve gRPC, in table order."""
    return [target for target in CHECKED if GRPC in _runs(target)]


def run_target(target: str, out: Path, only: str | None = None) -> None:
    """Run every report of ``target`` into ``out`` (one line of progress per run); ``only``: that
    subdirectory's run alone."""
    for sub, args in _runs(target).items():
        if only is not None and sub != only:
            continue
        report = out / sub if sub else out
        print(f"running {target}{' ' + sub if sub else ''} ...", flush=True)
        subprocess.run([sys.executable, "-m", "rocketmq_spec.conformance.cli",
                        *args, "--report", str(report)],
                       check=False, timeout=RUN_TIMEOUT, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        if not (report / INDEX).is_file():
            raise SystemExit(f"{target}: the run wrote no report in {report}")


def _indexes(root: Path, target: str) -> list[Path]:
    subs = [sub for sub in _runs(target) if sub] + ([STORE] if _embedded(target) else [])
    return [root / target / INDEX, *(root / target / sub / INDEX for sub in subs)]


TIMING_SENSITIVE: dict[str, str] = {
    "ha::master_heartbeat": "a 5.x master writes on its own (timer deliveries, POP checkpoints of other "
                            "cases): when its log grows throughout the wait the case is INFO (no quiet "
                            "interval to judge a heartbeat in), else PASS",
}
"""Cases whose verdict depends on what else the target is doing while they run, with why: ``check`` keeps
them out of the comparison (and says so) rather than fail CI on a verdict no change caused. A case belongs
here only when its clause cannot be judged deterministically; one that can is made so instead."""


def _rerun(target: str, sub: str, work: Path) -> Callable[[list[str]], Report | None]:
    """Rerun the cases named (their functions, every row of a table) of one report of ``target``."""
    def run(cases: list[str]) -> Report | None:
        functions = sorted({case.split("::", 1)[1].split("[", 1)[0] for case in cases})
        args = list(_runs(target)[sub])
        selection = " or ".join(f"test_{name}" for name in functions)
        if "-k" in args:
            at = args.index("-k") + 1
            args[at] = f"({args[at]}) and ({selection})"
        else:
            args += ["-k", selection]
        out = work / "rerun" / target / (sub or "main")
        print(f"running {target}{' ' + sub if sub else ''} again: {len(functions)} case function(s) ...",
              flush=True)
        subprocess.run([sys.executable, "-m", "rocketmq_spec.conformance.cli", *args, "--report", str(out)],
                       check=False, timeout=RUN_TIMEOUT, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        return Report.load(out / INDEX, "rerun") if (out / INDEX).is_file() else None
    return run


def check(targets: Sequence[str], keep: Path = KEPT_DIR) -> int:
    """Run each target and compare its verdicts with the committed ones; a case that differs is run once
    more, and only a case whose verdict differs both times counts (1 if any does). A case that flips back
    is reported as flaky with both verdicts; :data:`TIMING_SENSITIVE` cases are left out with their
    reason. The records of both runs of each case that differed are kept under ``keep/<target>/<report>``
    (``main`` for the target's main report)."""
    changed = 0
    with tempfile.TemporaryDirectory(prefix="rmq-results-") as work:
        for target in targets:
            run_target(target, Path(work) / target)
            subs = ["", *(sub for sub in _runs(target) if sub)]
            pairs = zip(_indexes(RESULTS_DIR, target), _indexes(Path(work), target), strict=True)
            for index, (committed, fresh) in enumerate(pairs):
                if not committed.is_file():
                    print(f"{target}: no committed report {committed.relative_to(ROOT)}")
                    changed += 1
                    continue
                sub = subs[index] if index < len(subs) else None  # the store report is not rerun alone
                rerun = _rerun(target, sub, Path(work)) if sub is not None else (lambda cases: None)
                found = compare(Report.load(committed, "committed"), Report.load(fresh, "this run"), rerun,
                                TIMING_SENSITIVE, keep / target / (fresh.parent.name if sub is None
                                                                    else sub or "main"))
                changed += found.print_lines(target, TIMING_SENSITIVE)
    return check_summary(changed, targets, "docs/results")


def update(targets: Sequence[str], only: str | None = None) -> int:
    """Run each target and replace its committed reports: index.json, and the per-case JSON (frames
    included) of every case that did not PASS, so each finding can be replayed from the checkout
    (``rmq-conformance reproduce``); the other case files and the pages are for reading a run, not for
    keeping. ``only``: the report of that subdirectory alone (``controller`` after a change to the
    controller's areas), the others left as committed."""
    with tempfile.TemporaryDirectory(prefix="rmq-results-") as work:
        for target in targets:
            if only is not None and only not in _runs(target):
                raise SystemExit(f"{target} has no {only} report (it has: "
                                 f"{', '.join(sub for sub in _runs(target) if sub) or 'none'})")
            run_target(target, Path(work) / target, only)
            pairs = zip(_indexes(Path(work), target), _indexes(RESULTS_DIR, target), strict=True)
            for fresh, committed in pairs:
                if only is not None and fresh.parent.name != only:
                    continue
                committed.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(fresh, committed)
                keep_reproducers(fresh.parent, committed.parent)
    return render(check_only=False)


# -- documents generated from the reports --------------------------------------------------------------


def _report(target: str, sub: str = "") -> Report:
    path = RESULTS_DIR / target / sub / INDEX if sub else RESULTS_DIR / target / INDEX
    # named relative to the checkout, so the generated document is the same on every machine
    return dataclasses.replace(Report.load(path, target), source=str(path.relative_to(ROOT)))


def _totals_table(sub: str = "") -> str:
    """Verdict totals per project target (``sub``: of that report of each target that has one)."""
    verdicts = [v for v in VERDICT_ORDER if v is not Verdict.INFO]
    rows = ["| target | profile | cases | " + " | ".join(v.value for v in verdicts) + " |",
            "|---|---|---:|" + "---:|" * len(verdicts)]
    for target in grpc_targets() if sub == GRPC else controller_columns() if sub == CONTROLLER else shown():
        report = _report(target, sub)
        rows.append(f"| {target} | {report.meta.get('profile', '')} | {len(report.cases)} | "
                    + " | ".join(str(report.total(v)) for v in verdicts) + " |")
    return "\n".join(rows)


SPANS: dict[str, Callable[[], str]] = {
    "wire-cases": lambda: str(len(_report(EMBEDDED).cases)),
    "wire-pass": lambda: str(_report(EMBEDDED).total(Verdict.PASS)),
    "wire-unsupported": lambda: str(_report(EMBEDDED).total(Verdict.UNSUPPORTED)),
    "store-cases": lambda: str(len(_report(EMBEDDED, STORE).cases)),
    "acl-cases": lambda: str(len(_report(ACL_COLUMN, ACL).cases)),
    "results-table": lambda: "\n" + _totals_table() + "\n",
    "grpc-cases": lambda: str(len(_report(EMBEDDED, GRPC).cases)),
    "grpc-table": lambda: "\n" + _totals_table(GRPC) + "\n",
    "controller-table": lambda: "\n" + _totals_table(CONTROLLER) + "\n",
    "clients-table": client_results.table,
}
"""Generated spans by name, each made from the committed reports."""

_SPAN = re.compile(r"(<!-- generated:(?P<name>[\w-]+) -->)(?P<body>.*?)(<!-- /generated:(?P=name) -->)", re.S)


def spanned_documents() -> list[Path]:
    """The documents whose generated spans ``render`` fills: the README and the guides under docs/ (the
    spans move with the text that holds them)."""
    return [README, *sorted(path for path in (ROOT / "docs").glob("*.md") if path != RESULTS_DOC)]


def spans_text(text: str, where: str = "README.md") -> str:
    def fill(match: re.Match[str]) -> str:
        name = match["name"]
        if name not in SPANS:
            raise SystemExit(f"{where}: unknown generated span {name!r} (known: {', '.join(SPANS)})")
        return f"{match[1]}{SPANS[name]()}{match[4]}"

    return _SPAN.sub(fill, text)


GRPC_TITLE = ("gRPC (RocketMQ 5's SDK protocol, the grpc area): the reference broker's proxy and Apache "
              "RocketMQ's rocketmq-proxy in local mode")


CONTROLLER_TITLE = ("Controller (RocketMQ 5's automatic failover, --controller: the controller and "
                    "ha_autoswitch areas): the reference controller and broker (embedded) and Apache "
                    "RocketMQ's controller in its name server with its broker in controller mode")


AUTHN_TITLE = ("ACL 2.0 (--authn: authentication and authorization on, remoting and gRPC): the reference "
               "broker and Apache RocketMQ with its rocketmq-proxy in local mode")


def _without_area(report: Report, area: str) -> Report:
    """``report`` less the cases of ``area``, totals counted again: a target that serves the area runs its
    cases in the main run too, and the area has a comparison of its own."""
    cases = {case: entry for case, entry in report.cases.items() if not case.startswith(f"{area}::")}
    counted = Counter(entry["verdict"] for entry in cases.values())
    totals = {verdict.value: counted[verdict.value] for verdict in VERDICT_ORDER}
    return dataclasses.replace(report, cases=cases, meta={**report.meta, "totals": totals})


def results_text() -> str:
    targets = shown()
    title = TITLE_WITH_OTHERS if set(targets) & set(OTHER_TARGETS) else TITLE
    remoting = render_comparison([_without_area(_report(target), GRPC) for target in targets], title=title)
    grpc = render_comparison([_report(target, GRPC) for target in grpc_targets()], title=GRPC_TITLE)
    authn = render_comparison([_report(target, AUTHN) for target in (EMBEDDED, *AUTHN_TARGETS)],
                              title=AUTHN_TITLE)
    controller = render_comparison([_report(target, CONTROLLER) for target in controller_columns()],
                                   title=CONTROLLER_TITLE)
    text = "\n\n".join(part.rstrip("\n") for part in (remoting, grpc, authn, controller))
    tls = [dataclasses.replace(_report(column, sub), label=results_tls.label(column, sub))
           for column in results_tls.TLS_COLUMNS if (RESULTS_DIR / column / INDEX).is_file()
           for sub in _runs(column)]
    return text + "\n\n" + render_comparison(tls, title=results_tls.TITLE) if tls else text + "\n"


def render(*, check_only: bool) -> int:
    stale = []
    documents = [(RESULTS_DOC, results_text()),
                 *((path, spans_text(path.read_text("utf-8"), path.name)) for path in spanned_documents())]
    for path, text in documents:
        if path.read_text(encoding="utf-8") != text:
            stale.append(path.relative_to(ROOT))
            if not check_only:
                path.write_text(text, encoding="utf-8")
    if check_only and stale:
        print(f"stale: {', '.join(map(str, stale))}; run python -m rocketmq_spec.conformance.results render")
        return 1
    print(f"{'rewrote ' + ', '.join(map(str, stale)) if stale else 'up to date'}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rocketmq_spec.conformance.results",
                                     description=__doc__.splitlines()[0])
    add_version(parser)
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("check", "update"):
        sub = commands.add_parser(name)
        sub.add_argument("targets", nargs="*", metavar="TARGET",
                         help=f"default: {' '.join(CHECKED)}; client:DRIVER for a client column, "
                              f"{client_results.ALL} for {' '.join(client_results.CLIENTS_CHECKED)}")
    commands.choices["check"].add_argument(
        "--keep", type=Path, default=KEPT_DIR, metavar="DIR",
        help=f"where the records of the cases that differed are kept (default: {KEPT_DIR} under the current "
             "directory)")
    commands.choices["update"].add_argument(
        "--only", choices=(ACL, AUTHN, GRPC, CONTROLLER),
        help="run and replace only this report of each target (e.g. the controller column)")
    commands.add_parser("render").add_argument("--check", action="store_true", help="only say whether stale")
    args = parser.parse_args(argv)
    if args.command == "render":
        return render(check_only=args.check)
    names = args.targets or list(CHECKED)
    clients = [name for name in names if client_results.is_client(name)]
    targets = [name for name in names if not client_results.is_client(name)]
    known = [*PUBLISHED, client_results.ALL, *client_results.known()]
    if unknown := [t for t in targets if t not in PUBLISHED] + client_results.unknown(clients):
        parser.error(f"not a published target: {', '.join(unknown)} (known: {', '.join(known)})")
    if args.command == "update":
        client_results.update(clients)
        return update(targets, args.only) if targets else render(check_only=False)
    keep = args.keep.resolve()
    codes = [client_results.check(clients, keep)] if clients else []
    return max([*codes, check(targets, keep)] if targets else codes)


if __name__ == "__main__":
    sys.exit(main())
