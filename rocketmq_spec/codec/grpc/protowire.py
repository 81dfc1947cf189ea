"""Protobuf's wire format at the byte level, for requests built by hand from the spec's field tables (and
damaged ones): what the generated classes do not let a caller choose, such as field numbers no release
declares."""

from __future__ import annotations

LENGTH_DELIMITED = 2
"""Wire type of strings, bytes and embedded messages."""


def varint(value: int) -> bytes:
    """Base-128 varint, least significant group first."""
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def length_delimited(number: int, payload: bytes) -> bytes:
    """One length-delimited field: its tag, its length, the payload."""
    return varint(number << 3 | LENGTH_DELIMITED) + varint(len(payload)) + payload
