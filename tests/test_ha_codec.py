"""The HA stream decoders: chunking never changes what comes out, the encoders agree with the schemas,
and the rules a Java side closes the connection for are refused."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketmq_spec.codec.ha import (
    BlockDecoder,
    BlockReceived,
    OffsetReported,
    ReportDecoder,
    StreamRejected,
    encode_block,
    encode_report,
)
from rocketmq_spec.fuzz.strategies.ha import chunked
from rocketmq_spec.spec.errors import HAStreamError
from rocketmq_spec.spec.ha import (
    RMQ_HA_BLOCK,
    RMQ_HA_CONTIGUOUS,
    SlaveOffsetReport,
    TransferHeader,
    initial_transfer_offset,
)

bodies = st.lists(st.binary(max_size=64), max_size=8)


@given(st.integers(0, 2**63 - 1), st.binary(max_size=100))
def test_encoders_agree_with_the_schemas(offset: int, data: bytes) -> None:
    assert encode_report(offset) == SlaveOffsetReport.build({"slave_max_offset": offset})
    header = TransferHeader.build({"master_phy_offset": offset, "body_size": len(data)})
    assert encode_block(offset, data) == header + data


@given(st.integers(0, 2**40), bodies, st.lists(st.integers(0, 10_000), max_size=10))
def test_blocks_come_out_whatever_the_chunking(start: int, parts: list[bytes], cuts: list[int]) -> None:
    stream, offset, expected = b"", start, []
    for body in parts:
        stream += encode_block(offset, body)
        expected.append(BlockReceived(offset, body))
        offset += len(body)
    decoder = BlockDecoder(None)
    events = [event for chunk in chunked(stream, cuts) for event in decoder.receive_data(chunk)]
    assert events == expected
    assert decoder.buffered == 0


@given(st.lists(st.integers(0, 2**63 - 1), max_size=6), st.lists(st.integers(0, 100), max_size=5))
def test_reports_come_out_whatever_the_chunking(offsets: list[int], cuts: list[int]) -> None:
    decoder = ReportDecoder()
    stream = b"".join(map(encode_report, offsets))
    events = [event for chunk in chunked(stream, cuts) for event in decoder.receive_data(chunk)]
    assert events == [OffsetReported(o) for o in offsets]


def test_a_partial_report_waits_for_its_last_bytes() -> None:
    decoder = ReportDecoder()
    assert decoder.receive_data(encode_report(7)[:5]) == []
    assert decoder.receive_data(encode_report(7)[5:]) == [OffsetReported(7)]


def test_a_block_not_at_the_slave_end_is_refused_before_its_body() -> None:
    decoder = BlockDecoder(100)
    events = decoder.receive_data(encode_block(120, b"x" * 10)[:12])
    assert len(events) == 1 and isinstance(events[0], StreamRejected)
    assert events[0].error.clause == RMQ_HA_CONTIGUOUS.id
    assert events[0].error.expected == 100 and events[0].error.seen == 120
    with pytest.raises(HAStreamError):
        decoder.receive_data(b"more")


def test_blocks_before_a_gap_are_delivered_then_the_stream_is_refused() -> None:
    decoder = BlockDecoder(0)
    events = decoder.receive_data(encode_block(0, b"abc") + encode_block(3) + encode_block(4, b"d"))
    assert events[:2] == [BlockReceived(0, b"abc"), BlockReceived(3, b"")]
    heartbeat, rejected = events[1:]
    assert isinstance(rejected, StreamRejected)
    assert isinstance(heartbeat, BlockReceived) and heartbeat.is_heartbeat


def test_a_negative_or_oversized_body_is_refused() -> None:
    for size in (-1, 1 << 30):
        decoder = BlockDecoder(None)
        (event,) = decoder.receive_data(TransferHeader.build({"master_phy_offset": 0, "body_size": size}))
        assert isinstance(event, StreamRejected) and event.error.clause == RMQ_HA_BLOCK.id


def test_transfer_for_an_empty_slave_starts_at_the_last_file() -> None:
    assert initial_transfer_offset(0, 2500, 1000) == 2000
    assert initial_transfer_offset(0, 0, 1000) == 0
    assert initial_transfer_offset(1234, 2500, 1000) == 1234
