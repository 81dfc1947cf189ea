"""Mutations of valid frames, each aimed at one decision a receiver has to make.

Byte-level mutations (length lies, truncation, bit flips, a wrong serialize type) attack the framing;
structure-aware ones (huge extFields maps, invalid UTF-8, wrong JSON value types) keep the frame
well-framed so that it reaches the header decoder and the handlers. Every mutation is a pure function of
a ``random.Random`` and the frame, so a seed reproduces a whole run.
"""

from __future__ import annotations

import json
import random
import struct
from collections.abc import Callable

from rocketmq_spec.codec.command import RemotingCommand, decode, encode
from rocketmq_spec.spec.errors import RocketMQSpecError
from rocketmq_spec.spec.frame import (
    FRAME_MAX_LENGTH,
    HEADER_LENGTH_MASK,
    LENGTH_FIELD_SIZE,
    MAX_LENGTH_VALUE,
    TYPE_WORD_SIZE,
    SerializeType,
)

Mutator = Callable[[random.Random, bytes], bytes]

HUGE_MAP_ENTRIES = (1_000, 50_000)
"""Entries added by ``huge_ext_map``: from "large for a header" to a few MiB, still under the frame limit."""

MAX_BIT_FLIPS = 8

INVALID_UTF8 = (b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\xe2\x82")
"""Bytes no UTF-8 decoder accepts: a stray byte, a bad continuation, a surrogate, a code point past
U+10FFFF, an overlong slash and a truncated sequence."""

_WORDS = struct.Struct(">iI")
_NOT_A_STRING: tuple[object, ...] = (0, -1, 2**63, 1.5e300, True, False, None, [], ["x"], {}, {"k": "v"})


def _words(frame: bytes) -> tuple[int, int, int]:
    length, word = _WORDS.unpack_from(frame)
    return length, word >> 24, word & HEADER_LENGTH_MASK


def _with_words(frame: bytes, length: int, serialize_type: int, header_length: int) -> bytes:
    return struct.pack(">iI", length, (serialize_type & 0xFF) << 24 | header_length & HEADER_LENGTH_MASK) + \
        frame[LENGTH_FIELD_SIZE + TYPE_WORD_SIZE:]


def length_lie(rng: random.Random, frame: bytes) -> bytes:
    """A length word that disagrees with the bytes: short, long, negative, at and past the limit."""
    length, serialize_type, header_length = _words(frame)
    lie = rng.choice([0, -1, -(1 << 31), rng.randrange(length), length + rng.randint(1, 64),
                      MAX_LENGTH_VALUE, MAX_LENGTH_VALUE + 1, FRAME_MAX_LENGTH, (1 << 31) - 1])
    return _with_words(frame, lie, serialize_type, header_length)


def header_length_lie(rng: random.Random, frame: bytes) -> bytes:
    """A header length that cuts into the header, swallows the body or runs past the frame."""
    length, serialize_type, header_length = _words(frame)
    lie = rng.choice([0, rng.randrange(header_length + 1), length - TYPE_WORD_SIZE,
                      length - TYPE_WORD_SIZE + 1, HEADER_LENGTH_MASK])
    return _with_words(frame, length, serialize_type, lie)


def truncate(rng: random.Random, frame: bytes) -> bytes:
    """A prefix of the frame: the receiver must wait for the rest without answering."""
    return frame[:rng.randrange(len(frame))]


def bit_flip(rng: random.Random, frame: bytes) -> bytes:
    data = bytearray(frame)
    for _ in range(rng.randint(1, MAX_BIT_FLIPS)):
        data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    return bytes(data)


def wrong_serialize_type(rng: random.Random, frame: bytes) -> bytes:
    """The other known serialize type (so the header is read with the wrong decoder) or an unknown one."""
    length, serialize_type, header_length = _words(frame)
    other = rng.choice([1 - serialize_type if serialize_type in (0, 1) else 0, rng.randint(2, 0xFF)])
    return _with_words(frame, length, other, header_length)


def _decoded(frame: bytes) -> RemotingCommand | None:
    try:
        return decode(frame)
    except RocketMQSpecError:
        return None


def huge_ext_map(rng: random.Random, frame: bytes) -> bytes:
    """The same command with thousands of extra extFields entries."""
    cmd = _decoded(frame)
    if cmd is None:
        return bit_flip(rng, frame)
    value = "v" * rng.randint(1, 8)
    extra = {f"k{i}": value for i in range(rng.randint(*HUGE_MAP_ENTRIES))}
    cmd.ext_fields = {**(cmd.ext_fields or {}), **extra}
    try:
        return encode(cmd)
    except RocketMQSpecError:
        return frame


def _header(frame: bytes) -> tuple[int, bytes]:
    """Serialize type and header bytes of a frame whose words are intact."""
    _, serialize_type, header_length = _words(frame)
    start = LENGTH_FIELD_SIZE + TYPE_WORD_SIZE
    return serialize_type, frame[start:start + header_length]


def invalid_utf8(rng: random.Random, frame: bytes) -> bytes:
    """Invalid UTF-8 inside the header's text, with the length words kept consistent."""
    serialize_type, header = _header(frame)
    if not header:
        return bit_flip(rng, frame)
    if serialize_type == SerializeType.JSON and b'":"' in header:
        # Inside a string value, so the JSON text stays well-formed apart from the encoding.
        at = rng.choice([i + 3 for i in range(len(header)) if header.startswith(b'":"', i)])
    else:
        at = rng.randrange(len(header))
    bad = rng.choice(INVALID_UTF8)
    return _replace_header(frame, header[:at] + bad + header[at:])


def _replace_header(frame: bytes, header: bytes) -> bytes:
    _, serialize_type, header_length = _words(frame)
    body = frame[LENGTH_FIELD_SIZE + TYPE_WORD_SIZE + header_length:]
    return struct.pack(">iI", TYPE_WORD_SIZE + len(header) + len(body),
                       serialize_type << 24 | len(header)) + header + body


def wrong_value_types(rng: random.Random, frame: bytes) -> bytes:
    """A JSON header whose extFields values (or top-level fields) have types Java's bean cannot take."""
    try:
        header = json.loads(_header(frame)[1])
    except ValueError:
        return bit_flip(rng, frame)
    if not isinstance(header, dict):
        return bit_flip(rng, frame)
    ext = header.get("extFields")
    if isinstance(ext, dict) and ext and rng.random() < 0.7:
        ext[rng.choice(sorted(ext))] = rng.choice(_NOT_A_STRING)
    else:
        header[rng.choice(["code", "flag", "opaque", "version", "language", "remark", "extFields"])] = \
            rng.choice(_NOT_A_STRING)
    return _replace_header(frame, json.dumps(header, separators=(",", ":")).encode())


MUTATORS: dict[str, Mutator] = {
    "length_lie": length_lie,
    "header_length_lie": header_length_lie,
    "truncate": truncate,
    "bit_flip": bit_flip,
    "wrong_serialize_type": wrong_serialize_type,
    "huge_ext_map": huge_ext_map,
    "invalid_utf8": invalid_utf8,
    "wrong_value_types": wrong_value_types,
}
"""Every mutation by the name reports and regression cases use."""


def mutate(rng: random.Random, frame: bytes) -> tuple[str, bytes]:
    """One randomly chosen mutation; returns its name with the mutant."""
    name = rng.choice(sorted(MUTATORS))
    return name, MUTATORS[name](rng, frame)
