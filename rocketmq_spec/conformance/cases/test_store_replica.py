"""A slave's store beside its master's (``rmq-conformance store MASTER --replica SLAVE``), offline.

RMQ-HA-REPLICA: over the range the slave holds, its CommitLog is the master's byte for byte (file names
included), and each of its consume queues holds the master's entries at the same queue offsets. The slave
may start later (an empty slave starts at the master's last file) and end earlier (it may be behind, or
hold the first part of a record whose rest was still in flight); it may never hold bytes the master
does not.
"""

from __future__ import annotations

from pathlib import Path

from rocketmq_spec.codec.store.commitlog import CommitLog, map_file, segment_files
from rocketmq_spec.codec.store.consumequeue import ConsumeQueue
from rocketmq_spec.codec.store.directory import StoreDirectory
from rocketmq_spec.conformance.case import case
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.spec.errors import RocketMQSpecError
from rocketmq_spec.spec.store_layout import COMMITLOG_DIR

CHUNK = 16 * 1024 * 1024
"""Bytes compared at a time, so gigabyte files are compared without copying them whole."""


def _records_end(store: Path) -> int:
    """Where a store's complete records end (a partial record at the very end is not counted)."""
    end = 0
    with CommitLog(store / COMMITLOG_DIR) as log:
        try:
            for fields in log.scan():
                end = fields.physical_offset + fields.total_size
        except RocketMQSpecError as exc:
            if exc.offset is not None:
                end = max(end, exc.offset)
    return end


def _first_difference(a: bytes | memoryview, b: bytes | memoryview, size: int) -> int | None:
    for chunk in range(0, size, CHUNK):
        left, right = a[chunk:min(size, chunk + CHUNK)], b[chunk:min(size, chunk + CHUNK)]
        if left != right:
            return chunk + next(i for i, (x, y) in enumerate(zip(left, right, strict=False)) if x != y)
    return None


@case("RMQ-HA-REPLICA", "Over the range a slave's CommitLog holds, its files and bytes are its master's.")
def test_replica_commitlog_is_a_prefix(store_dir: Path, replica_dir: Path, check: Check) -> None:
    master = {f.start: f for f in segment_files(store_dir / COMMITLOG_DIR)}
    replica = segment_files(replica_dir / COMMITLOG_DIR)
    check.that("replica holds data", bool(replica), expected="CommitLog files", actual=len(replica))
    replica_end = _records_end(replica_dir)
    check.that("replica not ahead of the master", replica_end <= _records_end(store_dir),
               expected=f"<= {_records_end(store_dir)}", actual=replica_end)
    for segment in replica:
        if segment.start >= replica_end:
            break
        theirs = master.get(segment.start)
        check.that(f"master has {segment.path.name}", theirs is not None, expected="the same file name",
                   actual=sorted(master)[:3])
        if theirs is None:
            continue
        mine, reference = map_file(segment.path), map_file(theirs.path)
        size = min(len(mine), replica_end - segment.start)
        check.equal(f"file size of {segment.path.name}", len(reference), len(mine))
        difference = _first_difference(memoryview(mine), memoryview(reference), size)
        check.equal(f"first differing byte of {segment.path.name} (before {size})", None, difference)
    check.note("compared bytes", replica_end - (replica[0].start if replica else 0))


@case("RMQ-HA-REPLICA", "Each consume queue of a slave holds its master's entries at the same queue offsets.")
def test_replica_queues_match(store_dir: Path, replica_dir: Path, check: Check) -> None:
    with StoreDirectory(store_dir) as master, StoreDirectory(replica_dir) as replica:
        queues = replica.queues()
        master_queues = set(master.queues())
        compared = 0
        for topic, queue_id in queues:
            mine = replica.queue(topic, queue_id)
            theirs: ConsumeQueue | None = master.queue(topic, queue_id) \
                if (topic, queue_id) in master_queues else None
            check.that(f"master has queue {topic}/{queue_id}", theirs is not None, expected="the queue",
                       actual=None)
            if theirs is None:
                continue
            check.that(f"{topic}/{queue_id} not ahead", mine.max_offset <= theirs.max_offset,
                       expected=f"<= {theirs.max_offset}", actual=mine.max_offset)
            offsets = range(max(mine.min_offset, theirs.min_offset), min(mine.max_offset, theirs.max_offset))
            differing = next((o for o in offsets if mine.entry(o) != theirs.entry(o)), None)
            seen = None if differing is None else (differing, theirs.entry(differing), mine.entry(differing))
            check.equal(f"first differing entry of {topic}/{queue_id}", None, seen)
            compared += len(offsets)
        check.note("queues, entries compared", (len(queues), compared))
