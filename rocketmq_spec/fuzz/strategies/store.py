"""Whole small store directories, written through the codec's writers as a broker lays them out.

A plan is drawn first (messages, queue start offsets, file sizes) and :func:`write_store` turns it into
files: CommitLog files of a few hundred bytes, so records roll over with BLANK markers; consume queues,
starting past offset 0 with pre-blank fillers when the plan says so; one index file; the checkpoint; and
the config JSON files. A *conformant* plan keeps the full-size consume-queue and index files (sparse) that
``rmq-conformance store`` insists on; otherwise they are tiny too, to reach their file boundaries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import strategies as st

from rocketmq_spec.codec.store import (
    CheckpointData,
    HostPort,
    IndexFile,
    MessageRecord,
    encode_blank,
    encode_entry,
    make_record,
    save_config,
    write_checkpoint,
)
from rocketmq_spec.codec.store.configs import TOPIC_TABLE, consumer_offsets_to_json, table_to_json
from rocketmq_spec.fuzz.strategies.commitlog import hosts
from rocketmq_spec.fuzz.strategies.indexfile import colliding_keys
from rocketmq_spec.fuzz.strategies.primitives import bodies, names
from rocketmq_spec.spec.commitlog import END_FILE_MIN_BLANK_LENGTH, offset_file_name
from rocketmq_spec.spec.consumequeue import CQ_ENTRY_SIZE, CQ_FILE_SIZE
from rocketmq_spec.spec.hashing import tags_code
from rocketmq_spec.spec.indexfile import DEFAULT_INDEX_COUNT, DEFAULT_SLOT_COUNT
from rocketmq_spec.spec.properties import PropertyKey
from rocketmq_spec.spec.store_layout import (
    CHECKPOINT_FILE,
    COMMITLOG_DIR,
    CONFIG_DIR,
    CONSUMEQUEUE_DIR,
    INDEX_DIR,
)

MAX_MESSAGES = 8
SMALL_BODY = 48
COMMITLOG_FILE_SIZES = (320, 1024)
"""Bytes of a small CommitLog file: above the largest record a plan draws, low enough to roll over."""
SMALL_INDEX = (9, 36)
"""(slots, entries) of a small index file: Java's 1:4 ratio (so readers infer it), room for every key of
MAX_MESSAGES records (UNIQ_KEY, two KEYS, the tag) past the unused entry 0."""
INDEX_FILE_NAME = "20240101000000000"
FIRST_STORE_TIME = 1_700_000_000_000
QUEUE_IDS = 2
PERM_READ_WRITE = 6


@dataclass(frozen=True)
class Message:
    topic: str
    queue_id: int
    body: bytes
    tags: str | None
    keys: tuple[str, ...]
    born_host: HostPort
    store_host: HostPort


@dataclass(frozen=True)
class StorePlan:
    messages: tuple[Message, ...]
    queue_starts: dict[tuple[str, int], int]
    """First queue offset of each queue; entries before it are pre-blank fillers."""
    commitlog_file_size: int
    cq_file_size: int
    index_sizes: tuple[int, int]
    group: str
    tag_index: bool = False
    """Index the TAGS string too, as 5.4.0+ does (release rule index-tag-key)."""


@dataclass
class WrittenStore:
    """What :func:`write_store` put where, for properties to compare the readers with."""

    records: list[MessageRecord] = field(default_factory=list)
    queues: dict[tuple[str, int], list[tuple[int, int, int]]] = field(default_factory=dict)
    """(topic, queue id) -> every entry from the queue's first file start, pre-blank fillers included."""
    queue_firsts: dict[tuple[str, int], int] = field(default_factory=dict)
    """(topic, queue id) -> queue offset of the first entry of its first file."""
    commitlog_files: list[str] = field(default_factory=list)
    consumer_offsets: dict[tuple[str, str], dict[int, int]] = field(default_factory=dict)
    checkpoint: CheckpointData | None = None


@st.composite
def messages(draw: st.DrawFn, topics: list[str]) -> Message:
    keys = draw(st.lists(st.one_of(colliding_keys(), names(max_size=6)), max_size=2, unique=True))
    return Message(topic=draw(st.sampled_from(topics)), queue_id=draw(st.integers(0, QUEUE_IDS - 1)),
                   body=draw(bodies(max_size=SMALL_BODY)), tags=draw(st.none() | names(max_size=6)),
                   keys=tuple(keys), born_host=draw(hosts()), store_host=draw(hosts()))


@st.composite
def store_plans(draw: st.DrawFn, *, conformant: bool = False) -> StorePlan:
    topics = draw(st.lists(names(max_size=8), min_size=1, max_size=2, unique=True))
    plan_messages = tuple(draw(st.lists(messages(topics), min_size=1, max_size=MAX_MESSAGES)))
    queues = sorted({(m.topic, m.queue_id) for m in plan_messages})
    starts = {queue: draw(st.integers(0, 5)) for queue in queues}
    if conformant:
        return StorePlan(plan_messages, starts, draw(st.sampled_from(COMMITLOG_FILE_SIZES)), CQ_FILE_SIZE,
                         (DEFAULT_SLOT_COUNT, DEFAULT_INDEX_COUNT), draw(names(max_size=6)),
                         draw(st.booleans()))
    return StorePlan(plan_messages, starts, draw(st.sampled_from(COMMITLOG_FILE_SIZES)),
                     CQ_ENTRY_SIZE * draw(st.integers(1, 4)), SMALL_INDEX, draw(names(max_size=6)),
                     draw(st.booleans()))


def _properties(message: Message, number: int) -> dict[str, str]:
    properties = {PropertyKey.UNIQ_KEY: f"U{number:08X}"}
    if message.tags:
        properties[PropertyKey.TAGS] = message.tags
    if message.keys:
        properties[PropertyKey.KEYS] = " ".join(message.keys)
    return properties


def _write_segments(directory: Path, data: bytes, file_size: int, start: int = 0) -> list[str]:
    """``data`` (beginning at absolute ``start``, a multiple of ``file_size``) cut into zero-padded files."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for at in range(0, max(len(data), 1), file_size):
        name = offset_file_name(start + at)
        chunk = data[at:at + file_size]
        with (directory / name).open("wb") as handle:
            handle.write(chunk)
            handle.truncate(file_size)
        written.append(name)
    return written


def _write_commitlog(root: Path, plan: StorePlan, written: WrittenStore) -> None:
    """Append records as the broker does: a record that would leave less than a BLANK marker's room
    ends the file with a BLANK marker, and goes first into the next file."""
    data = bytearray()
    next_queue_offset = dict(plan.queue_starts)
    for number, message in enumerate(plan.messages):
        queue = (message.topic, message.queue_id)
        fields = dict(topic=message.topic, body=message.body, properties=_properties(message, number),
                      queue_id=message.queue_id, queue_offset=next_queue_offset[queue],
                      born_timestamp=FIRST_STORE_TIME + number, born_host=message.born_host,
                      store_timestamp=FIRST_STORE_TIME + 1000 * number, store_host=message.store_host)
        size = make_record(physical_offset=0, **fields).total_size  # type: ignore[arg-type]
        room = plan.commitlog_file_size - len(data) % plan.commitlog_file_size
        if size + END_FILE_MIN_BLANK_LENGTH > room:
            data += encode_blank(room) + bytes(room - END_FILE_MIN_BLANK_LENGTH)
        record = make_record(physical_offset=len(data), **fields)  # type: ignore[arg-type]
        data += record.encode()
        next_queue_offset[queue] += 1
        written.records.append(record)
    written.commitlog_files = _write_segments(root / COMMITLOG_DIR, bytes(data), plan.commitlog_file_size)


def _write_queues(root: Path, plan: StorePlan, written: WrittenStore) -> None:
    per_file = plan.cq_file_size // CQ_ENTRY_SIZE
    for queue, start in plan.queue_starts.items():
        first = start - start % per_file
        entries = [(0, 0x7FFFFFFF, 0)] * (start - first) + [
            (r.physical_offset, r.total_size, tags_code(r.properties.get(PropertyKey.TAGS)))
            for r in written.records if (r.topic, r.queue_id) == queue]
        written.queues[queue] = entries
        written.queue_firsts[queue] = first
        data = b"".join(encode_entry(*entry) for entry in entries)
        _write_segments(root / CONSUMEQUEUE_DIR / queue[0] / str(queue[1]), data, plan.cq_file_size,
                        first * CQ_ENTRY_SIZE)


def _write_index(root: Path, plan: StorePlan, written: WrittenStore) -> None:
    (root / INDEX_DIR).mkdir()
    slots, entries = plan.index_sizes
    with IndexFile.create(root / INDEX_DIR / INDEX_FILE_NAME, slot_count=slots, index_count=entries) as index:
        assert all(index.put_record(record, tags=plan.tag_index) for record in written.records), \
            "the index file is too small"
        index.flush()


def _write_configs(root: Path, plan: StorePlan, written: WrittenStore) -> None:
    (root / CONFIG_DIR).mkdir()
    topics = {topic: {"order": False, "perm": PERM_READ_WRITE, "readQueueNums": QUEUE_IDS,
                      "topicFilterType": "SINGLE_TAG", "topicName": topic, "topicSysFlag": 0,
                      "writeQueueNums": QUEUE_IDS} for topic in sorted({t for t, _ in plan.queue_starts})}
    save_config(root / CONFIG_DIR / "topics.json", table_to_json(topics, TOPIC_TABLE, 1, FIRST_STORE_TIME))
    offsets: dict[tuple[str, str], dict[int, int]] = {}
    for (topic, queue_id), entries in written.queues.items():
        offsets.setdefault((topic, plan.group), {})[queue_id] = written.queue_firsts[(topic, queue_id)] + len(
            entries)
    # Saved twice, so that the first content is kept as the .bak file a reader falls back to.
    for table in ({}, offsets):
        save_config(root / CONFIG_DIR / "consumerOffset.json", consumer_offsets_to_json(table))
    written.consumer_offsets = offsets


def write_store(root: Path, plan: StorePlan) -> WrittenStore:
    """Lay ``plan`` out under ``root`` (created) and say what went where."""
    root.mkdir(parents=True, exist_ok=True)
    written = WrittenStore()
    _write_commitlog(root, plan, written)
    _write_queues(root, plan, written)
    _write_index(root, plan, written)
    _write_configs(root, plan, written)
    last = written.records[-1].store_timestamp
    written.checkpoint = CheckpointData(last, last, last)
    write_checkpoint(root / CHECKPOINT_FILE, written.checkpoint)
    return written


def store_files(root: Path) -> list[Path]:
    """Every file of a written store, in a stable order (for mutation)."""
    return sorted(path for path in root.rglob("*") if path.is_file())

