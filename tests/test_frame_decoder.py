"""The sans-IO FrameDecoder: any chunking, several frames per chunk, early refusal of bad words."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketmq_spec.codec.command import RemotingCommand, encode
from rocketmq_spec.codec.framing import FrameDecoder, FrameReceived, FrameRejected
from rocketmq_spec.spec.errors import FrameError, HeaderError
from rocketmq_spec.spec.frame import MAX_LENGTH_VALUE, SerializeType

commands = st.builds(
    RemotingCommand,
    code=st.integers(-32768, 32767),
    language=st.sampled_from(["JAVA", "CPP", "GO"]),
    version=st.integers(-32768, 32767),
    opaque=st.integers(-(1 << 31), (1 << 31) - 1),
    flag=st.integers(0, 3),
    remark=st.none() | st.text(min_size=1, max_size=20),
    ext_fields=st.none() | st.dictionaries(st.text(min_size=1, max_size=8), st.text(min_size=1, max_size=8),
                                           min_size=1, max_size=4),
    body=st.none() | st.binary(min_size=1, max_size=64),
    serialize_type=st.sampled_from(list(SerializeType)),
)


@given(st.lists(commands, min_size=1, max_size=5), st.lists(st.integers(1, 50), min_size=1, max_size=30))
def test_any_chunking_yields_the_same_frames(cmds: list[RemotingCommand], cuts: list[int]) -> None:
    stream = b"".join(encode(c) for c in cmds)
    decoder = FrameDecoder()
    events = []
    position = 0
    for cut in cuts:
        events += decoder.receive_data(stream[position:position + cut])
        position += cut
    events += decoder.receive_data(stream[position:])
    assert all(isinstance(e, FrameReceived) for e in events), events
    received = [e for e in events if isinstance(e, FrameReceived)]
    assert [e.command for e in received] == cmds
    assert b"".join(e.frame for e in received) == stream
    assert decoder.buffered == 0


def test_partial_frame_stays_buffered() -> None:
    frame = encode(RemotingCommand(34, body=b"abc"))
    decoder = FrameDecoder()
    assert decoder.receive_data(frame[:-1]) == []
    assert decoder.buffered == len(frame) - 1
    [event] = decoder.receive_data(frame[-1:])
    assert isinstance(event, FrameReceived) and event.command.body == b"abc"


@pytest.mark.parametrize(("prefix", "clause"), [
    (struct.pack(">i", MAX_LENGTH_VALUE + 1), "RMQ-FRAME-MAX-LENGTH"),
    (struct.pack(">i", -4), "RMQ-FRAME-MIN-LENGTH"),
    (struct.pack(">i", 3), "RMQ-FRAME-MIN-LENGTH"),
    (struct.pack(">iI", 100, 97), "RMQ-FRAME-HEADER-BOUNDS"),
    (struct.pack(">iI", 100, 2 << 24 | 10), "RMQ-FRAME-SERIALIZE-TYPE"),
])
def test_bad_words_refused_before_the_frame_arrives(prefix: bytes, clause: str) -> None:
    decoder = FrameDecoder()
    [event] = decoder.receive_data(prefix)
    assert isinstance(event, FrameRejected)
    assert isinstance(event.error, FrameError)
    assert event.error.clause == clause
    assert event.error.expected is not None and event.error.seen is not None
    assert decoder.error is event.error
    assert decoder.buffered == 0


def test_decoder_refuses_data_after_an_error() -> None:
    decoder = FrameDecoder()
    [rejected] = decoder.receive_data(struct.pack(">i", -1))
    assert isinstance(rejected, FrameRejected)
    with pytest.raises(FrameError) as info:
        decoder.receive_data(encode(RemotingCommand(34)))
    assert info.value.clause == "RMQ-FRAME-CLOSE-ON-ERROR"


def test_frames_before_a_bad_one_are_delivered_then_the_decoder_closes() -> None:
    """Java's decoder passes on every frame it completed before the malformed one, then closes."""
    bad_header = b"{nope"
    bad = struct.pack(">iI", 4 + len(bad_header), len(bad_header)) + bad_header
    good = encode(RemotingCommand(34, opaque=7))
    decoder = FrameDecoder()
    first, second, rejected = decoder.receive_data(good + good + bad)
    assert isinstance(first, FrameReceived) and isinstance(second, FrameReceived)
    assert first.command.opaque == second.command.opaque == 7
    assert isinstance(rejected, FrameRejected) and isinstance(rejected.error, HeaderError)
    assert decoder.error is rejected.error
    with pytest.raises(FrameError):
        decoder.receive_data(b"")
