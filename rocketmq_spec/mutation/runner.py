"""``python -m rocketmq_spec.mutation.runner``: the suite against this tree's embedded broker,
once.

Run with the (possibly mutated) project tree as the working directory, so the broker imported is the
tree's. Wire cases are given by pytest node id (``--wire FILE``, one a line, or ``--all``); they run
against the embedded broker, then every store case runs on the store it left after a clean stop, as
``rmq-conformance`` does. ``--acl FILE`` runs ACL cases against a broker started with ACL on. The exit
status is 0 when every case passed. With ``--coverage OUT`` the broker's lines are recorded with one
coverage context per case (its node id; "" for start-up and what no case was running for) and written
to OUT as JSON: path -> line -> node ids.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from rocketmq_spec.mutation.scope import PACKAGES
from rocketmq_spec.spec.store_layout import COMMITLOG_DIR

CASES_DIR = Path(__file__).resolve().parents[1] / "conformance" / "cases"
WIRE_OPTIONS = argparse.Namespace(report=None, profile=None, strict=True, selection=None, workers="0",
                                  verbose=False, index_sizes=None)
"""Strict and without a profile: the reference broker passes every case, so a mutant that turns one
NON-STRICT is caught too, and no deviation of a release it answers as is tolerated."""
SMALL_FILES = {"mappedFileSizeCommitLog": str(8 * 1024 * 1024), "mappedFileSizeConsumeQueue": str(10 * 20),
               "maxHashSlotNum": "64", "maxIndexNum": "256"}
"""Store files small enough that the suite's messages cross their boundaries (a 4 MiB body still fits a
CommitLog file; consume queues of 10 entries; index files of 255 entries, in Java's 1:4 ratio so readers
infer their counts): where files end is where a store goes wrong."""
STORE_CASES = CASES_DIR / "test_store.py"
ACL_CASES = CASES_DIR / "test_acl.py"
PASSED = (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED)


class CaseContexts:
    """A pytest plugin giving each case its own coverage context, so a line is tied to the cases (and the
    broker work they caused, in the broker's own thread) that ran it."""

    def __init__(self, coverage: Any) -> None:
        self.coverage = coverage

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        self.coverage.switch_context(item.nodeid)

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_teardown(self, item: pytest.Item, nextitem: pytest.Item | None) -> None:
        self.coverage.switch_context("")


def _cases(paths: Sequence[str], target: Any, plugins: list[object], first_failure: bool) -> bool:
    from rocketmq_spec.conformance.cli import pytest_args

    argv = pytest_args(target, WIRE_OPTIONS)
    argv[0:1] = list(paths)
    # Several runs in one process: modules imported by the first cannot be assertion-rewritten again;
    # the cases report through ``check``, not bare asserts, so nothing is lost.
    argv += ["-W", "ignore::pytest.PytestAssertRewriteWarning", *(["-x"] if first_failure else [])]
    return pytest.main(argv, plugins=plugins) in PASSED


def run(wire: Sequence[str], acl: Sequence[str], plugins: list[object], *,
        first_failure: bool = True) -> bool:
    """Run the wire cases (then the store cases on the store they left) and the ACL cases; True when
    every one passed. ``first_failure`` stops at the first failing case: one kills a mutant. The broker is
    imported here, not with this module, so that a coverage run records its module-level lines too."""
    from rocketmq_spec.conformance import embedded
    from rocketmq_spec.conformance.acl_policy import ACL_RELEASE
    from rocketmq_spec.conformance.target import Target
    from rocketmq_spec.mutation.in_process import InProcessServers

    passed = True
    with tempfile.TemporaryDirectory(prefix="rmq-mutant-") as work:
        if wire:
            with embedded.launch(Path(work) / "wire", store_files=SMALL_FILES,
                                 servers=InProcessServers) as target:
                # no life-cycle cases: the brokers they start run unmutated code, out of coverage's sight
                wire_target = dataclasses.replace(target, store=None, launcher=None)
                passed = _cases(wire, wire_target, plugins, first_failure)
            if not passed and first_failure:
                return False
            assert target.store is not None
            if (target.store / COMMITLOG_DIR).is_dir():  # cases that store nothing leave no store to check
                passed &= _cases([str(STORE_CASES)], Target(store=target.store), [], first_failure)
            if not passed and first_failure:
                return False
        if acl:
            with embedded.launch(Path(work) / "acl", acl=True, release=ACL_RELEASE,
                                 servers=InProcessServers) as target:
                passed &= _cases(acl, dataclasses.replace(target, store=None), plugins, first_failure)
    return passed


@contextmanager
def _recording(out: Path | None) -> Iterator[list[object]]:
    """Coverage of the broker's packages with a context per case, written to ``out`` as JSON."""
    if out is None:
        yield []
        return
    import coverage

    cov = coverage.Coverage(source=[str(Path(p)) for p in PACKAGES], data_file=None)
    cov.start()
    try:
        yield [CaseContexts(cov)]
    finally:
        cov.stop()
    data = cov.get_data()
    root = Path.cwd()
    lines = {}
    for measured in sorted(data.measured_files()):
        contexts = data.contexts_by_lineno(measured)
        lines[Path(measured).relative_to(root).as_posix()] = {str(n): sorted(c) for n, c in contexts.items()}
    out.write_text(json.dumps(lines), encoding="utf-8")


def _ids(path: Path | None) -> list[str]:
    return [] if path is None else [line for line in path.read_text().splitlines() if line.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rocketmq_spec.mutation.runner",
                                     description=__doc__)
    parser.add_argument("--wire", type=Path, metavar="FILE", help="wire case node ids, one a line")
    parser.add_argument("--all", action="store_true", help="every case, wire and ACL")
    parser.add_argument("--acl", type=Path, metavar="FILE", help="ACL case node ids, one a line")
    parser.add_argument("--coverage", type=Path, metavar="OUT", help="record per-case coverage to OUT")
    args = parser.parse_args(argv)
    wire = [str(CASES_DIR)] if args.all else _ids(args.wire)
    acl = [str(ACL_CASES)] if args.all else _ids(args.acl)
    with _recording(args.coverage) as plugins:
        passed = run(wire, acl, plugins, first_failure=args.coverage is None)
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
