"""Where the committed reports live, and how a fresh run is held against one: shared by the broker
results (:mod:`.results`) and the client results (:mod:`.client_results`).

A case whose verdict differs from the committed one is run once more before it counts: a case that goes
back to the committed verdict on the rerun is flaky (reported with both verdicts, CI not failed), one that
differs both times changed. Either way the case's record of both runs (the case file under the run's
``cases/``, or the index entry of a run that wrote none, a PASS) is copied out of the check's temporary
directory to a kept one, named on the case's line, so that a flip seen once in CI can be read afterwards.
Cases whose clause cannot be judged deterministically are left out by name, with the reason the caller
gives.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rocketmq_spec.conformance.report.json_files import CASES_DIR, file_stem
from rocketmq_spec.conformance.report.matrix import Report, differences
from rocketmq_spec.conformance.verdict import Verdict

ROOT = Path(__file__).resolve().parents[2]
RESULTS_DIR = ROOT / "docs" / "results"
INDEX = "index.json"
KEPT_DIR = Path("reports") / "results-check"
"""Where ``check`` keeps the records of the cases that differed, under the directory it runs in (``--keep``
names another): ``<column>/<report>/<case>/this-run.json`` and ``rerun.json``."""
RUNS_KEPT = ("this-run", "rerun")


@dataclass(frozen=True)
class Comparison:
    """A fresh run beside the committed report: cases whose verdict changed (the rerun agreed with the
    fresh run), cases that flipped (the rerun went back to the committed verdict), and cases left out."""

    changed: list[tuple[str, str, str]]
    """(case, committed verdict, this run's verdict)."""
    flaky: list[tuple[str, str, str]]
    """(case, committed verdict, the verdict of the run that differed)."""
    left_out: list[str]
    kept: dict[str, Path] = field(default_factory=dict)
    """Case -> the directory holding its records of this run and of the rerun (cases that differed)."""

    def print_lines(self, label: str, timing_sensitive: Mapping[str, str]) -> int:
        """One line per differing or left-out case, prefixed by the column's ``label``; the number of
        changed cases (the ones that fail a check)."""
        for case, before, now in self.changed:
            print(f"{label}: {case}: committed {before}, this run {now} (and again when rerun)"
                  f"{self._where(case)}")
        for case, before, now in self.flaky:
            print(f"{label}: {case}: FLAKY: committed {before}, this run {now}, {before} when rerun"
                  f"{self._where(case)}")
        for case in self.left_out:
            print(f"{label}: {case}: left out, timing-sensitive: {timing_sensitive[case]}")
        return len(self.changed)

    def _where(self, case: str) -> str:
        return f"; records kept in {self.kept[case]}" if case in self.kept else ""


def check_summary(changed: int, names: Sequence[str], where: str) -> int:
    """The closing line of a check and its exit status: 1 when any verdict changed."""
    print(f"{changed} verdict(s) differ from {where}" if changed else
          f"every verdict of {', '.join(names)} is the committed one (flaky and timing-sensitive cases "
          "aside, listed above)")
    return 1 if changed else 0


def compare(committed: Report, fresh: Report, rerun: Callable[[list[str]], Report | None],
            timing_sensitive: Mapping[str, str], keep: Path | None = None) -> Comparison:
    """Compare ``fresh`` with ``committed``; the cases that differ are run once more (``rerun``, which may
    answer None when it cannot), and a case whose second verdict is the committed one is flaky, not
    changed. Cases named in ``timing_sensitive`` are left out. ``keep``: the directory the records of the
    cases that differed are copied to (:func:`keep_records`), before the runs' directories go."""
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
    kept = {} if keep is None else {
        case: keep_records(case, dict(zip(RUNS_KEPT, (fresh, again), strict=True)), keep / file_stem(case))
        for case in differing}
    return Comparison(changed, flaky, left_out, kept)


def keep_records(case: str, runs: Mapping[str, Report | None], where: Path) -> Path:
    """Write ``case``'s record of each run to ``where/<run>.json``: the run's case file (expected, seen,
    frames), or its index entry when the run wrote none (a PASS, which has no file); a run that did not
    happen or lacks the case leaves no file. ``where`` is emptied first, so it holds one check's runs."""
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    for name, report in runs.items():
        entry = None if report is None else report.cases.get(case)
        if report is None or entry is None:
            continue
        source = Path(report.source).parent / entry["file"] if entry.get("file") else None
        if source is not None and source.is_file():
            shutil.copyfile(source, where / f"{name}.json")
        else:
            (where / f"{name}.json").write_text(json.dumps(entry, indent=1, ensure_ascii=False) + "\n",
                                                encoding="utf-8")
    return where


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
