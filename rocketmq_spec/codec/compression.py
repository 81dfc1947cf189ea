"""Message body compression as Java producers do it, selected by SYSFLAG bits 8-10.

Framing, checked against bodies written by the 4.9.8 Java client: ZLIB is a zlib stream (RFC 1950,
``DeflaterOutputStream``) and level 5 reproduces Java's bytes exactly; LZ4 is the LZ4 *frame* format
(``LZ4FrameOutputStream``: independent 4 MiB blocks, no checksums, no content size) and is byte-identical
too; ZSTD is a standard zstd frame without content size (``ZstdOutputStream``), decodable by Java but not
byte-identical, because the frame depends on the libzstd version.
"""

from __future__ import annotations

import sys
import zlib

import lz4.frame

if sys.version_info >= (3, 14):
    from compression import zstd
else:  # the same module, backported (a fraction of the size of the zstandard bindings)
    from backports import zstd

from rocketmq_spec.spec.errors import BodyError
from rocketmq_spec.spec.sysflag import RMQ_FLAG_COMPRESSION, CompressionType, compression_type

DEFAULT_LEVEL = 5
"""``rocketmq.message.compressLevel`` default."""

COMPRESS_OVER_BYTES = 4096
"""``compressMsgBodyOverHowmuch``: the producer compresses bodies of at least this many bytes."""

MAX_DECOMPRESSED_BYTES = 64 * 1024 * 1024
"""A compressed body may not expand beyond this: 16x the 4 MiB body limit, so a zip bomb in a store file
costs memory bounded by a constant instead of whatever its author chose."""


def compress(body: bytes, kind: CompressionType, level: int = DEFAULT_LEVEL) -> bytes:
    """``level`` applies to ZLIB and ZSTD; Java's LZ4 compressor ignores it and always uses the fast mode."""
    if kind is CompressionType.ZLIB:
        return zlib.compress(body, level)
    if kind is CompressionType.LZ4:
        compressor = lz4.frame.LZ4FrameCompressor(
            block_size=lz4.frame.BLOCKSIZE_MAX4MB, block_linked=False, content_checksum=False)
        return compressor.begin() + compressor.compress(body) + compressor.flush()
    options: dict[int, int] = {zstd.CompressionParameter.compression_level: level,
                               zstd.CompressionParameter.content_size_flag: 0}
    return zstd.ZstdCompressor(options=options).compress(body, zstd.ZstdCompressor.FLUSH_FRAME)


def _too_large(kind: CompressionType) -> BodyError:
    return BodyError(f"{kind.name} body expands beyond the decompression limit",
                     expected=f"<= {MAX_DECOMPRESSED_BYTES} bytes", seen="more",
                     clause=RMQ_FLAG_COMPRESSION.id)


def decompress(body: bytes, kind: CompressionType) -> bytes:
    try:
        if kind is CompressionType.ZLIB:
            inflater = zlib.decompressobj()
            out = inflater.decompress(body, MAX_DECOMPRESSED_BYTES)
            if inflater.unconsumed_tail:
                raise _too_large(kind)
            if not inflater.eof:
                raise BodyError("truncated zlib stream", expected="end of stream", seen=len(body),
                                clause=RMQ_FLAG_COMPRESSION.id)
            return out
        if kind is CompressionType.LZ4:
            lz4_stream = lz4.frame.LZ4FrameDecompressor()
            out = lz4_stream.decompress(body, max_length=MAX_DECOMPRESSED_BYTES)
            if not lz4_stream.eof and len(out) >= MAX_DECOMPRESSED_BYTES:
                raise _too_large(kind)
            if not lz4_stream.eof:
                raise BodyError("truncated LZ4 frame", expected="end of frame", seen=len(body),
                                clause=RMQ_FLAG_COMPRESSION.id)
            return out
        zstd_stream = zstd.ZstdDecompressor()
        out = zstd_stream.decompress(body, max_length=MAX_DECOMPRESSED_BYTES + 1)
        if len(out) > MAX_DECOMPRESSED_BYTES:
            raise _too_large(kind)
        if not zstd_stream.eof:
            raise BodyError("truncated zstd frame", expected="end of frame", seen=len(body),
                            clause=RMQ_FLAG_COMPRESSION.id)
        return out
    except (zlib.error, RuntimeError, zstd.ZstdError) as exc:
        raise BodyError(f"cannot decompress {kind.name} body: {exc}", expected=kind.name, seen=body[:8].hex(),
                        clause=RMQ_FLAG_COMPRESSION.id) from exc


def decompress_for_sys_flag(body: bytes, sys_flag: int) -> bytes:
    """The application body of a stored record: decompressed when COMPRESSED is set, else as is."""
    kind = compression_type(sys_flag)
    return body if kind is None else decompress(body, kind)
