"""A mutation session: a copy of the tree per worker, Cosmic Ray's work database, and the runs.

``plan`` copies the project, has Cosmic Ray enumerate the mutants of the scoped modules into its session
database (marking the operators left out of :mod:`conformance.mutation.scope` skipped, as its own filters
do) and records which cases run each line. ``execute`` then takes pending mutants (all, or a sample),
writes each into a worker's tree, runs the cases covering its lines in that tree and stores the outcome
back in the database, so Cosmic Ray's own ``cr-report`` reads the session too. A session can be stopped
and resumed: only pending mutants are run.
"""

from __future__ import annotations

import difflib
import json
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from cosmic_ray.commands.init import init
from cosmic_ray.mutating import mutate_code
from cosmic_ray.plugins import get_operator
from cosmic_ray.work_db import WorkDB, use_db
from cosmic_ray.work_item import TestOutcome, WorkerOutcome, WorkItem, WorkResult

from conformance.mutation.scope import OPERATORS, module_paths

TREE_IGNORE = shutil.ignore_patterns(".git", ".venv", ".tox", ".cache", "__pycache__", "*.egg-info",
                                     "reports", ".mutation")
DATABASE = "session.sqlite"
COVERAGE = "coverage.json"
UNCOVERED = "no case runs the mutated lines"
STARTUP = ""
"""The coverage context of lines run while no case was (start-up, background tasks)."""
OUTPUT_TAIL = 4000


@dataclass(frozen=True)
class Mutant:
    """One work item with what it changes, identified by text rather than line numbers (which move)."""

    job_id: str
    module: str
    definition: str
    operator: str
    first_line: int
    last_line: int
    original: str
    mutated: str

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        return self.module, self.definition, self.operator, self.original, self.mutated


def _tree(out: Path, worker: int) -> Path:
    return out / f"tree-{worker}"


def plan(project: Path, out: Path, workers: int, modules: list[str] | None = None) -> int:
    """Copy the project once per worker and enumerate the mutants of ``modules`` (default: the scope's);
    returns how many are pending."""
    out.mkdir(parents=True, exist_ok=True)
    for worker in range(workers):
        if not _tree(out, worker).exists():
            shutil.copytree(project, _tree(out, worker), ignore=TREE_IGNORE)
    tree = _tree(out, 0)
    with use_db(str(out / DATABASE), WorkDB.Mode.create) as db:
        if db.num_work_items == 0:
            init([tree / module for module in modules or module_paths(str(tree))], db, {})
            skipped = [item.job_id for item in db.work_items
                       if item.mutations[0].operator_name not in OPERATORS]
            db.set_multiple_results(skipped, WorkResult(worker_outcome=WorkerOutcome.SKIPPED))
        return sum(1 for item in db.pending_work_items)


def record_coverage(out: Path, timeout: float, cases: list[str] | None = None) -> None:
    """The line -> cases map, from one run under coverage in the first tree of every case (or of the case
    files or node ids ``cases``)."""
    if (out / COVERAGE).exists():
        return
    tree = _tree(out, 0)
    selection = ["--all"] if not cases else runner_arguments(set(cases), tree / ".mutation")
    subprocess.run([sys.executable, "-m", "conformance.mutation.runner", *selection, "--coverage",
                    str(out / COVERAGE)], cwd=tree, timeout=timeout, check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if not (out / COVERAGE).exists():
        raise RuntimeError("the coverage run wrote no map: run python -m conformance.mutation.runner --all "
                           f"--coverage OUT in {_tree(out, 0)} to see why")


def describe(item: WorkItem, tree: Path) -> tuple[Mutant, str, str] | None:
    """The mutant of a work item with its module's source before and after, or None when the operator
    finds nothing to mutate there."""
    spec = item.mutations[0]
    path = Path(spec.module_path)
    source = path.read_text(encoding="utf-8")
    mutated = mutate_code(source, get_operator(spec.operator_name)(), spec.occurrence)
    if mutated is None:
        return None
    first, last = spec.start_pos[0], spec.end_pos[0]
    before = source.splitlines()[first - 1:last]
    grown = mutated.count("\n") - source.count("\n")
    after = mutated.splitlines()[first - 1:last + grown]
    mutant = Mutant(item.job_id, path.relative_to(tree).as_posix(), spec.definition_name or "<module>",
                    spec.operator_name, first, last, " ".join(x.strip() for x in before),
                    " ".join(x.strip() for x in after))
    return mutant, source, mutated


def cases_for(mutant: Mutant, coverage: dict[str, dict[str, list[str]]]) -> set[str]:
    lines = coverage.get(mutant.module, {})
    return {case for n in range(mutant.first_line, mutant.last_line + 1) for case in lines.get(str(n), [])}


def _is_acl(case: str) -> bool:
    """ACL cases run only against a broker with ACL on."""
    return case.split("::")[0].endswith("test_acl.py")


def runner_arguments(cases: set[str], lists: Path) -> list[str]:
    """The runner's options for ``cases``: every case when only start-up runs the lines (no case can be
    singled out), else the wire and ACL cases written to files under ``lists``."""
    if cases == {STARTUP}:
        return ["--all"]
    args = []
    lists.mkdir(exist_ok=True)
    for name, ids in (("wire", sorted(c for c in cases if c and not _is_acl(c))),
                      ("acl", sorted(c for c in cases if _is_acl(c)))):
        if ids:
            (lists / name).write_text("\n".join(ids), encoding="utf-8")
            args += [f"--{name}", str(lists / name)]
    return args


def _run(tree: Path, module: str, mutated: str, args: list[str], timeout: float) -> tuple[bool, str]:
    """Write the mutated module into ``tree``, run the runner there, put the original back. Returns
    (passed, output); a run that times out counts as failed (a mutant that hangs the broker is caught)."""
    path = tree / module
    original = path.read_text(encoding="utf-8")
    path.write_text(mutated, encoding="utf-8")
    try:
        done = subprocess.run([sys.executable, "-m", "conformance.mutation.runner", *args], cwd=tree,
                              capture_output=True, text=True, timeout=timeout, start_new_session=True)
        return done.returncode == 0, (done.stdout + done.stderr)[-OUTPUT_TAIL:]
    except subprocess.TimeoutExpired:
        return False, f"timed out after {timeout:.0f} s"
    finally:
        path.write_text(original, encoding="utf-8")


def _result(mutant: Mutant, passed: bool, output: str, source: str, mutated: str) -> WorkResult:
    diff = "".join(difflib.unified_diff(source.splitlines(True), mutated.splitlines(True), mutant.module,
                                        mutant.module, n=1))
    outcome = TestOutcome.SURVIVED if passed else TestOutcome.KILLED
    return WorkResult(worker_outcome=WorkerOutcome.NORMAL, output=output, test_outcome=outcome, diff=diff)


def choose(items: Iterable[WorkItem], sample: int | None, seed: int) -> list[WorkItem]:
    """Pending items in a stable order (module, operator, occurrence); a sample is drawn from them with
    ``seed``, so a rerun with the same seed picks the same mutants still pending."""
    ordered = sorted(items, key=lambda i: (str(i.mutations[0].module_path), i.mutations[0].operator_name,
                                           i.mutations[0].occurrence))
    if sample is None or sample >= len(ordered):
        return ordered
    return sorted(random.Random(seed).sample(ordered, sample), key=ordered.index)


def execute(out: Path, *, sample: int | None, seed: int, workers: int, timeout: float,
            progress: Callable[[str], None]) -> None:
    """Run the chosen pending mutants, ``workers`` at a time (one tree each); results are written to the
    database from this thread as they come in."""
    coverage = json.loads((out / COVERAGE).read_text(encoding="utf-8"))
    tree = _tree(out, 0)
    free = list(range(workers))

    def one(item: WorkItem) -> tuple[str, WorkResult]:
        described = describe(item, tree)
        if described is None:
            return "no mutation", WorkResult(worker_outcome=WorkerOutcome.NO_TEST)
        mutant, source, mutated = described
        cases = cases_for(mutant, coverage)
        if not cases:
            return "uncovered", _result(mutant, True, UNCOVERED, source, mutated)
        worker = free.pop()
        try:
            here = _tree(out, worker)
            passed, output = _run(here, mutant.module, mutated, runner_arguments(cases, here / ".mutation"),
                                  timeout)
        finally:
            free.append(worker)
        return ("survived" if passed else "killed"), _result(mutant, passed, output, source, mutated)

    with use_db(str(out / DATABASE), WorkDB.Mode.open) as db:
        chosen = choose(db.pending_work_items, sample, seed)
        started = time.monotonic()
        with ThreadPoolExecutor(workers) as pool:
            for n, (item, (label, result)) in enumerate(zip(chosen, pool.map(one, chosen), strict=True), 1):
                db.set_result(item.job_id, result)
                progress(f"{n}/{len(chosen)} {label} ({(time.monotonic() - started) / n:.0f} s a mutant)")
