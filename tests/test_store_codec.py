"""Store codec behaviour the golden store does not exercise: BLANK roll-over, corruption, IPv6, v2, limits."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketmq_spec.codec.store import (
    CheckpointData,
    CommitLog,
    ConsumeQueue,
    HostPort,
    IndexFile,
    decode_record,
    encode_blank,
    encode_checkpoint,
    encode_entry,
    make_record,
    read_checkpoint,
    write_checkpoint,
)
from rocketmq_spec.codec.store.consumequeue import PRE_BLANK_ENTRY, entry_location
from rocketmq_spec.spec.commitlog import MESSAGE_MAGIC_V2, offset_file_name
from rocketmq_spec.spec.errors import SpecViolation, StoreError
from rocketmq_spec.spec.indexfile import index_key

FILE_SIZE = 1024
HOST = HostPort("127.0.0.1", 10911)


def _record(offset: int, topic: str = "T", body: bytes = b"x" * 100, **extra: object) -> bytes:
    fields: dict[str, object] = dict(
        topic=topic,
        body=body,
        properties={"UNIQ_KEY": f"U{offset}", "KEYS": "a b"},
        queue_id=0,
        queue_offset=offset,
        physical_offset=offset,
        born_timestamp=1,
        born_host=HOST,
        store_timestamp=1_000_000 + offset,
        store_host=HOST,
    )
    fields.update(extra)
    return make_record(**fields).encode()  # type: ignore[arg-type]


def _write_commitlog(directory: Path) -> list[int]:
    """Two 1 KiB files: records until one no longer fits, a BLANK marker, then the rest in file two."""
    directory.mkdir()
    offsets, data, pos = [], bytearray(), 0
    while True:
        size = len(_record(pos))
        if pos + size + 8 > FILE_SIZE:
            data += encode_blank(FILE_SIZE - pos) + bytes(FILE_SIZE - pos - 8)
            break
        data += _record(pos)
        offsets.append(pos)
        pos += size
    (directory / offset_file_name(0)).write_bytes(bytes(data))
    second = _record(FILE_SIZE)
    (directory / offset_file_name(FILE_SIZE)).write_bytes(second + bytes(FILE_SIZE - len(second)))
    return [*offsets, FILE_SIZE]


def test_iteration_skips_to_the_next_file_at_a_blank(tmp_path: Path) -> None:
    offsets = _write_commitlog(tmp_path / "cl")
    with CommitLog(tmp_path / "cl") as log:
        assert [r.physical_offset for r in log.records()] == offsets
        assert log.read(FILE_SIZE).queue_offset == FILE_SIZE
        assert [r.physical_offset for r in log.records(start=FILE_SIZE)] == [FILE_SIZE]


@pytest.mark.parametrize(
    ("flip", "message"),
    [(4, "not a message record"), (8, "BODYCRC"), (0, "TOTALSIZE"), (30, "PHYSICALOFFSET")],
)
def test_corruption_is_reported_at_the_record(tmp_path: Path, flip: int, message: str) -> None:
    offsets = _write_commitlog(tmp_path / "cl")
    path = tmp_path / "cl" / offset_file_name(0)
    data = bytearray(path.read_bytes())
    data[offsets[1] + flip + 3] ^= 0x01
    path.write_bytes(bytes(data))
    with CommitLog(tmp_path / "cl") as log, pytest.raises(StoreError, match=message) as error:
        list(log.records())
    assert error.value.offset == offsets[1]


def test_zeros_before_the_last_file_are_an_error(tmp_path: Path) -> None:
    _write_commitlog(tmp_path / "cl")
    (tmp_path / "cl" / offset_file_name(0)).write_bytes(bytes(FILE_SIZE))
    with CommitLog(tmp_path / "cl") as log, pytest.raises(StoreError, match="BLANK") as error:
        list(log.records())
    assert error.value.offset == 0


def test_ipv6_hosts_and_v2_magic_round_trip() -> None:
    host6 = HostPort("::1", 9103)
    raw = _record(0, topic="t" * 200, born_host=host6, store_host=host6)
    record = decode_record(raw)
    assert record.magic == MESSAGE_MAGIC_V2
    assert record.sys_flag & 0x30 == 0x30
    assert (record.born_host, record.store_host) == (host6, host6)
    assert len(record.offset_msg_id) == 56
    assert record.encode() == raw


def test_limits_are_enforced() -> None:
    with pytest.raises(SpecViolation):
        _record(0, properties="p" * 40000)
    with pytest.raises(SpecViolation):
        _record(0, topic="t" * 200, magic=0xDAA320A7)


def test_truncated_record_is_an_error() -> None:
    raw = _record(0)
    with pytest.raises(StoreError, match="TOTALSIZE"):
        decode_record(raw[:-1])


def test_consume_queue_reader(tmp_path: Path) -> None:
    directory = tmp_path / "T" / "0"
    directory.mkdir(parents=True)
    name, pos = entry_location(3)
    assert (name, pos) == (offset_file_name(0), 60)
    data = PRE_BLANK_ENTRY * 2 + encode_entry(100, 50, 7) + encode_entry(150, 60, -1)
    (directory / name).write_bytes(data + bytes(200))
    queue = ConsumeQueue.open(directory, "T", 0)
    assert (queue.min_offset, queue.max_offset) == (2, 4)
    assert queue.entry(3) == (150, 60, -1)
    with pytest.raises(StoreError):
        queue.entry(4)


def test_index_writer_and_lookup(tmp_path: Path) -> None:
    with IndexFile.create(tmp_path / "idx", slot_count=4, index_count=6) as index:
        assert index.put(index_key("T", "k"), 10, 1_000)
        assert index.put(index_key("T", "other"), 20, 3_000)
        assert index.put(index_key("T", "k"), 30, 5_000)
        assert index.lookup(index_key("T", "k")) == [30, 10]
        assert index.lookup(index_key("T", "k"), begin=2_000) == [30]
        assert index.lookup(index_key("T", "k"), max_results=1) == [30]
        assert index.lookup(index_key("T", "missing")) == []
        assert index.put("a", 1, 1) and index.put("b", 2, 2)
        assert index.is_full and not index.put("c", 3, 3)
    with IndexFile(tmp_path / "idx", slot_count=4, index_count=6) as reread:
        assert reread.header.index_count == 6
        assert reread.header.begin_phy_offset == 10
        assert [e.phy_offset for e in reread.entries()] == [10, 20, 30, 1, 2]
    with pytest.raises(StoreError):
        IndexFile(tmp_path / "idx")


def test_checkpoint_round_trip(tmp_path: Path) -> None:
    checkpoint = CheckpointData(0xAABB, 0xCCDD, 5)
    assert len(encode_checkpoint(checkpoint)) == 4096
    write_checkpoint(tmp_path / "checkpoint", checkpoint)
    assert read_checkpoint(tmp_path / "checkpoint") == checkpoint
    assert checkpoint.min_timestamp == 0xAABB - 3000
