"""Column-wise message batches equal the row-wise ones (``message_row`` over ``decode_record``) on
generated records, and end before the first record only the record decoder can judge."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketmq_spec.codec.hotpath import load_compiled
from rocketmq_spec.codec.store.record import HostPort, MessageRecord, decode_record, make_record
from rocketmq_spec.fuzz.profiles import fuzz_settings
from rocketmq_spec.spark.tables import (
    MESSAGE_SCHEMA,
    _leading_texts,
    body_reader,
    message_batch,
    message_row,
)
from rocketmq_spec.spec.commitlog import BODY_CRC_POSITION
from rocketmq_spec.spec.errors import RocketMQSpecError
from rocketmq_spec.spec.sysflag import MessageSysFlag
from tests.test_store_columns import any_text_records


def laid_out(generated: list[MessageRecord]) -> tuple[bytes, np.ndarray]:
    encoded = [r.encode() for r in generated]
    return b"".join(encoded), np.cumsum([0] + [len(e) for e in encoded])[:-1]


def row_batch(buffer: bytes, starts: np.ndarray, *, decompress: bool) -> pa.RecordBatch:
    body = body_reader(decompress)
    rows = [message_row(decode_record(buffer, int(s), verify_crc=False), body) for s in starts]
    return pa.RecordBatch.from_pylist(rows, schema=MESSAGE_SCHEMA)


@fuzz_settings()
@given(st.lists(any_text_records(), min_size=1, max_size=6), st.sets(st.integers(0, 5)))
def test_columns_equal_rows(generated: list[MessageRecord], bad_crc: set[int]) -> None:
    buffer, starts = laid_out(generated)
    corrupted = bytearray(buffer)
    for n in bad_crc & set(range(len(starts))):
        corrupted[starts[n] + BODY_CRC_POSITION] ^= 1
    buffer = bytes(corrupted)
    batch, count = message_batch(buffer, starts, decompress=False)
    assert count == len(starts)
    assert batch.to_pylist() == row_batch(buffer, starts, decompress=False).to_pylist()
    assert batch.equals(row_batch(buffer, starts, decompress=False))


@fuzz_settings()
@given(st.lists(any_text_records(), min_size=1, max_size=4))
def test_decompressed_batches_stop_before_a_body_that_does_not_decompress(
        generated: list[MessageRecord]) -> None:
    buffer, starts = laid_out(generated)
    good = 0
    for start in starts:
        try:
            _ = decode_record(buffer, int(start), verify_crc=False).application_body
        except RocketMQSpecError:
            break
        good += 1
    batch, count = message_batch(buffer, starts, decompress=True)
    assert count == good
    assert batch.to_pylist() == row_batch(buffer, starts[:good], decompress=True).to_pylist()
    assert any(r.sys_flag & MessageSysFlag.COMPRESSED for r in generated) or good == len(starts)


def test_a_record_with_a_wrong_total_size_ends_the_batch() -> None:
    record = make_record(topic="T", body=b"body", properties="KEYS\x01k\x02", queue_id=0, queue_offset=0,
                         physical_offset=0, born_timestamp=1, born_host=HostPort("10.0.0.1", 1),
                         store_timestamp=2, store_host=HostPort("10.0.0.2", 2))
    buffer, starts = laid_out([record, record, record])
    broken = bytearray(buffer + b"\0")
    broken[starts[1]:starts[1] + 4] = (record.total_size + 1).to_bytes(4, "big")
    batch, count = message_batch(bytes(broken), starts[:2], decompress=False)
    assert count == 1 and batch.num_rows == 1


COMPILED = load_compiled()


@pytest.mark.skipif(COMPILED is None, reason="rocketmq_spec.codec._hotpath is not built (no C compiler)")
@fuzz_settings()
@given(st.binary(max_size=64), st.lists(st.tuples(st.integers(-2, 70), st.integers(-2, 70)), max_size=8))
def test_the_compiled_text_check_equals_the_pure_one(buffer: bytes,
                                                     ranges: list[tuple[int, int]]) -> None:
    assert COMPILED is not None
    at = np.array([a for a, _ in ranges], dtype=np.int64)
    lengths = np.array([n for _, n in ranges], dtype=np.int64)
    answer = COMPILED.leading_texts(buffer, at, lengths)
    inside = ((at >= 0) & (lengths >= 0) & (at + lengths <= len(buffer))).all()
    assert (answer is None) == (not inside)
    if inside:
        assert answer == _leading_texts(buffer, at, lengths)


@fuzz_settings()
@given(st.lists(any_text_records(), min_size=1, max_size=6), st.integers(0, 5), st.sampled_from(
    ["topic", "properties"]), st.binary(min_size=1, max_size=3))
def test_a_batch_covers_the_same_records_whatever_columns_it_builds(
        generated: list[MessageRecord], victim: int, part: str, junk: bytes) -> None:
    buffer, starts = laid_out(generated)
    victim %= len(starts)
    record = decode_record(buffer, int(starts[victim]), verify_crc=False)
    properties = len(record.properties_text.encode())
    end = int(starts[victim]) + record.total_size
    broken = bytearray(buffer)
    if part == "properties" and properties:  # an invalid UTF-8 byte in place of the text's last byte
        broken[end - 1] = 0xFF if junk[0] & 1 else 0xC0
    elif part == "topic" and record.topic:
        broken[end - properties - 2 - 1] = 0xFF if junk[0] & 1 else 0xC0
    buffer = bytes(broken)
    _, every = message_batch(buffer, starts, decompress=False)
    _, few = message_batch(buffer, starts, decompress=False, columns=["total_size"])
    assert few == every
    assert every == len(starts) or every <= victim
