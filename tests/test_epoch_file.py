"""The epoch file reader and writer: the file a 5.5.0 broker in controller mode wrote when it became its
set's first master, the checks Java's CheckpointFile makes, the fall-back to the .bak copy and the order
rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketmq_spec.codec.store.epoch_file import (
    encode_epoch_file,
    order_problem,
    read_epoch_file,
    read_epochs,
)
from rocketmq_spec.spec.epoch_file import EPOCH_FILE_NAME, RMQ_EPOCH_FILE, RMQ_EPOCH_FILE_ORDER
from rocketmq_spec.spec.errors import StoreError

WRITTEN_BY_5_5_0 = b"1\n1725254278\n1-0\n"
"""store/epochFileCheckpoint of a 5.5.0 broker elected master with masterEpoch 1 on an empty CommitLog."""


def _write(tmp_path: Path, data: bytes, name: str = EPOCH_FILE_NAME) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_the_broker_file_reads_and_is_written_back_identically(tmp_path: Path) -> None:
    epochs = read_epoch_file(_write(tmp_path, WRITTEN_BY_5_5_0))
    assert epochs.entries == ((1, 0),) and epochs.crc == 1725254278
    assert encode_epoch_file([(1, 0)]) == WRITTEN_BY_5_5_0


@pytest.mark.parametrize("data", [b"2\n1725254278\n1-0\n", b"1\n12345\n1-0\n", b"1\n", b"x\n0\n1-0\n"])
def test_a_file_java_refuses_is_refused(tmp_path: Path, data: bytes) -> None:
    with pytest.raises(StoreError) as raised:
        read_epoch_file(_write(tmp_path, data))
    assert raised.value.clause == RMQ_EPOCH_FILE.id


def test_a_zero_crc_is_not_checked_and_odd_lines_are_skipped(tmp_path: Path) -> None:
    assert read_epoch_file(_write(tmp_path, b"1\n0\n1-0\nnot-an-entry-line\n")).entries == ((1, 0),)


def test_the_backup_stands_in_for_an_unreadable_or_empty_file(tmp_path: Path) -> None:
    _write(tmp_path, encode_epoch_file([(1, 0), (2, 100)]), EPOCH_FILE_NAME + ".bak")
    _write(tmp_path, b"1\n12345\n1-0\n")
    found = read_epochs(tmp_path)
    assert found is not None and found.entries == ((1, 0), (2, 100))
    assert read_epochs(tmp_path / "nowhere") is None


@pytest.mark.parametrize(("entries", "end", "ok"), [
    (((1, 0), (2, 100)), 100, True),
    (((2, 0), (1, 100)), 200, False),
    (((1, 0), (2, 0)), 200, False),
    (((1, 0), (2, 300)), 200, False),
])
def test_order(entries: tuple[tuple[int, int], ...], end: int, ok: bool) -> None:
    problem = order_problem(entries, end)
    assert (problem is None) == ok
    assert problem is None or problem.clause == RMQ_EPOCH_FILE_ORDER.id
