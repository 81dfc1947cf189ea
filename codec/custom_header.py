"""Typed custom headers ⇄ extFields strings, driven by the tables of ``spec.headers``.

Decoding is as tolerant as the clients in the field require: numbers may come as any decimal string,
booleans as "true"/"false" in any case or as "1"/"0", and unknown keys (ACL signatures, region tags)
are ignored. A value that cannot stand for its type is an error rather than a silent default, because a
reference implementation must not guess what a malformed request meant.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from spec.errors import HeaderError
from spec.headers import CMD_BOOLEAN, CMD_EXT_STRINGS, CMD_REQUIRED, FieldType, HeaderSpec

_RANGES = {FieldType.INT: range(-(1 << 31), 1 << 31), FieldType.LONG: range(-(1 << 63), 1 << 63)}
_JAVA_INTEGER = re.compile(r"[+-]?\d+")
"""``Integer.parseInt``'s grammar (``Character.digit`` takes any Unicode decimal digit, as ``\\d`` does).
Python's ``int`` also takes spaces and ``_`` separators, which Java refuses (found by fuzzing)."""
_TRUE = {"true", "1"}
_FALSE = {"false", "0"}


def decode_header(spec: HeaderSpec, ext_fields: Mapping[str, str] | None) -> dict[str, Any]:
    """Typed values keyed by field name (V1 names for SEND_MESSAGE_V2's one-letter keys); absent
    optional fields are left out."""
    fields = ext_fields or {}
    values: dict[str, Any] = {}
    for field in spec.fields:
        raw = fields.get(field.name)
        if raw is None or (raw == "" and field.type is not FieldType.STRING):
            if field.required:
                raise HeaderError(f"{spec.java_class} lacks required field {field.name}",
                                  expected=field.name, seen=sorted(fields), clause=CMD_REQUIRED.id)
            continue
        values[field.key] = _parse(spec, field.name, field.type, raw)
    return values


def encode_header(spec: HeaderSpec, values: Mapping[str, Any]) -> dict[str, str]:
    """extFields strings for typed values keyed as :func:`decode_header` returns them; None is left out."""
    by_key = {field.key: field for field in spec.fields}
    unknown = set(values) - set(by_key)
    if unknown:
        raise HeaderError(f"{spec.java_class} has no such field", expected=sorted(by_key),
                          seen=sorted(unknown), clause=CMD_EXT_STRINGS.id)
    missing = [f.key for f in spec.fields if f.required and values.get(f.key) is None]
    if missing:
        raise HeaderError(f"{spec.java_class} lacks required field {missing[0]}", expected=missing,
                          seen=sorted(values), clause=CMD_REQUIRED.id)
    return {field.name: _format(values[field.key]) for field in spec.fields
            if values.get(field.key) is not None}


def _format(value: Any) -> str:
    """Java's ``String.valueOf`` for the field types headers use."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _parse(spec: HeaderSpec, name: str, kind: FieldType, raw: str) -> Any:
    if kind is FieldType.STRING:
        return raw
    if kind is FieldType.BOOLEAN:
        lowered = raw.strip().lower()
        if lowered in _TRUE or lowered in _FALSE:
            return lowered in _TRUE
        raise HeaderError(f"{spec.java_class}.{name} is not a boolean", expected="true/false/1/0", seen=raw,
                          clause=CMD_BOOLEAN.id)
    number = int(raw) if _JAVA_INTEGER.fullmatch(raw) else None
    if number is None or number not in _RANGES[kind]:
        raise HeaderError(f"{spec.java_class}.{name} is not a Java {kind.value}", expected=kind.value,
                          seen=raw, clause=CMD_EXT_STRINGS.id)
    return number
