"""Construct schemas against the codec's fast paths, on bytes real RocketMQ wrote.

The schemas are the source of truth and the fast paths are proven equal to them by properties; this
measures what the fast paths buy. Workloads are golden frames and records, repeated to a useful size.
Targets (one core): >= 10M consume-queue entries/s vectorised, >= 100k RemotingCommand decodes/s,
>= 300k commitlog records/s on the fast path.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from benchmarks.common import Result, measure
from rocketmq_spec.codec.command import decode
from rocketmq_spec.codec.fast_store import cq_entries, encode_cq_entries, unpack_fixed
from rocketmq_spec.codec.store import (
    HostPort,
    IndexFile,
    decode_record,
    encode_entry,
    encode_record,
    make_record,
)
from rocketmq_spec.codec.store.consumequeue import ConsumeQueue
from rocketmq_spec.codec.store.directory import StoreDirectory
from rocketmq_spec.reference_broker.store import InnerMessage, MessageStore, StoreConfig
from rocketmq_spec.spec.binary_header import RocketMQHeader
from rocketmq_spec.spec.commitlog import CommitLogRecord
from rocketmq_spec.spec.consumequeue import CQ_ENTRY_SIZE, CQ_FILE_ENTRIES, CQ_FILE_SIZE, ConsumeQueueEntry
from rocketmq_spec.spec.frame import Frame
from rocketmq_spec.spec.golden import JAVA_FRAMES, STORE_TARBALL

CQ_ENTRIES = 100_000
"""Entries in the in-cache consume-queue workload: large enough that numpy's per-call cost vanishes."""
CQ_QUEUE_FILES = 40
"""Files of 300,000 entries (6,000,000 bytes, Java's default) in the memory-bound workload: 240 MB, far
beyond any CPU cache, read through the page cache as a broker's or a reader's mapped files are."""
STORE_BODY = 256
"""Body bytes of the store-write workload: a typical small business message."""
STORE_PROPERTIES = "KEYS\u0001order-1 customer-7\u0002TAGS\u0001TagA\u0002WAIT\u0001true"
"""Two KEYS and a tag: with UNIQ_KEY, three index keys per message, as a keyed producer sends."""
STORE_OPS = 200_000
"""Capacity of the index workload's file: more puts than the timing loop makes."""


def _frames(serialize_type: str, code_name: str = "SEND_MESSAGE_V2") -> list[bytes]:
    index = json.loads((JAVA_FRAMES / "INDEX.json").read_text())
    return [(JAVA_FRAMES / f["file"]).read_bytes() for f in index["frames"]
            if f["serializeType"] == serialize_type and f["codeName"] == code_name]


def _rate(group: str, name: str, fn: Callable[[], int], nbytes_per_op: float, target: str = "",
          quick: bool = False) -> Result:
    seconds, ops = measure(fn, min_seconds=0.2 if quick else 1.0)
    rate = ops / seconds
    return Result(group, name, rate, rate * nbytes_per_op / 1e6, target)


def _frame_results(quick: bool) -> list[Result]:
    results = []
    for kind, parse_header in (("JSON", json.loads),
                               ("ROCKETMQ", lambda h: RocketMQHeader.parse(h, header_length=len(h)))):
        frames = _frames(kind)
        size = sum(map(len, frames)) / len(frames)

        def with_construct(frames: list[bytes] = frames, parse_header: Callable = parse_header) -> int:
            for f in frames:
                parse_header(Frame.parse(f).header)
            return len(frames)

        def with_codec(frames: list[bytes] = frames) -> int:
            for f in frames:
                decode(f)
            return len(frames)

        results.append(_rate("frame decode", f"{kind} SEND_MESSAGE_V2, construct", with_construct, size,
                             quick=quick))
        results.append(_rate("frame decode", f"{kind} SEND_MESSAGE_V2, codec", with_codec, size,
                             target=">= 100k/s", quick=quick))
    return results


def _cq_results(quick: bool) -> list[Result]:
    data = b"".join(ConsumeQueueEntry.build({"commitlog_offset": i * 200, "size": 200, "tags_code": i})
                    for i in range(CQ_ENTRIES))
    few = data[: 20 * 2000]

    def with_construct() -> int:
        for pos in range(0, len(few), 20):
            ConsumeQueueEntry.parse(few[pos:pos + 20])
        return len(few) // 20

    def with_numpy() -> int:
        entries = cq_entries(data)
        entries["commitlog_offset"].max()
        return len(entries)

    return [_rate("consume queue", "entries, construct", with_construct, 20, quick=quick),
            _rate("consume queue", "entries, numpy (in cache)", with_numpy, 20, target=">= 10M/s",
                  quick=quick),
            _queue_scan(quick)]


def _queue_scan(quick: bool) -> Result:
    """Every field of every entry of a consume queue bigger than the CPU caches, decoded to native
    integers through ``ConsumeQueue.open`` (memory-mapped files): the memory-bound figure."""
    files = CQ_QUEUE_FILES // 4 if quick else CQ_QUEUE_FILES
    with tempfile.TemporaryDirectory() as tmp:
        queue_dir = Path(tmp) / "consumequeue" / "BenchTopic" / "0"
        queue_dir.mkdir(parents=True)
        for number in range(files):
            first = number * CQ_FILE_ENTRIES
            offsets = np.arange(first, first + CQ_FILE_ENTRIES, dtype=np.int64) * 200
            (queue_dir / f"{number * CQ_FILE_SIZE:020d}").write_bytes(encode_cq_entries(
                offsets, np.full(CQ_FILE_ENTRIES, 200), offsets // 200))

        def decode_all() -> int:
            entries = ConsumeQueue.open(queue_dir, "BenchTopic", 0).entries
            fields = [entries[name].astype(np.int64) for name in ("commitlog_offset", "size", "tags_code")]
            return len(fields[0])

        seconds, count = measure(decode_all, min_seconds=0.5 if quick else 2.0)
    name = f"entries, ConsumeQueue.open + every field ({files * CQ_FILE_SIZE >> 20} MiB)"
    return Result("consume queue", name, count / seconds, count * CQ_ENTRY_SIZE / seconds / 1e6, ">= 10M/s",
                  "memory-bound: the queue is larger than the CPU caches (files in the page cache)")


def _commitlog_results(quick: bool) -> list[Result]:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["tar", "-xzf", str(STORE_TARBALL), "-C", tmp], check=True)
        root = next(p.parent for p in Path(tmp).rglob("commitlog"))
        with StoreDirectory(root) as store:
            records = [(r.physical_offset, r.total_size) for r in store.messages()]
        log = (root / "commitlog" / "00000000000000000000").read_bytes()[: max(o + s for o, s in records)]
    size = sum(s for _, s in records) / len(records)

    def with_construct() -> int:
        for offset, total in records:
            CommitLogRecord.parse(log[offset:offset + total])
        return len(records)

    def with_fast_path() -> int:
        for offset, _ in records:
            unpack_fixed(log, offset)
        return len(records)

    def with_codec() -> int:
        for offset, _ in records:
            decode_record(log, offset)
        return len(records)

    return [_rate("commitlog", "records, construct", with_construct, size, quick=quick),
            _rate("commitlog", "record fixed fields, fast path", with_fast_path, size, target=">= 300k/s",
                  quick=quick),
            _rate("commitlog", "records, decode_record (CRC checked)", with_codec, size, quick=quick)]


def _store_write_results(quick: bool) -> list[Result]:
    """What one send costs the broker's store: the record, its consume-queue entry, its index keys, and
    ``MessageStore.put_message`` end to end (ASYNC_FLUSH, so the flush wait is not part of it)."""
    fields = {"topic": "BenchTopic", "body": bytes(STORE_BODY), "properties": STORE_PROPERTIES,
              "queue_id": 1, "queue_offset": 7, "physical_offset": 4096, "born_timestamp": 1_700_000_000_000,
              "born_host": HostPort("10.0.0.2", 50000), "store_timestamp": 1_700_000_000_001,
              "store_host": HostPort("10.0.0.1", 10911)}
    record_size = make_record(**fields).total_size  # type: ignore[arg-type]

    def encode_records() -> int:
        for _ in range(1000):
            encode_record(**fields)
        return 1000

    def encode_cq() -> int:
        for n in range(1000):
            encode_entry(n * 200, 200, n)
        return 1000

    with tempfile.TemporaryDirectory() as tmp:
        index = IndexFile.create(Path(tmp) / "index", slot_count=STORE_OPS, index_count=4 * STORE_OPS)
        keys = [f"BenchTopic#key-{n}" for n in range(STORE_OPS)]

        def put_keys() -> int:
            if index.is_full:
                return 0
            for n, key in enumerate(keys[:1000]):
                index.put(key, n, 1_700_000_000_000 + n)
            return 1000

        config = StoreConfig(Path(tmp) / "store", mapped_file_size_commit_log=256 * 1024 * 1024)
        with MessageStore(config) as store:
            messages = [InnerMessage.from_wire(
                topic="BenchTopic", queue_id=n % 4, body=bytes(STORE_BODY),
                properties=f"{STORE_PROPERTIES}\u0002UNIQ_KEY\u0001{n:032X}", born_timestamp=n,
                born_host=HostPort("10.0.0.2", 50000)) for n in range(1000)]

            def put_messages() -> int:
                for message in messages:
                    store.put_message(message)
                return len(messages)

            results = [
                _rate("store write", "record encode (encode_record)", encode_records, record_size,
                      quick=quick),
                _rate("store write", "consume-queue entry encode", encode_cq, 20, quick=quick),
                _rate("store write", "IndexFile.put", put_keys, 20, quick=quick),
                _rate("store write", "MessageStore.put_message", put_messages, record_size, target=">= 10k/s",
                      quick=quick),
            ]
        index.close()
    return results


def run(quick: bool = False) -> list[Result]:
    return (_frame_results(quick) + _cq_results(quick) + _commitlog_results(quick)
            + _store_write_results(quick))
