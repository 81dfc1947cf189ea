"""A request read straight from its frame: the code, typed header and body the broker's lanes need,
without the general decoder's command object.

The general path decodes a frame into a ``RemotingCommand`` and then its custom header through the spec's
table; :class:`RequestScanner` gives the same code, opaque, typed header and body in one step for the
requests a lane takes (JSON requests of the codes it is given, neither oneway nor a response), and None
for any other frame, which then goes the general way. Headers are recognised by how Java writes them, code
first (fastjson orders the keys, RMQ-HDR-JSON-KEYS); other key orders are decoded the general way.

The compiled twin (``rocketmq_spec.codec._hotpath.scan_request``) reads the JSON itself and answers None
wherever its strict reading differs from Python's JSON decoder (escaped surrogates, duplicate keys, non-ASCII
numbers ...); wherever it answers, it answers what the pure function does (``tests/test_hotpath_equal.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rocketmq_spec.codec.command import decode
from rocketmq_spec.codec.custom_header import decode_header
from rocketmq_spec.codec.hotpath import compiled, twin
from rocketmq_spec.spec.errors import HeaderError, RocketMQSpecError
from rocketmq_spec.spec.frame import LENGTH_FIELD_SIZE, TYPE_WORD_SIZE, SerializeType
from rocketmq_spec.spec.header_fields import FieldType
from rocketmq_spec.spec.headers import HeaderSpec
from rocketmq_spec.spec.properties import parse_properties as _parse_properties

ScannedRequest = tuple[int, int, dict[str, Any], bytes]
"""(code, opaque, typed header as ``decode_header`` returns it, body)."""

_KINDS = {FieldType.STRING: 0, FieldType.INT: 1, FieldType.LONG: 2, FieldType.BOOLEAN: 3}
"""Field types as the compiled scanner numbers them."""
_HEADER_AT = LENGTH_FIELD_SIZE + TYPE_WORD_SIZE

parse_properties = twin("parse_properties", _parse_properties, declines=True)
"""``rocketmq_spec.spec.properties.parse_properties``, compiled where the extension is built."""


def _scan(frame: bytes, prefixes: tuple[bytes, ...],
          specs: Mapping[int, HeaderSpec]) -> ScannedRequest | None:
    if not frame.startswith(prefixes, _HEADER_AT):
        return None
    try:
        command = decode(frame)
    except RocketMQSpecError:
        return None
    spec = specs.get(command.code)
    if command.serialize_type is not SerializeType.JSON or command.flag or spec is None:
        return None
    try:
        header = decode_header(spec, command.ext_fields)
    except HeaderError:
        return None
    return command.code, command.opaque, header, command.body or b""


class RequestScanner:
    """Reads the requests of the given codes and header tables (the spec's, by code)."""

    def __init__(self, specs: Mapping[int, HeaderSpec]) -> None:
        self._specs = dict(specs)
        self.prefixes = tuple(f'{{"code":{code},'.encode() for code in self._specs)
        """How a JSON header written by Java starts for each code (the compiled reader's first test)."""
        self.plans = {code: tuple((field.name.encode(), field.key, _KINDS[field.type], field.required)
                                  for field in spec.fields) for code, spec in self._specs.items()}
        """Each table's fields as the compiled reader takes them: wire name, key, type number, required."""
        self._compiled = compiled.scan_request if compiled is not None else None

    def scan(self, frame: bytes) -> ScannedRequest | None:
        """The frame's code, opaque, typed header and body if it is a request of one of the codes, else
        None; ``frame`` is a whole frame, length word included."""
        if self._compiled is not None:
            result: ScannedRequest | None = self._compiled(frame, self.prefixes, self.plans)
            return result
        return _scan(frame, self.prefixes, self._specs)

    def scan_pure(self, frame: bytes) -> ScannedRequest | None:
        """``scan`` by the pure-Python function, whatever is loaded (for the equality tests)."""
        return _scan(frame, self.prefixes, self._specs)
