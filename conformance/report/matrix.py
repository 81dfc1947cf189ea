"""Counting verdicts per area: the table every report format starts with."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from conformance.result import CaseResult
from conformance.verdict import VERDICT_ORDER, Verdict


def by_area(results: Iterable[CaseResult]) -> dict[str, Counter[Verdict]]:
    """Verdict counts per area, areas sorted by name; the key ``"total"`` is added last."""
    table: dict[str, Counter[Verdict]] = {}
    for result in results:
        table.setdefault(result.area, Counter())[result.verdict] += 1
    ordered = dict(sorted(table.items()))
    ordered["total"] = sum(ordered.values(), Counter())
    return ordered


def totals(results: Iterable[CaseResult]) -> dict[str, int]:
    counts = Counter(r.verdict for r in results)
    return {v.value: counts[v] for v in VERDICT_ORDER}


def is_failure(result: CaseResult, *, strict: bool) -> bool:
    """FAIL and CRASH break conformance; under ``strict`` so does NON-STRICT."""
    return result.verdict.breaks_conformance or (strict and result.verdict is Verdict.NON_STRICT)


def conforms(results: Iterable[CaseResult], *, strict: bool) -> bool:
    return not any(is_failure(r, strict=strict) for r in results)
