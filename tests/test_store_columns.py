"""The column-wise record reader equals ``decode_record`` field for field on generated records laid out
back to back, IPv4 and IPv6 hosts, v1 and v2 magic, any text, and broken TOTALSIZE values."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from rocketmq_spec.codec.store.columns import (
    host_texts,
    index_key_hashes,
    java_string_hashes,
    offset_msg_ids,
    record_columns,
    slices,
)
from rocketmq_spec.codec.store.record import MessageRecord, decode_record, make_record
from rocketmq_spec.fuzz.profiles import fuzz_settings
from rocketmq_spec.fuzz.strategies.commitlog import records
from rocketmq_spec.spec.commitlog import topic_length_size
from rocketmq_spec.spec.errors import StoreError
from rocketmq_spec.spec.hashing import index_key_hash, java_string_hash
from rocketmq_spec.spec.properties import NAME_VALUE_SEPARATOR, PROPERTY_SEPARATOR

RAW_PROPERTIES = st.text(st.sampled_from(f"ab=é€😀 {NAME_VALUE_SEPARATOR}{PROPERTY_SEPARATOR}"), max_size=40)
"""Properties strings as stored, malformed pairs and duplicates included: the reader keeps the text."""
PROPERTIES_LENGTH_SIZE = 2


@st.composite
def any_text_records(draw: st.DrawFn) -> MessageRecord:
    """A generated record with its topic and properties string replaced by arbitrary text."""
    base = draw(records())
    return make_record(
        topic=draw(st.one_of(st.just(base.topic), st.text(min_size=1, max_size=50))),
        body=base.body, properties=draw(st.one_of(st.just(base.properties_text), RAW_PROPERTIES)),
        queue_id=base.queue_id, queue_offset=base.queue_offset, physical_offset=base.physical_offset,
        born_timestamp=base.born_timestamp, born_host=base.born_host, store_timestamp=base.store_timestamp,
        store_host=base.store_host, sys_flag=base.sys_flag, flag=base.flag,
        reconsume_times=base.reconsume_times, prepared_transaction_offset=base.prepared_transaction_offset)


def text_values(parts: tuple[np.ndarray, bytes]) -> list[bytes]:
    offsets, data = parts
    return [data[a:b] for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True)]


@fuzz_settings()
@given(st.lists(any_text_records(), min_size=1, max_size=6), st.integers(0, 9))
def test_columns_equal_the_record_decoder(generated: list[MessageRecord], lead: int) -> None:
    encoded = [r.encode() for r in generated]
    starts = np.cumsum([lead] + [len(e) for e in encoded])[:-1]
    buffer = b"\xee" * lead + b"".join(encoded)
    decoded = [decode_record(buffer, int(start), verify_crc=False) for start in starts]
    columns = record_columns(buffer, starts)
    assert columns.sound.all() and columns.first_unsound() == len(decoded)
    for name in ("total_size", "magic", "body_crc", "queue_id", "flag", "queue_offset", "physical_offset",
                 "sys_flag", "born_timestamp", "store_timestamp", "reconsume_times",
                 "prepared_transaction_offset"):
        assert getattr(columns, name).tolist() == [getattr(r, name) for r in decoded], name
    assert text_values(slices(buffer, columns.body_at, columns.body_length)) == [r.body for r in decoded]
    assert [v.decode() for v in text_values(slices(buffer, columns.topic_at, columns.topic_length))] == [
        r.topic for r in decoded]
    properties = text_values(slices(buffer, columns.properties_at, columns.properties_length))
    assert [v.decode() for v in properties] == [r.properties_text for r in decoded]
    for rows, v6, attribute in ((columns.born_host, columns.born_v6, "born_host"),
                                (columns.store_host, columns.store_v6, "store_host")):
        texts, at = host_texts(rows, v6)
        assert [texts[n] for n in at] == [str(getattr(r, attribute)) for r in decoded]
    ids = offset_msg_ids(columns.store_host, columns.store_v6, columns.physical_offset)
    assert [v.decode() for v in text_values(ids)] == [r.offset_msg_id for r in decoded]


@fuzz_settings()
@given(any_text_records(), st.integers(-200, 200))
def test_a_record_is_sound_exactly_when_the_decoder_accepts_its_total_size(record: MessageRecord,
                                                                           change: int) -> None:
    """TOTALSIZE moved anywhere the walk accepts (the fixed fields still fit, the record still fits the
    buffer): the columns vouch for the record exactly when ``decode_record`` decodes it."""
    encoded = record.encode()
    buffer = bytearray(encoded + b"\x07" * 200)
    size = len(encoded) + change
    fixed_part = len(encoded) - len(record.body) - len(record.topic.encode()) - len(
        record.properties_text.encode()) - PROPERTIES_LENGTH_SIZE - topic_length_size(record.magic)
    if not fixed_part <= size <= len(buffer):
        return
    buffer[:4] = size.to_bytes(4, "big", signed=True)
    try:
        decode_record(bytes(buffer), 0, verify_crc=False)
        accepted = True
    except StoreError:
        accepted = False
    assert bool(record_columns(bytes(buffer), np.array([0])).sound[0]) == accepted


@fuzz_settings()
@given(st.lists(st.text(max_size=80)))
def test_batch_hashes_equal_the_java_hash(texts: list[str]) -> None:
    assert java_string_hashes(texts).tolist() == [java_string_hash(t) for t in texts]
    assert index_key_hashes(texts).tolist() == [index_key_hash(t) for t in texts]


def test_hash_edge_values() -> None:
    """Long ASCII text wraps many times; ``polygenelubricants`` hashes to Integer.MIN_VALUE, whose index
    hash is 0."""
    texts = ["", "a" * 5000, "polygenelubricants", "GydZG_"]
    assert java_string_hashes(texts).tolist() == [java_string_hash(t) for t in texts]
    assert index_key_hashes(texts).tolist() == [0, abs(java_string_hash("a" * 5000)), 0, 0]
