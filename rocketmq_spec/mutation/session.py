"""A mutation session: a copy of the tree per worker, Cosmic Ray's work database, and the runs.

``plan`` copies the project and has Cosmic Ray enumerate the mutants of the scoped modules, for the
operators :mod:`rocketmq_spec.mutation.scope` keeps, into its session database;
``record_coverage`` finds which cases run each line. ``execute`` then takes pending mutants (all, or a
sample), writes each into a worker's tree, runs the cases covering its lines in that tree and stores the
outcome back in the database, so Cosmic Ray's own ``cr-report`` reads the session too. A session can be
stopped and resumed: only pending mutants are run.
"""

from __future__ import annotations

import ast
import difflib
import json
import random
import re
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from cosmic_ray.ast import ast_nodes, get_ast_from_path
from cosmic_ray.ast.ast_query import ASTQuery
from cosmic_ray.mutating import mutate_code
from cosmic_ray.plugins import get_operator
from cosmic_ray.work_db import WorkDB, use_db
from cosmic_ray.work_item import MutationSpec, TestOutcome, WorkerOutcome, WorkItem, WorkResult

from rocketmq_spec.mutation.scope import OPERATORS, module_paths

TREE_IGNORE = shutil.ignore_patterns(".git", ".venv", ".tox", ".cache", "__pycache__", "*.egg-info",
                                     "reports", ".mutation")
SUITE_PACKAGES = ("rocketmq_spec/conformance", "rocketmq_spec/spec", "rocketmq_spec/codec")
"""What judges the broker, as opposed to the broker itself: refreshed in a session's trees on request."""
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


def pristine(out: Path) -> Path:
    """The copy no mutant is ever written into: mutants are described and the coverage run made there,
    while the workers' trees (1..N) each hold the mutant they run."""
    return _tree(out, 0)


def plan(project: Path, out: Path, workers: int, modules: list[str] | None = None) -> int:
    """Copy the project (once pristine, once per worker) and enumerate the mutants of ``modules``
    (default: the scope's); returns how many are pending."""
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    for n in range(workers + 1):
        if not _tree(out, n).exists():
            shutil.copytree(project, _tree(out, n), ignore=TREE_IGNORE)
    tree = pristine(out)
    with use_db(str(out / DATABASE), WorkDB.Mode.create) as db:
        if db.num_work_items == 0:
            db.add_work_items(work_items([tree / module for module in modules or module_paths(str(tree))]))
        return sum(1 for item in db.pending_work_items)


def work_items(paths: Iterable[Path]) -> Iterator[WorkItem]:
    """What Cosmic Ray's ``init`` enumerates, for the kept operators only (walking a module's tree once per
    operator is most of the planning time, and all 200-odd operators would be walked otherwise)."""
    operators = [(name, get_operator(name)()) for name in sorted(OPERATORS)]
    for path in paths:
        tree = get_ast_from_path(path)
        for name, operator in operators:
            positions = ((node, start, end) for node in ast_nodes(tree)
                         for start, end in operator.mutation_positions(node))
            for occurrence, (node, start, end) in enumerate(positions):
                spec = MutationSpec(module_path=str(path), operator_name=name, operator_args={},
                                    occurrence=occurrence, start_pos=start, end_pos=end,
                                    definition_name=ASTQuery(node).get_definition_name())
                yield WorkItem.single(job_id=uuid.uuid4().hex, mutation=spec)


def refresh(project: Path, out: Path) -> None:
    """Bring the suite in the session's trees up to the project's (cases added since the plan), keeping the
    mutated packages as they were planned, and forget which cases ran which line, to record it again."""
    trees = sorted(p for p in out.glob("tree-*") if p.is_dir())
    for tree in trees:
        for package in SUITE_PACKAGES:
            shutil.copytree(project / package, tree / package, ignore=TREE_IGNORE, dirs_exist_ok=True)
    (out / COVERAGE).unlink(missing_ok=True)


def record_coverage(out: Path, timeout: float, cases: list[str] | None = None) -> None:
    """The line -> cases map, from one run under coverage in the first tree of every case (or of the case
    files or node ids ``cases``)."""
    if (out / COVERAGE).exists():
        return
    tree = pristine(out)
    selection = ["--all"] if not cases else runner_arguments(set(cases), tree / ".mutation")
    subprocess.run([sys.executable, "-m", "rocketmq_spec.mutation.runner",
                    *selection, "--coverage",
                    str(out / COVERAGE)], cwd=tree, timeout=timeout, check=False,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if not (out / COVERAGE).exists():
        raise RuntimeError("the coverage run wrote no map: run "
                           "python -m rocketmq_spec.mutation.runner --all "
                           f"--coverage OUT in {pristine(out)} to see why")


def describe(item: WorkItem, tree: Path) -> tuple[Mutant, str, str] | None:
    """The mutant of a work item with its module's source before and after, or None when the operator
    finds nothing to mutate there."""
    spec = item.mutations[0]
    path = Path(spec.module_path)
    source = path.read_text(encoding="utf-8")
    mutated = mutate_code(source, get_operator(spec.operator_name)(), spec.occurrence)
    if mutated is None:
        return None
    first, last = changed_lines(source, mutated, spec.start_pos[0], spec.end_pos[0])
    before = source.splitlines()[first - 1:last]
    grown = mutated.count("\n") - source.count("\n")
    after = mutated.splitlines()[first - 1:last + grown]
    mutant = Mutant(item.job_id, path.relative_to(tree).as_posix(), spec.definition_name or "<module>",
                    spec.operator_name, first, last, " ".join(x.strip() for x in before),
                    " ".join(x.strip() for x in after))
    return mutant, source, mutated


def changed_lines(source: str, mutated: str, first: int, last: int) -> tuple[int, int]:
    """The lines the mutation changes: the planned token's lines, or, when the module was edited after
    planning (those lines are now unchanged: the mutation applies by occurrence, not position), the lines
    that differ."""
    old, new = source.splitlines(), mutated.splitlines()
    if old[first - 1:last] != new[first - 1:last]:
        return first, last
    changed = [op for op in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes()
               if op[0] != "equal"]
    return changed[0][1] + 1, max(changed[-1][2], changed[0][1] + 1)


def cases_for(mutant: Mutant, coverage: dict[str, dict[str, list[str]]], tree: Path) -> set[str]:
    """The cases that run the mutated lines. A module- or class-level assignment runs once, at import, so
    for one the cases are those running the lines that use the names it binds."""
    names = assigned_names((tree / mutant.module).read_text(encoding="utf-8"), mutant.first_line,
                           mutant.last_line)
    if not names:
        lines = coverage.get(mutant.module, {})
        return {case for n in range(mutant.first_line, mutant.last_line + 1)
                for case in lines.get(str(n), [])}
    uses = re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(names))) + r")\b")
    found: set[str] = set()
    for module, lines in coverage.items():
        text = (tree / module).read_text(encoding="utf-8").splitlines()
        for n, cases in lines.items():
            line = int(n)
            own = module == mutant.module and mutant.first_line <= line <= mutant.last_line
            if not own and 0 < line <= len(text) and uses.search(text[line - 1]):
                found.update(c for c in cases if c != STARTUP)
    return found


def assigned_names(source: str, first: int, last: int) -> set[str]:
    """Names bound by module- or class-level assignments that overlap lines ``first``..``last``."""
    names: set[str] = set()
    bodies = [ast.parse(source).body]
    while bodies:
        for node in bodies.pop():
            if isinstance(node, ast.ClassDef):
                bodies.append(node.body)
            elif isinstance(node, ast.Assign | ast.AnnAssign) and node.lineno <= last and \
                    (node.end_lineno or node.lineno) >= first:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


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
        done = subprocess.run([sys.executable, "-m", "rocketmq_spec.mutation.runner",
                               *args], cwd=tree,
                              capture_output=True, text=True, timeout=timeout, start_new_session=True)
        # the cases' verdicts are on stdout, the broker's log on stderr: keep the end of each
        return done.returncode == 0, f"{done.stdout[-OUTPUT_TAIL:]}\n{done.stderr[-OUTPUT_TAIL // 4:]}"
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
            progress: Callable[[str], None], again: Callable[[WorkResult], bool] | None = None) -> None:
    """Run the chosen pending mutants, ``workers`` at a time (one tree each), those that need every case
    last; results are written to the database from this thread as they come in. ``again`` picks finished
    mutants to run once more (after a case was added, say), before the pending ones."""
    out = out.resolve()
    coverage = json.loads((out / COVERAGE).read_text(encoding="utf-8"))
    tree = pristine(out)
    free = list(range(1, workers + 1))
    Job = tuple[WorkItem, tuple[Mutant, str, str] | None, set[str]]

    def one(job: Job) -> tuple[str, WorkResult]:
        _, described, cases = job
        if described is None:
            return "no mutation", WorkResult(worker_outcome=WorkerOutcome.NO_TEST)
        mutant, source, mutated = described
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
        rerun = [item for item, result in db.completed_work_items if again is not None and again(result)]
        jobs: list[Job] = []
        for item in rerun + choose(db.pending_work_items, sample, seed):
            described = describe(item, tree)
            jobs.append((item, described, cases_for(described[0], coverage, tree) if described else set()))
        jobs.sort(key=lambda job: job[2] == {STARTUP})
        started = time.monotonic()
        with ThreadPoolExecutor(workers) as pool:
            for n, (job, (label, result)) in enumerate(zip(jobs, pool.map(one, jobs), strict=True), 1):
                db.set_result(job[0].job_id, result)
                progress(f"{n}/{len(jobs)} {label} ({(time.monotonic() - started) / n:.0f} s a mutant)")
