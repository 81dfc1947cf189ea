"""``rmq-conformance compare`` and ``compare-html``: two or more finished reports side by side, as a Markdown
matrix or an HTML page with the differing verdicts first."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from rocketmq_spec.conformance.cli_options import PROG
from rocketmq_spec.spec.cli import BadInput, Parser, one_line, require_file


def compare_parser() -> argparse.ArgumentParser:
    parser = Parser(prog=f"{PROG} compare", description="write the case × run matrix of two or more reports")
    parser.add_argument("reports", type=Path, nargs="+", metavar="INDEX_JSON", help="each run's index.json")
    parser.add_argument("--label", action="append", default=[], metavar="NAME",
                        help="column name of each report, in order (default: its target's addresses)")
    parser.add_argument("--title", default="Conformance results", help="the document's heading")
    parser.add_argument("--out", type=Path, metavar="FILE", help="write here instead of standard output")
    return parser


def compare(argv: Sequence[str]) -> int:
    from rocketmq_spec.conformance.report.matrix import Report, ReportError, differences, render_comparison

    args = compare_parser().parse_args(argv)
    if args.label and len(args.label) != len(args.reports):
        raise BadInput(f"{len(args.label)} labels for {len(args.reports)} reports")
    labels = args.label or [None] * len(args.reports)
    try:
        reports = [Report.load(path, label) for path, label in zip(args.reports, labels, strict=True)]
        text = render_comparison(reports, title=args.title)
    except ReportError as exc:
        raise BadInput(str(exc)) from None
    if args.out is None:
        sys.stdout.write(text)
    else:
        args.out.write_text(text, encoding="utf-8")
        changed = len(differences(reports))
        print(f"wrote {args.out}: {len(reports)} runs, {changed} case(s) with different verdicts")
    return 0


def compare_html_parser() -> argparse.ArgumentParser:
    parser = Parser(prog=f"{PROG} compare-html",
                    description="an HTML page comparing two report directories, differing verdicts first")
    parser.add_argument("reports", nargs=2, type=Path, metavar="REPORT_DIR", help="two report directories")
    parser.add_argument("--html", type=Path, required=True, metavar="FILE", help="the page to write")
    parser.add_argument("--labels", metavar="A,B", help="names for the two sides (default: their targets)")
    return parser


def compare_html(args: argparse.Namespace) -> int:
    from rocketmq_spec.conformance.report import html_compare

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
