"""The layers of docs/DESIGN.md, held by reading the imports of every module of the project.

The suite (``conformance``) and the fuzzers (``fuzz``) judge a broker over TCP and a store through its
files, so that they judge any implementation alike; ``rmq-admin`` and the Spark jobs are clients over TCP:
none may import the reference broker, directly or through any other module of the project they import
(a broker they need is started through ``rocketmq_spec.targets``, as a process of its own). ``spec``
imports nothing of the project but itself, and ``codec`` nothing but ``spec`` and itself. Imports are read
from each module's syntax tree, those inside functions and ``TYPE_CHECKING`` blocks included (a deferred
import is still a dependency), and followed through the whole project: the closure of a module's project
imports, each with the package ``__init__`` modules Python runs on the way.
"""

from __future__ import annotations

import ast
import sys
from functools import cache
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

from tests import process_tree
from tests.golden import PROJECT_ROOT

PACKAGE = "rocketmq_spec"
BROKER = f"{PACKAGE}.reference_broker"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PROJECT_ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in (PROJECT_ROOT / PACKAGE).rglob("*.py")}


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


@cache
def _imported_names(name: str) -> frozenset[str]:
    """Every dotted name ``name`` imports anywhere in its text: modules, and ``base.name`` for each name
    taken from a module (which is a submodule or an attribute of it)."""
    path = MODULES[name]
    named: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            named.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from the module's package, one level up per extra dot
                package = name.split(".")[:len(name.split(".")) - node.level + (path.name == "__init__.py")]
                base = ".".join([*package, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            named.add(base)
            named.update(f"{base}.{alias.name}" for alias in node.names)  # a submodule, or a name in base
    return frozenset(named)


@cache
def project_imports(name: str) -> frozenset[str]:
    """The project modules ``name`` imports anywhere in its text, with the packages run to reach them."""
    found: set[str] = set()
    for imported in _imported_names(name):
        parts = imported.split(".")
        found.update(prefix for i in range(1, len(parts) + 1) if (prefix := ".".join(parts[:i])) in MODULES)
    found.discard(name)
    return frozenset(found)


def module_imports(name: str) -> frozenset[str]:
    """The project modules ``name`` names in its imports: for each, the module itself (the longest prefix
    that is one), not the packages run on the way, which every submodule would otherwise close a circle
    with."""
    found = set()
    for imported in _imported_names(name):
        parts = imported.split(".")
        prefixes = (".".join(parts[:i]) for i in range(len(parts), 0, -1))
        module = next((prefix for prefix in prefixes if prefix in MODULES), None)
        if module is not None and module not in (name, PACKAGE):
            found.add(module)
    return frozenset(found)


def import_chains(start: str) -> dict[str, list[str]]:
    """Every project module ``start`` imports, directly or not, with one chain of imports leading to it."""
    chains = {start: [start]}
    pending = [start]
    while pending:
        current = pending.pop()
        for imported in sorted(project_imports(current)):
            if imported not in chains:
                chains[imported] = [*chains[current], imported]
                pending.append(imported)
    return chains


def violations(package: str, *, allowed: tuple[str, ...] | None = None,
               banned: tuple[str, ...] = ()) -> list[str]:
    """Import chains from modules of ``package`` to a module outside ``allowed`` (when given) or inside
    ``banned``, one per module reached."""
    found = {}
    for name in sorted(MODULES):
        if not _within(name, package):
            continue
        for reached, chain in import_chains(name).items():
            if reached == PACKAGE:
                continue  # the namespace's own __init__, which every import of the project runs
            outside = allowed is not None and not any(_within(reached, layer) for layer in allowed)
            if (outside or any(_within(reached, layer) for layer in banned)) and reached not in found:
                found[reached] = " -> ".join(chain)
    return sorted(found.values())


@pytest.mark.parametrize("package", ["conformance", "fuzz", "admin", "spark"])
def test_the_clients_of_a_broker_never_import_the_reference_broker(package: str) -> None:
    assert violations(f"{PACKAGE}.{package}", banned=(BROKER,)) == []


def test_spec_imports_only_itself() -> None:
    assert violations(f"{PACKAGE}.spec", allowed=(f"{PACKAGE}.spec",)) == []


def test_codec_imports_only_itself_and_spec() -> None:
    assert violations(f"{PACKAGE}.codec", allowed=(f"{PACKAGE}.spec", f"{PACKAGE}.codec")) == []


def test_no_import_circles() -> None:
    """No module imports, directly or through others, a module that imports it back: deferred and
    ``TYPE_CHECKING`` imports count too (a circle there is a design knot, and one refactor from a failing
    import). Where two modules need each other, a Protocol of what one uses of the other breaks it."""
    graph = {name: module_imports(name) for name in MODULES}
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as circle:
        pytest.fail(f"an import circle: {' -> '.join(reversed(circle.args[1]))}")


def test_the_reading_sees_deferred_and_relative_imports(tmp_path: Path) -> None:
    """The check itself can fail: an import inside a function, through another module, is reached."""
    chains = import_chains(f"{PACKAGE}.mutation.runner")  # imports the suite and, in a function, the broker
    assert f"{PACKAGE}.conformance.embedded" in chains
    assert any(_within(reached, BROKER) for reached in chains)
    assert violations(f"{PACKAGE}.mutation", banned=(BROKER,))


def test_a_run_of_the_suite_loads_no_module_of_the_reference_broker() -> None:
    """What pytest itself loads counts too: the broker's fixtures come as a pytest11 plugin, which the
    suite's runs leave out. The suite is collected as ``rmq-conformance store`` runs it, in a fresh
    interpreter."""
    program = (
        "import argparse, sys, pytest\n"
        "from rocketmq_spec.conformance.cli import pytest_args\n"
        "from rocketmq_spec.conformance.target import Target\n"
        "args = argparse.Namespace(report=None, profile=None, strict=False, selection=None, workers='0',\n"
        "                          verbose=False, index_sizes=None)\n"
        "pytest.main([*pytest_args(Target(store=sys.argv[1]), args), '--collect-only'])\n"
        f"print(sorted(m for m in sys.modules if m.startswith({BROKER!r})))\n")
    done = process_tree.run([sys.executable, "-c", program, str(PROJECT_ROOT / "tests")], cwd=PROJECT_ROOT,
                            capture_output=True, text=True, timeout=300)
    assert done.stdout.splitlines()[-1] == "[]", done.stdout[-2000:] + done.stderr[-2000:]
