"""Reading and writing JSON the way fastjson (Java RocketMQ's serializer) does.

fastjson writes maps with integer keys *unquoted* (``{0:9,1:7}``) in config files and in some command
bodies, which strict JSON parsers reject, so reading RocketMQ's files needs this small parser. Writing
reproduces fastjson's two layouts byte for byte (checked against the config files of a 4.9.8 broker):
the compact form and ``PrettyFormat``, where every string-keyed entry starts a new line indented with
TABs while integer-keyed entries stay on the opening line, and a non-empty map closes on its own line.
Strings are escaped as fastjson escapes them (``RMQ-HDR-JSON-ESCAPES``), which is not quite as Python does.
"""

from __future__ import annotations

import json
import re
from _json import encode_basestring, make_encoder
from collections.abc import Mapping, Sequence
from typing import Any

from rocketmq_spec.spec.errors import BodyError
from rocketmq_spec.spec.json_header import HEX_ESCAPED

MAX_DEPTH = 256
"""Nesting limit: RocketMQ's JSON is at most a handful of levels deep; the limit keeps a hostile document
from exhausting the interpreter stack."""

_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?")
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_LITERALS = {"true": True, "false": False, "null": None}
_STRING_DECODER = json.JSONDecoder()

_RAW_IN_PYTHON = "".join(chr(code) for span in HEX_ESCAPED for code in span if code >= 0x20)
"""What Python's encoder (``ensure_ascii=False``) leaves raw but fastjson escapes (both escape below 0x20)."""
_PYTHON_LOWER_HEX = re.compile(r"\\u00[01][a-f]")
_PYTHON_ESCAPES = re.compile(rf"\\\\|\\u00([01][a-f])|[{re.escape(_RAW_IN_PYTHON)}]")

_JSON_OPTIONS = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_COMPACT = make_encoder(None, _JSON_OPTIONS.default, encode_basestring, None, _JSON_OPTIONS.key_separator,
                        _JSON_OPTIONS.item_separator, _JSON_OPTIONS.sort_keys, _JSON_OPTIONS.skipkeys,
                        _JSON_OPTIONS.allow_nan)
"""The C encoder ``json.dumps(obj, ensure_ascii=False, separators=(",", ":"))`` builds on every call,
built once: a header is a few flat values, and building the encoder cost more than encoding them. The
only option left out is the circular-reference check (``markers``), which flat values never need."""


class ObjectKey(tuple[tuple[str, Any], ...]):
    """A map key that is a bean: fastjson writes a ``Map<MessageQueue, …>`` key as a JSON object.

    Python dict keys must be hashable, so the object is kept as its (name, value) pairs in the order read
    (or given); ``as_dict`` turns it back into a dict and ``of`` builds one with the names sorted, as
    fastjson writes a bean.
    """

    @classmethod
    def of(cls, bean: Mapping[str, Any]) -> ObjectKey:
        return cls(sorted(bean.items()))

    def as_dict(self) -> dict[str, Any]:
        return dict(self)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, expected: str) -> BodyError:
        seen = self.text[self.pos:self.pos + 16] or "end of text"
        return BodyError("malformed fastjson text", expected=expected, seen=seen, offset=self.pos)

    def skip(self) -> None:
        self.pos = _WHITESPACE.match(self.text, self.pos).end()  # type: ignore[union-attr]

    def peek(self) -> str:
        self.skip()
        return self.text[self.pos:self.pos + 1]

    def expect(self, char: str) -> None:
        if self.peek() != char:
            raise self.fail(repr(char))
        self.pos += 1

    def value(self, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise self.fail(f"nesting depth <= {MAX_DEPTH}")
        char = self.peek()
        if char == "{":
            return self.obj(depth + 1)
        if char == "[":
            return self.array(depth + 1)
        if char == '"':
            return self.string()
        for word, literal in _LITERALS.items():
            if self.text.startswith(word, self.pos):
                self.pos += len(word)
                return literal
        return self.number()

    def string(self) -> str:
        try:
            text, self.pos = _STRING_DECODER.raw_decode(self.text, self.pos)
        except json.JSONDecodeError as exc:
            raise self.fail("a terminated string") from exc
        return text

    def number(self) -> int | float:
        match = _NUMBER.match(self.text, self.pos)
        if not match:
            raise self.fail("a JSON value")
        self.pos = match.end()
        return float(match.group()) if match.group(1) or match.group(2) else int(match.group())

    def key(self, depth: int) -> str | int | ObjectKey:
        if self.peek() == '"':
            return self.string()
        if self.peek() == "{":
            return ObjectKey(self.obj(depth + 1).items())  # type: ignore[arg-type]
        number = self.number()
        if not isinstance(number, int):
            raise self.fail("a string or integer key")
        return number

    def obj(self, depth: int) -> dict[str | int | ObjectKey, Any]:
        if depth > MAX_DEPTH:
            raise self.fail(f"nesting depth <= {MAX_DEPTH}")
        self.pos += 1
        result: dict[str | int | ObjectKey, Any] = {}
        if self.peek() == "}":
            self.pos += 1
            return result
        while True:
            name = self.key(depth)
            self.expect(":")
            result[name] = self.value(depth)
            if self.peek() == ",":
                self.pos += 1
                continue
            self.expect("}")
            return result

    def array(self, depth: int) -> list[Any]:
        self.pos += 1
        result: list[Any] = []
        if self.peek() == "]":
            self.pos += 1
            return result
        while True:
            result.append(self.value(depth))
            if self.peek() == ",":
                self.pos += 1
                continue
            self.expect("]")
            return result


def loads(text: str | bytes) -> Any:
    """Parse strict JSON plus fastjson's unquoted integer map keys (which come back as ``int``) and
    object keys (which come back as :class:`ObjectKey`)."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BodyError("fastjson text is not UTF-8", expected="UTF-8", seen=text[exc.start:exc.end],
                            offset=exc.start) from None
    parser = _Parser(text)
    result = parser.value(0)
    if parser.peek():
        raise parser.fail("end of text")
    return result


def _as_fastjson_escapes(text: str) -> str:
    """Re-escape JSON text from Python's encoder the way fastjson escapes it.

    The two differ only in escapes: Python writes lower-case hex digits and leaves DEL, the C1 controls
    and U+2028/U+2029 raw. Every backslash of encoded JSON starts an escape, so matching an escaped
    backslash as a whole keeps the text after it from being mistaken for one.
    """
    # the common case, checked at C speed: ASCII text without DEL or a lower-case hex escape is unchanged
    if text.isascii() and "\x7f" not in text and _PYTHON_LOWER_HEX.search(text) is None:
        return text
    return _PYTHON_ESCAPES.sub(_fastjson_escape, text)


def _fastjson_escape(match: re.Match[str]) -> str:
    escape, lower_hex = match.group(), match.group(1)
    if lower_hex is not None:
        return "\\u00" + lower_hex.upper()
    return escape if escape.startswith("\\") else f"\\u{ord(escape):04X}"


def dumps_string_keyed(obj: Any) -> str:
    """Compact fastjson text of ``obj`` through Python's C encoder, for the per-frame header path.

    Every map key must be a ``str``: Python would quote an integer key that fastjson writes bare.
    """
    return _as_fastjson_escapes("".join(_COMPACT(obj, 0)))


def _scalar(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, int | float | str):
        return dumps_string_keyed(value)
    raise TypeError(f"cannot write {type(value).__name__} as fastjson")


def _key(name: Any) -> str:
    if isinstance(name, ObjectKey):
        return dumps(dict(name))
    if isinstance(name, bool) or not isinstance(name, str | int):
        raise TypeError(f"map keys must be str, int or ObjectKey, got {type(name).__name__}")
    return dumps_string_keyed(name) if isinstance(name, str) else str(name)


def _write(value: Any, out: list[str], indent: int | None) -> None:
    """``indent`` is the current TAB depth in pretty mode and None in compact mode."""
    if indent is None:
        inner = close = ""
        child = None
    else:
        inner = "\n" + "\t" * (indent + 1)
        close = "\n" + "\t" * indent
        child = indent + 1
    if isinstance(value, Mapping):
        out.append("{")
        for i, (name, item) in enumerate(value.items()):
            out.append("," if i else "")
            out.append(inner if isinstance(name, str) else "")
            out.append(_key(name) + ":")
            _write(item, out, child)
        out.append(close + "}" if value else "}")
    elif isinstance(value, Sequence) and not isinstance(value, str | bytes):
        out.append("[")
        for i, item in enumerate(value):
            out.append(("," if i else "") + inner)
            _write(item, out, child)
        out.append(close + "]" if value else "]")
    else:
        out.append(_scalar(value))


def java_utf8(text: str) -> bytes:
    """UTF-8 as Java's ``String.getBytes(UTF_8)`` (and fastjson's own UTF-8 writer) makes it: each unpaired
    surrogate becomes ``?``. A peer may send one as a JSON escape (``"\\udc80"`` is valid JSON text), and
    whatever quotes it back (a remark, a KV value, a route) must still be answerable."""
    return text.encode("utf-8", "replace")


def dumps_bytes(obj: Any) -> bytes:
    """Compact fastjson text of ``obj`` as the bytes a Java peer sends (see :func:`java_utf8`)."""
    return java_utf8(dumps(obj))


def dumps(obj: Any, *, pretty: bool = False) -> str:
    """Write ``obj`` in fastjson's compact or pretty layout, keys in the mapping's own order.

    Bean-like objects in RocketMQ's files have their fields in alphabetical order (fastjson sorts bean
    fields); callers building such objects from dicts must sort them the same way.
    """
    out: list[str] = []
    _write(obj, out, 0 if pretty else None)
    return "".join(out)
