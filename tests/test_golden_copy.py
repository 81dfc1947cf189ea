"""The in-project golden data stays a faithful copy of its origin, ``../shared/golden``.

Compared only where the origin sits beside the checkout; a bare clone skips the comparison and tests
against its own copy.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketmq_spec.spec.golden import IN_PROJECT_GOLDEN, ORIGIN_GOLDEN
from tests.golden import LEFT_OUT

pytestmark = pytest.mark.skipif(not ORIGIN_GOLDEN.is_dir(),
                                reason="../shared/golden is not beside the checkout")


def _files(root: Path) -> set[str]:
    return {str(path.relative_to(root)) for path in root.rglob("*") if path.is_file()}


def test_every_origin_file_is_copied_or_deliberately_left_out() -> None:
    missing = _files(ORIGIN_GOLDEN) - LEFT_OUT - _files(IN_PROJECT_GOLDEN)
    assert not missing, f"golden files not copied into {IN_PROJECT_GOLDEN}: {sorted(missing)[:10]}"


def test_the_copy_holds_nothing_the_origin_lacks() -> None:
    extra = _files(IN_PROJECT_GOLDEN) - _files(ORIGIN_GOLDEN)
    assert not extra, f"files in {IN_PROJECT_GOLDEN} that the origin lacks: {sorted(extra)[:10]}"


def test_left_out_files_are_not_in_the_copy() -> None:
    assert not LEFT_OUT & _files(IN_PROJECT_GOLDEN)


def test_files_in_both_copies_are_byte_identical() -> None:
    different = [name for name in sorted(_files(ORIGIN_GOLDEN) & _files(IN_PROJECT_GOLDEN))
                 if (ORIGIN_GOLDEN / name).read_bytes() != (IN_PROJECT_GOLDEN / name).read_bytes()]
    assert not different, f"golden files that differ from ../shared/golden: {different[:10]}"
