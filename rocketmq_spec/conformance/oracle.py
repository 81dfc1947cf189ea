"""What a target owes the bytes sent on one connection, judged as a length-prefixed receiver can judge them.

The codec refuses a frame as soon as its first eight bytes are wrong, before the bytes its length word
announces have arrived. A receiver built on a length-field frame decoder (Java's Netty
``LengthFieldBasedFrameDecoder``) cannot: it refuses a length word it can never accept (negative, or over
the 16 MiB frame limit) at once, and anything else only once the whole frame is there. So a stream that
ends inside a frame whose length word is acceptable is owed nothing until the target's idle timeout —
waiting for the rest of a frame is not a hang. Only a malformed *complete* frame (or an unacceptable length
word) obliges the target to close the connection without an answer (RMQ-FRAME-CLOSE-ON-ERROR).
"""

from __future__ import annotations

import enum
import re
import struct
from dataclasses import dataclass

from rocketmq_spec.codec.framing import FrameDecoder, FrameReceived, FrameRejected
from rocketmq_spec.spec.frame import LENGTH_FIELD_SIZE, MAX_LENGTH_VALUE


class Expect(enum.Enum):
    CLOSE = "close"
    """A complete malformed frame, or a length word no receiver accepts: close without answering."""
    WAIT = "wait"
    """The stream ends inside a frame that will be malformed once complete: a length-prefixed receiver
    waits for the rest, so only its idle timeout obliges it to close."""
    ANY = "any"
    """Well-formed (possibly ending inside a frame): answers are allowed, nothing is owed."""


@dataclass(frozen=True)
class Judgement:
    expect: Expect
    reason: str = ""
    """Why the codec refuses the stream (empty when it does not)."""

    @property
    def signature(self) -> str:
        """The refusal with its numbers blanked: findings with one signature share one cause."""
        return re.sub(r"\d+", "N", self.reason)


def judge(stream: bytes) -> Judgement:
    """What ``stream``, sent alone on a fresh connection, obliges the target to do.

    Java closes the connection on *any* exception inside its decoder, so a stream on which the codec
    itself fails with an untyped error (a codec bug, reported separately) is judged undecodable too.
    """
    try:
        events = FrameDecoder().receive_data(stream)
    except Exception as exc:
        return Judgement(Expect.CLOSE, f"codec error {type(exc).__name__}")
    rejected = next((e for e in events if isinstance(e, FrameRejected)), None)
    if rejected is None:
        return Judgement(Expect.ANY)
    start = sum(len(e.frame) for e in events if isinstance(e, FrameReceived))
    (length,) = struct.unpack_from(">I", stream, start)
    complete = len(stream) - start - LENGTH_FIELD_SIZE >= length
    reason = str(rejected.error)
    return Judgement(Expect.CLOSE if complete or length > MAX_LENGTH_VALUE else Expect.WAIT, reason)


def expectation(stream: bytes) -> Expect:
    return judge(stream).expect
