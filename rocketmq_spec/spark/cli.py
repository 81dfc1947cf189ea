"""``rmq-spark``: the Spark jobs of this project from the command line.

    rmq-spark verify DIR [--cores N] [--split-bytes B] [--index-sizes SLOTS,ENTRIES] [--json FILE]
    rmq-spark scan DIR [--cores N] [--split-bytes B]
    rmq-spark export DIR [DIR ...] --to parquet OUT [--cores N] [--split-bytes B]

``verify`` checks a store directory's clauses in Spark SQL and prints one verdict per case and per
clause, as ``rmq-conformance store DIR`` does (``--index-sizes`` as there: the index files' counts when
they are not in Java's 1:4 ratio); it exits 1 when a clause fails. ``scan`` prints the
record count, byte count and checksums of the Spark scan next to those of the single-process codec scan.
``export`` writes the records of one or more brokers' stores to Parquet under OUT (which must not exist),
partitioned by topic and UTC date, for Spark's native reader to query (:mod:`rocketmq_spec.spark.export`).
Called in a process that already runs a SparkSession, the jobs use it (and leave it running).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from pyspark.sql import SparkSession

from rocketmq_spec.spark.export import EXPORT_FORMATS, export_store
from rocketmq_spec.spark.options import index_sizes
from rocketmq_spec.spark.scan import codec_scan_summary, spark_scan_summary
from rocketmq_spec.spark.session import local_session
from rocketmq_spec.spark.verify import FAIL, clause_verdicts, verify_store
from rocketmq_spec.spec.cli import BadInput, Parser, add_version, fail, require_store

PROG = "rmq-spark"


def _index_sizes(text: str) -> tuple[int, int]:
    try:
        sizes = index_sizes({"index-sizes": text}, "index-sizes")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if sizes is None:
        raise argparse.ArgumentTypeError("index sizes are SLOTS,ENTRIES")
    return sizes


def _parser() -> argparse.ArgumentParser:
    parser = Parser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_version(parser)
    commands = parser.add_subparsers(dest="command", required=True)
    for name, text in (("verify", "check a store directory's clauses"),
                       ("scan", "count and checksum a store, in Spark and with the codec"),
                       ("export", "write one or more brokers' stores as Parquet")):
        command = commands.add_parser(name, help=text)
        command.add_argument("directory", type=Path, nargs="+" if name == "export" else None)
        command.add_argument("--cores", type=int, default=2, help="Spark local[N] (default 2)")
        command.add_argument("--split-bytes", type=int, default=None, help="CommitLog bytes per partition")
        if name == "verify":
            command.add_argument("--index-sizes", type=_index_sizes, metavar="SLOTS,ENTRIES",
                                 help="maxHashSlotNum,maxIndexNum of the index files (default: from size)")
            command.add_argument("--json", type=Path, metavar="FILE", help="write the verdicts as JSON")
        if name == "export":
            command.add_argument("--to", nargs=2, required=True, metavar=("FORMAT", "OUT"),
                                 help=f"output format ({', '.join(EXPORT_FORMATS)}) and directory")
    return parser


def _check_export(args: argparse.Namespace) -> None:
    kind, out = args.to
    if kind not in EXPORT_FORMATS:
        raise BadInput(f"cannot export to {kind!r}: formats are {', '.join(EXPORT_FORMATS)}")
    if Path(out).exists():
        raise BadInput(f"{out} exists: export writes a new directory")


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        for directory in args.directory if args.command == "export" else [args.directory]:
            require_store(directory)
        if args.command == "export":
            _check_export(args)
    except BadInput as exc:
        return fail(PROG, exc)
    running = SparkSession.getActiveSession()
    spark = local_session(args.cores)
    try:
        if args.command == "export":
            print(f"exporting {len(args.directory)} store(s) to {args.to[1]} ...", file=sys.stderr,
                  flush=True)
            exported = export_store(spark, args.directory, Path(args.to[1]), split_bytes=args.split_bytes)
            print(json.dumps({"out": args.to[1], "format": args.to[0], **vars(exported)}))
            return 0
        if args.command == "scan":
            spark_summary = spark_scan_summary(spark, args.directory, split_bytes=args.split_bytes)
            codec_summary = codec_scan_summary(args.directory)
            for label, summary in (("spark", spark_summary), ("codec", codec_summary)):
                print(f"{label}: {summary}")
            return 0 if spark_summary == codec_summary else 1
        cases = verify_store(spark, args.directory, split_bytes=args.split_bytes,
                             index_sizes=args.index_sizes)
    finally:
        if running is None:
            spark.stop()
    for case in cases:
        detail = f"  -- {case.detail}" if case.detail else ""
        print(f"{case.verdict:<10} {case.clause:<28} {case.case}{detail}")
    clauses = clause_verdicts((c.clause, c.verdict) for c in cases)
    print()
    for clause, verdict in clauses.items():
        print(f"{clause:<28} {verdict}")
    if args.json:
        args.json.write_text(json.dumps({"cases": [vars(c) for c in cases], "clauses": clauses}, indent=1))
    return 1 if FAIL in clauses.values() else 0


if __name__ == "__main__":
    sys.exit(main())
