"""Runs every benchmark module and prints one table (Markdown, so it can go into the README as is).

Usage: ``python benchmarks/run.py [--quick] [--only NAME ...]``; ``--quick`` is for smoke runs and says
under its table that it is not for publication. Each module in this folder that defines
``run(quick: bool) -> list[Result]`` is a benchmark; ``--only`` picks modules by name.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from a checkout
    sys.path.insert(0, str(ROOT))

from benchmarks.common import Result  # noqa: E402

_NOT_BENCHMARKS = {"common", "run", "soak", "java_compare", "machine", "matrix", "startup", "ci_check",
                   "failover"}
"""``soak`` drives a broker for many minutes and has its own runner (``python -m benchmarks.soak``); the
matrix against Apache RocketMQ takes twenty minutes and has its own (``python -m benchmarks.matrix``), and
so has the election timing of the two controllers, which kills brokers for a quarter of an hour
(``python -m benchmarks.failover``); the others are their helpers and CI's short check."""
QUICK_LABEL = "QUICK RUN (short measurements): not for publication"


def _modules(only: Sequence[str]) -> list[str]:
    names = sorted(i.name for i in pkgutil.iter_modules([str(Path(__file__).parent)])
                   if i.name not in _NOT_BENCHMARKS)
    unknown = set(only) - set(names)
    if unknown:
        raise SystemExit(f"unknown benchmark(s): {', '.join(sorted(unknown))}; known: {', '.join(names)}")
    return [n for n in names if not only or n in only]


def _format(value: float | None) -> str:
    if value is None:
        return ""
    return f"{value:,.0f}" if value >= 100 else f"{value:,.2f}"


def table(results: Sequence[Result]) -> str:
    lines = ["| group | benchmark | ops/s | MB/s | target | note |", "|---|---|---:|---:|---|---|"]
    lines += [f"| {r.group} | {r.name} | {_format(r.ops_per_s)} | {_format(r.mb_per_s)} "
              f"| {r.target} | {r.note} |" for r in results]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--quick", action="store_true", help="short measurements (for smoke runs)")
    parser.add_argument("--only", nargs="*", default=[], help="benchmark modules to run")
    args = parser.parse_args(argv)
    if args.quick:
        print(QUICK_LABEL, file=sys.stderr)
    results: list[Result] = []
    for name in _modules(args.only):
        print(f"running {name} ...", file=sys.stderr, flush=True)
        module = importlib.import_module(f"benchmarks.{name}")
        if hasattr(module, "run"):
            results += module.run(quick=args.quick)
    print(table(results))
    if args.quick:
        print(f"\n{QUICK_LABEL}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
