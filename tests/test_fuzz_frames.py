"""Properties of the frame codec: round trips, chunking independence, and behaviour on hostile bytes."""

from __future__ import annotations

import random
import struct
import tracemalloc
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocketmq_spec.codec.command import RemotingCommand, decode, encode
from rocketmq_spec.codec.framing import FrameDecoder, FrameRejected
from rocketmq_spec.fuzz.corpus import load_seeds
from rocketmq_spec.fuzz.mutators import MUTATORS
from rocketmq_spec.fuzz.profiles import fuzz_settings
from rocketmq_spec.fuzz.strategies.frames import commands, frame_streams, frames
from rocketmq_spec.fuzz.strategies.primitives import int32s
from rocketmq_spec.spec.errors import RocketMQSpecError
from rocketmq_spec.spec.frame import FRAME_MAX_LENGTH, SerializeType

ALLOCATION_PER_INPUT_BYTE = 64
"""Peak bytes a decoder may allocate per input byte: Python objects for a JSON header cost tens of bytes
per character, but nothing in a frame may make the cost depend on a length field's value."""
ALLOCATION_SLACK = 256 * 1024
"""Fixed allowance for the decoder's own first-call allocations (caches, compiled structs)."""

SEEDS = [seed.data for seed in load_seeds()]


def _decode_or_error(frame: bytes) -> RemotingCommand | RocketMQSpecError:
    """Decode; any error that is not the codec's own typed error escapes and fails the property."""
    try:
        return decode(frame)
    except RocketMQSpecError as exc:
        return exc


@fuzz_settings()
@given(commands())
def test_encode_then_decode_is_identity(cmd: RemotingCommand) -> None:
    assert decode(encode(cmd)) == cmd


@fuzz_settings()
@given(frames())
def test_decode_then_encode_is_identity_on_canonical_bytes(frame: bytes) -> None:
    assert encode(decode(frame)) == frame


def test_decode_then_encode_is_identity_on_java_frames() -> None:
    """Java's own frames are canonical: the codec writes back the bytes Java wrote."""
    java = [seed.data for seed in load_seeds() if seed.origin.startswith("java-")]
    assert java
    assert [encode(decode(frame)) for frame in java] == java


Outcome = tuple[bytes | str, ...]


def _feed(chunks: list[bytes]) -> tuple[Outcome, int]:
    """Every event until the stream is rejected, comparable across runs, and what stays buffered."""
    decoder = FrameDecoder()
    outcome: list[bytes | str] = []
    for chunk in chunks:
        for event in decoder.receive_data(chunk):
            if isinstance(event, FrameRejected):
                return (*outcome, str(event.error)), decoder.buffered
            outcome.append(event.frame)
    return tuple(outcome), decoder.buffered


def _chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({cut % (len(data) + 1) for cut in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


@fuzz_settings()
@given(frame_streams(), st.lists(st.integers(min_value=0), max_size=12))
def test_frame_decoder_output_does_not_depend_on_chunking(stream: list[bytes], cuts: list[int]) -> None:
    data = b"".join(stream)
    assert _feed([data]) == (tuple(stream), 0)
    assert _feed(_chunked(data, cuts)) == (tuple(stream), 0)


def _judged_same(data: bytes, cuts: list[int]) -> None:
    whole = _feed([data])
    assert _feed(_chunked(data, cuts)) == whole
    assert _feed([data[i:i + 1] for i in range(len(data))]) == whole
    assert whole[1] < FRAME_MAX_LENGTH


@fuzz_settings()
@given(st.binary(max_size=512), st.lists(st.integers(min_value=0), max_size=12))
def test_frame_decoder_judges_arbitrary_bytes_the_same_under_any_chunking(data: bytes,
                                                                          cuts: list[int]) -> None:
    _judged_same(data, cuts)


@fuzz_settings()
@given(st.sampled_from(SEEDS), st.sampled_from(sorted(MUTATORS)), st.randoms(use_true_random=False),
       st.lists(st.integers(min_value=0), max_size=6))
def test_mutated_golden_frames_are_judged_the_same_under_any_chunking(
        seed: bytes, mutator: str, rng: random.Random, cuts: list[int]) -> None:
    _judged_same(seed + MUTATORS[mutator](rng, seed), cuts)


@fuzz_settings()
@given(st.binary(max_size=1024))
def test_decode_raises_only_typed_errors_on_arbitrary_bytes(data: bytes) -> None:
    _decode_or_error(data)


def _with_valid_words(serialize_type: SerializeType, header: bytes, body: bytes) -> bytes:
    return struct.pack(">iI", 4 + len(header) + len(body), serialize_type << 24 | len(header)) + header + body


@fuzz_settings()
@given(st.sampled_from(list(SerializeType)), st.binary(max_size=512), st.binary(max_size=16))
def test_decode_raises_only_typed_errors_on_arbitrary_headers(
        serialize_type: SerializeType, header: bytes, body: bytes) -> None:
    """Valid framing around random header bytes, so the header decoders (not the framing) are hit."""
    _decode_or_error(_with_valid_words(serialize_type, header, body))


@fuzz_settings()
@given(st.sampled_from(SEEDS), st.sampled_from(sorted(MUTATORS)), st.randoms(use_true_random=False))
def test_mutated_golden_frames_raise_only_typed_errors(seed: bytes, mutator: str, rng: random.Random) -> None:
    _decode_or_error(MUTATORS[mutator](rng, seed))


def _peak_allocation(action: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        action()
    except RocketMQSpecError:
        pass
    finally:
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak


def _rocketmq_header_with_lengths(remark_length: int, ext_length: int, tail: bytes) -> bytes:
    fixed = struct.pack(">hbhii", 10, 0, 409, 1, 0)
    return fixed + struct.pack(">i", remark_length) + tail[:8] + struct.pack(">i", ext_length) + tail[8:]


@fuzz_settings(max_examples=20)
@given(int32s(), int32s(), st.binary(max_size=64))
def test_rocketmq_length_lies_do_not_drive_allocation(remark_length: int, ext_length: int,
                                                      tail: bytes) -> None:
    header = _rocketmq_header_with_lengths(remark_length, ext_length, tail)
    frame = _with_valid_words(SerializeType.ROCKETMQ, header, b"")
    assert _peak_allocation(lambda: _decode_or_error(frame)) <= \
        ALLOCATION_SLACK + ALLOCATION_PER_INPUT_BYTE * len(frame)


@fuzz_settings(max_examples=20)
@given(int32s(), st.integers(0, 0xFF), st.binary(max_size=64))
def test_frame_decoder_never_buffers_an_announced_length(length: int, serialize_type: int,
                                                         tail: bytes) -> None:
    """A frame announcing up to 16 MiB makes the decoder wait, not allocate what was announced."""
    data = struct.pack(">iI", length, serialize_type << 24 | min(len(tail), 0xFFFFFF)) + tail
    decoder = FrameDecoder()
    peak = _peak_allocation(lambda: decoder.receive_data(data))
    assert peak <= ALLOCATION_SLACK + ALLOCATION_PER_INPUT_BYTE * len(data)
    assert decoder.buffered <= len(data)


NESTING = 100_000


def test_deeply_nested_json_header_raises_a_typed_error() -> None:
    """Found by fuzzing: a 100 kB header of '[' escapes the codec as RecursionError."""
    frame = _with_valid_words(SerializeType.JSON, b"[" * NESTING, b"")
    with pytest.raises(RocketMQSpecError):
        decode(frame)

