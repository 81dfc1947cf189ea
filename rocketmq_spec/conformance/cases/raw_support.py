"""Answers read as bytes: the cases about how a server writes its headers judge the text and bytes it sent,
not what a lenient decoder makes of them.

The layouts are taken apart here by hand (not by ``rocketmq_spec.codec``), so a codec that shares a server's
mistake cannot hide it: a JSON header's keys in the order they were written and each value's JSON type, a
ROCKETMQ header's fixed part and its extFields entries one by one. """

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from typing import Any

from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.wire import Connection
from rocketmq_spec.spec.frame import HEADER_LENGTH_MASK, LENGTH_FIELD_SIZE, TYPE_WORD_SIZE

_FIXED = struct.Struct(">hbhii")
"""code, language, version, opaque, flag: the ROCKETMQ header's fixed part before the remark length."""


@dataclass(frozen=True)
class RawAnswer:
    """One response and the bytes of its frame."""

    command: RemotingCommand
    frame: bytes

    @property
    def length_word(self) -> int:
        return int.from_bytes(self.frame[:LENGTH_FIELD_SIZE], "big", signed=True)

    @property
    def header(self) -> bytes:
        start = LENGTH_FIELD_SIZE + TYPE_WORD_SIZE
        return self.frame[start:start + self.header_length]

    @property
    def header_length(self) -> int:
        return int.from_bytes(self.frame[LENGTH_FIELD_SIZE:LENGTH_FIELD_SIZE + TYPE_WORD_SIZE], "big") \
            & HEADER_LENGTH_MASK

    def json_pairs(self) -> list[tuple[str, Any]]:
        """The JSON header's members in the order written (values as JSON typed them)."""
        return json.loads(self.header.decode("utf-8"), object_pairs_hook=list)

    def json_ext_pairs(self) -> list[tuple[str, Any]]:
        return next((value for key, value in self.json_pairs() if key == "extFields"), [])


def exchange_raw(connection: Connection, request: RemotingCommand) -> RawAnswer:
    """Send ``request`` and return its answer with the bytes it came in. Nothing else may be in flight on
    ``connection``: its answer is the first frame received from here on."""
    start = len(connection.raw)
    response = connection.exchange(request)
    data = bytes(connection.raw[start:])
    length = int.from_bytes(data[:LENGTH_FIELD_SIZE], "big", signed=True)
    return RawAnswer(response, data[:LENGTH_FIELD_SIZE + length])


@dataclass(frozen=True)
class BinaryHeader:
    """A ROCKETMQ header as its bytes lay it out (``rocketmq_spec.spec.binary_header``)."""

    code: int
    language: int
    version: int
    opaque: int
    flag: int
    remark: bytes
    ext_entries: list[tuple[bytes, bytes]]
    """Each entry's key and value bytes, in the order written."""


def parse_binary_header(check: Check, header: bytes) -> BinaryHeader:
    """Walks the header; each length must stay inside it and the entries must fill the extFields block."""
    code, language, version, opaque, flag = _FIXED.unpack_from(header)
    at = _FIXED.size
    (remark_length,) = struct.unpack_from(">i", header, at)
    remark = header[at + 4:at + 4 + max(remark_length, 0)]
    at += 4 + max(remark_length, 0)
    (ext_length,) = struct.unpack_from(">i", header, at)
    at += 4
    block_end = at + ext_length
    check.equal("extFields block ends where the header ends", len(header), block_end)
    entries = []
    while at < block_end:
        (key_length,) = struct.unpack_from(">h", header, at)
        key = header[at + 2:at + 2 + key_length]
        at += 2 + key_length
        (value_length,) = struct.unpack_from(">i", header, at)
        entries.append((key, header[at + 4:at + 4 + value_length]))
        at += 4 + value_length
    check.equal("entries fill the extFields block exactly (bytes past its end)", 0, at - block_end)
    return BinaryHeader(code, language, version, opaque, flag, remark, entries)
