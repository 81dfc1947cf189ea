"""Store directory: the files a broker leaves behind, checked offline through ``codec.store`` only.

The CommitLog is scanned once per run; the clauses the scan itself enforces (magic, sizes, CRCs,
positions, BLANK markers, end of data) each get a case that fails only when the scan stopped on *its*
clause, so one corrupt record yields one FAIL and not a column of them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from codec.store.commitlog import map_file, segment_files
from codec.store.consumequeue import ConsumeQueue
from codec.store.directory import StoreDirectory
from codec.store.indexfile import IndexFile, index_keys
from codec.store.record import MessageRecord
from conformance.case import Row, case, table
from conformance.checks import Check
from conformance.verdict import Failure, Info
from spec.checkpoint import CHECKPOINT_FILE_SIZE
from spec.commitlog import is_offset_file_name
from spec.consumequeue import CQ_ENTRY_SIZE, CQ_FILE_SIZE, delay_level_ms, is_ext_address, is_pre_blank
from spec.errors import RocketMQSpecError
from spec.hashing import index_key_hash, tags_code
from spec.indexfile import file_size, time_diff_seconds
from spec.properties import PropertyKey
from spec.store_layout import (
    ABORT_FILE,
    CHECKPOINT_FILE,
    COMMITLOG_DIR,
    CONFIG_DIR,
    CONSUMEQUEUE_DIR,
    LOCK_FILE,
)
from spec.sysflag import TransactionType

ZERO_TAIL_CHECKED = 1 << 20
"""Bytes after the last record that must be zero: enough to catch a stray write, without reading a whole
sparse 1 GiB file."""

SCHEDULE_TOPIC = "SCHEDULE_TOPIC_XXXX"
HALF_TOPIC = "RMQ_SYS_TRANS_HALF_TOPIC"
LOCK_CONTENT = b"lock"
INDEX_NAME = re.compile(r"\d{17}")
"""yyyyMMddHHmmssSSS."""

CONFIG_FILES = ("topics.json", "subscriptionGroup.json", "consumerOffset.json", "delayOffset.json")


@dataclass
class Scan:
    records: list[MessageRecord]
    error: RocketMQSpecError | None


@pytest.fixture(scope="module")
def store(store_dir: Path) -> Iterator[StoreDirectory]:
    with StoreDirectory(store_dir) as directory:
        yield directory


@pytest.fixture(scope="module")
def scan(store: StoreDirectory) -> Scan:
    records: list[MessageRecord] = []
    try:
        records.extend(store.messages(verify_crc=True))
    except RocketMQSpecError as exc:
        return Scan(records, exc)
    return Scan(records, None)


@pytest.fixture(scope="module")
def by_offset(scan: Scan) -> dict[int, MessageRecord]:
    return {r.physical_offset: r for r in scan.records}


def _dispatched(record: MessageRecord) -> bool:
    return record.transaction_type in (TransactionType.NOT_TYPE, TransactionType.COMMIT)


def _queues(store: StoreDirectory) -> Iterator[ConsumeQueue]:
    for topic, queue_id in store.queues():
        yield store.queue(topic, queue_id)


SCAN_CLAUSES = [
    Row("record-magic", "RMQ-CL-MAGIC", "Every record starts with a known MAGICCODE.", None),
    Row("record-total-size", "RMQ-CL-TOTAL-SIZE",
        "Every record's TOTALSIZE equals the length of its parts.", None),
    Row("record-body-crc", "RMQ-CL-BODY-CRC-CHECK", "Every record's BODYCRC matches its body.", None),
    Row("record-physical-offset", "RMQ-CL-PHYSICAL-OFFSET",
        "Every record's PHYSICALOFFSET is its absolute position.", None),
    Row("blank-marker", "RMQ-CL-BLANK", "A BLANK marker's TOTALSIZE covers the rest of its file.", None),
    Row("end-of-data", "RMQ-CL-END-OF-DATA",
        "Only the last file ends in zeros; earlier files end with a record or a BLANK marker.", None),
    Row("file-names", "RMQ-CL-FILE-NAME",
        "CommitLog files are contiguous: each is named by the offset where the previous one ends.", None),
]


@table("_", SCAN_CLAUSES)
def test_commitlog_scan(_: None, request: pytest.FixtureRequest, scan: Scan, check: Check) -> None:
    clause_id = request.node.get_closest_marker("rmq_case").args[0].clause.id
    error = scan.error
    check.note("records read", len(scan.records))
    if error is not None and error.clause == clause_id:
        raise Failure(error.message, expected=error.expected, actual=error.seen)
    if error is not None:
        raise Info(f"scan stopped at offset {error.offset} by {error.clause}; checked the records before it")


@case("RMQ-CL-FILE-NAME", "CommitLog files are named by 20-digit offsets and all have the same size.")
def test_commitlog_file_names(store_dir: Path, check: Check) -> None:
    directory = store_dir / COMMITLOG_DIR
    names = sorted(p.name for p in directory.iterdir() if p.is_file())
    check.equal("files not named by a 20-digit offset", [], [n for n in names if not is_offset_file_name(n)])
    sizes = {f.path.stat().st_size for f in segment_files(directory)}
    check.that("one file size for every CommitLog file", len(sizes) <= 1, expected="one size", actual=sizes)


@case("RMQ-CL-END-OF-DATA", "The bytes after the last record of the last file are zero.")
def test_commitlog_zero_tail(store: StoreDirectory, scan: Scan, check: Check) -> None:
    if not scan.records:
        raise Info("the CommitLog holds no records")
    last = scan.records[-1]
    segment = next(f for f in reversed(store.commitlog.files) if f.start <= last.physical_offset)
    view = map_file(segment.path)
    start = last.physical_offset + last.total_size - segment.start
    tail = bytes(view[start:start + ZERO_TAIL_CHECKED])
    nonzero = next((i for i, b in enumerate(tail) if b), None)
    check.that("non-zero byte after the last record", nonzero is None, expected=None,
               actual=None if nonzero is None else segment.start + start + nonzero)


@case("RMQ-FLAG-COMPRESSION", "Every compressed body decompresses with the algorithm its SYSFLAG names.")
def test_compressed_bodies(scan: Scan, check: Check) -> None:
    broken = []
    for record in scan.records:
        try:
            _ = record.application_body
        except RocketMQSpecError as exc:
            broken.append((record.physical_offset, exc.message))
    check.equal("records whose body does not decompress", [], broken)


@case("RMQ-CL-TRANSACTION-OFFSETS",
      "A committed transactional record points (PREPARED OFFSET) at its half message with the same UNIQ_KEY.")
def test_committed_transactions(scan: Scan, by_offset: dict[int, MessageRecord], check: Check) -> None:
    committed = [r for r in scan.records if r.transaction_type is TransactionType.COMMIT]
    check.note("committed records", len(committed))
    for record in committed:
        half = by_offset.get(record.prepared_transaction_offset)
        check.that(f"half message of the record at {record.physical_offset}",
                   half is not None and half.topic == HALF_TOPIC and half.uniq_key == record.uniq_key,
                   expected=f"{HALF_TOPIC} record with UNIQ_KEY {record.uniq_key}",
                   actual=None if half is None else (half.topic, half.uniq_key))


@case("RMQ-CQ-POSITION", "ConsumeQueue files are named by multiples of their size, which is 6000000 bytes.")
def test_consume_queue_files(store_dir: Path, check: Check) -> None:
    bad = []
    for path in sorted((store_dir / CONSUMEQUEUE_DIR).glob("*/*/*")):
        size = path.stat().st_size
        if not is_offset_file_name(path.name) or int(path.name) % CQ_FILE_SIZE or size != CQ_FILE_SIZE:
            bad.append((str(path.relative_to(store_dir)), size))
    check.equal("ConsumeQueue files misnamed or of another size", [], bad)


@case("RMQ-CQ-POINTS-AT-RECORD",
      "Each consume-queue entry points at a record of its topic, queue and queue offset, of its size.")
def test_queue_entries_point_at_records(store: StoreDirectory, by_offset: dict[int, MessageRecord],
                                        check: Check) -> None:
    wrong = []
    for queue in _queues(store):
        for n in range(queue.min_offset, queue.max_offset):
            offset, size, _ = queue.entry(n)
            record = by_offset.get(offset)
            seen = None if record is None else (record.topic, record.queue_id, record.queue_offset,
                                                record.total_size)
            if seen != (queue.topic, queue.queue_id, n, size):
                wrong.append({"queue": f"{queue.topic}/{queue.queue_id}", "offset": n, "seen": seen})
    check.equal("entries not matching their record", [], wrong[:10])


@case("RMQ-CQ-TAGS-CODE", "An ordinary entry's tags code is the Java hash of the record's TAGS.")
def test_tags_codes(store: StoreDirectory, by_offset: dict[int, MessageRecord], check: Check) -> None:
    wrong = []
    for queue in _queues(store):
        if queue.topic == SCHEDULE_TOPIC:
            continue
        for n in range(queue.min_offset, queue.max_offset):
            offset, _, code = queue.entry(n)
            record = by_offset.get(offset)
            if record is not None and not is_ext_address(code) and code != tags_code(record.tags):
                wrong.append((queue.topic, queue.queue_id, n, code, tags_code(record.tags)))
    check.equal("entries with a wrong tags code", [], wrong[:10])


@case("RMQ-CQ-DELAY-TAGS", "A SCHEDULE_TOPIC_XXXX entry's tags code is the deliver time of its message.")
def test_delay_tags_codes(store: StoreDirectory, by_offset: dict[int, MessageRecord], check: Check) -> None:
    checked = 0
    for queue in _queues(store):
        if queue.topic != SCHEDULE_TOPIC:
            continue
        for n in range(queue.min_offset, queue.max_offset):
            offset, _, code = queue.entry(n)
            record = by_offset[offset]
            level = int(record.properties.get(PropertyKey.DELAY, "0"))
            expected = record.store_timestamp + delay_level_ms(level)
            check.equal(f"deliver time of {SCHEDULE_TOPIC}/{queue.queue_id}@{n}", expected, code)
            checked += 1
    check.note("delayed entries checked", checked)


@case("RMQ-CQ-END", "A queue's written entries are followed only by zero bytes: queues have no holes.")
def test_queue_has_no_holes(store_dir: Path, check: Check) -> None:
    holes = []
    for directory in sorted((store_dir / CONSUMEQUEUE_DIR).glob("*/*")):
        for segment in segment_files(directory):
            data = bytes(map_file(segment.path))
            written = len(ConsumeQueue.open(directory, directory.parent.name, int(directory.name)).entries)
            end = (written * CQ_ENTRY_SIZE - segment.start) if segment.start else written * CQ_ENTRY_SIZE
            if any(data[max(end, 0):]):
                holes.append(str(segment.path.relative_to(store_dir)))
    check.equal("queues with data after their first unwritten entry", [], holes)


@case("RMQ-CQ-PRE-BLANK", "Pre-blank entries only precede a queue's first real entry.")
def test_pre_blank_entries(store: StoreDirectory, check: Check) -> None:
    misplaced = []
    for queue in _queues(store):
        for n in range(queue.min_offset, queue.max_offset):
            if is_pre_blank(*queue.entry(n)):
                misplaced.append((queue.topic, queue.queue_id, n))
    check.equal("pre-blank entries after a real entry", [], misplaced)


@case("RMQ-CQ-TRANSACTION",
      "Every record of transaction type NOT or COMMIT has a consume-queue entry, and no other record has.")
def test_records_are_dispatched(store: StoreDirectory, scan: Scan, check: Check) -> None:
    queued = {queue.entry(n)[0] for queue in _queues(store)
              for n in range(queue.min_offset, queue.max_offset)}
    missing = [r.physical_offset for r in scan.records if _dispatched(r) and r.physical_offset not in queued]
    extra = [r.physical_offset for r in scan.records if not _dispatched(r) and r.physical_offset in queued]
    check.equal("dispatchable records without an entry", [], missing)
    check.equal("half or rolled-back records with an entry", [], extra)


@case("RMQ-IDX-FILE-NAME", "Index files are named yyyyMMddHHmmssSSS.")
def test_index_file_names(store: StoreDirectory, store_dir: Path, check: Check) -> None:
    names = [p.name for p in (store_dir / "index").iterdir()] if (store_dir / "index").is_dir() else []
    check.equal("index files with another name", [], [n for n in names if not INDEX_NAME.fullmatch(n)])


@case("RMQ-IDX-LAYOUT", "An index file is 40 + 4 * slots + 20 * entries bytes (420000040 by default).")
def test_index_file_sizes(store: StoreDirectory, check: Check) -> None:
    for path in store.index_files():
        check.equal(f"size of {path.name}", file_size(), path.stat().st_size)


@case("RMQ-IDX-KEYS", "Every keyed record is found by an index lookup of each of its keys and its UNIQ_KEY.")
def test_index_finds_every_key(store: StoreDirectory, scan: Scan, check: Check) -> None:
    if not store.index_files():
        raise Info("the store has no index file")
    missing = []
    for record in scan.records:
        for key in index_keys(record):
            found = store.lookup_offsets(record.topic, key.split("#", 1)[1])
            if record.physical_offset not in found:
                missing.append((record.physical_offset, key))
    check.equal("keys whose lookup misses their record", [], missing[:10])


@case("RMQ-IDX-LOOKUP",
      "Every index entry points at a record indexed under a key of that hash, at its time difference.")
def test_index_entries_point_at_records(store: StoreDirectory, by_offset: dict[int, MessageRecord],
                                       check: Check) -> None:
    wrong = []
    for path in store.index_files():
        with IndexFile(path) as index:
            for entry in index.entries():
                record = by_offset.get(entry.phy_offset)
                if record is None:
                    wrong.append((path.name, entry.index, entry.phy_offset))
                    continue
                hashes = {index_key_hash(k) for k in index_keys(record)}
                diff = time_diff_seconds(record.store_timestamp, index.header.begin_timestamp)
                if entry.key_hash not in hashes or entry.time_diff != diff:
                    wrong.append((path.name, entry.index, entry.phy_offset))
    check.equal("index entries not matching a record", [], wrong[:10])


@case("RMQ-IDX-PUT", "An index header counts its entries (from 1) and spans its first to last entry.")
def test_index_headers(store: StoreDirectory, check: Check) -> None:
    for path in store.index_files():
        with IndexFile(path) as index:
            entries = list(index.entries())
            header = index.header
            check.equal(f"{path.name}: index_count", len(entries) + 1, header.index_count)
            if entries:
                check.equal(f"{path.name}: begin_phy_offset", entries[0].phy_offset, header.begin_phy_offset)
                check.equal(f"{path.name}: end_phy_offset", entries[-1].phy_offset, header.end_phy_offset)


@case("RMQ-CKPT-LAYOUT", "The checkpoint file is 4096 bytes.")
def test_checkpoint_size(store_dir: Path, check: Check) -> None:
    check.equal("checkpoint size", CHECKPOINT_FILE_SIZE, (store_dir / CHECKPOINT_FILE).stat().st_size)


@case("RMQ-BRK-CHECKPOINT", "The checkpoint is not behind the records the store holds.")
def test_checkpoint_not_behind(store: StoreDirectory, scan: Scan, check: Check) -> None:
    if store.crashed:
        raise Info("the store was not shut down cleanly (abort file present)")
    last = max((r.store_timestamp for r in scan.records if _dispatched(r)), default=0)
    point = store.checkpoint()
    check.that("physic timestamp", point.physic_msg_timestamp >= last, expected=f">= {last}",
               actual=point.physic_msg_timestamp)
    check.that("logics timestamp", point.logics_msg_timestamp >= last, expected=f">= {last}",
               actual=point.logics_msg_timestamp)


@table("name", [Row(name.removesuffix(".json"), "RMQ-STORE-CONFIG-JSON",
                    f"config/{name}, when present, is fastjson JSON a reader can load.", name)
                for name in CONFIG_FILES])
def test_config_files_load(name: str, store: StoreDirectory, store_dir: Path, check: Check) -> None:
    if not (store_dir / CONFIG_DIR / name).exists():
        raise Info(f"config/{name} is absent")
    check.note("top-level keys", sorted(store.config(name)))


@case("RMQ-STORE-CONFIG-BAK", "Every config .bak file holds loadable JSON.")
def test_config_backups_load(store: StoreDirectory, store_dir: Path, check: Check) -> None:
    for path in sorted((store_dir / CONFIG_DIR).glob("*.json.bak")):
        check.note(path.name, sorted(store.config(path.name)))


@case("RMQ-STORE-LAYOUT", "A queue of a topic configured in topics.json lies within its configured queues.",
      java_note="4.9.8 writes RMQ_SYS_TRANS_OP_HALF_TOPIC without ever configuring it (broker/src/main/java/"
                "org/apache/rocketmq/broker/transaction/queue/TransactionalMessageBridge.java), so queues of "
                "unconfigured topics are only noted.")
def test_queues_are_configured(store: StoreDirectory, check: Check) -> None:
    topics = store.topics()
    check.note("topics with queues but no config", sorted({t for t, _ in store.queues() if t not in topics}))
    for topic, queue_id in store.queues():
        config = topics.get(topic)
        if config is not None:
            limit = max(config["readQueueNums"], config["writeQueueNums"])
            check.that(f"{topic}/{queue_id} within the configured queues", queue_id < limit,
                       expected=f"< {limit}", actual=queue_id)


@case("RMQ-STORE-OFFSET-KEY",
      "consumerOffset.json keys are topic@group and each offset lies within its queue's offsets.")
def test_consumer_offsets(store: StoreDirectory, check: Check) -> None:
    for (topic, group), offsets in store.consumer_offsets().items():
        for queue_id, offset in offsets.items():
            queue = store.queue(topic, queue_id)
            check.that(f"{topic}@{group} queue {queue_id}", 0 <= offset <= queue.max_offset,
                       expected=f"[0, {queue.max_offset}]", actual=offset)


@case("RMQ-STORE-LOCK", "The lock file holds 'lock'.")
def test_lock_file(store_dir: Path, check: Check) -> None:
    path = store_dir / LOCK_FILE
    if not path.exists():
        raise Info("the store has no lock file")
    check.equal("lock file content", LOCK_CONTENT, path.read_bytes()[:len(LOCK_CONTENT)])


@case("RMQ-STORE-ABORT", "No abort file is left after a clean shutdown.")
def test_abort_file(store_dir: Path, check: Check) -> None:
    if (store_dir / ABORT_FILE).exists():
        raise Info("abort file present: the store was not shut down cleanly (or is in use)")
