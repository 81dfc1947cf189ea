"""Frames and headers: what every request of a client looks like, whatever it asks."""

from __future__ import annotations

from rocketmq_spec.codec.acl import verify
from rocketmq_spec.conformance.case import Row, case, table
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.clients import scenarios as sc
from rocketmq_spec.conformance.clients.judge import Scenario
from rocketmq_spec.conformance.clients.observe import SEND_CODES
from rocketmq_spec.conformance.clients.plugin import CaseRunner
from rocketmq_spec.conformance.clients.recording import ConnectionEvent, requests
from rocketmq_spec.spec.codes import RequestCode
from rocketmq_spec.spec.frame import Flag, SerializeType
from rocketmq_spec.spec.headers import header_for
from rocketmq_spec.spec.language import LanguageCode

ANSWERED_CODES = (
    RequestCode.GET_ROUTEINFO_BY_TOPIC,
    RequestCode.HEART_BEAT,
    RequestCode.PULL_MESSAGE,
    RequestCode.QUERY_CONSUMER_OFFSET,
    RequestCode.GET_MAX_OFFSET,
    RequestCode.GET_CONSUMER_LIST_BY_GROUP,
    RequestCode.UNREGISTER_CLIENT,
)
"""Requests whose callers need the answer: none of them can be oneway."""

BOTH = [
    Row("produce", "RMQ-CLIENT-FRAME", "A producer's frames decode", sc.PRODUCE),
    Row("consume", "RMQ-CLIENT-FRAME", "A consumer's frames decode", sc.CONSUME),
]


@table("scenario", BOTH)
def test_frame(run: CaseRunner, check: Check, scenario: Scenario) -> None:
    result = run(scenario)
    refused = [e for e in result.connection_events if e.kind is ConnectionEvent.REFUSED_FRAME]
    check.that(
        "frames the relay could not decode",
        not refused,
        expected=[],
        actual=[f"{e.role.value} c{e.connection}: {e.detail}" for e in refused],
    )
    check.that("requests seen", bool(requests(result.frames)), expected="at least one", actual=0)


@case("RMQ-CLIENT-LANGUAGE", "Every request names one known LanguageCode")
def test_language(run: CaseRunner, check: Check) -> None:
    seen = {str(f.command.language) for f in requests(run(sc.PRODUCE).frames)}
    known = {code.name for code in LanguageCode}
    check.that(
        "language names",
        len(seen) == 1 and seen <= known,
        expected="one of " + ", ".join(sorted(known)),
        actual=sorted(seen),
    )


@case("RMQ-CLIENT-VERSION", "Every request carries one non-zero version word")
def test_version(run: CaseRunner, check: Check) -> None:
    seen = {f.command.version for f in requests(run(sc.PRODUCE).frames)}
    check.that(
        "version words", len(seen) == 1 and 0 not in seen, expected="one non-zero value", actual=sorted(seen)
    )


@case("RMQ-CLIENT-SERIALIZE-TYPE", "A JSON header does not name another serialization")
def test_serialize_type(run: CaseRunner, check: Check) -> None:
    wrong = [
        (f.command.code, f.declared_type)
        for f in requests(run(sc.PRODUCE).frames)
        if f.declared_type is not None and f.declared_type != f.command.serialize_type.name
    ]
    check.that(
        "serializeTypeCurrentRPC against the type byte",
        not wrong,
        expected=[t.name for t in SerializeType],
        actual=wrong,
    )


@case("RMQ-CLIENT-FLAG", "Requests clear the response bit; requests that need an answer are not oneway")
def test_flag(run: CaseRunner, check: Check) -> None:
    frames = run(sc.PRODUCE).frames
    asked = {(f.connection, f.command.opaque) for f in frames if not f.outbound and f.is_request}
    stray = [
        f.command.code
        for f in frames
        if f.outbound and f.command.is_response and (f.connection, f.command.opaque) not in asked
    ]
    check.that("frames with the response bit that answer nothing", not stray, expected=[], actual=stray)
    oneway = [f.command.code for f in requests(frames, *ANSWERED_CODES) if f.command.flag & Flag.ONEWAY]
    check.that("oneway requests that need an answer", not oneway, expected=[], actual=oneway)


@case("RMQ-CLIENT-OPAQUE", "No opaque is reused on a connection while its request awaits an answer")
def test_opaque(run: CaseRunner, check: Check) -> None:
    outstanding: set[tuple[int, int]] = set()
    reused = []
    for f in run(sc.PRODUCE).frames:
        key = (f.connection, f.command.opaque)
        if f.outbound and f.is_request and not f.command.is_oneway:
            if key in outstanding:
                reused.append(key)
            outstanding.add(key)
        elif not f.outbound and f.command.is_response:
            outstanding.discard(key)
    check.that("(connection, opaque) reused while in flight", not reused, expected=[], actual=reused)


@table(
    "scenario",
    [
        Row("produce", "RMQ-CLIENT-HEADER-REQUIRED", "A producer fills every @CFNotNull field", sc.PRODUCE),
        Row("consume", "RMQ-CLIENT-HEADER-REQUIRED", "A consumer fills every @CFNotNull field", sc.CONSUME),
    ],
)
def test_header_required(run: CaseRunner, check: Check, scenario: Scenario) -> None:
    missing = []
    for f in requests(run(scenario).frames):
        spec = header_for(f.command.code, False)
        if spec is None:
            continue
        fields = f.command.ext_fields or {}
        missing += [
            (f.command.code, field.name)
            for field in spec.fields
            if field.required and field.name not in fields
        ]
    check.that("required header fields absent", not missing, expected=[], actual=sorted(set(missing)))


@case("RMQ-CLIENT-SEND-CODE", "Single messages go as SEND_MESSAGE_V2 (310)")
def test_send_code(run: CaseRunner, check: Check) -> None:
    codes = sorted({f.command.code for f in requests(run(sc.PRODUCE).frames, *SEND_CODES)})
    check.that(
        "send request codes",
        codes == [RequestCode.SEND_MESSAGE_V2],
        expected=[int(RequestCode.SEND_MESSAGE_V2)],
        actual=codes,
    )


@case("RMQ-CLIENT-ACL-SIGN", "With credentials every request carries AccessKey and a valid Signature")
def test_acl_sign(run: CaseRunner, check: Check) -> None:
    scenario = sc.PRODUCE_SIGNED
    assert scenario.credentials is not None
    access, secret = scenario.credentials
    frames = requests(run(scenario).frames)
    check.that("signed requests seen", bool(frames), expected="at least one", actual=0)
    unsigned = [f.command.code for f in frames if (f.command.ext_fields or {}).get("AccessKey") != access]
    check.that("requests without the AccessKey", not unsigned, expected=[], actual=unsigned)
    bad = [f.command.code for f in frames if not verify(f.command, secret)]
    check.that("requests whose Signature does not verify", not bad, expected=[], actual=bad)
