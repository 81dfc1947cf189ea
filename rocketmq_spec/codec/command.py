"""RemotingCommand and its encoding in both header serializations.

``encode`` reproduces the bytes a Java 4.9.8 peer writes; ``decode`` accepts what every known client
writes, which is more than Java itself writes (raw JSON numbers in extFields, absent keys, unknown
languages). Unknown language codes and names are kept as seen so that re-encoding is lossless.
"""

from __future__ import annotations

import decimal
import json
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rocketmq_spec.codec.fast import BinaryHeader, decode_rocketmq_header, encode_rocketmq_header, pack_words
from rocketmq_spec.codec.fastjson import dumps_string_keyed, java_utf8
from rocketmq_spec.spec.errors import FrameError, HeaderError
from rocketmq_spec.spec.frame import (
    FRAME_HEADER_BOUNDS,
    FRAME_LENGTH,
    HEADER_LENGTH_MASK,
    LENGTH_FIELD_SIZE,
    TYPE_WORD_SIZE,
    Flag,
    SerializeType,
    check_length,
    check_type_word,
)
from rocketmq_spec.spec.json_header import (
    DEFAULT_LANGUAGE,
    HDR_JSON_DEFAULTS,
    HDR_JSON_EXT_STRINGS,
    HDR_JSON_KEYS,
)
from rocketmq_spec.spec.language import LANGUAGE_BY_NAME, language_code, language_name
from rocketmq_spec.spec.properties import JAVA_HASHMAP_INITIAL_CAPACITY
from rocketmq_spec.spec.properties import java_hashmap_order as java_hashmap_key_order

_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1
_INT32_RANGE = range(_INT32_MIN, _INT32_MAX + 1)
_JSON_INT_FIELDS = ("code", "flag", "opaque", "version")
_INT_ONLY = {int}
_STR_ONLY = {str}
_JSON_TYPE_NAME = SerializeType.JSON.name
_JSON_DECODER = json.JSONDecoder(parse_float=decimal.Decimal)
"""One decoder for every header: ``json.loads(..., parse_float=...)`` would build a new one per frame.
Decimal keeps a fraction in extFields as written (fastjson reads it as text, not as a double)."""


@dataclass
class RemotingCommand:
    code: int
    language: str | int = DEFAULT_LANGUAGE
    """LanguageCode name; the raw value as seen when the name or byte is unknown."""
    version: int = 0
    opaque: int = 0
    flag: int = 0
    remark: str | None = None
    ext_fields: dict[str, str] | None = None
    body: bytes | None = None
    serialize_type: SerializeType = SerializeType.JSON

    @property
    def is_response(self) -> bool:
        return bool(self.flag & Flag.RESPONSE)

    @property
    def is_oneway(self) -> bool:
        return bool(self.flag & Flag.ONEWAY)

    @classmethod
    def request(cls, code: int, ext_fields: Mapping[str, str] | None = None, body: bytes | None = None, *,
                opaque: int = 0, oneway: bool = False, **fields: Any) -> RemotingCommand:
        """A request; ``fields`` sets any other attribute (language, version, serialize_type ...)."""
        return cls(code, opaque=opaque, flag=Flag.ONEWAY if oneway else 0,
                   ext_fields=None if ext_fields is None else dict(ext_fields), body=body, **fields)

    def response(self, code: int, remark: str | None = None, ext_fields: Mapping[str, str] | None = None,
                 body: bytes | None = None, **fields: Any) -> RemotingCommand:
        """The answer to this request: same opaque and serialization, response bit set."""
        return RemotingCommand(code, opaque=self.opaque, flag=Flag.RESPONSE, remark=remark,
                               ext_fields=None if ext_fields is None else dict(ext_fields), body=body,
                               serialize_type=self.serialize_type, **fields)


@dataclass
class EncodedCommand(RemotingCommand):
    """A command whose frame was written ahead of time (``rocketmq_spec.codec.answer_template``):
    :func:`encode` returns ``frame`` as it is. Its fields describe the same command, for readers that look at
    them instead of the bytes; changing them afterwards does not change the frame."""

    frame: bytes = b""


def java_hashmap_order(fields: Mapping[str, str], initial_capacity: int = JAVA_HASHMAP_INITIAL_CAPACITY
                       ) -> dict[str, str]:
    """The same entries in the order a Java ``HashMap`` filled in ``fields``' order iterates them.

    Java senders build extFields in a fresh HashMap, so their key order on the wire is the map's bucket
    order (``RMQ-HDR-JSON-EXT-ORDER``), the same rule that orders a message's properties.
    """
    return {key: fields[key] for key in java_hashmap_key_order(fields, initial_capacity=initial_capacity)}


def encode(cmd: RemotingCommand) -> bytes:
    """The whole frame, length word included."""
    if type(cmd) is EncodedCommand:
        return cmd.frame
    header = _encode_header(cmd)
    body = cmd.body or b""
    if len(header) > HEADER_LENGTH_MASK:
        raise FrameError("header longer than the 24-bit header length", expected=f"<= {HEADER_LENGTH_MASK}",
                         seen=len(header), clause=FRAME_HEADER_BOUNDS.id)
    length = TYPE_WORD_SIZE + len(header) + len(body)
    check_length(length)
    return pack_words(length, cmd.serialize_type, len(header)) + header + body


def decode(frame: bytes) -> RemotingCommand:
    """A whole frame, length word included; the length word must account for every byte."""
    if len(frame) < LENGTH_FIELD_SIZE:
        raise FrameError("frame shorter than its length word", expected=f">= {LENGTH_FIELD_SIZE} bytes",
                         seen=len(frame), clause=FRAME_LENGTH.id)
    (length,) = struct.unpack_from(">i", frame)
    check_length(length)
    if length != len(frame) - LENGTH_FIELD_SIZE:
        raise FrameError("length word disagrees with the frame size", expected=len(frame) - LENGTH_FIELD_SIZE,
                         seen=length, clause=FRAME_LENGTH.id, offset=0)
    return decode_payload(memoryview(frame)[LENGTH_FIELD_SIZE:])


def json_header_text(frame: bytes) -> str | None:
    """The header of a whole frame as its sender wrote it, when it is JSON (None for ROCKETMQ): what a
    decoded command hides, keys left out or spelled otherwise, shows here."""
    (word,) = struct.unpack_from(">I", frame, LENGTH_FIELD_SIZE)
    if word >> 24 != SerializeType.JSON:
        return None
    start = LENGTH_FIELD_SIZE + TYPE_WORD_SIZE
    return frame[start:start + (word & HEADER_LENGTH_MASK)].decode("utf-8", errors="replace")


def decode_payload(payload: bytes | memoryview) -> RemotingCommand:
    """The bytes after the length word: type word, header, body."""
    check_length(len(payload))
    (word,) = struct.unpack_from(">I", payload)
    header_length = word & HEADER_LENGTH_MASK
    serialize_type = check_type_word(len(payload), word >> 24, header_length)
    return decode_checked_payload(payload, serialize_type, header_length)


def decode_checked_payload(payload: bytes | memoryview, serialize_type: SerializeType,
                           header_length: int) -> RemotingCommand:
    """``decode_payload`` for a caller that has already judged the length and type words (the frame
    decoder does so before it buffers a frame), so they are not judged twice per frame."""
    header = bytes(payload[TYPE_WORD_SIZE:TYPE_WORD_SIZE + header_length])
    body = bytes(payload[TYPE_WORD_SIZE + header_length:]) or None
    if serialize_type is SerializeType.JSON:
        return _decode_json_header(header, body)
    return _decode_rocketmq_header(header, body)


def _encode_header(cmd: RemotingCommand) -> bytes:
    if cmd.serialize_type is SerializeType.JSON:
        # keys in JSON_HEADER_FIELDS order (RMQ-HDR-JSON-KEYS), nulls dropped by deletion, which keeps the
        # order of the rest (RMQ-HDR-JSON-NULLS): written out because a per-frame walk over the table cost
        # more than the encoding; tests/test_json_header_fastpath.py holds it to the table
        values = {
            "code": cmd.code, "extFields": cmd.ext_fields, "flag": cmd.flag, "language": cmd.language,
            "opaque": cmd.opaque, "remark": cmd.remark, "serializeTypeCurrentRPC": _JSON_TYPE_NAME,
            "version": cmd.version,
        }
        if cmd.ext_fields is None:
            del values["extFields"]
        if cmd.remark is None:
            del values["remark"]
        return java_utf8(dumps_string_keyed(values))
    code = language_code(cmd.language)
    if code is None:
        raise HeaderError("language has no byte code", expected="a LanguageCode name or int",
                          seen=cmd.language, clause=LANGUAGE_BY_NAME.id)
    return encode_rocketmq_header(
        BinaryHeader(cmd.code, code, cmd.version, cmd.opaque, cmd.flag, cmd.remark, cmd.ext_fields))


def _decode_rocketmq_header(header: bytes, body: bytes | None) -> RemotingCommand:
    code, language, version, opaque, flag, remark, ext_fields = decode_rocketmq_header(header)
    # positional: keywords cost measurably at this rate, and the order is the dataclass's own
    return RemotingCommand(code, language_name(language), version, opaque, flag, remark, ext_fields, body,
                           SerializeType.ROCKETMQ)


def _decode_json_header(header: bytes, body: bytes | None) -> RemotingCommand:
    try:
        obj = _JSON_DECODER.decode(header.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        # RecursionError: a hostile header nests arrays deeper than the parser's stack (found by fuzzing)
        raise HeaderError("JSON header is not JSON", expected="a JSON object", seen=str(exc),
                          clause=HDR_JSON_KEYS.id) from None
    if not isinstance(obj, dict):
        raise HeaderError("JSON header is not an object", expected="object", seen=type(obj).__name__,
                          clause=HDR_JSON_KEYS.id)
    get = obj.get
    code, flag, opaque, version = get("code", 0), get("flag", 0), get("opaque", 0), get("version", 0)
    # the parser makes exact ints (bools and Decimals are other types), so one set of types and two
    # comparisons per field judge every header a Java peer writes; anything else is judged field by
    # field, in order, for the error
    if not (set(map(type, (code, flag, opaque, version))) == _INT_ONLY
            and min(code, flag, opaque, version) >= _INT32_MIN
            and max(code, flag, opaque, version) <= _INT32_MAX):
        code, flag, opaque, version = (_json_int(obj, key) for key in _JSON_INT_FIELDS)
    language = get("language", DEFAULT_LANGUAGE)
    remark = get("remark")
    if not isinstance(language, str | int) or isinstance(language, bool):
        raise HeaderError("language is neither a name nor a code", expected="string",
                          seen=language, clause=LANGUAGE_BY_NAME.id)
    if remark is not None and not isinstance(remark, str):
        raise HeaderError("remark is not a string", expected="string or null", seen=remark,
                          clause=HDR_JSON_KEYS.id)
    # positional, in the dataclass's order, as for the binary header
    return RemotingCommand(code, language_name(language), version, opaque, flag, remark,
                           _json_ext_fields(get("extFields")), body, SerializeType.JSON)


def _json_int(obj: dict[str, Any], key: str) -> int:
    value = obj.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int) or value not in _INT32_RANGE:
        raise HeaderError(f"{key} is not a Java int", expected="integer in int32 range", seen=value,
                          clause=HDR_JSON_DEFAULTS.id)
    return value


def _json_ext_fields(raw: Any) -> dict[str, str] | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise HeaderError("extFields is not an object", expected="object or null", seen=type(raw).__name__,
                          clause=HDR_JSON_EXT_STRINGS.id)
    if set(map(type, raw.values())) <= _STR_ONLY:
        return raw  # what Java senders write: the parser's fresh dict is already the answer
    return {key: _java_string(value) for key, value in raw.items() if value is not None}


def _java_string(value: Any) -> str:
    """What fastjson stores in a ``Map<String, String>`` for a JSON scalar."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | decimal.Decimal):
        return str(value)
    raise HeaderError("extFields value is not a scalar", expected="string, number or boolean",
                      seen=type(value).__name__, clause=HDR_JSON_EXT_STRINGS.id)
