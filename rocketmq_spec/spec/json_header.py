"""The JSON header (serialize type 0): the RemotingCommand bean as fastjson writes it.

fastjson emits bean properties in alphabetical order and skips nulls, so the key order of a Java header
is fixed and a byte-exact encoder only has to follow this table. extFields is a Java ``HashMap``, whose
iteration order (not insertion order) decides the order of its keys on the wire.
"""

from __future__ import annotations

from dataclasses import dataclass

from rocketmq_spec.spec.clauses import Level, clause
from rocketmq_spec.spec.properties import JAVA_HASHMAP_INITIAL_CAPACITY
from rocketmq_spec.spec.release_rules import Rule, holds

_SOURCE = "remoting/src/main/java/org/apache/rocketmq/remoting/protocol/RemotingSerializable.java"


@dataclass(frozen=True)
class JsonHeaderField:
    key: str
    json_type: str
    omitted_when_null: bool
    doc: str


SERIALIZE_TYPE_KEY = "serializeTypeCurrentRPC"
"""The key in which a JSON header names its own serialization (a client must not contradict the type
byte with it: RMQ-CLIENT-SERIALIZE-TYPE)."""

JSON_HEADER_FIELDS: tuple[JsonHeaderField, ...] = (
    JsonHeaderField("code", "number", False, "request code, or response code on responses"),
    JsonHeaderField("extFields", "object", True, "custom header fields, every value a string"),
    JsonHeaderField("flag", "number", False, "bit 0 response, bit 1 oneway"),
    JsonHeaderField("language", "string", False, "LanguageCode name of the sender"),
    JsonHeaderField("opaque", "number", False, "request id; a response repeats its request's"),
    JsonHeaderField("remark", "string", True, "free text, mostly the reason of an error response"),
    JsonHeaderField(SERIALIZE_TYPE_KEY, "string", False, "always \"JSON\" in a JSON header"),
    JsonHeaderField("version", "number", False, "MQVersion ordinal of the sender (409 = 4.9.8)"),
)
"""Every key a Java sender writes, in the order it writes them."""


DEFAULT_LANGUAGE = "JAVA"
"""What fastjson leaves in ``language`` when the key is absent (the bean's field initializer)."""

SHORT_ESCAPES: dict[str, str] = {
    '"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r",
}
"""Characters fastjson writes as a backslash and one letter (its ``replaceChars``)."""

HEX_ESCAPED: tuple[range, ...] = (range(0x00, 0x20), range(0x7F, 0xA0), range(0x2028, 0x202A))
"""Code points fastjson writes as ``\\uXXXX`` with upper-case hex digits unless :data:`SHORT_ESCAPES` has
them: the C0 controls, DEL and the C1 controls (``IOUtils.specicalFlags_doubleQuotes``), and the line and
paragraph separators, which JavaScript string literals may not hold raw."""

HDR_JSON_KEYS = clause(
    "RMQ-HDR-JSON-KEYS", Level.MUST,
    "A JSON header is one object with the keys code, extFields, flag, language, opaque, remark, "
    "serializeTypeCurrentRPC and version, written in that (alphabetical) order.",
    source=_SOURCE)
HDR_JSON_NULLS = clause(
    "RMQ-HDR-JSON-NULLS", Level.MUST,
    "remark and extFields are omitted when null; an empty extFields map is written as {}.",
    source=_SOURCE)
HDR_JSON_DEFAULTS = clause(
    "RMQ-HDR-JSON-DEFAULTS", Level.MUST,
    "A receiver ignores unknown keys and gives absent ones their defaults: language JAVA, version 0, "
    "flag 0, remark and extFields null.",
    source=_SOURCE)
HDR_JSON_EXT_STRINGS = clause(
    "RMQ-HDR-JSON-EXT-STRINGS", Level.MUST,
    "A receiver reads raw JSON numbers and booleans in extFields as the strings fastjson makes of them "
    "(4 as \"4\", false as \"false\"); Java senders always write strings.",
    source="golden/clients/ali-ons-3.12.0")
HDR_JSON_EXT_ORDER = clause(
    "RMQ-HDR-JSON-EXT-ORDER", Level.SHOULD,
    "extFields keys appear in Java HashMap iteration order: by bucket (h ^ h >>> 16 masked by the table "
    "capacity for the map size; from 5.1.0 capacity 256 for a map addExtField created), then in insertion "
    "order.",
    source="golden/java-4.9.8/frames/json")
PRESIZED_EXT_FIELDS_CAPACITY = 256
"""Table capacity of an extFields map created by addExtField from 5.1.0 (``Rule.EXT_FIELDS_PRESIZED``)."""


def ext_fields_capacity(created_by_add: bool, mq_version: int) -> int:
    """The capacity a Java sender of ``mq_version`` creates an extFields map with: ``created_by_add`` when
    a processor added keys (MSG_REGION) before the header fields were copied in."""
    if created_by_add and holds(Rule.EXT_FIELDS_PRESIZED, mq_version):
        return PRESIZED_EXT_FIELDS_CAPACITY
    return JAVA_HASHMAP_INITIAL_CAPACITY

HDR_JSON_TEXT = clause(
    "RMQ-HDR-JSON-TEXT", Level.MUST,
    "The header is UTF-8 JSON without insignificant whitespace, non-ASCII characters unescaped except "
    "those RMQ-HDR-JSON-ESCAPES names.",
    source=_SOURCE)
HDR_JSON_ESCAPES = clause(
    "RMQ-HDR-JSON-ESCAPES", Level.SHOULD,
    "Strings (remark, extFields keys and values) are escaped as fastjson 1.2.69 writes them: quote, "
    "backslash, backspace, tab, newline, form feed and carriage return as a backslash and one character; "
    "every other character below U+0020, U+007F-U+009F, U+2028 and U+2029 as \\uXXXX with upper-case hex "
    "digits; all others ('/' included) raw. From 5.4.0 Apache writes with fastjson2 (lower-case hex, "
    "U+007F-U+009F, U+2028 and U+2029 raw), and either writer's text conforms for those releases. Receivers "
    "accept any JSON escape.",
    source="fastjson 1.2.69 SerializeWriter.writeStringWithDoubleQuote, IOUtils.specicalFlags_doubleQuotes")
