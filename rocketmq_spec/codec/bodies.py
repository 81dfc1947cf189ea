"""JSON command bodies ⇄ Python values, following the bean tables of ``rocketmq_spec.spec.bodies``.

Bodies are read with the fastjson-compatible reader (route and cluster data carry unquoted integer
keys) and written bean by bean in fastjson's order, so a body decoded from a Java peer re-encodes to the
same bytes. Values are plain dicts and lists: the tables check shapes, they do not impose classes.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Mapping
from typing import Any

from construct import ConstructError

from rocketmq_spec.codec import fastjson
from rocketmq_spec.spec.admin_bodies import ADMIN_BODY_OBJECT_KEYS, ADMIN_BODY_PROPERTIES
from rocketmq_spec.spec.bodies import (
    CMD_BODY_BEAN_ORDER,
    CMD_BODY_LENIENT_SCALARS,
    CMD_BODY_REGISTER_COMPRESSED,
    CMD_BODY_REQUIRED,
    DATA_VERSION,
    REGISTER_BROKER_BODY,
    BodyField,
    BodySpec,
    CompressedRegisterBrokerBody,
    Json,
)
from rocketmq_spec.spec.errors import BodyError

_PYTHON_TYPES: dict[Json, tuple[type, ...]] = {
    Json.STRING: (str,), Json.NUMBER: (int, float), Json.BOOLEAN: (bool,), Json.ARRAY: (list,),
    Json.OBJECT: (dict,),
}
_TOPIC_CONFIG_WORDS = ("topicName", "readQueueNums", "writeQueueNums", "perm", "topicFilterType")
"""Order of the space-separated words of ``TopicConfig.encode()``; 5.x appends an attributes word."""
_ZLIB_BEST_COMPRESSION = 9
MAX_REGISTER_BODY_INFLATED = 64 * 1024 * 1024
"""Bound on an inflated compressed registration (a broker with ~100k topics): a zlib bomb in a 16 MiB
frame could otherwise expand without limit."""


def decode_body(spec: BodySpec, data: bytes) -> dict[str, Any]:
    """The body as a dict, its known fields checked against the table (nested beans included)."""
    try:
        value = fastjson.loads(data)
    except ValueError as exc:
        raise BodyError(f"{spec.java_class} body is not JSON", expected="JSON object", seen=str(exc),
                        clause=CMD_BODY_BEAN_ORDER.id) from None
    _check_bean(spec, value, reading=True)
    return value


def encode_body(spec: BodySpec, value: dict[str, Any]) -> bytes:
    """UTF-8 JSON as fastjson writes the bean: properties sorted, nulls omitted, maps in given order."""
    _check_bean(spec, value)
    return fastjson.dumps_bytes(_ordered_bean(spec, value))


def decode_register_broker_body(data: bytes, *, compressed: bool) -> dict[str, Any]:
    """RegisterBrokerBody in its JSON shape, from either wire form (the compressed one lacks the topic
    fields TopicConfig.encode() leaves out: order and topicSysFlag)."""
    if not compressed:
        return decode_body(REGISTER_BROKER_BODY, data)
    inflater = zlib.decompressobj()
    try:
        inflated = inflater.decompress(data, MAX_REGISTER_BODY_INFLATED)
        if inflater.unconsumed_tail:
            raise BodyError("compressed RegisterBrokerBody inflates beyond the limit",
                            expected=f"<= {MAX_REGISTER_BODY_INFLATED} bytes", seen="more",
                            clause=CMD_BODY_REGISTER_COMPRESSED.id)
        if not inflater.eof:
            raise BodyError("compressed RegisterBrokerBody is truncated", expected="a complete zlib stream",
                            seen=f"{len(data)} bytes", clause=CMD_BODY_REGISTER_COMPRESSED.id)
        plain = CompressedRegisterBrokerBody.parse(inflated)
    except (zlib.error, ConstructError, UnicodeDecodeError) as exc:
        raise BodyError("compressed RegisterBrokerBody is malformed", expected="zlib stream of the layout",
                        seen=str(exc), clause=CMD_BODY_REGISTER_COMPRESSED.id) from None
    table = {}
    for encoded in plain.topic_configs:
        words = encoded.split(" ")
        if len(words) < len(_TOPIC_CONFIG_WORDS):
            raise BodyError("TopicConfig.encode() string too short", expected=_TOPIC_CONFIG_WORDS,
                            seen=encoded, clause=CMD_BODY_REGISTER_COMPRESSED.id)
        topic: dict[str, Any] = dict(zip(_TOPIC_CONFIG_WORDS, words, strict=False))
        table[topic["topicName"]] = topic
    value = {"filterServerList": fastjson.loads(plain.filter_server_list),
             "topicConfigSerializeWrapper": {"dataVersion": fastjson.loads(plain.data_version),
                                             "topicConfigTable": table}}
    # the same table as the JSON form: numbers given as words are read as fastjson reads decimal strings
    _check_bean(REGISTER_BROKER_BODY, value, reading=True)
    return value


def encode_register_broker_body(value: dict[str, Any], *, compressed: bool) -> bytes:
    if not compressed:
        return encode_body(REGISTER_BROKER_BODY, value)
    _check_bean(REGISTER_BROKER_BODY, value)
    wrapper = value["topicConfigSerializeWrapper"]
    plain = CompressedRegisterBrokerBody.build({
        "data_version": encode_body(DATA_VERSION, wrapper["dataVersion"]).decode("utf-8"),
        "topic_configs": [" ".join(str(topic[word]) for word in _TOPIC_CONFIG_WORDS)
                          for topic in wrapper["topicConfigTable"].values()],
        "filter_server_list": fastjson.dumps(value.get("filterServerList") or []),
    })
    return zlib.compress(plain, _ZLIB_BEST_COMPRESSION)


def _check_bean(spec: BodySpec, value: Any, *, reading: bool = False) -> None:
    """Check the known fields' JSON types; when ``reading``, first coerce what fastjson would coerce."""
    if not isinstance(value, dict):
        raise BodyError(f"{spec.java_class} is not an object", expected="object", seen=type(value).__name__,
                        clause=CMD_BODY_BEAN_ORDER.id)
    for field in spec.fields:
        item = value.get(field.key)
        if item is None:
            if reading:
                _absent(spec, field, value)
            continue
        if reading:
            item = value[field.key] = _coerced(spec, field, item)
        allowed = _PYTHON_TYPES[field.kind]
        if not isinstance(item, allowed) or (field.kind is Json.NUMBER and isinstance(item, bool)):
            raise BodyError(f"{spec.java_class}.{field.key} has the wrong JSON type",
                            expected=field.kind.value, seen=type(item).__name__,
                            clause=CMD_BODY_BEAN_ORDER.id)
        for element in _nested(field, item):
            _check_bean(field.bean, element, reading=reading)  # type: ignore[arg-type]
        if field.key_bean is not None and isinstance(item, dict):
            for key in item:
                _check_object_key(spec, field, key)


def _check_object_key(spec: BodySpec, field: BodyField, key: Any) -> None:
    """A bean-keyed map's key must be an object (fastjson.ObjectKey) holding the key bean's fields."""
    if not isinstance(key, fastjson.ObjectKey):
        raise BodyError(f"{spec.java_class}.{field.key} has a key that is not an object",
                        expected=f"{field.key_bean.java_class} object", seen=repr(key),  # type: ignore[union-attr]
                        clause=ADMIN_BODY_OBJECT_KEYS.id)
    _check_bean(field.key_bean, key.as_dict())  # type: ignore[arg-type]


def object_key(bean: dict[str, Any]) -> fastjson.ObjectKey:
    """The map key fastjson writes for a bean (a MessageQueue): its properties in alphabetical order."""
    return fastjson.ObjectKey.of(bean)


def _absent(spec: BodySpec, field: BodyField, value: dict[str, Any]) -> None:
    """A field a received bean lacks (or holds null): rejected when required, else its Java default."""
    if field.required:
        raise BodyError(f"{spec.java_class} lacks required field {field.key}", expected=field.key,
                        seen=sorted(str(key) for key in value), clause=CMD_BODY_REQUIRED.id)
    if field.default is not None:
        value[field.key] = list(field.default) if isinstance(field.default, tuple) else field.default


def _coerced(spec: BodySpec, field: BodyField, item: Any) -> Any:
    """An enum ordinal as its constant's name, a decimal string in a numeric property as its number."""
    if field.constants and isinstance(item, int) and not isinstance(item, bool):
        if not 0 <= item < len(field.constants):
            raise BodyError(f"{spec.java_class}.{field.key} is not an ordinal of its enum",
                            expected=f"0..{len(field.constants) - 1}", seen=item,
                            clause=CMD_BODY_LENIENT_SCALARS.id)
        return field.constants[item]
    if field.kind is Json.NUMBER and isinstance(item, str):
        try:
            return int(item)
        except ValueError:
            raise BodyError(f"{spec.java_class}.{field.key} is not a number", expected="decimal digits",
                            seen=item, clause=CMD_BODY_LENIENT_SCALARS.id) from None
    return item


def _nested(field: BodyField, item: Any) -> list[Any]:
    """The nested beans of a field's value: itself, its elements or its map values."""
    if field.bean is None:
        return []
    if field.kind is Json.ARRAY:
        return list(item)
    return list(item.values()) if field.is_map else [item]


def _ordered_bean(spec: BodySpec, value: dict[str, Any]) -> dict[str, Any]:
    fields = {f.key: f for f in spec.fields}
    ordered = {}
    for key in sorted(value):
        item = value[key]
        if item is None:
            continue
        field = fields.get(key)
        if field is not None and field.bean is not None:
            item = _ordered_nested(field, item)
        ordered[key] = item
    return ordered


def _ordered_nested(field: BodyField, item: Any) -> Any:
    bean = field.bean
    assert bean is not None
    if field.kind is Json.ARRAY:
        return [_ordered_bean(bean, element) for element in item]
    if field.is_map:
        return {key: _ordered_bean(bean, element) for key, element in item.items()}
    return _ordered_bean(bean, item)


def encode_properties_text(values: Mapping[str, Any]) -> bytes:
    """``MixAll.properties2String``: one ``key=value`` line per setting whose value is not None."""
    return "".join(f"{key}={_property_text(value)}\n" for key, value in values.items()
                   if value is not None).encode("utf-8")


def decode_properties_text(data: bytes) -> dict[str, str]:
    """``MixAll.string2Properties`` for the bodies admin tools send: ``key=value`` lines, ``#`` comments.

    Java hands the body's bytes to ``Properties.load(InputStream)``, which reads ISO-8859-1 and undoes
    ``\\uXXXX`` escapes: a client sends a value beyond Latin-1 escaped, and raw UTF-8 bytes become one
    character per byte, as they do in Java. A line without ``=`` is refused rather than guessed at: an
    update must never apply a key nobody meant to send."""
    values: dict[str, str] = {}
    for line in data.decode("latin-1").splitlines():
        line = line.strip()
        if not line or line[0] in "#!":
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            raise BodyError("Properties line is not key=value", expected="key=value", seen=line,
                            clause=ADMIN_BODY_PROPERTIES.id)
        values[_unescaped(key.strip())] = _unescaped(value.strip())
    return values


PROPERTIES_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)")
"""One escape of Properties text: ``\\uXXXX``, or a backslash before any other character."""
PROPERTIES_ESCAPED = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _unescaped(text: str) -> str:
    """``Properties.loadConvert``: ``\\uXXXX`` is the character, ``\\t`` ``\\n`` ``\\r`` ``\\f`` their
    controls, a backslash before anything else is dropped."""
    def one(found: re.Match[str]) -> str:
        escape = found[1]
        return chr(int(escape[1:], 16)) if len(escape) == 5 else PROPERTIES_ESCAPED.get(escape, escape)
    return PROPERTIES_ESCAPE.sub(one, text)


def _property_text(value: Any) -> str:
    """Java's ``String.valueOf`` of a setting: booleans in lower case."""
    return str(value).lower() if isinstance(value, bool) else str(value)

