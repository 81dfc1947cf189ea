"""Splitting a SEND_BATCH_MESSAGE body into its messages, following ``rocketmq_spec.spec.batch``.

A broker must refuse a batch it cannot read completely rather than store the readable prefix, so any
malformed block raises with its offset.
"""

from __future__ import annotations

from typing import NamedTuple

from construct import ConstructError

from rocketmq_spec.spec.batch import CMD_BATCH_BODY, BatchMessageBlock
from rocketmq_spec.spec.errors import BodyError

_FIXED_BYTES = len(BatchMessageBlock.build(
    {"total_size": 0, "magic": 0, "body_crc": 0, "flag": 0, "body": b"", "properties": ""}))
"""A block with an empty body and properties: the four fixed words and the two length prefixes."""


class BatchBlock(NamedTuple):
    flag: int
    body: bytes
    properties: str
    """The message's own properties string, exactly as the client wrote it."""

    @property
    def size(self) -> int:
        return _FIXED_BYTES + len(self.body) + len(self.properties.encode("utf-8"))


def decode_batch(data: bytes) -> list[BatchBlock]:
    blocks: list[BatchBlock] = []
    offset = 0
    view = memoryview(data)
    while offset < len(data):
        try:
            parsed = BatchMessageBlock.parse(view[offset:])
        except (ConstructError, UnicodeDecodeError) as exc:
            raise BodyError("batch message block is malformed", expected="a complete block", seen=str(exc),
                            clause=CMD_BATCH_BODY.id, offset=offset) from None
        block = BatchBlock(parsed.flag, parsed.body, parsed.properties)
        blocks.append(block)
        offset += block.size
    return blocks


def encode_batch(blocks: list[BatchBlock]) -> bytes:
    """The body a Java producer sends for these messages (MAGICCODE and BODYCRC left 0)."""
    return b"".join(BatchMessageBlock.build({"total_size": block.size, "magic": 0, "body_crc": 0,
                                             "flag": block.flag, "body": block.body,
                                             "properties": block.properties})
                    for block in blocks)
