"""What is mutated: the reference broker's wire-visible modules, with a few mutation operators each.

Cosmic Ray's full operator set replaces every binary operator by every other one (eleven mutants per
``+``) and every comparison by every other; most of those are the same defect many times over. The suite
is measured on one mutant per kind of realistic slip: a boundary moved (``<`` for ``<=``), an equality
inverted, an arithmetic sign flipped, a constant off by one, a condition negated or dropped, a loop that
never runs, an exception handler that catches nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

PACKAGES = ("reference_broker/broker", "reference_broker/namesrv", "reference_broker/store")


@dataclass(frozen=True)
class Excluded:
    path: str
    why: str


EXCLUDED = (
    Excluded("reference_broker/store/retention.py",
             "deletes files hours old (fileReservedTime, deleteWhen): nothing a suite run can see"),
    Excluded("reference_broker/store/flush.py",
             "when pages reach the disk: durability timing, invisible on the wire and in a clean stop"),
    Excluded("reference_broker/store/worker.py", "a background thread's loop plumbing"),
    Excluded("reference_broker/broker/stats.py",
             "runtime counters of GET_BROKER_RUNTIME_INFO, whose values are the target's own"),
    Excluded("reference_broker/broker/persistence.py", "binds the codec's config-file I/O to a directory"),
)
"""Modules left out, each with why no conformance case can be expected to see its defects."""

COMPARISONS = ("Eq_NotEq", "NotEq_Eq", "Lt_LtE", "LtE_Lt", "Gt_GtE", "GtE_Gt", "Is_IsNot", "IsNot_Is")
BINARY = ("Add_Sub", "Sub_Add", "Mul_Div", "Div_Mul", "FloorDiv_Mul", "Mod_FloorDiv", "BitOr_BitAnd",
          "BitAnd_BitOr", "BitXor_BitOr", "LShift_RShift", "RShift_LShift")
OPERATORS = frozenset({
    *(f"core/ReplaceComparisonOperator_{name}" for name in COMPARISONS),
    *(f"core/ReplaceBinaryOperator_{name}" for name in BINARY),
    "core/ReplaceUnaryOperator_Delete_Not", "core/ReplaceUnaryOperator_Delete_USub",
    "core/AddNot", "core/ReplaceTrueWithFalse", "core/ReplaceFalseWithTrue", "core/ReplaceAndWithOr",
    "core/ReplaceOrWithAnd", "core/ReplaceBreakWithContinue", "core/ReplaceContinueWithBreak",
    "core/ExceptionReplacer", "core/NumberReplacer", "core/ZeroIterationForLoop",
})
"""Cosmic Ray operator names kept; every other operator's work items are marked skipped."""


def module_paths(root: str = ".") -> list[str]:
    """The modules to mutate, relative to the project root ``root``."""
    excluded = {e.path for e in EXCLUDED}
    found = []
    for package in PACKAGES:
        for path in sorted((Path(root) / package).glob("*.py")):
            relative = path.relative_to(root).as_posix()
            if path.name != "__init__.py" and relative not in excluded:
                found.append(relative)
    return found
