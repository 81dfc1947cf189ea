"""Split planning: every record of a file falls in exactly one split, and splits start at records."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketmq_spec.spark.planning import CommitLogFile, plan_splits

FILES = [CommitLogFile("a", 0, 100), CommitLogFile("b", 100, 100)]


def test_cuts_move_to_the_next_known_record_start() -> None:
    splits = plan_splits(FILES, np.array([0, 7, 30, 55, 61, 100, 101, 150]), 25)
    assert [(s.path, s.start, s.end) for s in splits] == [
        ("a", 0, 30), ("a", 30, 55), ("a", 55, 100), ("b", 100, 150), ("b", 150, 200)]


def test_without_boundaries_a_file_is_one_split() -> None:
    splits = plan_splits(FILES, np.array([], dtype=np.int64), 10)
    assert [(s.start, s.end) for s in splits] == [(0, 100), (100, 200)]


def test_repeated_and_unsorted_boundaries_give_the_same_plan() -> None:
    once = plan_splits(FILES, np.array([30, 150]), 25)
    assert plan_splits(list(reversed(FILES)), np.array([150, 30, 150, 30]), 25) == once


def test_split_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        plan_splits(FILES, np.array([1]), 0)


@given(st.lists(st.integers(1, 50), min_size=1, max_size=40), st.integers(1, 200), st.integers(0, 3))
def test_splits_tile_each_file_from_record_starts(sizes: list[int], split_bytes: int, files: int) -> None:
    """Records of the given sizes laid out back to back across ``files + 1`` files of 400 bytes."""
    size = 400
    starts = np.cumsum([0, *sizes])[:-1]
    layout = [CommitLogFile(str(n), n * size, size) for n in range(files + 1)]
    boundaries = np.concatenate([starts + n * size for n in range(files + 1)])
    splits = plan_splits(layout, boundaries, split_bytes)
    for file in layout:
        mine = [s for s in splits if s.path == file.path]
        assert mine[0].start == file.base and mine[-1].end == file.base + file.size
        assert all(a.end == b.start for a, b in itertools.pairwise(mine))
        assert all(s.start == file.base or s.start in set(boundaries.tolist()) for s in mine)
        assert all(s.length > 0 for s in mine)
