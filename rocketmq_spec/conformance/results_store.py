"""Where the committed reports live, and how a fresh run is held against one: shared by the broker
results (:mod:`.results`) and the client results (:mod:`.client_results`).

A case whose verdict differs from the committed one is run once more before it counts: a case that goes
back to the committed verdict on the rerun is flaky (reported with both verdicts, CI not failed), one that
differs both times changed. Cases whose clause cannot be judged deterministically are left out by name,
with the reason the caller gives.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rocketmq_spec.conformance.report.json_files import CASES_DIR
from rocketmq_spec.conformance.report.matrix import Report, differences
from rocketmq_spec.conformance.verdict import Verdict

ROOT = Path(__file__).resolve().parents[2]
RESULTS_DIR = ROOT / "docs" / "results"
INDEX = "index.json"


@dataclass(frozen=True)
class Comparison:
    """A fresh run beside the committed report: cases whose verdict changed (the rerun agreed with the
    fresh run), cases that flipped (the rerun went back to the committed verdict), and cases left out."""

    changed: list[tuple[str, str, str]]
    """(case, committed verdict, this run's verdict)."""
    flaky: list[tuple[str, str, str]]
    """(case, committed verdict, the verdict of the run that differed)."""
    left_out: list[str]

    def print_lines(self, label: str, timing_sensitive: Mapping[str, str]) -> int:
        """One line per differing or left-out case, prefixed by the column's ``label``; the number of
        changed cases (the ones that fail a check)."""
        for case, before, now in self.changed:
            print(f"{label}: {case}: committed {before}, this run {now} (and again when rerun)")
        for case, before, now in self.flaky:
            print(f"{label}: {case}: FLAKY: committed {before}, this run {now}, {before} when rerun")
        for case in self.left_out:
            print(f"{label}: {case}: left out, timing-sensitive: {timing_sensitive[case]}")
        return len(self.changed)


def check_summary(changed: int, names: Sequence[str], where: str) -> int:
    """The closing line of a check and its exit status: 1 when any verdict changed."""
    print(f"{changed} verdict(s) differ from {where}" if changed else
          f"every verdict of {', '.join(names)} is the committed one (flaky and timing-sensitive cases "
          "aside, listed above)")
    return 1 if changed else 0


def compare(committed: Report, fresh: Report, rerun: Callable[[list[str]], Report | None],
            timing_sensitive: Mapping[str, str]) -> Comparison:
    """Compare ``fresh`` with ``committed``; the cases that differ are run once more (``rerun``, which may
    answer None when it cannot), and a case whose second verdict is the committed one is flaky, not
    changed. Cases named in ``timing_sensitive`` are left out."""
    pair = [committed, fresh]
    left_out = [case for case in differences(pair) if case in timing_sensitive]
    differing = [case for case in differences(pair) if case not in timing_sensitive]
    again = rerun(differing) if differing else None
    changed, flaky = [], []
    for case in differing:
        row = (case, committed.verdict(case), fresh.verdict(case))
        if again is not None and again.verdict(case) == committed.verdict(case):
            flaky.append(row)
        else:
            changed.append(row)
    return Comparison(changed, flaky, left_out)


def keep_reproducers(fresh: Path, committed: Path) -> list[Path]:
    """Copy the case files of the non-PASS cases of the report in ``fresh`` to ``committed``, replacing
    what an earlier update left there."""
    index = json.loads((fresh / INDEX).read_text(encoding="utf-8"))
    cases = committed / CASES_DIR
    shutil.rmtree(cases, ignore_errors=True)
    kept = []
    for entry in index["cases"]:
        source = fresh / entry.get("file", "")
        if entry["verdict"] != Verdict.PASS.value and entry.get("file") and source.is_file():
            cases.mkdir(parents=True, exist_ok=True)
            kept.append(Path(shutil.copyfile(source, committed / entry["file"])))
    return kept
