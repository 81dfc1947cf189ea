"""``python -m rocketmq_spec.mutation``: mutation testing of the conformance suite (``tox -e
mutation``).

    python -m rocketmq_spec.mutation run [--sample N] [--seed S] [--workers N] [--timeout S]
                                       [--modules PATH ...] [--cases PATH ...] [--out DIR] [--json FILE]
    python -m rocketmq_spec.mutation report [--out DIR] [--json FILE]

``run`` plans the session in DIR (default ``.mutation`` of the project, the working directory) on first
use, records which cases run each line, runs the pending mutants (all, or a sample of N) and prints the
figures; run it again to continue. ``report`` prints the figures of what has run and writes them as JSON.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from cosmic_ray.work_item import TestOutcome

from rocketmq_spec.mutation import report, session
from rocketmq_spec.spec.cli import Parser, add_version

PROG = "python -m rocketmq_spec.mutation"
COVERAGE_TIMEOUT_S = 3600.0
AGAIN = {"survived": lambda r: r.test_outcome is TestOutcome.SURVIVED,
         "uncovered": lambda r: r.output == session.UNCOVERED}


def _parser() -> argparse.ArgumentParser:
    parser = Parser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_version(parser)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run pending mutants")
    run.add_argument("--sample", type=int, metavar="N", help="run N of the pending mutants (the short form)")
    run.add_argument("--seed", type=int, default=20, help="which sample (default 20)")
    run.add_argument("--workers", type=int, default=2, help="mutants run at once, one tree each")
    run.add_argument("--timeout", type=float, default=600.0, metavar="S", help="seconds a mutant may run")
    run.add_argument("--again", choices=("survived", "uncovered"), help="first run again the finished "
                     "mutants that survived (after cases were added), or that no case ran")
    run.add_argument("--refresh", action="store_true", help="first copy the project's suite (conformance, "
                     "spec, codec) into the session's trees and record again which cases run each line")
    run.add_argument("--modules", nargs="+", metavar="PATH", help="mutate only these modules (relative to "
                     "the project; default: mutation.scope)")
    run.add_argument("--cases", nargs="+", metavar="PATH", help="judge with only these case files or node "
                     "ids (default: every case)")
    shown = commands.add_parser("report", help="print the figures")
    for command in (run, shown):
        command.add_argument("--project", type=Path, default=Path.cwd(), metavar="DIR",
                             help="the project tree to mutate (default: the working directory)")
        command.add_argument("--out", type=Path, metavar="DIR",
                             help="the session (default: PROJECT/.mutation)")
        command.add_argument("--json", type=Path, metavar="FILE", help="also write the figures as JSON")
    return parser


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    out = (args.out or args.project / ".mutation").resolve()  # the runs work in the session's trees
    if args.command == "run":
        pending = session.plan(args.project, out, args.workers, args.modules)
        if args.refresh:
            session.refresh(args.project, out)
        _progress(f"{pending} mutants pending in {out}; recording which cases run each line ...")
        session.record_coverage(out, COVERAGE_TIMEOUT_S, args.cases)
        session.execute(out, sample=args.sample, seed=args.seed, workers=args.workers, timeout=args.timeout,
                        progress=_progress, again=AGAIN.get(args.again))
    figures = report.figures(out)
    print(report.text(figures))
    if args.json is not None:
        report.write(figures, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
