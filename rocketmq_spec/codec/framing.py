"""A sans-IO frame decoder: bytes from a TCP stream in, decoded commands out.

The caller owns the socket and feeds whatever chunks it reads; the decoder never blocks and never reads
ahead. Like h2's connection object it raises on a protocol error, and it judges the length and type words
as soon as they arrive, so a peer announcing a huge or malformed frame is refused before the decoder
waits for (or buffers) the bytes it announced. Java's decoder hands every frame completed before a bad one
to the server before it closes the connection, so the decoder does the same: the frames of a chunk come
out in order, followed by a terminal :class:`FrameRejected` event, after which it refuses all further data.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass

from rocketmq_spec.codec.command import RemotingCommand, decode_checked_payload
from rocketmq_spec.codec.fast import unpack_words
from rocketmq_spec.spec.errors import FrameError, RocketMQSpecError
from rocketmq_spec.spec.frame import (
    FRAME_CLOSE_ON_ERROR,
    LENGTH_FIELD_SIZE,
    TYPE_WORD_SIZE,
    SerializeType,
    check_length,
    check_type_word,
)


@dataclass(frozen=True)
class FrameReceived:
    frame: bytes
    """The complete frame as received, length word included."""
    command: RemotingCommand


@dataclass(frozen=True)
class FrameRejected:
    """The stream broke the framing rules: the connection is to be closed without a response."""

    error: RocketMQSpecError


Event = FrameReceived | FrameRejected


class FrameDecoder:
    """``claim``, when given, sees each complete frame (length word included) before it is decoded; a
    frame it returns True for has been dealt with by the caller and gives no event (the broker's send
    lane answers the commonest requests this way, see ``rocketmq_spec.reference_broker.broker.send_lane``)."""

    def __init__(self, claim: Callable[[bytes], bool] | None = None) -> None:
        self._buffer = bytearray()
        self._error: RocketMQSpecError | None = None
        self._claim = claim

    @property
    def error(self) -> RocketMQSpecError | None:
        """The error that closed this decoder, if any."""
        return self._error

    @property
    def buffered(self) -> int:
        """Bytes received but not yet part of a complete frame."""
        return len(self._buffer)

    def receive_data(self, data: bytes) -> list[Event]:
        """Feed bytes; get every frame they complete, in order.

        A malformed frame (a :class:`FrameError`, or a :class:`HeaderError` for an undecodable header) ends
        the list with a :class:`FrameRejected` event; feeding the decoder after that raises
        :class:`FrameError`, since the connection should already be closed.
        """
        if self._error is not None:
            raise FrameError("decoder closed by an earlier frame error", expected="no data after the error",
                             seen=len(data), clause=FRAME_CLOSE_ON_ERROR.id) from self._error
        events: list[Event] = []
        try:
            if self._buffer or not self._whole_frame(data, events):
                self._buffer += data
                self._drain(events)
        except RocketMQSpecError as exc:
            self._error = exc
            self._buffer.clear()
            events.append(FrameRejected(exc))
        return events

    def _whole_frame(self, data: bytes, events: list[Event]) -> bool:
        """Take ``data`` as it is when it is exactly one frame (most reads from a peer that waits for each
        answer), without copying it through the buffer; False, with nothing taken, otherwise (a chunk
        that is not ``bytes`` too: an event's frame must not change with its caller's buffer)."""
        if len(data) < LENGTH_FIELD_SIZE + TYPE_WORD_SIZE or not isinstance(data, bytes):
            return False
        length, type_code, header_length = unpack_words(data, 0)
        if LENGTH_FIELD_SIZE + length != len(data):
            return False
        check_length(length)
        self._take(data, check_type_word(length, type_code, header_length), header_length, events)
        return True

    def _take(self, frame: bytes, serialize_type: SerializeType, header_length: int,
              events: list[Event]) -> None:
        """One complete frame: to ``claim``, or decoded into an event."""
        if self._claim is not None and self._claim(frame):
            return
        command = decode_checked_payload(memoryview(frame)[LENGTH_FIELD_SIZE:], serialize_type, header_length)
        events.append(FrameReceived(frame, command))

    def _drain(self, events: list[Event]) -> None:
        """Append each complete frame to ``events``; raise on the first malformed one."""
        buffer = self._buffer
        start = 0
        size = len(buffer)
        with memoryview(buffer) as view:  # one copy per frame (a bytearray slice would be a second)
            while size - start >= LENGTH_FIELD_SIZE:
                if size - start < LENGTH_FIELD_SIZE + TYPE_WORD_SIZE:
                    (length,) = struct.unpack_from(">i", buffer, start)
                    check_length(length)
                    break
                length, type_code, header_length = unpack_words(buffer, start)
                check_length(length)
                serialize_type = check_type_word(length, type_code, header_length)
                end = start + LENGTH_FIELD_SIZE + length
                if size < end:
                    break
                frame = view[start:end].tobytes()
                start = end
                self._take(frame, serialize_type, header_length, events)
        del buffer[:start]
