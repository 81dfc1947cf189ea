"""Responses encoded from a template: the JSON frame of an answer whose header changes only in a few values.

A broker answers every send with the same header but for the opaque and three extFields values (msgId,
queueId, queueOffset). Encoding that header field by field through the JSON encoder for each send cost about
as much as storing the message, so a template encodes it once through
:func:`rocketmq_spec.codec.command.encode` with marker values, cuts it at the markers, and each answer joins
the pieces around its own values. An answer's body is given as its pieces (a pull's records) and joined
straight into the frame, so that the records are copied once.

The result is byte for byte what ``encode`` writes for the same command, as long as each value is written
by JSON as it is: the opaque is an int, the other values must be plain text (ASCII letters, digits, comma,
minus), which is what offsetMsgIds and decimal numbers are. Anything else is refused (``frame`` returns
None) and the caller encodes the general way. ``tests/test_answer_template.py`` holds the two equal.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from rocketmq_spec.codec.command import EncodedCommand, RemotingCommand, encode
from rocketmq_spec.codec.fast import pack_words
from rocketmq_spec.codec.hotpath import twin
from rocketmq_spec.spec.frame import LENGTH_FIELD_SIZE, TYPE_WORD_SIZE, Flag, SerializeType

_PLAIN = re.compile(r"[0-9A-Za-z,\-]*")
"""Text that a JSON string holds without escapes, and that cannot contain a marker's quote."""
_MARK_BASE = 1_987_654_320
"""Markers are this number plus a small index, written as the opaque (an int) or as a string value.
Encoding the prototype checks that each occurs exactly once, so a fixed value that happens to contain one
is detected rather than mistaken for a slot."""


def _join_answer(pieces: tuple[bytes, ...], order: tuple[int, ...], opaque: int, values: tuple[str, ...],
                 body: Sequence[bytes] = ()) -> bytes | None:
    """The frame of a template's ``pieces`` joined around the texts ``order`` names (0 the opaque, n the
    n-th of ``values``), then the pieces of ``body``; None when a value is not plain text."""
    texts = [str(opaque), *values]
    for value in values:
        if _PLAIN.fullmatch(value) is None:
            return None
    parts = [pieces[0]]
    for cut, number in enumerate(order, 1):
        parts.append(texts[number].encode("ascii"))
        parts.append(pieces[cut])
    header = b"".join(parts)
    length = TYPE_WORD_SIZE + len(header) + sum(map(len, body))
    return b"".join((pack_words(length, SerializeType.JSON, len(header)), header, *body))


join_answer = twin("join_answer", _join_answer, declines=True)


class JsonAnswerTemplate:
    """JSON responses with code, flag, language, version and remark given once.

    ``ext_fields`` are the answer's extFields in wire order; ``slots`` name those whose values (given
    there as anything) differ per answer, as the opaque does. A body, when an answer has one, follows the
    header as the concatenation of its pieces."""

    def __init__(self, code: int, ext_fields: Mapping[str, str], slots: Sequence[str], *, version: int,
                 language: str | int = RemotingCommand.language, remark: str | None = None) -> None:
        self.code, self.version, self.language, self.remark = code, version, language, remark
        self.fields = dict(ext_fields)
        self.slots = tuple(slots)
        markers = [str(_MARK_BASE)] + [str(_MARK_BASE + 1 + number) for number in range(len(self.slots))]
        prototype = RemotingCommand(code, language, version, _MARK_BASE, int(Flag.RESPONSE), remark,
                                    {**self.fields, **dict(zip(self.slots, markers[1:], strict=True))}, None,
                                    SerializeType.JSON)
        header = encode(prototype)[LENGTH_FIELD_SIZE + TYPE_WORD_SIZE:].decode("utf-8")
        for marker in markers:
            if header.count(marker) != 1:
                raise ValueError(f"template marker {marker} is not unique in {header!r}")
        found = sorted((header.index(marker), number) for number, marker in enumerate(markers))
        self._order = tuple(number for _, number in found)
        """Per cut, which value goes there: 0 the opaque, n the n-th slot."""
        pieces, position = [], 0
        for start, number in found:
            pieces.append(header[position:start].encode("utf-8"))
            position = start + len(markers[number])
        pieces.append(header[position:].encode("utf-8"))
        self._pieces = tuple(pieces)

    def frame(self, opaque: int, values: Sequence[str], body: Sequence[bytes] = ()) -> bytes | None:
        """The whole frame for ``opaque``, the slots' ``values`` (in ``slots`` order) and the pieces of
        ``body`` joined; None when a value is not plain text, which the template cannot write as ``encode``
        would."""
        if len(values) != len(self.slots):
            raise ValueError(f"template has {len(self.slots)} slots, got {len(values)} values")
        return join_answer(self._pieces, self._order, opaque, tuple(values), body)

    def command(self, opaque: int, values: Sequence[str]) -> RemotingCommand | None:
        """The answer as a command carrying its frame, or None as for :meth:`frame`."""
        frame = self.frame(opaque, values)
        if frame is None:
            return None
        return EncodedCommand(self.code, self.language, self.version, opaque, int(Flag.RESPONSE), self.remark,
                              {**self.fields, **dict(zip(self.slots, values, strict=True))}, None,
                              SerializeType.JSON, frame)
