"""Header text: how strings and integers are written in both header serializations, read off the bytes.

Clients match on Java's text (remarks, values), so these cases compare what a server wrote byte by byte
or field by field: non-ASCII text through a JSON and a ROCKETMQ header (a name server's KV store keeps the
value, a route refusal's remark repeats the topic), fastjson's escapes, big-endian integers, entries that
fill the binary extFields block, extFields as strings in Java HashMap order, and which serialization a
directly written answer uses.
"""

from __future__ import annotations

from collections.abc import Callable

from rocketmq_spec.codec.custom_header import encode_header
from rocketmq_spec.codec.store import decode_records
from rocketmq_spec.conformance.case import Row, case, table
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.target import Server
from rocketmq_spec.conformance.verdict import Info, Unsupported
from rocketmq_spec.conformance.wire import Wire
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.frame import LENGTH_FIELD_SIZE, TYPE_WORD_SIZE, SerializeType
from rocketmq_spec.spec.header_fields import FieldType, HeaderSpec
from rocketmq_spec.spec.headers import PULL_MESSAGE_RESPONSE, SEND_MESSAGE_REQUEST_V2, SEND_MESSAGE_RESPONSE
from rocketmq_spec.spec.json_header import ext_fields_capacity
from rocketmq_spec.spec.message_id import decode_offset_msg_id
from rocketmq_spec.spec.properties import java_hashmap_order
from rocketmq_spec.spec.release_rules import Rule, holds

from .messaging import Client, Message
from .raw_support import BinaryHeader, RawAnswer, exchange_raw, parse_binary_header
from .support import expect_code, expect_success, unique

TEXT = "Grüße, κόσμε, 世界 😀"
"""Two-, three- and four-byte UTF-8 sequences (the last a surrogate pair in Java's UTF-16 strings)."""

ESCAPES: tuple[tuple[str, str, str], ...] = (
    ('"', '\\"', '\\"'), ("\\", "\\\\", "\\\\"), ("\b", "\\b", "\\b"), ("\t", "\\t", "\\t"),
    ("\n", "\\n", "\\n"), ("\f", "\\f", "\\f"), ("\r", "\\r", "\\r"),
    ("\x01", "\\u0001", "\\u0001"), ("\x1f", "\\u001F", "\\u001f"), ("\x7f", "\\u007F", "\x7f"),
    ("\x9f", "\\u009F", "\x9f"), ("\u2028", "\\u2028", "\u2028"), ("\u2029", "\\u2029", "\u2029"),
    ("/", "/", "/"), ("é", "é", "é"), ("\xa0", "\xa0", "\xa0"),
)
"""Each character, how fastjson 1.2.69 writes it inside a JSON string and how fastjson2 (Apache 5.4.0+,
``Rule.FASTJSON2_TEXT``) does (RMQ-HDR-JSON-ESCAPES)."""

SEPARATOR = "|"
ESCAPE_INPUT = SEPARATOR.join(char for char, _, _ in ESCAPES)
FASTJSON_OUTPUT = SEPARATOR.join(written for _, written, _ in ESCAPES)
FASTJSON2_OUTPUT = SEPARATOR.join(written for _, _, written in ESCAPES)


def _escapes_allowed(answer: RawAnswer) -> list[str]:
    """The texts a server of the answer's release may write for ``ESCAPE_INPUT``: fastjson's, and from
    5.4.0 fastjson2's too."""
    if holds(Rule.FASTJSON2_TEXT, answer.command.version):
        return [FASTJSON_OUTPUT, FASTJSON2_OUTPUT]
    return [FASTJSON_OUTPUT]


def _kv_round_trip(namesrv: Server, wire: Wire, check: Check, value: str, put_type: SerializeType,
                   get_type: SerializeType) -> RawAnswer:
    """``value`` put into a fresh KV key in one serialization and read back in another."""
    connection = wire.connect(namesrv.endpoint)
    key = {"namespace": unique("ns"), "key": unique("key")}
    expect_success(check, "PUT_KV_CONFIG", connection.call(RequestCode.PUT_KV_CONFIG, {**key, "value": value},
                                                           serialize_type=put_type))
    answer = exchange_raw(wire.connect(namesrv.endpoint),
                          connection.command(RequestCode.GET_KV_CONFIG, key, serialize_type=get_type))
    expect_success(check, "GET_KV_CONFIG", answer.command)
    return answer


def _route_refusal(namesrv: Server, wire: Wire, check: Check, text: str, serialize_type: SerializeType
                   ) -> RawAnswer:
    """The TOPIC_NOT_EXIST answer to a route request for a topic holding ``text``; its remark names the
    topic."""
    connection = wire.connect(namesrv.endpoint)
    request = connection.command(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": unique("absent") + text},
                                 serialize_type=serialize_type)
    answer = exchange_raw(connection, request)
    expect_code(check, "route of an unknown topic", answer.command, ResponseCode.TOPIC_NOT_EXIST)
    return answer


def _outside_strings(text: str) -> str:
    """The characters of JSON ``text`` that are not inside a string: where whitespace would be
    insignificant."""
    out, in_string, escaped = [], False, False
    for char in text:
        if in_string:
            escaped = not escaped and char == "\\"
            in_string = escaped or char != '"'
        elif char == '"':
            in_string = True
        else:
            out.append(char)
    return "".join(out)


def _binary(check: Check, answer: RawAnswer) -> BinaryHeader:
    """The answer's ROCKETMQ header; a server that answers a ROCKETMQ request in JSON (Apache 5.x, cited
    under RMQ-BRK-ECHO-SERIALIZE-TYPE) shows nothing of how it writes one."""
    if answer.command.serialize_type is not SerializeType.ROCKETMQ:
        raise Unsupported("the ROCKETMQ request was answered in JSON, so the target's ROCKETMQ header writer "
                          "cannot be seen (headers::response_serialization judges the echo)",
                          expected=SerializeType.ROCKETMQ.name, actual=answer.command.serialize_type.name)
    return parse_binary_header(check, answer.header)


def _binary_value(check: Check, answer: RawAnswer, key: bytes) -> bytes | None:
    return dict(_binary(check, answer).ext_entries).get(key)


Judge = Callable[[Server, Wire, Check], None]


def _kv_binary_utf8(namesrv: Server, wire: Wire, check: Check) -> None:
    answer = _kv_round_trip(namesrv, wire, check, TEXT, SerializeType.JSON, SerializeType.ROCKETMQ)
    check.equal("value bytes of the binary extFields entry", TEXT.encode(),
                _binary_value(check, answer, b"value"))


def _kv_binary_read(namesrv: Server, wire: Wire, check: Check) -> None:
    answer = _kv_round_trip(namesrv, wire, check, TEXT, SerializeType.ROCKETMQ, SerializeType.JSON)
    check.equal("value read back (put in a ROCKETMQ header)", TEXT,
                dict(answer.json_ext_pairs()).get("value"))


def _kv_json_text(namesrv: Server, wire: Wire, check: Check) -> None:
    answer = _kv_round_trip(namesrv, wire, check, TEXT, SerializeType.JSON, SerializeType.JSON)
    check.that("value written as raw UTF-8 in the JSON header", f'"value":"{TEXT}"'.encode() in answer.header,
               expected=f'"value":"{TEXT}"', actual=answer.header.decode("utf-8", "replace"))
    check.equal("JSON text outside strings (no insignificant whitespace)", "",
                "".join(c for c in _outside_strings(answer.header.decode()) if c.isspace()))


def _remark_binary_utf8(namesrv: Server, wire: Wire, check: Check) -> None:
    answer = _route_refusal(namesrv, wire, check, TEXT, SerializeType.ROCKETMQ)
    remark = _binary(check, answer).remark
    check.that("remark bytes hold the topic's UTF-8", TEXT.encode() in remark, expected=TEXT.encode(),
               actual=remark)


def _naming_the_topic(answer: RawAnswer, topic: str) -> None:
    """The remark as the vehicle of a header-text check: Java's names the topic ("No topic route info in
    name server for the topic: <t>"); a remark in other words says nothing of how the header writes the
    topic's characters, and its words are not judged (the verdict policy), so the case is INFO."""
    remark = dict(answer.json_pairs()).get("remark") or ""
    if topic not in remark:
        raise Info("the remark does not name the topic, so the JSON text writer is not seen through it",
                   expected=f"a remark holding {topic!r}", actual=remark)


def _remark_json_text(namesrv: Server, wire: Wire, check: Check) -> None:
    answer = _route_refusal(namesrv, wire, check, TEXT, SerializeType.JSON)
    _naming_the_topic(answer, TEXT)
    check.that("written raw, not as \\u escapes", TEXT.encode() in answer.header, expected=TEXT,
               actual=answer.header.decode("utf-8", "replace"))


def _kv_escapes(namesrv: Server, wire: Wire, check: Check) -> None:
    answer = _kv_round_trip(namesrv, wire, check, ESCAPE_INPUT, SerializeType.JSON, SerializeType.JSON)
    text = answer.header.decode("utf-8")
    start = text.find('"value":"') + len('"value":"')
    allowed = _escapes_allowed(answer)
    written = next((t for t in allowed if text.startswith(t, start)), text[start:start + len(allowed[0])])
    check.that("value as written in the JSON header", written in allowed, expected=allowed, actual=written)
    check.equal("value as decoded", ESCAPE_INPUT, dict(answer.json_ext_pairs()).get("value"))


def _remark_escapes(namesrv: Server, wire: Wire, check: Check) -> None:
    answer = _route_refusal(namesrv, wire, check, ESCAPE_INPUT, SerializeType.JSON)
    _naming_the_topic(answer, ESCAPE_INPUT)
    text = answer.header.decode("utf-8")
    allowed = _escapes_allowed(answer)
    check.that("remark writes the topic's characters as fastjson does", any(t in text for t in allowed),
               expected=allowed, actual=text)


@table("judge", [
    Row("kv-value-binary-utf8", "RMQ-HDR-BIN-UTF8", "A non-ASCII value put in JSON comes back in a ROCKETMQ "
        "header as its UTF-8 bytes.", _kv_binary_utf8),
    Row("kv-value-binary-read", "RMQ-HDR-BIN-UTF8", "A non-ASCII value put in a ROCKETMQ header is read as "
        "UTF-8: a JSON GET_KV_CONFIG returns the same text.", _kv_binary_read),
    Row("remark-binary-utf8", "RMQ-HDR-BIN-UTF8", "A remark naming a non-ASCII topic is written in a "
        "ROCKETMQ header as UTF-8.", _remark_binary_utf8),
    Row("kv-value-json-text", "RMQ-HDR-JSON-TEXT", "A non-ASCII value is written in a JSON header as raw "
        "UTF-8, and the header has no whitespace outside strings.", _kv_json_text),
    Row("remark-json-text", "RMQ-HDR-JSON-TEXT", "A remark naming a non-ASCII topic is written in a JSON "
        "header as raw UTF-8.", _remark_json_text),
    Row("kv-value-escapes", "RMQ-HDR-JSON-ESCAPES", "A value holding quote, backslash, control characters, "
        "U+007F-U+009F, U+2028/9 and '/' is written with fastjson's escapes.", _kv_escapes),
    Row("remark-escapes", "RMQ-HDR-JSON-ESCAPES", "A remark naming a topic holding those characters writes "
        "them with fastjson's escapes.", _remark_escapes),
])
def test_header_text(judge: Judge, namesrv: Server, wire: Wire, check: Check) -> None:
    judge(namesrv, wire, check)


PROBE_OPAQUE = 0x01020304
"""An opaque whose four bytes differ, so a little-endian writer or reader cannot echo it by chance."""


@case("RMQ-FRAME-BIG-ENDIAN", "A ROCKETMQ request's opaque 0x01020304 is read and echoed big-endian; the "
      "answer's length word, header length, code, version and flag are big-endian too.")
def test_big_endian(server: Server, wire: Wire, check: Check) -> None:
    connection = wire.connect(server.endpoint)
    answer = exchange_raw(connection, server.ping_command(connection, serialize_type=SerializeType.ROCKETMQ,
                                                          opaque=PROBE_OPAQUE))
    body = answer.command.body or b""
    check.equal("length word = type word + header + body", TYPE_WORD_SIZE + answer.header_length + len(body),
                answer.length_word)
    check.equal("opaque echoed (the request's read big-endian)", PROBE_OPAQUE, answer.command.opaque)
    header = _binary(check, answer)
    check.equal("opaque bytes", PROBE_OPAQUE.to_bytes(4, "big"), answer.header[5:9])
    check.equal("code (0 SUCCESS)", ResponseCode.SUCCESS, header.code)
    check.equal("flag (response bit)", 1, header.flag)
    check.equal("version word", answer.command.version, header.version)


@table("serialize_type", [
    Row(f"no-body-{t.name.lower()}", "RMQ-FRAME-EMPTY-BODY", f"An answer without a body ({t.name} "
        "GET_KV_CONFIG) ends with its header: the length word counts no body bytes, and it decodes as "
        "null.", t) for t in SerializeType])
def test_empty_body(serialize_type: SerializeType, namesrv: Server, wire: Wire, check: Check) -> None:
    answer = _kv_round_trip(namesrv, wire, check, "v", serialize_type, serialize_type)
    check.equal("length word", TYPE_WORD_SIZE + answer.header_length, answer.length_word)
    check.equal("frame size", LENGTH_FIELD_SIZE + answer.length_word, len(answer.frame))
    check.equal("decoded body", None, answer.command.body)


@case("RMQ-HDR-BIN-MAP-ENTRY", "A ROCKETMQ answer's extFields block is a run of entries (int16 key length, "
      "key, int32 value length, value) that fills it exactly; one without extFields has a block of length 0.")
def test_binary_map_entries(namesrv: Server, wire: Wire, check: Check) -> None:
    answer = _kv_round_trip(namesrv, wire, check, "v1", SerializeType.ROCKETMQ, SerializeType.ROCKETMQ)
    check.equal("entries", [(b"value", b"v1")], _binary(check, answer).ext_entries)
    connection = wire.connect(namesrv.endpoint)
    put = connection.command(RequestCode.PUT_KV_CONFIG, {"namespace": unique("ns"), "key": "k", "value": "v"},
                             serialize_type=SerializeType.ROCKETMQ)
    empty = exchange_raw(connection, put)
    expect_success(check, "PUT_KV_CONFIG", empty.command)
    check.equal("entries of an answer without extFields", [],
                _binary(check, empty).ext_entries)
    check.equal("decoded extFields", None, empty.command.ext_fields or None)


def _send_answer(client: Client) -> tuple[RawAnswer, HeaderSpec]:
    topic = client.create_topic()
    request = client.connection.command(RequestCode.SEND_MESSAGE_V2, *_send_parts(client, topic))
    return exchange_raw(client.connection, request), SEND_MESSAGE_RESPONSE


def _send_parts(client: Client, topic: str) -> tuple[dict[str, str], bytes]:
    message = Message()
    return encode_header(SEND_MESSAGE_REQUEST_V2, client.send_values(topic, 0, message)), message.body


def _pull_answer(client: Client) -> tuple[RawAnswer, HeaderSpec]:
    topic = client.create_topic()
    client.send(topic)
    client.settle()
    return exchange_raw(client.connection, client.pull_command(topic, 0, 0)), PULL_MESSAGE_RESPONSE


ANSWERS = {"send": _send_answer, "pull": _pull_answer}
ADDED_FIRST = {"send"}
"""Answers whose processor adds extFields (MSG_REGION, TRACE_ON) before the header's: Java creates the map
in addExtField (``rocketmq_spec.spec.json_header.ext_fields_capacity``)."""


@table("answer", [
    *(Row(f"{name}-ext-order", "RMQ-HDR-JSON-EXT-ORDER", f"The extFields of a JSON {name} answer come in "
          "Java HashMap order for the keys written.", name) for name in ANSWERS)])
def test_ext_order(answer: str, broker: Server, wire: Wire, check: Check) -> None:
    raw, _ = ANSWERS[answer](Client(wire.connect(broker.endpoint), check))
    expect_success(check, answer, raw.command)
    keys = [key for key, _ in raw.json_ext_pairs()]
    capacity = ext_fields_capacity(answer in ADDED_FIRST, raw.command.version)
    check.equal(f"extFields keys as written vs HashMap order (capacity {capacity})",
                java_hashmap_order(keys, initial_capacity=capacity), keys)


_WRITTEN: dict[FieldType, Callable[[str], bool]] = {
    FieldType.INT: lambda v: v.lstrip("-").isdigit(),
    FieldType.LONG: lambda v: v.lstrip("-").isdigit(),
    FieldType.BOOLEAN: lambda v: v in ("true", "false"),
}


@table("answer", [
    *(Row(f"{name}-ext-strings", "RMQ-CMD-EXT-STRINGS", f"Every extFields value of a JSON {name} answer is a "
          "string: integers in decimal, booleans true/false; no null values.", name) for name in ANSWERS)])
def test_ext_strings(answer: str, broker: Server, wire: Wire, check: Check) -> None:
    raw, spec = ANSWERS[answer](Client(wire.connect(broker.endpoint), check))
    expect_success(check, answer, raw.command)
    pairs = raw.json_ext_pairs()
    check.equal("values that are not JSON strings", [], [(k, v) for k, v in pairs if not isinstance(v, str)])
    fields = spec.by_wire_name()
    badly_written = [(k, v) for k, v in pairs
                     if k in fields and not _WRITTEN.get(fields[k].type, lambda _: True)(v)]
    check.equal("typed fields not written as decimal / true / false", [], badly_written)
    check.that("the declared fields were sent", any(k in fields for k, _ in pairs), expected=list(fields),
               actual=[k for k, _ in pairs])


@case("RMQ-FRAME-RESPONSE-SERIALIZE-TYPE", "VIEW_MESSAGE_BY_ID, whose answer Java writes to the channel "
      "itself, is answered to a ROCKETMQ request in the server's default serialization (JSON), and the "
      "client reads it: the message viewed.")
def test_direct_answer_serialization(broker: Server, wire: Wire, check: Check) -> None:
    client = Client(wire.connect(broker.endpoint), check)
    topic = client.create_topic()
    sent = client.send(topic, Message(b"viewed"))
    client.settle()
    offset = decode_offset_msg_id(sent.msg_ids[0]).offset
    view = client.connection.call(RequestCode.VIEW_MESSAGE_BY_ID, {"offset": str(offset)},
                                  serialize_type=SerializeType.ROCKETMQ)
    expect_success(check, "VIEW_MESSAGE_BY_ID", view)
    check.equal("answer serialization", SerializeType.JSON.name, view.serialize_type.name)
    check.equal("message viewed", [b"viewed"], [r.body for r in decode_records(view.body or b"")])
