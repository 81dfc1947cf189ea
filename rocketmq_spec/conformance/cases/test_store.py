"""Store directory: the files a broker leaves behind, checked offline through ``rocketmq_spec.codec.store``
only.

The CommitLog is scanned once per run; the clauses the scan itself enforces (magic, sizes, CRCs,
positions, BLANK markers, end of data) each get a case that fails only when the scan stopped on *its*
clause, so one corrupt record yields one FAIL and not a column of them. Cases that need only a record's
fixed fields read them through the codec's fast scan, which builds no bodies, topics or properties.

File sizes are settings (``mappedFileSizeCommitLog``, ``mappedFileSizeConsumeQueue``, ``maxHashSlotNum``,
``maxIndexNum``): the rules are that all files of one kind share one size and that names and layout agree
with it. A size other than Java's default is legal and reported as INFO, never as FAIL.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from rocketmq_spec.codec.fast_store import FixedFields
from rocketmq_spec.codec.fastjson import loads as fastjson_loads
from rocketmq_spec.codec.store.commitlog import map_file, segment_files
from rocketmq_spec.codec.store.consumequeue import ConsumeQueue
from rocketmq_spec.codec.store.directory import StoreDirectory
from rocketmq_spec.codec.store.dispatch import ahead_notice, is_dispatch_lag, lag_notice
from rocketmq_spec.codec.store.indexfile import (
    first_entry_bases,
    index_keys,
    index_sizes,
    query_offsets,
    record_tag_key,
)
from rocketmq_spec.codec.store.record import MessageRecord
from rocketmq_spec.conformance.case import Row, case, table
from rocketmq_spec.conformance.cases.store_support import IndexFiles, Scan
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.verdict import Failure, Info, NonStrict
from rocketmq_spec.spec.checkpoint import CHECKPOINT_FILE_SIZE
from rocketmq_spec.spec.commitlog import COMMITLOG_FILE_SIZE, RMQ_CL_TORN_TAIL, is_offset_file_name
from rocketmq_spec.spec.consumequeue import (
    CQ_ENTRY_SIZE,
    CQ_FILE_SIZE,
    RMQ_CQ_DISPATCH_LAG,
    delay_level_ms,
    is_ext_address,
    is_pre_blank,
)
from rocketmq_spec.spec.errors import RocketMQSpecError, StoreError
from rocketmq_spec.spec.hashing import index_key_hash, tags_code
from rocketmq_spec.spec.indexfile import (
    DEFAULT_INDEX_COUNT,
    DEFAULT_SLOT_COUNT,
    ENTRY_SIZE,
    FIRST_INDEX,
    HEADER_SIZE,
    INDEX_TAG_TYPE,
    KEY_SEPARATOR,
    SLOT_SIZE,
    file_size,
    time_base,
    time_diff_seconds,
)
from rocketmq_spec.spec.properties import PropertyKey
from rocketmq_spec.spec.store_layout import (
    CHECKPOINT_FILE,
    COMMITLOG_DIR,
    CONFIG_DIR,
    CONSUMEQUEUE_DIR,
    LOCK_CONTENT,
    LOCK_FILE,
)
from rocketmq_spec.spec.sysflag import TransactionType, transaction_type
from rocketmq_spec.spec.system_topics import SCHEDULE_TOPIC, TRANS_HALF_TOPIC

ZERO_TAIL_CHECKED = 1 << 20
"""Bytes after the last record that must be zero: enough to catch a stray write, without reading a whole
sparse 1 GiB file."""

INDEX_NAME = re.compile(r"\d{17}")
"""yyyyMMddHHmmssSSS."""

CONFIG_FILES = ("topics.json", "subscriptionGroup.json", "consumerOffset.json", "delayOffset.json")


def _dispatched(sys_flag: int) -> bool:
    return transaction_type(sys_flag) in (TransactionType.NOT_TYPE, TransactionType.COMMIT)


def _one_size(check: Check, kind: str, paths: Iterable[Path]) -> int | None:
    """The single size every file of ``kind`` has (None when there are no files); FAIL on several."""
    sizes = sorted({path.stat().st_size for path in paths})
    check.that(f"one size for every {kind} file", len(sizes) <= 1, expected="one size", actual=sizes)
    return sizes[0] if sizes else None


def _report_setting(check: Check, setting: str, value: object, default: object) -> None:
    """A size the consistency rules accept, judged only against Java's default: INFO when it differs."""
    check.note(setting, value)
    if value != default:
        raise Info(f"non-default setting: {setting}={value} (Java's default is {default})",
                   expected=default, actual=value)


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
def test_commitlog_scan(_: None, request: pytest.FixtureRequest, scan: Scan[MessageRecord],
                        check: Check) -> None:
    clause_id = request.node.get_closest_marker("rmq_case").args[0].clause.id
    error = scan.error
    check.note("records read", len(scan.records))
    if error is not None and error.clause == clause_id:
        raise Failure(error.message, expected=error.expected, actual=error.seen)
    if error is not None:
        raise Info(f"scan stopped at offset {error.offset} by {error.clause}; checked the records before it")


@case("RMQ-CL-FILE-NAME",
      "CommitLog files are named by 20-digit start offsets, share one size and start at multiples of it "
      "(contiguity is the scan's file-names row); a size other than 1 GiB is a setting, reported as INFO.")
def test_commitlog_file_names(store_dir: Path, check: Check) -> None:
    directory = store_dir / COMMITLOG_DIR
    names = sorted(p.name for p in directory.iterdir() if p.is_file())
    check.equal("files not named by a 20-digit offset", [], [n for n in names if not is_offset_file_name(n)])
    segments = segment_files(directory)
    size = _one_size(check, "CommitLog", (s.path for s in segments))
    if size is None:
        raise Info("the store has no CommitLog file")
    check.that("file size", size > 0, expected="> 0", actual=size)
    check.equal("files not starting at a multiple of the file size", [],
                [s.path.name for s in segments if s.start % size])
    _report_setting(check, "mappedFileSizeCommitLog", size, COMMITLOG_FILE_SIZE)


@case("RMQ-CL-END-OF-DATA", "The bytes after the last record (and after a torn one) are zero.")
def test_commitlog_zero_tail(store: StoreDirectory, scan: Scan[MessageRecord], check: Check) -> None:
    if not scan.records:
        raise Info("the CommitLog holds no records")
    if scan.error is not None:
        raise Info(f"scan stopped at offset {scan.error.offset} by {scan.error.clause}")
    first_nonzero = store.commitlog.nonzero_after_end(ZERO_TAIL_CHECKED)
    check.equal("non-zero byte after the last record", None, first_nonzero)


NOTICE_CLAUSES = [
    Row("preallocated-files", "RMQ-CL-PREALLOCATED",
        "Zero CommitLog files past the data end (pre-allocated by a running broker) are reported.", None),
    Row("torn-tail", "RMQ-CL-TORN-TAIL",
        "The CommitLog ends with a whole record; a torn last record is reported (INFO after a crash).", None),
    Row("checkpoint-flushed", "RMQ-CKPT-ZERO", "An unflushed (zero) checkpoint is reported.", None),
]


@table("_", NOTICE_CLAUSES)
def test_store_notices(_: None, request: pytest.FixtureRequest, store: StoreDirectory,
                       scan: Scan[MessageRecord], check: Check) -> None:
    """What a running or killed broker leaves, as ``StoreDirectory.notices`` finds it for every reader."""
    clause_id = request.node.get_closest_marker("rmq_case").args[0].clause.id
    if scan.error is not None:
        raise Info(f"scan stopped at offset {scan.error.offset} by {scan.error.clause}")
    check.note("data end", store.commitlog.end.offset)
    for found, text in store.notices():
        if found != clause_id:
            continue
        if found == RMQ_CL_TORN_TAIL.id and not store.crashed:
            raise NonStrict(f"{text} in a store shut down cleanly (no abort file)")
        raise Info(text)


@case("RMQ-FLAG-COMPRESSION", "Every compressed body decompresses with the algorithm its SYSFLAG names.")
def test_compressed_bodies(scan: Scan[MessageRecord], check: Check) -> None:
    broken = []
    for record in scan.records:
        try:
            _ = record.application_body
        except RocketMQSpecError as exc:
            broken.append((record.physical_offset, exc.message))
    check.equal("records whose body does not decompress", [], broken)


@case("RMQ-CL-TRANSACTION-OFFSETS",
      "A committed transactional record points (PREPARED OFFSET) at its half message with the same UNIQ_KEY.")
def test_committed_transactions(scan: Scan[MessageRecord], by_offset: dict[int, MessageRecord],
                                check: Check) -> None:
    committed = [r for r in scan.records if r.transaction_type is TransactionType.COMMIT]
    check.note("committed records", len(committed))
    for record in committed:
        half = by_offset.get(record.prepared_transaction_offset)
        check.that(f"half message of the record at {record.physical_offset}",
                   half is not None and half.topic == TRANS_HALF_TOPIC and half.uniq_key == record.uniq_key,
                   expected=f"{TRANS_HALF_TOPIC} record with UNIQ_KEY {record.uniq_key}",
                   actual=None if half is None else (half.topic, half.uniq_key))


@case("RMQ-CQ-POSITION",
      "ConsumeQueue files share one size, a multiple of 20; each is named by its start offset, a multiple "
      "of that size, right after the previous file of its queue; a size other than 6000000 is a setting, "
      "reported as INFO.")
def test_consume_queue_files(store_dir: Path, check: Check) -> None:
    base = store_dir / CONSUMEQUEUE_DIR

    def named(path: Path) -> str:
        return str(path.relative_to(store_dir))

    check.equal("files not named by a 20-digit offset", [],
                [named(p) for p in sorted(base.glob("*/*/*")) if not is_offset_file_name(p.name)])
    queues = [segment_files(directory) for directory in sorted(base.glob("*/*"))]
    size = _one_size(check, "ConsumeQueue", (s.path for segments in queues for s in segments))
    if size is None:
        raise Info("the store has no ConsumeQueue file")
    check.that("file size is a positive multiple of the entry size", size > 0 and size % CQ_ENTRY_SIZE == 0,
               expected=f"k * {CQ_ENTRY_SIZE}, k > 0", actual=size)
    check.equal("files not starting at a multiple of the file size", [],
                [named(s.path) for segments in queues for s in segments if s.start % size])
    check.equal("files not starting where the previous file of their queue ends", [],
                [named(after.path) for segments in queues for before, after in itertools.pairwise(segments)
                 if after.start != before.start + size])
    _report_setting(check, "mappedFileSizeConsumeQueue", size, CQ_FILE_SIZE)


@case("RMQ-CQ-POINTS-AT-RECORD",
      "Each consume-queue entry points at a record of its topic, queue and queue offset, of its size (an "
      "entry pointing below the first CommitLog file points at a record retention deleted).")
def test_queue_entries_point_at_records(store: StoreDirectory, scan: Scan[MessageRecord],
                                        by_offset: dict[int, MessageRecord], check: Check) -> None:
    wrong, ahead = [], []
    # retention deletes CommitLog files first and consume-queue files only once all their entries point
    # below the CommitLog's start, so a queue's first file may begin with such entries (correctMinOffset)
    commitlog_start = store.commitlog.files[0].start if store.commitlog.files else 0
    for queue in _queues(store):
        for n in range(queue.min_offset, queue.max_offset):
            offset, size, _ = queue.entry(n)
            if offset < commitlog_start:
                continue
            record = by_offset.get(offset)
            if record is None and _past_end(store, scan, offset):
                ahead.append(offset)
                continue
            seen = None if record is None else (record.topic, record.queue_id, record.queue_offset,
                                                record.total_size)
            if seen != (queue.topic, queue.queue_id, n, size):
                wrong.append({"queue": f"{queue.topic}/{queue.queue_id}", "offset": n, "seen": seen})
    check.equal("entries not matching their record", [], wrong[:10])
    _ahead(store, check, "consume-queue", ahead)


def _past_end(store: StoreDirectory, scan: Scan[MessageRecord], offset: int) -> bool:
    """Whether ``offset`` lies past the CommitLog's data end (unknown, so False, when the scan failed)."""
    return scan.error is None and not store.commitlog.end.covers(offset)


def _ahead(store: StoreDirectory, check: Check, what: str, offsets: list[int]) -> None:
    """Entries past the data end: INFO in a running or killed broker's store, a FAIL in any other."""
    if not offsets:
        return
    _, text = ahead_notice(what, offsets)
    if store.crashed:
        raise Info(f"{text} [{RMQ_CQ_DISPATCH_LAG.id}]", actual=offsets[:10])
    check.equal(f"{what} entries past the CommitLog data end", [], offsets[:10])


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
def test_delay_tags_codes(store: StoreDirectory, scan: Scan[MessageRecord],
                          by_offset: dict[int, MessageRecord], check: Check) -> None:
    checked = 0
    for queue in _queues(store):
        if queue.topic != SCHEDULE_TOPIC:
            continue
        for n in range(queue.min_offset, queue.max_offset):
            offset, _, code = queue.entry(n)
            record = by_offset.get(offset)
            if record is None and _past_end(store, scan, offset):
                continue  # judged by RMQ-CQ-POINTS-AT-RECORD
            if record is None:
                raise Failure(f"{SCHEDULE_TOPIC}/{queue.queue_id}@{n} points at no record",
                              expected="a record", actual=offset)
            level = int(record.properties.get(PropertyKey.DELAY, "0"))
            expected = record.store_timestamp + delay_level_ms(level)
            check.equal(f"deliver time of {SCHEDULE_TOPIC}/{queue.queue_id}@{n}", expected, code)
            checked += 1
    check.note("delayed entries checked", checked)


@case("RMQ-CQ-END", "A queue's written entries are followed only by zero bytes: queues have no holes.")
def test_queue_has_no_holes(store_dir: Path, check: Check) -> None:
    holes = []
    for directory in sorted((store_dir / CONSUMEQUEUE_DIR).glob("*/*")):
        queue = ConsumeQueue.open(directory, directory.parent.name, int(directory.name))
        end = queue.max_offset * CQ_ENTRY_SIZE  # a byte position, as file names are
        for segment in segment_files(directory):
            if any(bytes(map_file(segment.path)[max(end - segment.start, 0):])):
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
def test_records_are_dispatched(store: StoreDirectory, fixed: Scan[FixedFields], check: Check) -> None:
    queued = {queue.entry(n)[0] for queue in _queues(store)
              for n in range(queue.min_offset, queue.max_offset)}
    missing = [r.physical_offset for r in fixed.records
               if _dispatched(r.sys_flag) and r.physical_offset not in queued]
    extra = [r.physical_offset for r in fixed.records
             if not _dispatched(r.sys_flag) and r.physical_offset in queued]
    check.equal("half or rolled-back records with an entry", [], extra)
    _lag_or_hole(store, check, "consume queues", "dispatchable records without an entry", missing,
                 [r.physical_offset for r in fixed.records if r.physical_offset in queued])


def _lag_or_hole(store: StoreDirectory, check: Check, what: str, failure: str, missing: list[int],
                 dispatched: list[int]) -> None:
    """Missing entries of a running or killed broker's last records are a dispatch lag (INFO); anything
    else missing is a FAIL of the case's clause."""
    if missing and store.crashed and is_dispatch_lag(missing, dispatched):
        _, text = lag_notice(what, missing)
        raise Info(f"{text} [{RMQ_CQ_DISPATCH_LAG.id}]", actual=missing[:10])
    check.equal(failure, [], missing[:10])


@case("RMQ-IDX-FILE-NAME", "Index files are named yyyyMMddHHmmssSSS.")
def test_index_file_names(store: StoreDirectory, store_dir: Path, check: Check) -> None:
    names = [p.name for p in (store_dir / "index").iterdir()] if (store_dir / "index").is_dir() else []
    check.equal("index files with another name", [], [n for n in names if not INDEX_NAME.fullmatch(n)])


def _fits_some_counts(size: int) -> bool:
    """Whether ``size`` is 40 + 4 * slots + 20 * entries for some slots, entries >= 1."""
    rest = size - HEADER_SIZE - SLOT_SIZE - ENTRY_SIZE
    return rest >= 0 and rest % SLOT_SIZE == 0


@case("RMQ-IDX-LAYOUT",
      "Index files share one size, 40 + 4 * slots + 20 * entries for the store's maxHashSlotNum and "
      "maxIndexNum (--index-sizes, else inferred from the size); other than 420000040 is a setting, INFO.")
def test_index_file_sizes(store: StoreDirectory, index_counts: tuple[int, int] | None, check: Check) -> None:
    size = _one_size(check, "index", store.index_files())
    if size is None:
        raise Info("the store has no index file")
    if index_counts is not None:
        slots, entries = index_counts
        check.equal(f"size for --index-sizes {slots},{entries}", file_size(slots, entries), size)
    else:
        check.that("size fits 40 + 4 * slots + 20 * entries", _fits_some_counts(size),
                   expected=f"{HEADER_SIZE} + {SLOT_SIZE} * slots + {ENTRY_SIZE} * entries", actual=size)
        try:
            slots, entries = index_sizes(size)
        except StoreError as exc:
            raise Info("the size fits slot and entry counts, but not in Java's default 1:4 ratio: give "
                       "--index-sizes SLOTS,ENTRIES to read the index files", actual=size) from exc
    _report_setting(check, "maxHashSlotNum,maxIndexNum", f"{slots},{entries}",
                    f"{DEFAULT_SLOT_COUNT},{DEFAULT_INDEX_COUNT}")


@case("RMQ-IDX-KEYS", "Every keyed record is found by an index lookup of each of its keys and its UNIQ_KEY, "
      "and of its TAGS string (indexType T) where the writer indexes tags (5.4.0+: seen from any tag found).")
def test_index_finds_every_key(index_files: IndexFiles, store: StoreDirectory, scan: Scan[MessageRecord],
                               check: Check) -> None:
    files = index_files.readable()
    if not files:
        raise Info("the store has no index file")
    newest_first = files[::-1]
    # No lookup returns more offsets than there are entries. Java's limit of 64 belongs to QUERY_MESSAGE,
    # not to the file: a key that many records share must still reach every one of them.
    limit = sum(max(index.header.index_count - FIRST_INDEX, 0) for index in files)
    found: dict[tuple[str, str, str | None], set[int]] = {}

    def reaches(record: MessageRecord, name: str, index_type: str | None) -> bool:
        query = (record.topic, name, index_type)
        if query not in found:
            found[query] = set(query_offsets(newest_first, record.topic, name, max_results=limit,
                                             index_type=index_type))
        return record.physical_offset in found[query]

    missing: dict[int, list[str]] = {}
    tags_missing: dict[int, str] = {}
    tags_found = 0
    indexed = []
    for record in scan.records:
        keys = index_keys(record, tags=False)
        for key in keys:
            if not reaches(record, key.split(KEY_SEPARATOR, 1)[1], None):
                missing.setdefault(record.physical_offset, []).append(key)
        tag_key = record_tag_key(record)
        if tag_key is not None and reaches(record, record.properties[PropertyKey.TAGS], INDEX_TAG_TYPE):
            tags_found += 1
        elif tag_key is not None:
            tags_missing[record.physical_offset] = tag_key
        if (keys or tag_key) and record.physical_offset not in missing:
            indexed.append(record.physical_offset)
    check.note("distinct keys looked up", len(found))
    check.note("tagged records found by their TAGS string (5.4.0+ indexes them)", tags_found)
    if tags_found:
        for offset, tag_key in tags_missing.items():
            missing.setdefault(offset, []).append(tag_key)
    if missing:
        check.note("keys whose lookup misses their record", [(o, k) for o, keys in missing.items()
                                                             for k in keys][:10])
    _lag_or_hole(store, check, "index", "records a lookup of their keys misses", sorted(missing),
                 [offset for offset in indexed if offset not in missing])


@case("RMQ-IDX-LOOKUP",
      "Every index entry points at a record indexed under a key of that hash (its TAGS string included, "
      "as 5.4.0+ indexes it), at its time difference (a "
      "file's first entry timed against the previous file's end, RMQ-IDX-TIME-DIFF).")
def test_index_entries_point_at_records(index_files: IndexFiles, store: StoreDirectory,
                                       scan: Scan[MessageRecord], by_offset: dict[int, MessageRecord],
                                       check: Check) -> None:
    wrong, ahead = [], []
    files = index_files.readable()
    complete = not store.commitlog.files or store.commitlog.files[0].start == 0
    for index, previous_end in zip(files, first_entry_bases(files, history_complete=complete), strict=True):
        for entry in index.entries():
            record = by_offset.get(entry.phy_offset)
            if record is None and _past_end(store, scan, entry.phy_offset):
                ahead.append(entry.phy_offset)
                continue
            if record is None:
                wrong.append((index.path.name, entry.index, entry.phy_offset))
                continue
            hashes = {index_key_hash(k) for k in index_keys(record, tags=True)}  # either release's keys
            base = time_base(entry.index, index.header.begin_timestamp, previous_end)
            diff = entry.time_diff if base is None else time_diff_seconds(record.store_timestamp, base)
            if entry.key_hash not in hashes or entry.time_diff != diff:
                wrong.append((index.path.name, entry.index, entry.phy_offset))
    check.equal("index entries not matching a record", [], wrong[:10])
    _ahead(store, check, "index", ahead)


@case("RMQ-IDX-PUT", "An index header counts its entries (from 1) and spans its first to last entry.")
def test_index_headers(index_files: IndexFiles, check: Check) -> None:
    for index in index_files.readable():
        name = index.path.name
        entries = list(index.entries())
        header = index.header
        check.equal(f"{name}: index_count", len(entries) + 1, header.index_count)
        if entries:
            check.equal(f"{name}: begin_phy_offset", entries[0].phy_offset, header.begin_phy_offset)
            check.equal(f"{name}: end_phy_offset", entries[-1].phy_offset, header.end_phy_offset)


@case("RMQ-CKPT-LAYOUT", "The checkpoint file is 4096 bytes.")
def test_checkpoint_size(store_dir: Path, check: Check) -> None:
    check.equal("checkpoint size", CHECKPOINT_FILE_SIZE, (store_dir / CHECKPOINT_FILE).stat().st_size)


@case("RMQ-BRK-CHECKPOINT", "The checkpoint is not ahead of the records the store holds (it may lag).")
def test_checkpoint_not_ahead(store: StoreDirectory, fixed: Scan[FixedFields], check: Check) -> None:
    if store.crashed:
        raise Info("the store was not shut down cleanly (abort file present)")
    if not fixed.records:
        raise Info("the store holds no record")
    newest = max(r.store_timestamp for r in fixed.records)
    point = store.checkpoint()
    for name, stamp in (("physic", point.physic_msg_timestamp), ("logics", point.logics_msg_timestamp)):
        check.that(f"{name} timestamp", stamp <= newest, expected=f"<= {newest}", actual=stamp)
        check.note(f"{name} timestamp behind the newest record (ms)", newest - stamp)


@table("name", [Row(name.removesuffix(".json"), "RMQ-STORE-CONFIG-JSON",
                    f"config/{name}, when present, is fastjson JSON a reader can load.", name)
                for name in CONFIG_FILES])
def test_config_files_load(name: str, store_dir: Path, check: Check) -> None:
    if not (store_dir / CONFIG_DIR / name).exists():
        raise Info(f"config/{name} is absent")
    check.note("top-level keys", sorted(_parsed(store_dir / CONFIG_DIR / name)))


@case("RMQ-STORE-CONFIG-BAK", "Every config .bak file holds loadable JSON.")
def test_config_backups_load(store_dir: Path, check: Check) -> None:
    for path in sorted((store_dir / CONFIG_DIR).glob("*.json.bak")):
        check.note(path.name, sorted(_parsed(path)))


def _parsed(path: Path) -> dict[str, object]:
    """The file's own content as fastjson reads it: not its backup's, which a reader would fall back to
    (Java writes through a temporary file and a rename, so a file it wrote always parses)."""
    try:
        content = fastjson_loads(path.read_bytes())
    except (RocketMQSpecError, ValueError) as exc:
        raise Failure(f"{path.name} does not parse", expected="fastjson JSON", actual=str(exc)) from None
    if not isinstance(content, dict):
        raise Failure(f"{path.name} is not a JSON object", expected="an object",
                      actual=type(content).__name__)
    return content


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
