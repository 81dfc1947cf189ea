"""Body compression per SYSFLAG type bits, and decompression limits."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rocketmq_spec.codec.compression import compress, decompress, decompress_for_sys_flag
from rocketmq_spec.spec.errors import BodyError, SpecViolation
from rocketmq_spec.spec.sysflag import CompressionType, compression_type, with_compression


@settings(max_examples=50)
@given(st.binary(max_size=20000), st.sampled_from(list(CompressionType)))
def test_round_trip(body: bytes, kind: CompressionType) -> None:
    assert decompress(compress(body, kind), kind) == body
    assert decompress_for_sys_flag(compress(body, kind), with_compression(0, kind)) == body


def test_frames_match_java_framing() -> None:
    assert compress(b"x" * 5000, CompressionType.ZLIB)[:2] == bytes.fromhex("785e")
    assert compress(b"x" * 5000, CompressionType.LZ4)[:6] == bytes.fromhex("04224d186070")
    assert compress(b"x" * 5000, CompressionType.ZSTD)[:4] == bytes.fromhex("28b52ffd")


def test_uncompressed_bodies_pass_through() -> None:
    assert decompress_for_sys_flag(b"plain", 0x8) == b"plain"


def test_type_zero_means_zlib_and_unknown_types_are_rejected() -> None:
    assert compression_type(0x1) is CompressionType.ZLIB
    assert compression_type(0x301) is CompressionType.ZLIB
    assert compression_type(0x101) is CompressionType.LZ4
    assert compression_type(0x300) is None
    with pytest.raises(SpecViolation):
        compression_type(0x401)


@pytest.mark.parametrize("kind", list(CompressionType))
def test_garbage_and_truncation_are_body_errors(kind: CompressionType) -> None:
    with pytest.raises(BodyError):
        decompress(b"garbage!", kind)
    with pytest.raises(BodyError):
        decompress(compress(bytes(range(256)) * 40, kind)[:-5], kind)


@pytest.mark.parametrize("kind", list(CompressionType))
def test_decompression_bomb_is_refused(kind: CompressionType, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("rocketmq_spec.codec.compression.MAX_DECOMPRESSED_BYTES", 1000)
    with pytest.raises(BodyError, match="limit"):
        decompress(compress(b"\0" * 5000, kind), kind)
