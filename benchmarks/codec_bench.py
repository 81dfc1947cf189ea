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

from benchmarks.common import Result, measure
from codec.command import decode
from codec.fast_store import cq_entries, unpack_fixed
from codec.store.directory import StoreDirectory
from spec.binary_header import RocketMQHeader
from spec.commitlog import CommitLogRecord
from spec.consumequeue import ConsumeQueueEntry
from spec.frame import Frame
from tests.golden import JAVA_FRAMES, STORE_TARBALL

CQ_ENTRIES = 100_000
"""Entries in the consume-queue workload: large enough that numpy's per-call cost vanishes."""


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
            _rate("consume queue", "entries, numpy", with_numpy, 20, target=">= 10M/s", quick=quick)]


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

    return [_rate("commitlog", "records, construct", with_construct, size, quick=quick),
            _rate("commitlog", "record fixed fields, fast path", with_fast_path, size, target=">= 300k/s",
                  quick=quick)]


def run(quick: bool = False) -> list[Result]:
    return _frame_results(quick) + _cq_results(quick) + _commitlog_results(quick)
