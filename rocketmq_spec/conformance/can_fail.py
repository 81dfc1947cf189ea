"""Whether a case of the suite can fail, read from its source.

A case judges something only if some path of it ends in a failing verdict: a failing observation
(``check.that``/``check.equal``), a raised ``Failure`` or ``NonStrict``, an assertion or ``pytest.fail``,
made by the case function or by a function of the suite it calls (matched by name, transitively). A case
whose every path ends in a note or an INFO verdict passes against any broker.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

FAILING_CALLS = frozenset({"that", "equal", "fail"})
FAILING_RAISES = frozenset({"Failure", "NonStrict"})


def _calls_and_fails(function: ast.AST) -> tuple[set[str], bool]:
    """The names a function calls, and whether it makes a failing observation itself."""
    called, fails = set(), False
    for node in ast.walk(function):
        if isinstance(node, ast.Assert):
            fails = True
        elif isinstance(node, ast.Raise) and node.exc is not None:
            raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            fails |= isinstance(raised, ast.Name) and raised.id in FAILING_RAISES
        elif isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
            if name in FAILING_CALLS:
                fails = True
            elif name:
                called.add(name)
    return called, fails


def failing_functions(sources: Iterable[Path]) -> set[str]:
    """Names of the suite's functions that can fail: directly, or through a function they call."""
    graph: dict[str, tuple[set[str], bool]] = {}
    for path in sources:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                called, fails = _calls_and_fails(node)
                known = graph.get(node.name, (set(), False))
                graph[node.name] = (known[0] | called, known[1] or fails)
    failing = {name for name, (_, fails) in graph.items() if fails}
    while True:
        more = {name for name, (called, _) in graph.items() if name not in failing and called & failing}
        if not more:
            return failing
        failing |= more
