"""What ``pip install rocketmq-spec`` brings without an extra: every core module imports with none of the
optional dependencies present, and a command whose extra is missing says which one in one line (exit 2)
instead of a traceback. The optional modules are hidden from a subprocess through ``sys.modules`` (a
``None`` entry makes their import fail), so the check runs in the test environment, which has them all.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib

import pytest

from rocketmq_spec.extras import EXTRAS, MissingExtra
from tests import process_tree
from tests.golden import PROJECT_ROOT

PYPROJECT = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SCRIPTS: dict[str, str] = PYPROJECT["project"]["scripts"]
DEV_ONLY = ("tox", "grpc_tools", "build", "twine", "ruff", "mypy")
"""Modules of the test and dev extras, which no installed module may need either."""
HIDDEN = sorted({module for modules in EXTRAS.values() for module in modules} | set(DEV_ONLY))
OPTIONAL_PARTS = ("rocketmq_spec.spark", "rocketmq_spec.fuzz", "rocketmq_spec.mutation")
RUN_TIMEOUT = 300


def without_extras(code: str) -> subprocess.CompletedProcess[str]:
    hide = f"import sys\nfor name in {HIDDEN!r}:\n    sys.modules[name] = None\n"
    return process_tree.run([sys.executable, "-c", hide + code], cwd=PROJECT_ROOT, capture_output=True,
                            text=True, timeout=RUN_TIMEOUT, check=False)


def distribution(requirement: str) -> str:
    return re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def test_the_extras_table_is_pyprojects() -> None:
    declared = PYPROJECT["project"]["optional-dependencies"]
    for extra, modules in EXTRAS.items():
        assert {distribution(r) for r in declared[extra]} == {m.replace("_", "-") for m in modules}, extra
    assert not {distribution(r) for r in PYPROJECT["project"]["dependencies"]} & set(HIDDEN)


def test_every_core_module_imports_without_the_extras() -> None:
    """What rmq-conformance (its cases, collected by pytest), rmq-broker and the other core commands
    import: every module outside the optional parts."""
    code = ("import importlib, pkgutil, rocketmq_spec\n"
            "for found in pkgutil.walk_packages(rocketmq_spec.__path__, 'rocketmq_spec.'):\n"
            f"    if not found.name.startswith({OPTIONAL_PARTS!r}):\n"
            "        importlib.import_module(found.name)\n"
            "        print(found.name)\n")
    done = without_extras(code)
    assert done.returncode == 0, done.stderr[-3000:]
    imported = done.stdout.split()
    for core in ("rocketmq_spec.conformance.cli", "rocketmq_spec.conformance.cases.test_framing",
                 "rocketmq_spec.reference_broker.cli", "rocketmq_spec.admin.cli", "rocketmq_spec.apache.cli"):
        assert core in imported


@pytest.mark.parametrize(("command", "extra"), [("rmq-spark", "spark"), ("rmq-fuzz", "fuzz")])
def test_a_command_without_its_extra_names_it_in_one_line(command: str, extra: str) -> None:
    module, function = SCRIPTS[command].split(":")
    done = without_extras(f"from {module} import {function}\nsys.argv = [{command!r}, 'verify', '.']\n"
                          f"sys.exit({function}())")
    assert done.returncode == 2
    assert done.stderr == f"{command} needs the {extra} extra: pip install 'rocketmq-spec[{extra}]'\n"
    assert done.stdout == ""


@pytest.mark.parametrize("part", OPTIONAL_PARTS)
def test_importing_an_optional_part_without_its_extra_says_which(part: str) -> None:
    done = without_extras(f"import {part}")
    assert done.returncode == 1
    assert f"{MissingExtra.__name__}: needs the " in done.stderr
    assert "pip install 'rocketmq-spec[" in done.stderr


def test_the_readme_lists_every_extra() -> None:
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("<!-- extras:"):readme.index("<!-- /extras -->")]
    listed = re.findall(r"^\| `rocketmq-spec\[(\w+)\]` \|", table, re.M)
    assert listed == list(PYPROJECT["project"]["optional-dependencies"])
