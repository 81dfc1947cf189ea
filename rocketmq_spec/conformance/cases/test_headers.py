"""Headers: both serializations, opaque and flag handling, unknown codes and values, absent fields.

Rows run against the name server and the broker alike unless they name a role. A 4.9.8 name server does
not answer unknown request codes at all; the suite accepts that as NON-STRICT, citing the Java source.
"""

from __future__ import annotations

import json
import struct
from typing import Any

from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.conformance.case import Row, case, table
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.target import Server
from rocketmq_spec.conformance.wire import RESPONSE_TIMEOUT, SILENCE_WAIT, Connection, Wire
from rocketmq_spec.spec import remarks
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.frame import TYPE_WORD_SIZE, SerializeType
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC

from .support import expect_code, expect_refused, expect_success, unique

UNKNOWN_CODE = 29999
"""A request code no RocketMQ release declares, small enough for the ROCKETMQ header's int16."""

"""Java's remark for REQUEST_CODE_NOT_SUPPORTED, leading space included (NettyRemotingAbstract)."""

_NAMESRV_SILENT_NOTE = ("4.9.8's name server registers DefaultRequestProcessor as default processor, which "
                        "returns null for unknown codes, so no response is sent (namesrv/src/main/java/org/"
                        "apache/rocketmq/namesrv/processor/DefaultRequestProcessor.java).")

_BROKER_ONEWAY_NOTE = ("4.9.8's broker registers AdminBrokerProcessor as default processor; it answers "
                       "an unknown code with 3, and NettyRemotingAbstract.processRequestCommand drops the "
                       "answer to a oneway request (broker/src/main/java/org/apache/rocketmq/broker/"
                       "processor/AdminBrokerProcessor.java, getUnknownCmdResponse).")


def _ping(server: Server, wire: Wire, **fields: Any) -> tuple[RemotingCommand, RemotingCommand]:
    connection = wire.connect(server.endpoint)
    request = server.ping_command(connection, **fields)
    return request, connection.exchange(request)


def _raw_json_request(connection: Connection, header: dict[str, Any]) -> None:
    text = json.dumps(header).encode()
    connection.send_bytes(struct.pack(">iI", TYPE_WORD_SIZE + len(text), len(text)) + text)


SERIALIZATIONS = [
    Row(f"{t.name.lower()}-answered", "RMQ-FRAME-TYPE-WORD",
        f"A request with a {t.name} header is answered SUCCESS with a decodable response.", t)
    for t in SerializeType
]


@table("serialize_type", SERIALIZATIONS)
def test_serialization_answered(serialize_type: SerializeType, server: Server, wire: Wire,
                                check: Check) -> None:
    _, response = _ping(server, wire, serialize_type=serialize_type)
    expect_success(check, f"{serialize_type.name} request", response)


@table("serialize_type", [
    Row(f"echo-{t.name.lower()}", "RMQ-BRK-ECHO-SERIALIZE-TYPE",
        f"A {t.name} request is answered in {t.name} on the normal path.", t) for t in SerializeType])
def test_response_serialization(serialize_type: SerializeType, server: Server, wire: Wire,
                                check: Check) -> None:
    _, response = _ping(server, wire, serialize_type=serialize_type)
    check.equal("response serialization", serialize_type.name, response.serialize_type.name)


@table("opaque", [
    Row(f"opaque-{name}", "RMQ-FRAME-OPAQUE", f"A response carries its request's opaque ({value}).", value)
    for name, value in (("zero", 0), ("int-max", 2**31 - 1), ("minus-one", -1), ("int-min", -(2**31)))])
def test_opaque_echoed(opaque: int, server: Server, wire: Wire, check: Check) -> None:
    _, response = _ping(server, wire, opaque=opaque)
    check.equal("response opaque", opaque, response.opaque)


@case("RMQ-FRAME-FLAG-RESPONSE", "A response has flag bit 0 set and the oneway bit clear.")
def test_response_flag(server: Server, wire: Wire, check: Check) -> None:
    _, response = _ping(server, wire)
    check.that("response bit", response.is_response, expected=True, actual=response.flag)
    check.that("oneway bit", not response.is_oneway, expected=False, actual=response.flag)


def _expect_oneway_silent(server: Server, connection: Connection, oneway: RemotingCommand,
                          check: Check) -> None:
    """Send ``oneway``; the two-way request after it is answered and nothing answers the oneway one."""
    connection.send(oneway)
    follow = connection.exchange(server.ping_command(connection))
    expect_success(check, "the two-way request after it", follow)
    late = connection.next_command(SILENCE_WAIT)
    stray = [c.opaque for c in [*connection.drain(), late] if c is not None]
    check.equal("frames sent for the oneway request", [], stray)


@case("RMQ-FRAME-FLAG-ONEWAY",
      "A oneway request gets no response; the next two-way request on the connection is answered.")
def test_oneway_not_answered(server: Server, wire: Wire, check: Check) -> None:
    connection = wire.connect(server.endpoint)
    _expect_oneway_silent(server, connection, server.ping_command(connection, oneway=True), check)


@table("serialize_type", [
    Row(f"unknown-code-{t.name.lower()}", "RMQ-CODE-NOT-SUPPORTED",
        f"An unknown request code in a {t.name} header is answered 3 with Java's remark (a 4.9.8 name server "
        "stays silent).", t, java_note=_NAMESRV_SILENT_NOTE) for t in SerializeType])
def test_unknown_code(serialize_type: SerializeType, server: Server, wire: Wire, check: Check) -> None:
    connection = wire.connect(server.endpoint)
    request = connection.command(UNKNOWN_CODE, serialize_type=serialize_type)
    connection.send(request)
    # the answer is what the clause requires, so it gets the ordinary response bound (a loaded machine's
    # broker took longer than SILENCE_WAIT); only a name server's silence is then tolerated
    response = connection.response_to(request.opaque, RESPONSE_TIMEOUT)
    if response is None and server.role == "namesrv":
        check.tolerate("response to an unknown code", expected=ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
                       actual="no response", why="RMQ-CODE-NAMESRV-UNKNOWN: 4.9.8 name servers stay silent")
        return
    check.that("answered", response is not None, expected="a response", actual=response)
    assert response is not None
    expect_code(check, "unknown code", response, ResponseCode.REQUEST_CODE_NOT_SUPPORTED)
    check.equal("remark", remarks.NOT_SUPPORTED.format(code=UNKNOWN_CODE), response.remark)
    check.equal("opaque", request.opaque, response.opaque)


@case("RMQ-FRAME-FLAG-ONEWAY", "A oneway request with an unknown code gets no response either (a broker's "
      "default processor answers 3 only to two-way requests); the connection goes on being served.",
      java_note=_BROKER_ONEWAY_NOTE)
def test_unknown_code_oneway(broker: Server, wire: Wire, check: Check) -> None:
    connection = wire.connect(broker.endpoint)
    _expect_oneway_silent(broker, connection, connection.command(UNKNOWN_CODE, oneway=True), check)


MISSING_FIELDS_NAMESRV = [
    Row("namesrv-route-without-topic", "RMQ-CMD-REQUIRED",
        "GET_ROUTEINFO_BY_TOPIC without topic is answered with an error that keeps the opaque.",
        (RequestCode.GET_ROUTEINFO_BY_TOPIC, {"acceptStandardJsonOnly": "true"})),
    Row("namesrv-kv-without-key", "RMQ-CMD-REQUIRED",
        "GET_KV_CONFIG without key is answered with an error that keeps the opaque.",
        (RequestCode.GET_KV_CONFIG, {"namespace": "conformance"})),
]
MISSING_FIELDS_BROKER = [
    Row("broker-query-offset-without-group", "RMQ-CMD-REQUIRED",
        "QUERY_CONSUMER_OFFSET without consumerGroup is answered with an error that keeps the opaque.",
        (RequestCode.QUERY_CONSUMER_OFFSET, {"topic": "conformance", "queueId": "0"})),
    Row("broker-create-topic-without-perm", "RMQ-CMD-REQUIRED",
        "UPDATE_AND_CREATE_TOPIC without perm is answered with an error that keeps the opaque.",
        (RequestCode.UPDATE_AND_CREATE_TOPIC, {"topic": "conformance_missing_perm",
                                               "defaultTopic": DEFAULT_TOPIC,
                                               "readQueueNums": "1", "writeQueueNums": "1",
                                               "topicFilterType": "SINGLE_TAG", "order": "false"})),
    Row("broker-consumer-list-without-group", "RMQ-CMD-REQUIRED",
        "GET_CONSUMER_LIST_BY_GROUP without consumerGroup is answered with an error that keeps the opaque.",
        (RequestCode.GET_CONSUMER_LIST_BY_GROUP, {"unrelated": "x"})),
]


def _missing_field(server: Server, wire: Wire, check: Check, request: tuple[int, dict[str, str]]) -> None:
    connection = wire.connect(server.endpoint)
    command = connection.command(request[0], request[1])
    response = connection.exchange(command)
    expect_refused(check, "request lacking a required field", response)
    check.equal("opaque", command.opaque, response.opaque)


@table("lacking", MISSING_FIELDS_NAMESRV)
def test_missing_field_namesrv(lacking: tuple[int, dict[str, str]], namesrv: Server, wire: Wire,
                               check: Check) -> None:
    _missing_field(namesrv, wire, check, lacking)


@table("lacking", MISSING_FIELDS_BROKER)
def test_missing_field_broker(lacking: tuple[int, dict[str, str]], broker: Server, wire: Wire,
                              check: Check) -> None:
    _missing_field(broker, wire, check, lacking)


@table("fields", [
    *(Row(f"language-{name.lower()}", "RMQ-HDR-LANGUAGE-NAME",
          f"A JSON request announcing language {name} is answered normally.", {"language": name})
      for name in ("PYTHON", "GO", "RUST", "CPP")),
    Row("language-unknown-name", "RMQ-HDR-LANGUAGE-UNKNOWN",
        "A JSON request with an unknown language name is answered normally.", {"language": "COBOL"}),
    Row("language-unknown-byte", "RMQ-HDR-LANGUAGE-UNKNOWN",
        "A ROCKETMQ request with an unknown language byte is answered normally.",
        {"language": 200, "serialize_type": SerializeType.ROCKETMQ}),
    *(Row(f"version-{name}", "RMQ-HDR-JSON-DEFAULTS", f"A request announcing version {value} is answered.",
          {"version": value}) for name, value in (("zero", 0), ("int16-max", 32767), ("minus-one", -1))),
    Row("extra-ext-field", "RMQ-CMD-EXTRA-KEYS", "extFields keys the command does not define are ignored.",
        {"ext_fields": {"conformanceUnknownKey": "x"}}),
    Row("remark-on-request", "RMQ-HDR-JSON-KEYS", "A request carrying a remark is answered normally.",
        {"remark": "conformance"}),
])
def test_header_values_accepted(fields: dict[str, Any], server: Server, wire: Wire, check: Check) -> None:
    connection = wire.connect(server.endpoint)
    request = server.ping_command(connection, **{k: v for k, v in fields.items() if k != "ext_fields"})
    if "ext_fields" in fields:
        request.ext_fields = {**(request.ext_fields or {}), **fields["ext_fields"]}
    expect_success(check, "request", connection.exchange(request))


@table("extra", [
    Row("json-unknown-key", "RMQ-HDR-JSON-DEFAULTS", "Unknown keys of a JSON header are ignored.",
        {"conformanceKey": 1}),
    Row("json-minimal", "RMQ-HDR-JSON-DEFAULTS",
        "A JSON header with only code and opaque is read with defaults and answered.", None),
])
def test_json_header_keys(extra: dict[str, Any] | None, server: Server, wire: Wire, check: Check) -> None:
    connection = wire.connect(server.endpoint)
    ping = server.ping_command(connection)
    header: dict[str, Any] = {"code": ping.code, "opaque": ping.opaque}
    if extra is not None:
        header |= {"flag": 0, "language": "JAVA", "version": 409, "serializeTypeCurrentRPC": "JSON", **extra}
    _raw_json_request(connection, header)
    response = connection.response_to(ping.opaque, RESPONSE_TIMEOUT)
    check.that("answered", response is not None, expected="a response", actual=response)
    assert response is not None
    expect_success(check, "request", response)


@table("serialize_type", [
    Row("empty-topic-json", "RMQ-HDR-JSON-NULLS",
        "In JSON an empty string is a value: a route request for topic \"\" is answered TOPIC_NOT_EXIST.",
        SerializeType.JSON),
    Row("empty-topic-rocketmq", "RMQ-HDR-BIN-EMPTY-NULL",
        "In ROCKETMQ an empty string decodes as null: a route request for topic \"\" lacks its topic and is "
        "refused with an error other than TOPIC_NOT_EXIST.", SerializeType.ROCKETMQ),
])
def test_empty_versus_absent(serialize_type: SerializeType, namesrv: Server, wire: Wire,
                             check: Check) -> None:
    connection = wire.connect(namesrv.endpoint)
    response = connection.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": ""},
                               serialize_type=serialize_type)
    if serialize_type is SerializeType.JSON:
        expect_code(check, "route of topic \"\"", response, ResponseCode.TOPIC_NOT_EXIST)
    else:
        expect_refused(check, "route of a null topic", response)
        check.that("not TOPIC_NOT_EXIST", response.code != ResponseCode.TOPIC_NOT_EXIST,
                   expected="an error for the missing field", actual=response.code)


@case("RMQ-NS-TOPIC-NOT-EXIST", "A route request for a topic nobody serves is answered 17 TOPIC_NOT_EXIST.")
def test_topic_not_exist(namesrv: Server, wire: Wire, check: Check) -> None:
    connection = wire.connect(namesrv.endpoint)
    response = connection.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": unique("absent")})
    expect_code(check, "route of an unknown topic", response, ResponseCode.TOPIC_NOT_EXIST)
