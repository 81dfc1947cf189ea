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
    frozen = gc.get_freeze_count()
    assert frozen > 0
    assert worker_heap.settle()
    assert gc.get_freeze_count() >= frozen
    assert all(not worker_heap.settle() for _ in range(3))
