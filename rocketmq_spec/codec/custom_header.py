"""Typed custom headers ⇄ extFields strings, driven by the tables of ``rocketmq_spec.spec.headers``.

Decoding is as tolerant as the clients in the field require: numbers may come as any decimal string,
booleans as "true"/"false" in any case or as "1"/"0" (both false, as Java's ``Boolean.parseBoolean`` reads
them), and unknown keys (ACL signatures, region tags) are ignored. A value that cannot stand for its type
is an error rather than a silent default, because a reference implementation must not guess what a
malformed request meant.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from rocketmq_spec.spec.errors import HeaderError
from rocketmq_spec.spec.headers import (
    CMD_BOOLEAN,
    CMD_EXT_STRINGS,
    CMD_REQUIRED,
    FieldType,
    HeaderSpec,
    missing_field_remark,
)

_RANGES = {FieldType.INT: range(-(1 << 31), 1 << 31), FieldType.LONG: range(-(1 << 63), 1 << 63)}
_JAVA_INTEGER = re.compile(r"[+-]?\d+")
"""``Integer.parseInt``'s grammar (``Character.digit`` takes any Unicode decimal digit, as ``\\d`` does).
Python's ``int`` also takes spaces and ``_`` separators, which Java refuses (found by fuzzing)."""
_TRUE = {"true"}
_FALSE = {"false", "1", "0"}
"""RMQ-CMD-BOOLEAN: only "true" (any case) is true; "1" and "0", which non-Java clients send, are false."""


class _Slot(NamedTuple):
    name: str
    key: str
    type: FieldType
    required: bool
    bounds: range | None
    """The values a number field may take; None for strings and booleans."""


_PLANS: dict[int, tuple[HeaderSpec, tuple[_Slot, ...], frozenset[str]]] = {}
"""Per header table: its fields flattened once, and their keys. A broker decodes a header on every
request, and reading ``Field.key`` and friends field by field was a large part of that. Keyed by
identity (tables are module constants); the stored table guards against a reused id."""


def _plan(spec: HeaderSpec) -> tuple[tuple[_Slot, ...], frozenset[str]]:
    entry = _PLANS.get(id(spec))
    if entry is None or entry[0] is not spec:
        slots = tuple(_Slot(f.name, f.key, f.type, f.required, _RANGES.get(f.type)) for f in spec.fields)
        entry = _PLANS[id(spec)] = (spec, slots, frozenset(slot.key for slot in slots))
    return entry[1], entry[2]


def decode_header(spec: HeaderSpec, ext_fields: Mapping[str, str] | None) -> dict[str, Any]:
    """Typed values keyed by field name (V1 names for SEND_MESSAGE_V2's one-letter keys); absent
    optional fields are left out."""
    fields = ext_fields or {}
    values: dict[str, Any] = {}
    for name, key, kind, required, bounds in _plan(spec)[0]:
        raw = fields.get(name)
        if raw is None or (raw == "" and kind is not FieldType.STRING):
            if required:
                raise HeaderError(f"{spec.java_class} lacks required field {name}",
                                  expected=name, seen=sorted(fields), clause=CMD_REQUIRED.id,
                                  java_remark=missing_field_remark(name))
            continue
        if kind is FieldType.STRING:
            values[key] = raw
        elif bounds is not None and raw.isdigit() and raw.isascii() and (number := int(raw)) in bounds:
            values[key] = number  # plain decimal digits, the common case, a subset of _parse's grammar
        else:
            values[key] = _parse(spec, name, kind, raw)
    return values


def encode_header(spec: HeaderSpec, values: Mapping[str, Any]) -> dict[str, str]:
    """extFields strings for typed values keyed as :func:`decode_header` returns them; None is left out."""
    slots, keys = _plan(spec)
    if not keys.issuperset(values):
        raise HeaderError(f"{spec.java_class} has no such field", expected=sorted(keys),
                          seen=sorted(set(values) - keys), clause=CMD_EXT_STRINGS.id)
    missing = [slot.key for slot in slots if slot.required and values.get(slot.key) is None]
    if missing:
        raise HeaderError(f"{spec.java_class} lacks required field {missing[0]}", expected=missing,
                          seen=sorted(values), clause=CMD_REQUIRED.id)
    encoded = {}
    for slot in slots:
        value = values.get(slot.key)
        if value is not None:
            encoded[slot.name] = _format(value)
    return encoded


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
