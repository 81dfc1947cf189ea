"""Properties of the CommitLog record codec: round trips, the fast path against the schema, hostile bytes."""

from __future__ import annotations

import contextlib
import random

from hypothesis import given
from hypothesis import strategies as st

from rocketmq_spec.codec.store.record import MessageRecord, decode_record
from rocketmq_spec.fuzz.mutators import bit_flip
from rocketmq_spec.fuzz.profiles import fuzz_settings
from rocketmq_spec.fuzz.strategies.commitlog import records
from rocketmq_spec.fuzz.strategies.properties import property_maps
from rocketmq_spec.spec.commitlog import CommitLogRecord
from rocketmq_spec.spec.errors import RocketMQSpecError
from rocketmq_spec.spec.properties import encode_properties, parse_properties

_SAME_NAMES = ("total_size", "magic", "body_crc", "queue_id", "flag", "queue_offset", "physical_offset",
               "sys_flag", "born_timestamp", "store_timestamp", "reconsume_times",
               "prepared_transaction_offset", "body", "topic")
"""Fields the fast decoder and the construct schema both name the same way."""


@fuzz_settings()
@given(records())
def test_record_encode_then_decode_is_identity(record: MessageRecord) -> None:
    assert decode_record(record.encode()) == record


@fuzz_settings()
@given(records().map(MessageRecord.encode))
def test_record_decode_then_encode_is_identity_on_canonical_bytes(data: bytes) -> None:
    assert decode_record(data).encode() == data


@fuzz_settings()
@given(records())
def test_record_fast_path_equals_the_schema(record: MessageRecord) -> None:
    data = record.encode()
    parsed = CommitLogRecord.parse(data)
    assert CommitLogRecord.build(parsed) == data
    fast = decode_record(data)
    assert {name: getattr(fast, name) for name in _SAME_NAMES} == {name: parsed[name] for name in _SAME_NAMES}
    assert (fast.born_host.port, fast.store_host.port, fast.properties_text) == (
        parsed.born_host.port, parsed.store_host.port, parsed.properties)


@fuzz_settings()
@given(property_maps())
def test_property_maps_survive_the_properties_string(properties: dict[str, str]) -> None:
    assert parse_properties(encode_properties(properties)) == properties


@fuzz_settings()
@given(records().map(MessageRecord.encode), st.randoms(use_true_random=False))
def test_corrupted_records_raise_only_typed_errors(data: bytes, rng: random.Random) -> None:
    with contextlib.suppress(RocketMQSpecError):
        decode_record(bit_flip(rng, data))


@fuzz_settings()
@given(st.binary(max_size=512), st.integers(0, 64))
def test_arbitrary_bytes_raise_only_typed_errors(data: bytes, position: int) -> None:
    with contextlib.suppress(RocketMQSpecError):
        decode_record(data, min(position, len(data)))
