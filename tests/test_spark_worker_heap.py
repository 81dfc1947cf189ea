"""The reused-worker heap freeze: only in a reused Spark worker, and once per process."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from rocketmq_spec.spark import worker_heap


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    monkeypatch.setattr(worker_heap, "_frozen", False)
    yield monkeypatch
    gc.unfreeze()


def test_outside_a_reused_worker_the_collector_is_left_alone(fresh: pytest.MonkeyPatch) -> None:
    fresh.delenv(worker_heap.REUSE_VARIABLE, raising=False)
    assert not worker_heap.settle()
    assert gc.get_freeze_count() == 0


def test_a_reused_worker_freezes_its_objects_once(fresh: pytest.MonkeyPatch) -> None:
    fresh.setenv(worker_heap.REUSE_VARIABLE, "1")
    assert worker_heap.settle()
    frozen = gc.get_freeze_count()
    assert frozen > 0
    assert not worker_heap.settle()
    assert gc.get_freeze_count() == frozen
