"""The body of SEND_BATCH_MESSAGE: the client's messages one after another, each a small block.

The client writes each message with ``MessageDecoder.encodeMessage``: fixed words it leaves for the
broker (MAGICCODE and BODYCRC are written as 0; the broker recomputes the CRC), the user flag, the body
and the message's own properties string. Topic, queue, hosts and times come from the request header, not
from the blocks, so one batch always lands in one queue.
"""

from __future__ import annotations

from construct import GreedyBytes, Int16sb, Int32sb, PascalString, Prefixed, Struct

from rocketmq_spec.spec.clauses import Level, clause

_DECODER = "common/src/main/java/org/apache/rocketmq/common/message/MessageDecoder.java"

BatchMessageBlock = Struct(
    "total_size" / Int32sb * "length of the block, this field included",
    "magic" / Int32sb * "0 as the client writes it; not checked by the broker",
    "body_crc" / Int32sb * "0 as the client writes it; the broker computes the stored CRC",
    "flag" / Int32sb * "user flag of this message",
    "body" / Prefixed(Int32sb, GreedyBytes) * "int32 length, then the body",
    "properties" / PascalString(Int16sb, "utf8") * "int16 length, then this message's properties string",
)

CMD_BATCH_BODY = clause(
    "RMQ-CMD-BATCH-BODY", Level.MUST,
    "A SEND_BATCH_MESSAGE body is a sequence of blocks: int32 TOTALSIZE, int32 MAGICCODE, int32 BODYCRC, "
    "int32 FLAG, int32-prefixed body, int16-prefixed properties string; a block that runs past the body "
    "makes the whole batch illegal.",
    source=_DECODER + " (encodeMessage)")
