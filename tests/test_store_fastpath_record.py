"""The struct record encoder and decoder equal ``CommitLogRecord`` build and parse, refusals included."""

from __future__ import annotations

import construct
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketmq_spec.codec.fast_store import RECORD_PREFIX, offset_msg_id, pack_record, packed_ip, record_length
from rocketmq_spec.codec.store import HostPort, decode_record, encode_blank, make_record
from rocketmq_spec.spec.commitlog import (
    MESSAGE_MAGIC_V1,
    MESSAGE_MAGIC_V2,
    BlankMarker,
    CommitLogRecord,
    RecordPrefix,
)
from rocketmq_spec.spec.commitlog import record_length as schema_record_length
from rocketmq_spec.spec.errors import SpecViolation, StoreError
from rocketmq_spec.spec.message_id import encode_offset_msg_id

int32 = st.integers(-(2**31), 2**31 - 1)
int64 = st.integers(-(2**63), 2**63 - 1)
hosts = st.builds(lambda ip, port: HostPort(str(ip), port), st.ip_addresses(), int32)
magics = st.sampled_from([MESSAGE_MAGIC_V1, MESSAGE_MAGIC_V2])


@st.composite
def records(draw: st.DrawFn) -> dict[str, object]:
    """make_record arguments over every sysFlag, both versions and both address families."""
    magic = draw(magics)
    topic_limit = 127 if magic == MESSAGE_MAGIC_V1 else 300
    return {
        "topic": draw(st.text(min_size=1, max_size=topic_limit).filter(
            lambda t: len(t.encode()) <= topic_limit)),
        "body": draw(st.binary(max_size=300)), "properties": draw(st.text(max_size=60)),
        "queue_id": draw(int32), "flag": draw(int32), "queue_offset": draw(int64),
        "physical_offset": draw(int64), "sys_flag": draw(int32), "born_timestamp": draw(int64),
        "born_host": draw(hosts), "store_timestamp": draw(int64), "store_host": draw(hosts),
        "reconsume_times": draw(int32), "prepared_transaction_offset": draw(int64), "magic": magic,
    }


def _schema_bytes(fields: dict[str, object]) -> bytes:
    record = make_record(**fields)  # type: ignore[arg-type]
    return CommitLogRecord.build({
        "total_size": record.total_size, "magic": record.magic, "body_crc": record.body_crc,
        "queue_id": record.queue_id, "flag": record.flag, "queue_offset": record.queue_offset,
        "physical_offset": record.physical_offset, "sys_flag": record.sys_flag,
        "born_timestamp": record.born_timestamp,
        "born_host": {"ip": packed_ip(record.born_host.ip), "port": record.born_host.port},
        "store_timestamp": record.store_timestamp,
        "store_host": {"ip": packed_ip(record.store_host.ip), "port": record.store_host.port},
        "reconsume_times": record.reconsume_times,
        "prepared_transaction_offset": record.prepared_transaction_offset,
        "body": record.body, "topic": record.topic, "properties": record.properties_text,
    })


@given(records())
def test_encoding_equals_the_schema(fields: dict[str, object]) -> None:
    raw = make_record(**fields).encode()  # type: ignore[arg-type]
    assert raw == _schema_bytes(fields)
    assert len(raw) == make_record(**fields).total_size  # type: ignore[arg-type]


@given(records(), st.binary(max_size=8))
def test_decoding_equals_the_schema(fields: dict[str, object], padding: bytes) -> None:
    raw = make_record(**fields).encode()  # type: ignore[arg-type]
    parsed = CommitLogRecord.parse(raw)
    record = decode_record(padding + raw + padding, len(padding))
    assert (record.body, record.topic, record.properties_text) == (parsed.body, parsed.topic,
                                                                   parsed.properties)
    assert (record.queue_id, record.queue_offset, record.physical_offset, record.sys_flag, record.flag) == (
        parsed.queue_id, parsed.queue_offset, parsed.physical_offset, parsed.sys_flag, parsed.flag)
    assert (packed_ip(record.born_host.ip), record.born_host.port) == (parsed.born_host.ip,
                                                                       parsed.born_host.port)
    assert (packed_ip(record.store_host.ip), record.store_host.port) == (parsed.store_host.ip,
                                                                         parsed.store_host.port)
    assert record.encode() == raw


@given(records(), st.data())
def test_corrupted_records_are_refused_where_the_schema_refuses(fields: dict[str, object],
                                                                data: st.DataObject) -> None:
    """Flip one byte past the prefix (CRC unchecked): the fast decoder accepts exactly when the schema
    parses the bytes and the parts add up to TOTALSIZE."""
    raw = bytearray(make_record(**fields).encode())  # type: ignore[arg-type]
    at = data.draw(st.integers(RECORD_PREFIX.size, len(raw) - 1))
    raw[at] = data.draw(st.integers(0, 255))
    try:
        parsed = CommitLogRecord.parse(bytes(raw))
        schema_ok = parsed.total_size == schema_record_length(
            sys_flag=parsed.sys_flag, body_len=len(parsed.body), topic_len=len(parsed.topic.encode()),
            properties_len=len(parsed.properties.encode()), magic=parsed.magic)
    except (construct.ConstructError, UnicodeDecodeError):
        schema_ok = False
    try:
        decode_record(bytes(raw), verify_crc=False)
        fast_ok = True
    except StoreError:
        fast_ok = False
    assert fast_ok == schema_ok


@given(st.integers(0, 0x3F), st.integers(0, 500), st.integers(0, 300), st.integers(0, 500), magics)
def test_record_length_equals_the_spec(sys_flag: int, body: int, topic: int, props: int, magic: int) -> None:
    assert record_length(sys_flag, body, topic, props, magic) == schema_record_length(
        sys_flag=sys_flag, body_len=body, topic_len=topic, properties_len=props, magic=magic)


@given(st.integers(8, 2**31 - 1), int32, st.binary(min_size=8, max_size=8))
def test_prefix_and_blank_equal_the_schema(remaining: int, total: int, raw: bytes) -> None:
    assert encode_blank(remaining) == BlankMarker.build({"total_size": remaining})
    parsed = RecordPrefix.parse(raw)
    assert RECORD_PREFIX.unpack(raw) == (parsed.total_size, parsed.magic)


@given(hosts, int64)
def test_offset_msg_id_equals_the_spec(host: HostPort, offset: int) -> None:
    assert offset_msg_id(packed_ip(host.ip), host.port, offset) == encode_offset_msg_id(host.ip, host.port,
                                                                                        offset)


@pytest.mark.parametrize("field", [0, 3, 5, 8])
def test_out_of_range_fields_are_refused_by_both(field: int) -> None:
    head = [100, MESSAGE_MAGIC_V1, 0, 0, 0, 0, 0, 0, 0]
    head[field] = 2**64
    born = (bytes(4), 1)
    with pytest.raises(SpecViolation):
        pack_record(tuple(head), born, 0, born, 0, 0, b"", "t", "")  # type: ignore[arg-type]
    names = ["total_size", "magic", "body_crc", "queue_id", "flag", "queue_offset", "physical_offset",
             "sys_flag", "born_timestamp"]
    host = {"ip": bytes(4), "port": 1}
    with pytest.raises(construct.ConstructError):
        CommitLogRecord.build({**dict(zip(names, head, strict=True)), "born_host": host,
                               "store_timestamp": 0, "store_host": host, "reconsume_times": 0,
                               "prepared_transaction_offset": 0, "body": b"", "topic": "t",
                               "properties": ""})


def test_an_address_that_contradicts_the_sys_flag_is_refused() -> None:
    """struct would pad a 4-byte address into a 16-byte field; the schema refuses it, so must the codec."""
    head = (100, MESSAGE_MAGIC_V1, 0, 0, 0, 0, 0, 0x10, 0)
    with pytest.raises(SpecViolation):
        pack_record(head, (bytes(4), 1), 0, (bytes(4), 1), 0, 0, b"", "t", "")
