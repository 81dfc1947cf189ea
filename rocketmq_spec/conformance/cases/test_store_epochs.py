"""The epoch file of a controller-mode store (``epochFileCheckpoint``), checked offline.

A store written by a broker outside controller mode has no epoch file: its cases are UNSUPPORTED with
that reason rather than failing.
"""

from __future__ import annotations

from pathlib import Path

from rocketmq_spec.codec.store.directory import StoreDirectory
from rocketmq_spec.codec.store.epoch_file import EpochFile, order_problem, read_epoch_file, read_epochs
from rocketmq_spec.conformance.case import case
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.verdict import Unsupported
from rocketmq_spec.spec.epoch_file import BACKUP_SUFFIX, EPOCH_FILE_NAME
from rocketmq_spec.spec.errors import StoreError


def _epochs(store_dir: Path) -> EpochFile:
    found = read_epochs(store_dir)
    if found is None:
        raise Unsupported(f"no {EPOCH_FILE_NAME}: not a store of a broker in controller mode",
                          expected=EPOCH_FILE_NAME, actual=sorted(p.name for p in store_dir.iterdir()))
    return found


@case("RMQ-EPOCH-FILE", "The store's epochFileCheckpoint reads as a count line, a CRC line and "
      "epoch-startOffset lines whose number and CRC match.")
def test_epoch_file_layout(store_dir: Path, check: Check) -> None:
    path = store_dir / EPOCH_FILE_NAME
    _epochs(store_dir)
    check.that(f"{path.name} exists", path.is_file(), expected=str(path), actual="only its .bak copy")
    try:
        epochs = read_epoch_file(path)
    except StoreError as exc:
        check.that(f"{path.name} reads", False, expected="a readable epoch file", actual=str(exc))
        return
    check.that("at least one epoch", bool(epochs.entries), expected="an entry per master epoch",
               actual=epochs.entries)


@case("RMQ-EPOCH-FILE-ORDER", "The epochs grow strictly in number and start offset, and the last one starts "
      "at or before the CommitLog's end.")
def test_epoch_order(store_dir: Path, store: StoreDirectory, check: Check) -> None:
    epochs = _epochs(store_dir)
    end = store.commitlog.end.offset
    problem = order_problem(epochs.entries, end)
    check.that("epoch order", problem is None, expected=f"growing entries, the last starting <= {end}",
               actual=str(problem) if problem else epochs.entries)


@case("RMQ-EPOCH-FILE-BACKUP", "epochFileCheckpoint.bak, when present, is itself a readable epoch file (the "
      "content before the last write): the two histories agree but for the last entry of the shorter one.")
def test_epoch_backup(store_dir: Path, check: Check) -> None:
    epochs = _epochs(store_dir)
    backup = store_dir / (EPOCH_FILE_NAME + BACKUP_SUFFIX)
    if not backup.is_file():
        raise Unsupported("no backup yet: the epoch file was written once", expected=backup.name, actual=None)
    try:
        previous = read_epoch_file(backup)
    except StoreError as exc:
        check.that(f"{backup.name} reads", False, expected="a readable epoch file", actual=str(exc))
        return
    shared = min(len(previous.entries), len(epochs.entries))
    check.equal("common history", previous.entries[:shared - 1] if shared else (),
                epochs.entries[:shared - 1] if shared else ())
