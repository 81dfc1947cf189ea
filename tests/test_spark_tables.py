"""Column-wise message batches equal the row-wise ones (``message_row`` over ``decode_record``) on
generated records, and end before the first record only the record decoder can judge."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from rocketmq_spec.codec.store.record import HostPort, MessageRecord, decode_record, make_record
from rocketmq_spec.fuzz.profiles import fuzz_settings
from rocketmq_spec.spark.tables import MESSAGE_SCHEMA, body_reader, message_batch, message_row
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
