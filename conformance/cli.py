"""``rmq-conformance``: run the suite against a target, or check a store directory offline.

    rmq-conformance [--namesrv HOST:PORT] [--broker HOST:PORT] [--report DIR] [--strict] [-k SELECTION]
    rmq-conformance store DIR [--index-sizes SLOTS,ENTRIES] [--report DIR] [--strict] [-k SELECTION]
    rmq-conformance compare-html REPORT_A REPORT_B --html FILE [--labels A,B]

Without a name server or broker the embedded reference broker is started on loopback and checked, which
is how the suite is meant to be tried first; once it has stopped, the store it wrote is checked too (reports
under ``store/`` of the report directory). The cases run under pytest (in parallel with ``-n``), which
prints progress while they run; the verdict table is printed at the end.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pytest

from conformance import profile as profiles
from conformance.target import Target
from conformance.wire import Endpoint
from spec.cli import BadInput, Parser, add_version, fail, one_line, require_file, require_store

PROG = "rmq-conformance"

CASES_DIR = Path(__file__).with_name("cases")

STORE_REPORT = "store"
"""Subdirectory of ``--report`` for the store the embedded broker wrote."""

DEFAULT_WORKERS = "4"
"""pytest-xdist workers for wire runs: cases are mostly waiting on the target, and four keep a local
broker busy without making timing-sensitive cases (long polling) compete for it."""


def _endpoint(text: str) -> Endpoint:
    try:
        return Endpoint.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--report", type=Path, metavar="DIR", help="write index.json, junit.xml, index.html")
    parser.add_argument("--strict", action="store_true", help="NON-STRICT verdicts fail the run")
    parser.add_argument("-k", dest="selection", metavar="SELECTION", help="pytest -k expression")
    parser.add_argument("--profile", metavar="FILE|NAME", help="target profile of known deviations")
    parser.add_argument("-n", dest="workers", default=None, metavar="N", help="pytest-xdist workers")
    parser.add_argument("-v", dest="verbose", action="store_true", help="one line per case")


def _wire_parser() -> argparse.ArgumentParser:
    parser = Parser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_version(parser)
    parser.add_argument("--namesrv", type=_endpoint, metavar="HOST:PORT")
    parser.add_argument("--broker", type=_endpoint, metavar="HOST:PORT")
    parser.add_argument("--slow", action="store_true", help="include slow cases (expiry, long timeouts)")
    _common(parser)
    return parser


def _store_parser() -> argparse.ArgumentParser:
    parser = Parser(prog=f"{PROG} store", description="check a store directory")
    parser.add_argument("directory", type=Path)
    parser.add_argument("--index-sizes", metavar="SLOTS,ENTRIES",
                        help="maxHashSlotNum,maxIndexNum of the index files, when not in Java's 1:4 ratio")
    _common(parser)
    return parser


def _compare_parser() -> argparse.ArgumentParser:
    parser = Parser(prog=f"{PROG} compare-html",
                    description="an HTML page comparing two report directories, differing verdicts first")
    parser.add_argument("reports", nargs=2, type=Path, metavar="REPORT_DIR")
    parser.add_argument("--html", type=Path, required=True, metavar="FILE", help="the page to write")
    parser.add_argument("--labels", metavar="A,B", help="names for the two sides (default: their targets)")
    return parser


def _compare_html(args: argparse.Namespace) -> int:
    from conformance.report import html_compare

    labels = args.labels.split(",", 1) if args.labels else [None, None]
    if len(labels) != 2:
        raise BadInput(f"--labels takes two names separated by a comma, got {args.labels!r}")
    sides = []
    for directory, label in zip(args.reports, labels, strict=True):
        require_file(directory / "index.json", "report index")
        try:
            sides.append(html_compare.load(directory, label))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise BadInput(f"cannot read the report in {directory}: {one_line(exc)}") from None
    page = html_compare.write(args.html, *sides)
    differing = sum(p.differs for p in html_compare.pairs(*sides))
    print(f"{differing} case(s) with different verdicts; wrote {page}")
    return 0


def pytest_args(target: Target, args: argparse.Namespace, *, slow: bool = False) -> list[str]:
    """The pytest command line for a run; kept separate so it can be inspected and tested."""
    argv = [str(CASES_DIR), "-p", "conformance.plugin", "-r", "fE",
            *("-p", "no:cacheprovider"), *("-p", "no:benchmark")]
    for name, value in (("namesrv", target.namesrv), ("broker", target.broker), ("store", target.store),
                        ("report", args.report), ("profile", args.profile),
                        ("index-sizes", getattr(args, "index_sizes", None))):
        if value is not None:
            argv.append(f"--rmq-{name}={value}")
    if args.strict:
        argv.append("--rmq-strict")
    if args.selection:
        argv += ["-k", args.selection]
    if not slow:
        argv += ["-m", "not slow"]
    workers = args.workers or (DEFAULT_WORKERS if target.broker or target.namesrv else None)
    if workers and workers != "0":
        argv += ["-n", workers]
    argv.append("-v" if args.verbose else "-q")
    return argv


def _embedded(args: argparse.Namespace) -> int:
    """Run the wire cases against the embedded broker, then the store cases against the store it wrote.

    The store is checked only after the broker has stopped cleanly, as a store tool would find it; its
    reports go to ``store/`` under the report directory, beside the wire run's.
    """
    from conformance import embedded

    with tempfile.TemporaryDirectory(prefix="rmq-conformance-") as work:
        with embedded.launch(Path(work)) as target:
            print(f"started the embedded reference broker: namesrv {target.namesrv}, broker {target.broker}",
                  flush=True)
            wire_code = pytest.main(pytest_args(Target(target.namesrv, target.broker), args, slow=args.slow))
        assert target.store is not None
        print(f"checking the store the embedded broker wrote: {target.store}", flush=True)
        report = args.report and args.report / STORE_REPORT
        store_args = argparse.Namespace(**{**vars(args), "report": report})
        # The wire run already imported the suite's modules, which a second run in this process cannot
        # assertion-rewrite; the cases report through ``check``, not bare asserts, so nothing is lost.
        store_code = pytest.main([*pytest_args(Target(store=target.store), store_args),
                                  "-W", "ignore::pytest.PytestAssertRewriteWarning"])
    if store_code == pytest.ExitCode.NO_TESTS_COLLECTED:
        store_code = pytest.ExitCode.OK  # a -k selection of wire cases only
    return int(wire_code or store_code)


def _check_options(args: argparse.Namespace) -> None:
    """Options that would otherwise fail inside every case: a profile that cannot be read, a report
    directory that is a file."""
    if args.profile:
        try:
            profiles.load(Path(args.profile))
        except profiles.ProfileError as exc:
            raise BadInput(str(exc)) from None
    if args.report and args.report.exists() and not args.report.is_dir():
        raise BadInput(f"report directory {args.report} is a file")


def _check_reachable(target: Target) -> None:
    """A target that does not answer is one line, not every case failing in turn."""
    for role, endpoint in (("name server", target.namesrv), ("broker", target.broker)):
        if endpoint is not None and (why := target.unreachable(endpoint)):
            raise BadInput(f"the {role} at {endpoint} is unreachable: {why}")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv[:1] == ["compare-html"]:
            return _compare_html(_compare_parser().parse_args(argv[1:]))
        if argv[:1] == ["store"]:
            args = _store_parser().parse_args(argv[1:])
            _check_options(args)
            return int(pytest.main(pytest_args(Target(store=require_store(args.directory)), args)))
        args = _wire_parser().parse_args(argv)
        _check_options(args)
        if args.namesrv or args.broker:
            target = Target(args.namesrv, args.broker)
            _check_reachable(target)
            return int(pytest.main(pytest_args(target, args, slow=args.slow)))
    except BadInput as exc:
        return fail(PROG, exc)
    return _embedded(args)


if __name__ == "__main__":
    sys.exit(main())
