"""Wire facts are declared once, in ``rocketmq_spec.spec``: the reserved names (``spec.system_topics``) and
the remarks of the core commands (``spec.remarks``).

A name or remark written out again elsewhere is a second declaration that can drift from Java's (and from
the first), so the text of every module outside ``spec`` is searched for them: a string literal equal to a
reserved name or prefix, or to a remark that takes no argument.
"""

from __future__ import annotations

import ast
import operator
import string
from collections.abc import Callable
from pathlib import Path

import pytest

from rocketmq_spec.spec import remarks, system_topics
from rocketmq_spec.spec.clauses import get
from rocketmq_spec.spec.document import section_modules
from tests.golden import PROJECT_ROOT

PACKAGE = PROJECT_ROOT / "rocketmq_spec"
SPEC = PACKAGE / "spec"
TESTS = PROJECT_ROOT / "tests"
SEARCHED = (PACKAGE, TESTS)
"""The product and its tests: a test that spells a reserved name out checks the broker against its own copy,
not against spec's (the golden tests check spec's against Java's bytes)."""
NAMES = {value: name for name, value in vars(system_topics).items()
         if name.isupper() and isinstance(value, str) and len(value) > 1 and name != "VALID_TOPIC_CHARACTERS"}
"""Every reserved name and prefix, by the constant that declares it (not the one-letter op tag, which any
short literal would match)."""
def _fields(template: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(template) if field}


FIXED_REMARKS = {remark.template: name for name, remark in vars(remarks).items()
                 if isinstance(remark, remarks.Remark) and " " in remark.template
                 and not _fields(remark.template)}
"""Remarks without arguments, which code would write as plain literals (not the one-word ones, which are
also the names of the statuses they answer)."""


def _literals(path: Path) -> list[tuple[int, str]]:
    """String literals of a module, docstrings left out (prose may name a topic)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    docstrings = {id(node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings]


def _repeats(facts: dict[str, str]) -> list[str]:
    found = []
    for path in sorted(path for root in SEARCHED for path in root.rglob("*.py")):
        if SPEC in path.parents or "grpc/v2" in path.as_posix():  # protoc's output quotes the .proto
            continue
        if path == Path(__file__) or TESTS / "data" in path.parents:
            continue
        for line, text in _literals(path):
            if text in facts:
                found.append(f"{path.relative_to(PROJECT_ROOT)}:{line}: {text!r} is spec's {facts[text]}")
    return found


def _constants(path: Path) -> dict[str, tuple[int, object]]:
    """A module's top-level constants (UPPER_CASE names, a leading underscore dropped) whose value is a
    literal or arithmetic on literals, with their lines."""
    found: dict[str, tuple[int, object]] = {}
    for node in ast.parse(path.read_text(encoding="utf-8"), str(path)).body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            try:
                value = _literal(node.value)
            except ValueError:
                continue
            for target in targets:
                if isinstance(target, ast.Name) and target.id.lstrip("_").isupper():
                    found[target.id.lstrip("_")] = (node.lineno, value)
    return found


_ARITHMETIC: dict[type[ast.operator], Callable[[int, int], int]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Pow: operator.pow,
    ast.LShift: operator.lshift}


def _literal(node: ast.expr) -> object:
    """The value of a literal, or of +, -, *, ** and << over integer literals (ValueError otherwise)."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = _literal(node.operand)
        if isinstance(value, int):
            return -value
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        left, right = _literal(node.left), _literal(node.right)
        if isinstance(left, int) and isinstance(right, int):
            return _ARITHMETIC[type(node.op)](left, right)
        raise ValueError("not arithmetic on integers")
    return ast.literal_eval(node)


def test_no_module_declares_a_constant_of_spec_again() -> None:
    """A constant with a spec constant's name and value, declared outside spec, is that fact written twice
    (the name says it is the same thing; the value that it has not drifted yet)."""
    declared = {name: (path, value) for path in sorted(SPEC.rglob("*.py"))
                for name, (_, value) in _constants(path).items()}
    found = []
    for path in sorted(path for root in SEARCHED for path in root.rglob("*.py")):
        if SPEC in path.parents or "grpc/v2" in path.as_posix() or TESTS / "data" in path.parents:
            continue
        for name, (line, value) in _constants(path).items():
            if name in declared and declared[name][1] == value and type(value) is type(declared[name][1]):
                found.append(f"{path.relative_to(PROJECT_ROOT)}:{line}: {name} = {value!r} is "
                             f"{declared[name][0].relative_to(PROJECT_ROOT)}'s")
    assert found == []


def test_the_constant_search_sees_a_repeat(tmp_path: Path) -> None:
    module = tmp_path / "repeat.py"
    module.write_text("_MASTER_ID = 0\nINT32_MIN = -(1 << 31)\nlower = 3\nNAME = f()\n", encoding="utf-8")
    assert _constants(module) == {"MASTER_ID": (1, 0), "INT32_MIN": (2, -(2**31))}


def test_reserved_names_are_declared_only_in_spec() -> None:
    assert _repeats(NAMES) == []


def test_argument_free_remarks_are_written_only_in_spec() -> None:
    assert _repeats(FIXED_REMARKS) == []


def test_the_search_sees_a_repeat(tmp_path: Path) -> None:
    """The search itself can fail: a module quoting a reserved name outside a docstring is found."""
    module = tmp_path / "repeat.py"
    module.write_text('"""Names TBW102 in prose."""\nDEFAULT = "TBW102"\n', encoding="utf-8")
    assert _literals(module) == [(2, "TBW102")]


@pytest.mark.parametrize("remark", remarks.REMARKS, ids=lambda remark: remark.template[:40])
def test_every_remark_names_a_clause_and_formats(remark: remarks.Remark) -> None:
    section_modules()  # every clause registered
    assert get(remark.clause).id == remark.clause
    assert remark.source
    filled = remark.format(None, **dict.fromkeys(_fields(remark.template), "x"))
    assert "{" not in filled


def test_the_send_refusal_sets_are_system_topics() -> None:
    """``TopicValidator``: every topic a send may not name is a system topic a client may not create."""
    assert system_topics.NOT_ALLOWED_SEND_TOPICS <= system_topics.SYSTEM_TOPICS
    assert set(system_topics.BUILT_IN_QUEUES) <= system_topics.SYSTEM_TOPICS
