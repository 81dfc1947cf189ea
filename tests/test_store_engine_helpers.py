"""Shared pieces of the store engine tests: tiny store configs, producer messages, consistency checks.

The consistency check reads the store only through the codec (``StoreDirectory``), never through the
engine under test, so a store that agrees with itself but not with the format cannot pass.
"""

from __future__ import annotations

from pathlib import Path

from rocketmq_spec.codec.store import HostPort, StoreDirectory
from rocketmq_spec.reference_broker.store import InnerMessage, StoreConfig
from rocketmq_spec.spec.properties import PropertyKey, encode_properties
from rocketmq_spec.spec.sysflag import TransactionType

BORN_HOST = HostPort("127.0.0.1", 40666)
TINY_COMMITLOG = 4096
"""Small enough that a few dozen messages roll several files."""
TINY_CQ = 10 * 20
"""Ten entries per consume-queue file."""


def tiny_config(root: Path, **overrides: object) -> StoreConfig:
    settings: dict[str, object] = {"mapped_file_size_commit_log": TINY_COMMITLOG,
                                   "mapped_file_size_consume_queue": TINY_CQ,
                                   "message_delay_level": "1s 2s", "flush_interval_commit_log_ms": 50,
                                   "flush_interval_consume_queue_ms": 50}
    settings.update(overrides)
    return StoreConfig(root, **settings)  # type: ignore[arg-type]


def uniq_key(n: int) -> str:
    return f"7F0000010FA0000000000000{n:08X}"


def message(topic: str, queue_id: int, n: int, *, tags: str = "TagA", body: bytes | None = None,
            extra: dict[str, str] | None = None) -> InnerMessage:
    props = {PropertyKey.KEYS: f"key-{n} shared", PropertyKey.UNIQ_KEY: uniq_key(n), PropertyKey.TAGS: tags,
             PropertyKey.WAIT: "true", **(extra or {})}
    return InnerMessage.from_wire(topic=topic, queue_id=queue_id,
                                  body=b"body-%d" % n if body is None else body,
                                  properties=encode_properties(props), born_timestamp=1_700_000_000_000 + n,
                                  born_host=BORN_HOST)


def assert_consistent(root: Path, *, index_sizes: tuple[int, int] | None = None) -> None:
    """Every consume-queue entry points at a record of its topic, queue and offset (RMQ-CQ-POINTS-AT-
    RECORD); every queued record has its entry; every record's keys are found through the index, whose
    (slot count, entry count) are given when they do not follow the default 1:4 ratio."""
    with StoreDirectory(root, index_sizes=index_sizes) as store:
        records = list(store.messages())
        by_offset = {r.physical_offset: r for r in records}
        queued = {(r.topic, r.queue_id, r.queue_offset): r for r in records
                  if r.transaction_type in (TransactionType.NOT_TYPE, TransactionType.COMMIT)}
        seen = set()
        for topic, queue_id in store.queues():
            queue = store.queue(topic, queue_id)
            for queue_offset in range(queue.min_offset, queue.max_offset):
                phys, size, _ = queue.entry(queue_offset)
                record = by_offset[phys]
                assert (record.topic, record.queue_id, record.queue_offset, record.total_size) == (
                    topic, queue_id, queue_offset, size)
                seen.add((topic, queue_id, queue_offset))
        assert seen == set(queued)
        for record in records:
            for key in record.keys + ([record.uniq_key] if record.uniq_key else []):
                found = store.lookup_offsets(record.topic, key, max_results=len(records))
                assert record.physical_offset in found
