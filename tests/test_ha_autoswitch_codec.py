"""The auto-switch HA decoders, fed bytes written out by hand from the 5.5.0 layouts: chunking never changes
what comes out, the encoders write those bytes, and the units a Java side closes the connection for are
refused. The truncation rule is checked on the histories a failover produces."""

from __future__ import annotations

import struct
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketmq_spec.codec.ha import StreamRejected
from rocketmq_spec.codec.ha_autoswitch import (
    MasterHandshakeReceived,
    MasterStreamDecoder,
    SlaveHandshakeReceived,
    SlaveReported,
    SlaveStreamDecoder,
    TransferReceived,
    encode_master_handshake,
    encode_slave_handshake,
    encode_slave_report,
    encode_transfer,
)
from rocketmq_spec.fuzz.strategies.ha import chunked
from rocketmq_spec.spec.errors import HAStreamError
from rocketmq_spec.spec.ha_autoswitch import (
    RMQ_HA2_MASTER_HANDSHAKE,
    RMQ_HA2_SLAVE_EPOCH,
    RMQ_HA2_TRANSFER,
    RMQ_HA2_UNIT,
    EpochEntry,
    consistent_point,
    with_ends,
)

# Written field by field from AutoSwitchHAClient / AutoSwitchHAConnection (big-endian), not by the encoders.
SLAVE_HANDSHAKE = bytes.fromhex("00000001" "0001" "0000" "0000000000000002")
SLAVE_REPORT = bytes.fromhex("00000002" "0000000000001000")
MASTER_HANDSHAKE = (bytes.fromhex("00000001" "00000018" "0000000000002000" "00000002")
                    + bytes.fromhex("00000001" "0000000000000000")
                    + bytes.fromhex("00000002" "0000000000001800"))
TRANSFER = (bytes.fromhex("00000002" "00000003" "0000000000002000" "00000002" "0000000000001800"
                          "0000000000001f00") + b"abc")


def _feed(decoder: SlaveStreamDecoder | MasterStreamDecoder, chunks: list[bytes]) -> Sequence[object]:
    return [event for chunk in chunks for event in decoder.receive_data(chunk)]


def test_encoders_write_the_java_layouts() -> None:
    assert encode_slave_handshake(2, sync_from_last_file=True) == SLAVE_HANDSHAKE
    assert encode_slave_report(0x1000) == SLAVE_REPORT
    assert encode_master_handshake([(1, 0), (2, 0x1800)], 0x2000) == MASTER_HANDSHAKE
    assert encode_transfer(0x2000, 2, 0x1800, 0x1F00, b"abc") == TRANSFER


@given(st.lists(st.integers(min_value=0), max_size=12))
def test_slave_units_decode_whatever_the_chunking(points: list[int]) -> None:
    stream = SLAVE_HANDSHAKE + SLAVE_REPORT + encode_slave_report(0x2000)
    events = _feed(SlaveStreamDecoder(), chunked(stream, points))
    assert events == [SlaveHandshakeReceived(2, True, False), SlaveReported(0x1000), SlaveReported(0x2000)]


@given(st.lists(st.integers(min_value=0), max_size=12))
def test_master_units_decode_whatever_the_chunking(points: list[int]) -> None:
    heartbeat = encode_transfer(0x2003, 2, 0x1800, 0x2003)
    events = _feed(MasterStreamDecoder(), chunked(MASTER_HANDSHAKE + TRANSFER + heartbeat, points))
    assert events == [MasterHandshakeReceived(0x2000, 2, ((1, 0), (2, 0x1800))),
                      TransferReceived(0x2000, 2, 0x1800, 0x1F00, b"abc"),
                      TransferReceived(0x2003, 2, 0x1800, 0x2003, b"")]
    assert isinstance(events[-1], TransferReceived) and events[-1].is_heartbeat


def _rejected(events: Sequence[object]) -> HAStreamError:
    assert isinstance(events[-1], StreamRejected), events
    return events[-1].error


def test_slave_unit_with_an_unknown_state_is_refused() -> None:
    error = _rejected(SlaveStreamDecoder().receive_data(struct.pack(">i", 3) + bytes(12)))
    assert error.clause == RMQ_HA2_UNIT.id and error.seen == 3


def test_transfer_before_the_handshake_is_refused_before_its_body() -> None:
    # the header alone is enough to judge: the body is never waited for
    error = _rejected(MasterStreamDecoder().receive_data(TRANSFER[:36]))
    assert error.clause == RMQ_HA2_UNIT.id and error.expected == 1 and error.seen == 2


def test_handshake_body_must_be_whole_entries() -> None:
    header = bytes.fromhex("00000001" "0000000d" "0000000000002000" "00000002")
    error = _rejected(MasterStreamDecoder().receive_data(header))
    assert error.clause == RMQ_HA2_MASTER_HANDSHAKE.id and error.seen == 13


def test_block_not_at_the_slave_end_is_refused() -> None:
    decoder = MasterStreamDecoder(expected_offset=0x1000)
    error = _rejected(decoder.receive_data(MASTER_HANDSHAKE + TRANSFER[:36]))
    assert error.clause == RMQ_HA2_SLAVE_EPOCH.id and (error.expected, error.seen) == (0x1000, 0x2000)


def test_block_going_back_in_epoch_is_refused() -> None:
    older = encode_transfer(0x2003, 1, 0, 0x2003, b"x")
    error = _rejected(MasterStreamDecoder().receive_data(MASTER_HANDSHAKE + TRANSFER + older))
    assert error.clause == RMQ_HA2_TRANSFER.id and error.seen == 1


def test_a_rejected_stream_takes_no_more_data() -> None:
    decoder = SlaveStreamDecoder()
    decoder.receive_data(struct.pack(">i", 9))
    with pytest.raises(HAStreamError):
        decoder.receive_data(SLAVE_REPORT)


@pytest.mark.parametrize(("local", "local_end", "master", "master_end", "point"), [
    # the slave missed the tail of epoch 2 that the master kept: cut at the slave's own end
    ([(1, 0), (2, 100)], 150, [(1, 0), (2, 100)], 300, 150),
    # a deposed master wrote 100..180 in epoch 2 that nobody got; the new master (epoch 3) starts at 120
    ([(1, 0), (2, 100)], 180, [(1, 0), (2, 100), (3, 120)], 400, 120),
    # same epoch number, another start: look further back
    ([(1, 0), (2, 100)], 180, [(1, 0), (2, 90)], 400, 90),
    # nothing in common
    ([(4, 0)], 10, [(1, 0)], 10, -1),
])
def test_consistent_point(local: list[tuple[int, int]], local_end: int, master: list[tuple[int, int]],
                          master_end: int, point: int) -> None:
    assert consistent_point(with_ends(local, local_end), with_ends(master, master_end)) == point


def test_with_ends_chains_the_entries() -> None:
    assert with_ends([(2, 100), (1, 0)], 150) == [EpochEntry(1, 0, 100), EpochEntry(2, 100, 150)]
