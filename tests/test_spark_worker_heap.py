"""The reused-worker heap freeze: only in a reused Spark worker, at its first reads."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from rocketmq_spec.spark import worker_heap


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    monkeypatch.setattr(worker_heap, "_settled", 0)
    yield monkeypatch
    gc.unfreeze()


def test_outside_a_reused_worker_the_collector_is_left_alone(fresh: pytest.MonkeyPatch) -> None:
    fresh.delenv(worker_heap.REUSE_VARIABLE, raising=False)
    assert not worker_heap.settle()
    assert gc.get_freeze_count() == 0


def test_a_reused_worker_freezes_its_objects_at_its_first_reads_only(fresh: pytest.MonkeyPatch) -> None:
    fresh.setenv(worker_heap.REUSE_VARIABLE, "1")
    assert worker_heap.settle()
    assert gc.get_freeze_count() > 0
    # made between the first read and the second: the second read's freeze takes it. (The freeze count is
    # no witness: a frozen object still dies when its last reference goes, which lowers the count.)
    second_read = [object()]
    assert _tracked(second_read)
    assert worker_heap.settle()
    assert not _tracked(second_read)
    assert all(not worker_heap.settle() for _ in range(3))


def _tracked(value: object) -> bool:
    """``value`` is in one of the collector's generations, not frozen in the permanent one."""
    return any(candidate is value for candidate in gc.get_objects())
