"""Header values: how a receiver reads what a header carries, judged by the effect each reading has.

A name server picks how it writes a route's integer map keys by two header values, the request's
``version`` word and ``acceptStandardJsonOnly``; reading either wrongly (byte order, the version's 16-bit
sign, a boolean spelled "TRUE" or "1" or given as a raw JSON literal) shows as quoted or unquoted keys.
A broker's GET_MAX_OFFSET shows a queue id given as a raw JSON number, SEND_MESSAGE_V2's one-letter keys
show in the message stored, and a code past int16 shows what each serialization can carry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.custom_header import decode_header, encode_header
from rocketmq_spec.conformance.case import Row, case, table
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.target import Server
from rocketmq_spec.conformance.verdict import Unsupported
from rocketmq_spec.conformance.wire import RESPONSE_TIMEOUT, Wire
from rocketmq_spec.spec import remarks
from rocketmq_spec.spec.codes import RequestCode, ResponseCode, codes_for
from rocketmq_spec.spec.frame import SerializeType
from rocketmq_spec.spec.headers import SEND_MESSAGE_REQUEST_V2, SEND_MESSAGE_RESPONSE
from rocketmq_spec.spec.properties import PropertyKey, parse_properties
from rocketmq_spec.spec.sysflag import CompressionType, with_compression

from .messaging import Client, Message
from .support import expect_code, expect_success, unique
from .test_headers import _raw_json_request
from .test_namesrv import _registered


@dataclass(frozen=True)
class RouteAsk:
    """A route request: the version word, serialization and acceptStandardJsonOnly (a raw JSON literal when
    not a string), and whether the answer must quote the brokerAddrs keys."""

    version: int
    quoted: bool
    standard_json_only: str | bool | None = None
    serialize_type: SerializeType = SerializeType.JSON


ROUTE_ASKS = [
    Row("version-400-unquoted", "RMQ-CMD-BODY-NUMERIC-KEYS", "A route asked with version 400 holds "
        "brokerAddrs with unquoted integer keys ({0:\"ip:port\"}).", RouteAsk(400, quoted=False)),
    Row("standard-json-only-quoted", "RMQ-CMD-BODY-NUMERIC-KEYS", "A route asked with version 400 and "
        "acceptStandardJsonOnly=true quotes them.", RouteAsk(400, quoted=True, standard_json_only="true")),
    Row("version-401-quoted", "RMQ-HDR-VERSION-ORDINAL", "The version word is compared as an ordinal: 401 "
        "(V4_9_4) and above get quoted keys.", RouteAsk(401, quoted=True)),
    Row("boolean-upper-case", "RMQ-CMD-BOOLEAN", "acceptStandardJsonOnly=\"TRUE\" is true (any case).",
        RouteAsk(400, quoted=True, standard_json_only="TRUE")),
    Row("boolean-one", "RMQ-CMD-BOOLEAN", "acceptStandardJsonOnly=\"1\" is read as false, not refused.",
        RouteAsk(400, quoted=False, standard_json_only="1")),
    Row("ext-raw-true", "RMQ-HDR-JSON-EXT-STRINGS", "acceptStandardJsonOnly given as the raw JSON literal "
        "true is read as \"true\".", RouteAsk(400, quoted=True, standard_json_only=True)),
    Row("binary-version-minus-one", "RMQ-HDR-BIN-CODE-WIDTH", "A ROCKETMQ version word 0xFFFF is the signed "
        "16-bit -1, below 401: unquoted keys.",
        RouteAsk(-1, quoted=False, serialize_type=SerializeType.ROCKETMQ)),
    Row("binary-version-401", "RMQ-FRAME-BIG-ENDIAN", "A ROCKETMQ version word 401 is read big-endian "
        "(little-endian it would be negative): quoted keys.",
        RouteAsk(401, quoted=True, serialize_type=SerializeType.ROCKETMQ)),
]


def _route_command(ask: RouteAsk, topic: str, opaque: int) -> RemotingCommand | dict[str, Any]:
    """The request as a command, or as a raw JSON header when a field is a JSON literal."""
    ext: dict[str, Any] = {"topic": topic}
    if ask.standard_json_only is not None:
        ext["acceptStandardJsonOnly"] = ask.standard_json_only
    if isinstance(ask.standard_json_only, bool):
        return {"code": RequestCode.GET_ROUTEINFO_BY_TOPIC, "language": "JAVA", "version": ask.version,
                "opaque": opaque, "flag": 0, "serializeTypeCurrentRPC": "JSON", "extFields": ext}
    return RemotingCommand.request(RequestCode.GET_ROUTEINFO_BY_TOPIC, ext, language="JAVA",
                                   version=ask.version, opaque=opaque, serialize_type=ask.serialize_type)


@table("ask", ROUTE_ASKS)
def test_route_keys_by_header(ask: RouteAsk, namesrv: Server, wire: Wire, check: Check) -> None:
    broker, connection = _registered(check, namesrv, wire)
    request = _route_command(ask, broker.topic, opaque=7)
    if isinstance(request, dict):
        _raw_json_request(connection, request)
    else:
        connection.send(request)
    response = connection.response_to(7, RESPONSE_TIMEOUT)
    check.that("answered", response is not None, expected="a route", actual=response)
    assert response is not None
    expect_success(check, "route", response)
    body = response.body or b""
    written = ("quoted" if b'"brokerAddrs":{"0":' in body else
               "unquoted" if b'"brokerAddrs":{0:' in body else body.decode("utf-8", "replace"))
    check.equal("brokerAddrs keys", "quoted" if ask.quoted else "unquoted", written)


@case("RMQ-HDR-JSON-EXT-STRINGS", "GET_MAX_OFFSET whose queueId is the raw JSON number 1 reads queue 1: the "
      "offset of the two messages stored there, not of queue 0's none.")
def test_raw_json_number(broker: Server, client: Client, wire: Wire, check: Check) -> None:
    topic = client.create_topic()
    for _ in range(2):
        client.send(topic, queue_id=1)
    client.settle()
    connection = wire.connect(broker.endpoint)
    _raw_json_request(connection, {"code": RequestCode.GET_MAX_OFFSET, "language": "JAVA", "version": 409,
                                   "opaque": 9, "flag": 0, "extFields": {"topic": topic, "queueId": 1}})
    response = connection.response_to(9, RESPONSE_TIMEOUT)
    check.that("answered", response is not None, expected="an offset", actual=response)
    assert response is not None
    expect_success(check, "GET_MAX_OFFSET", response)
    check.equal("max offset of queue 1", "2", (response.ext_fields or {}).get("offset"))


V2_MESSAGE = Message.compressed(b"one-letter keys", tags="TagV2", flag=0x2A, born_timestamp=1_600_000_000_123)
V2_QUEUE = 2
V2_RECONSUME_TIMES = 3


@case("RMQ-CMD-SEND-V2-KEYS", "SEND_MESSAGE_V2's keys a..m are read as SendMessageRequestHeader's fields in "
      "declaration order: the message pulled back has the topic (b), queue (e), sysFlag (f), bornTimestamp "
      "(g), flag (h), properties (i) and reconsumeTimes (j) sent.")
def test_send_v2_keys(client: Client, check: Check) -> None:
    topic = client.create_topic()
    values = {**client.send_values(topic, V2_QUEUE, V2_MESSAGE), "reconsumeTimes": V2_RECONSUME_TIMES}
    response = client.connection.call(RequestCode.SEND_MESSAGE_V2,
                                      encode_header(SEND_MESSAGE_REQUEST_V2, values), V2_MESSAGE.body)
    expect_success(check, "SEND_MESSAGE_V2", response)
    client.expect_stored(topic, V2_QUEUE, int(decode_header(SEND_MESSAGE_RESPONSE,
                                                            response.ext_fields)["queueOffset"]) + 1)
    records = client.pulled(topic, V2_QUEUE).records
    check.equal("messages pulled", 1, len(records))
    record = records[0]
    compressed = with_compression(0, CompressionType.ZLIB)
    check.equal("(topic, queueId, compressed bit, bornTimestamp, flag, reconsumeTimes, body)",
                (topic, V2_QUEUE, compressed, V2_MESSAGE.born_timestamp, V2_MESSAGE.flag, V2_RECONSUME_TIMES,
                 V2_MESSAGE.body),
                (record.topic, record.queue_id, record.sys_flag & compressed, record.born_timestamp,
                 record.flag, record.reconsume_times, record.body))
    stored = parse_properties(record.properties_text)
    check.equal("(TAGS, UNIQ_KEY) stored", (V2_MESSAGE.tags, V2_MESSAGE.uniq),
                (stored.get(PropertyKey.TAGS), stored.get(PropertyKey.UNIQ_KEY)))


WIDE_CODE = RequestCode.POLLING_INFO
"""A 5.x POP code above 32767 (200055): its low 16 bits are 3447, which no release declares."""


def _int16(value: int) -> int:
    low = value & 0xFFFF
    return low - 0x10000 if low >= 0x8000 else low


@case("RMQ-CODE-INT16", "A code above 32767 travels only in JSON: POLLING_INFO (200055) in a JSON header is "
      "served by a 5.x broker, while a ROCKETMQ header carries only its low 16 bits (3447), which the "
      "broker answers as an unknown code.")
def test_wide_code(broker: Server, wire: Wire, check: Check) -> None:
    connection = wire.connect(broker.endpoint)
    narrow = connection.call(_int16(WIDE_CODE), {"consumerGroup": unique("cg"), "topic": unique("topic"),
                                                 "queueId": "0"}, serialize_type=SerializeType.ROCKETMQ)
    expect_code(check, "the code's low 16 bits", narrow, ResponseCode.REQUEST_CODE_NOT_SUPPORTED)
    check.equal("remark names the 16-bit code", remarks.NOT_SUPPORTED.format(code=_int16(WIDE_CODE)),
                narrow.remark)
    wide = connection.call(WIDE_CODE, {"consumerGroup": unique("cg"), "topic": unique("topic"),
                                       "queueId": "0"})
    if not any(code.present_for_version(wide.version) for code in codes_for(WIDE_CODE, is_response=False)):
        raise Unsupported(f"the target's release (version {wide.version}) declares no code {WIDE_CODE}",
                          expected="a 5.x broker", actual=wide.version)
    check.that("POLLING_INFO in JSON is served (not answered 3)",
               wide.code != ResponseCode.REQUEST_CODE_NOT_SUPPORTED, expected="a code other than 3",
               actual=f"{wide.code} {wide.remark or ''}".strip())
