"""Just enough PNG decoding to look at a browser screenshot's pixels (8-bit RGB or RGBA, no interlace)."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CHANNELS = {2: 3, 6: 4}  # colour type -> bytes per pixel at bit depth 8


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else (b if pb <= pc else c)


def _unfilter(kind: int, line: bytearray, previous: bytearray, bpp: int) -> None:
    if kind == 0:
        return
    for i in range(len(line)):
        left = line[i - bpp] if i >= bpp else 0
        if kind == 1:
            line[i] = (line[i] + left) & 0xFF
        elif kind == 2:
            line[i] = (line[i] + previous[i]) & 0xFF
        elif kind == 3:
            line[i] = (line[i] + (left + previous[i]) // 2) & 0xFF
        else:
            corner = previous[i - bpp] if i >= bpp else 0
            line[i] = (line[i] + _paeth(left, previous[i], corner)) & 0xFF


def read_rgb(path: Path, max_rows: int | None = None) -> tuple[int, int, list[list[tuple[int, int, int]]]]:
    """(width, height, rows of RGB pixels), stopping after ``max_rows`` rows when given."""
    data = path.read_bytes()
    assert data.startswith(SIGNATURE), "not a PNG file"
    pos, idat, header = len(SIGNATURE), bytearray(), b""
    while pos < len(data):
        (length,), kind = struct.unpack(">I", data[pos:pos + 4]), data[pos + 4:pos + 8]
        chunk = data[pos + 8:pos + 8 + length]
        header = chunk if kind == b"IHDR" else header
        idat += chunk if kind == b"IDAT" else b""
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and colour in _CHANNELS and not interlace, (depth, colour, interlace)
    bpp = _CHANNELS[colour]
    stride = width * bpp
    raw = zlib.decompress(bytes(idat))
    previous = bytearray(stride)
    rows = []
    for y in range(min(height, max_rows or height)):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        _unfilter(kind, line, previous, bpp)
        rows.append([(line[x], line[x + 1], line[x + 2]) for x in range(0, stride, bpp)])
        previous = line
    return width, height, rows
