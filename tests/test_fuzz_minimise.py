"""ddmin finds the frames that matter, within its replay budget."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rocketmq_spec.fuzz.minimise import ddmin
from rocketmq_spec.fuzz.profiles import fuzz_settings


@fuzz_settings()
@given(st.lists(st.integers(), min_size=1, max_size=40, unique=True), st.data())
def test_ddmin_keeps_exactly_the_culprits(items: list[int], data: st.DataObject) -> None:
    culprits = set(data.draw(st.sets(st.sampled_from(items), min_size=1, max_size=2)))
    result = ddmin(items, lambda candidate: culprits <= set(candidate), max_tests=1000)
    assert set(result) == culprits
    assert result == [x for x in items if x in culprits]


def test_ddmin_stops_at_its_budget_with_a_reproducer() -> None:
    calls: list[int] = []

    def reproduces(candidate: list[int]) -> bool:
        calls.append(len(candidate))
        return 7 in candidate

    result = ddmin(list(range(1000)), reproduces, max_tests=5)
    assert len(calls) <= 5 and 7 in result
