"""The struct/numpy fast paths equal the construct schemas on generated records and entries."""

from __future__ import annotations

import ipaddress

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from rocketmq_spec.codec.fast_store import cq_entries, encode_cq_entries, unpack_fixed
from rocketmq_spec.codec.store import HostPort, make_record
from rocketmq_spec.codec.store.consumequeue import encode_entry
from rocketmq_spec.spec.commitlog import CommitLogRecord

int32 = st.integers(-(2**31), 2**31 - 1)
int64 = st.integers(-(2**63), 2**63 - 1)
hosts = st.builds(lambda ip, port: HostPort(str(ip), port), st.ip_addresses(), int32)


@given(
    st.text(min_size=1, max_size=140),
    st.binary(max_size=300),
    st.text(max_size=50),
    int32,
    int32,
    int64,
    int64,
    int32,
    int64,
    hosts,
    int64,
    hosts,
    int32,
    int64,
)
def test_fixed_fields_match_the_schema(
    topic: str,
    body: bytes,
    props: str,
    queue_id: int,
    flag: int,
    queue_offset: int,
    physical: int,
    sys_flag: int,
    born_ts: int,
    born: HostPort,
    store_ts: int,
    store: HostPort,
    reconsume: int,
    prepared: int,
) -> None:
    raw = make_record(
        topic=topic,
        body=body,
        properties=props,
        queue_id=queue_id,
        flag=flag,
        queue_offset=queue_offset,
        physical_offset=physical,
        sys_flag=sys_flag,
        born_timestamp=born_ts,
        born_host=born,
        store_timestamp=store_ts,
        store_host=store,
        reconsume_times=reconsume,
        prepared_transaction_offset=prepared,
    ).encode()
    schema = CommitLogRecord.parse(raw)
    fast = unpack_fixed(b"pad" + raw, 3)
    assert (
        fast.total_size,
        fast.magic,
        fast.body_crc,
        fast.queue_id,
        fast.flag,
        fast.queue_offset,
        fast.physical_offset,
        fast.sys_flag,
        fast.born_timestamp,
        fast.store_timestamp,
        fast.reconsume_times,
        fast.prepared_transaction_offset,
    ) == (
        schema.total_size,
        schema.magic,
        schema.body_crc,
        schema.queue_id,
        schema.flag,
        schema.queue_offset,
        schema.physical_offset,
        schema.sys_flag,
        schema.born_timestamp,
        schema.store_timestamp,
        schema.reconsume_times,
        schema.prepared_transaction_offset,
    )
    assert (fast.born_ip, fast.born_port) == (schema.born_host.ip, schema.born_host.port)
    assert (fast.store_ip, fast.store_port) == (schema.store_host.ip, schema.store_host.port)
    assert ipaddress.ip_address(fast.store_ip) == ipaddress.ip_address(store.ip)
    assert raw[fast.body_position : fast.body_position + fast.body_length] == schema.body
    assert fast.total_size == len(raw)


@given(st.lists(st.tuples(int64, int32, int64), max_size=30))
def test_cq_entries_match_the_schema(rows: list[tuple[int, int, int]]) -> None:
    raw = b"".join(encode_entry(*row) for row in rows)
    parsed = cq_entries(raw + b"\x01\x02")
    assert [tuple(int(v) for v in entry) for entry in parsed] == rows
    if rows:
        columns = [np.array(column, dtype=np.int64) for column in zip(*rows, strict=True)]
        assert encode_cq_entries(*columns) == raw
