"""ACL 2.0 authentication and authorization of gRPC calls (``rmq-conformance --authn`` / ``--auth-user`` with
a proxy): the signature of a 5.x SDK, the proxy's answers to calls that are not signed by a known user, and
to calls the signed user's ACL does not allow (judged when the broker reports authorizationEnabled)."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from rocketmq_spec.codec.acl import Credentials
from rocketmq_spec.codec.grpc.v2 import definition_pb2 as v2
from rocketmq_spec.codec.grpc.v2 import service_pb2 as rpc
from rocketmq_spec.codec.grpc_auth import hex_signature
from rocketmq_spec.conformance.case import Row, case, table
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.grpc_client import ProxyClient
from rocketmq_spec.conformance.target import Server
from rocketmq_spec.conformance.wire import Endpoint, Wire
from rocketmq_spec.spec.auth import AuthenticationRemark
from rocketmq_spec.spec.grpc_auth import ALGORITHM, AUTHORIZATION, DATE_TIME, DATE_TIME_MISSING
from rocketmq_spec.spec.grpc_codes import Code

from .authz_support import denied, entry, user_with_acl

DATE = "20250101T000000Z"
"""Any date-time: the proxy checks the signature over it, not its freshness."""


@pytest.fixture
def unsigned(proxy: Endpoint, wire: Wire) -> Iterator[ProxyClient]:
    client = ProxyClient(str(proxy), tls=wire.tls)
    with contextlib.closing(client):
        yield client


def _route(client: ProxyClient, extra: list[tuple[str, str]],
           topic: str = "rmq_spec_auth_probe") -> v2.Status:
    request = rpc.QueryRouteRequest(topic=v2.Resource(name=topic),
                                    endpoints=client.endpoints())
    answer = client.stub.QueryRoute(request, metadata=client.metadata() + extra, timeout=10)
    return answer.status


def _authorization(user: str, secret: str, *, lower: bool = False,
                   go_style: bool = False) -> list[tuple[str, str]]:
    hexed = hex_signature(secret, DATE)
    credential = f"{user}//Rocketmq" if go_style else user
    text = (f"{ALGORITHM} Credential={credential}, SignedHeaders={DATE_TIME}, "
            f"Signature={hexed.lower() if lower else hexed}")
    return [(DATE_TIME, DATE), (AUTHORIZATION, text)]


@case("RMQ-GRPC-AUTHENTICATE", "A call signed as the Java SDK signs it (upper-case hex of the current "
      "x-mq-date-time) is not refused as unauthenticated.")
def test_sdk_signed_call_passes(proxy: Endpoint, wire: Wire, auth_user: Credentials, check: Check) -> None:
    with contextlib.closing(ProxyClient(str(proxy), tls=wire.tls, credentials=auth_user)) as signed:
        answer = _route(signed, [])
    check.that("not UNAUTHORIZED", answer.code != Code.UNAUTHORIZED, expected="any other status",
               actual=f"{answer.code} {answer.message}")


@case("RMQ-GRPC-AUTHENTICATE", "Lower-case hex (Python, Go SDKs) and the Go SDK's credential AK//Rocketmq "
      "are read as the same user.")
def test_go_style_signature_passes(unsigned: ProxyClient, auth_user: Credentials, check: Check) -> None:
    signed = _authorization(auth_user.access_key, auth_user.secret_key, lower=True, go_style=True)
    answer = _route(unsigned, signed)
    check.that("not UNAUTHORIZED", answer.code != Code.UNAUTHORIZED, expected="any other status",
               actual=f"{answer.code} {answer.message}")


@table("refusal", [
    Row("unsigned", "RMQ-GRPC-AUTHENTICATE", "A call without authorization metadata is answered UNAUTHORIZED "
        "\"username cannot be null.\".", ("", "", AuthenticationRemark.NO_USERNAME)),
    Row("unknown-user", "RMQ-GRPC-AUTHENTICATE", "A call signed by an unknown user is answered UNAUTHORIZED "
        "\"User:<name> is not found.\".", ("rmq_spec_nobody", "x", "User:rmq_spec_nobody is not found.")),
    Row("bad-signature", "RMQ-GRPC-AUTHENTICATE", "A call whose signature is not keyed with the user's "
        "password is answered UNAUTHORIZED \"check signature failed.\".",
        (None, "wrong", AuthenticationRemark.SIGNATURE)),
    Row("no-date-time", "RMQ-GRPC-AUTHENTICATE", "An authorization without x-mq-date-time is answered "
        "UNAUTHORIZED \"datetime is null.\".", (None, None, DATE_TIME_MISSING)),
])
def test_refused_call(refusal: tuple[str | None, str | None, str], unsigned: ProxyClient,
                      auth_user: Credentials, check: Check) -> None:
    user, secret, message = refusal
    if user == "":
        extra: list[tuple[str, str]] = []
    elif secret is None:
        extra = [item for item in _authorization(auth_user.access_key, auth_user.secret_key)
                 if item[0] != DATE_TIME]
    else:
        extra = _authorization(user or auth_user.access_key, secret)
    answer = _route(unsigned, extra)
    check.equal("status", (int(Code.UNAUTHORIZED), message), (answer.code, answer.message))


@case("RMQ-GRPC-AUTHENTICATE", "A Telemetry command of an unauthenticated client is answered with a "
      "TelemetryCommand whose status is UNAUTHORIZED.")
def test_unsigned_telemetry(unsigned: ProxyClient, auth_user: Credentials, check: Check) -> None:
    _, answer = unsigned.announce(unsigned.producer_settings("rmq_spec_auth_probe"))
    status = getattr(answer, "status", None)
    check.equal("status", int(Code.UNAUTHORIZED), getattr(status, "code", answer))


# -- authorization (authorizationEnabled): the signed user's ACL decides each call ---------------------

TOPIC, GROUP = "rmq_spec_authz_topic", "rmq_spec_authz_group"


def _signed_route(proxy: Endpoint, wire: Wire, user: Credentials) -> v2.Status:
    with contextlib.closing(ProxyClient(str(proxy), tls=wire.tls, credentials=user)) as client:
        return _route(client, [], TOPIC)


@table("route_decision", [
    Row("no-acl", "RMQ-AUTHZ-DECIDE", "A Normal user without an ACL is refused QueryRoute UNAUTHORIZED "
        "\"User:<u> has no permission to access Topic:<t> from <ip>, no matched policies.\".", ([], False)),
    Row("deny", "RMQ-AUTHZ-DECIDE", "An entry that denies the topic is refused \"..., the decision is "
        "deny.\".", ([entry(f"Topic:{TOPIC}", ["Pub", "Sub"], "Deny")], True)),
    Row("other-action", "RMQ-AUTHZ-DECIDE", "QueryRoute needs Pub or Sub: an entry granting only Get "
        "matches nothing.", ([entry(f"Topic:{TOPIC}", ["Get"])], False)),
    Row("other-source", "RMQ-AUTHZ-DECIDE", "An entry whose sourceIps leave out the caller matches "
        "nothing.", ([entry(f"Topic:{TOPIC}", ["Pub", "Sub"], source_ips=["10.1.2.3"])], False)),
    Row("literal-over-prefix", "RMQ-AUTHZ-DECIDE", "A literal Deny wins over a prefixed Allow that covers "
        "the same topic.", ([entry("Topic:rmq_spec_*", ["All"]), entry(f"Topic:{TOPIC}", ["Sub"], "Deny")],
                            True)),
    Row("custom-over-any", "RMQ-AUTHZ-DECIDE", "A typed Deny wins over an Allow of every resource (*).",
        ([entry("*", ["All"]), entry(f"Topic:{TOPIC}", ["Pub"], "Deny")], True)),
])
def test_route_refused(route_decision: tuple[list[dict[str, Any]], bool], proxy: Endpoint, wire: Wire,
                       broker: Server, auth_user: Credentials, check: Check) -> None:
    entries, deny = route_decision
    with user_with_acl(wire, broker, auth_user, check, entries) as user:
        answer = _signed_route(proxy, wire, user)
    check.equal("status", (int(Code.UNAUTHORIZED), denied(user, f"Topic:{TOPIC}", deny=deny)),
                (answer.code, answer.message))


@table("route_allowed", [
    Row("literal", "RMQ-AUTHZ-DECIDE", "An entry allowing Pub on the topic lets QueryRoute through.",
        [entry(f"Topic:{TOPIC}", ["Pub"])]),
    Row("prefix", "RMQ-AUTHZ-DECIDE", "A prefixed entry (Topic:name*) allowing Sub lets it through.",
        [entry("Topic:rmq_spec_authz*", ["Sub"])]),
    Row("all", "RMQ-AUTHZ-DECIDE", "An entry allowing All on every resource (*) lets it through.",
        [entry("*", ["All"])]),
    Row("longer-prefix", "RMQ-AUTHZ-DECIDE", "Of two prefixes, the longer one decides: its Allow wins over "
        "a shorter Deny.", [entry("Topic:rmq_*", ["All"], "Deny"), entry("Topic:rmq_spec_authz_*", ["All"])]),
])
def test_route_allowed(route_allowed: list[dict[str, Any]], proxy: Endpoint, wire: Wire, broker: Server,
                       auth_user: Credentials, check: Check) -> None:
    with user_with_acl(wire, broker, auth_user, check, route_allowed) as user:
        answer = _signed_route(proxy, wire, user)
    check.that("not UNAUTHORIZED", answer.code != Code.UNAUTHORIZED, expected="any other status",
               actual=f"{answer.code} {answer.message}")


@case("RMQ-AUTHZ-GRPC", "SendMessage needs Pub on the first message's topic: a user allowed only Sub is "
      "refused UNAUTHORIZED.")
def test_send_needs_pub(proxy: Endpoint, wire: Wire, broker: Server, auth_user: Credentials,
                        check: Check) -> None:
    with user_with_acl(wire, broker, auth_user, check, [entry(f"Topic:{TOPIC}", ["Sub"])]) as user, \
            contextlib.closing(ProxyClient(str(proxy), tls=wire.tls, credentials=user)) as client:
        message = v2.Message(topic=v2.Resource(name=TOPIC), body=b"authz")
        message.system_properties.message_id = uuid.uuid4().hex.upper()
        message.system_properties.body_encoding = v2.IDENTITY
        message.system_properties.message_type = v2.NORMAL
        answer = client.send(message).status
    check.equal("status", (int(Code.UNAUTHORIZED), denied(user, f"Topic:{TOPIC}")),
                (answer.code, answer.message))


@case("RMQ-AUTHZ-GRPC", "ReceiveMessage checks the group first: a user allowed Sub on the topic only is "
      "refused on Group:<g>.")
def test_receive_checks_group(proxy: Endpoint, wire: Wire, broker: Server, auth_user: Credentials,
                              check: Check) -> None:
    with user_with_acl(wire, broker, auth_user, check, [entry(f"Topic:{TOPIC}", ["Sub"])]) as user, \
            contextlib.closing(ProxyClient(str(proxy), tls=wire.tls, credentials=user)) as client:
        request = rpc.ReceiveMessageRequest(
            group=v2.Resource(name=GROUP), message_queue=v2.MessageQueue(topic=v2.Resource(name=TOPIC)),
            filter_expression=v2.FilterExpression(type=v2.TAG, expression="*"), batch_size=1)
        answers = list(client.stream("ReceiveMessage", request))
    status = next((a.status for a in answers if a.HasField("status")), None)
    check.equal("status", (int(Code.UNAUTHORIZED), denied(user, f"Group:{GROUP}")),
                (getattr(status, "code", None), getattr(status, "message", None)))


@case("RMQ-AUTHZ-GRPC", "Telemetry settings of a producer need Pub on each published topic: refused with a "
      "TelemetryCommand whose status is UNAUTHORIZED with the refusal's message.")
def test_settings_need_pub(proxy: Endpoint, wire: Wire, broker: Server, auth_user: Credentials,
                           check: Check) -> None:
    with user_with_acl(wire, broker, auth_user, check, []) as user, \
            contextlib.closing(ProxyClient(str(proxy), tls=wire.tls, credentials=user)) as client:
        _, answer = client.announce(client.producer_settings(TOPIC))
    status = getattr(answer, "status", None)
    check.equal("status", (int(Code.UNAUTHORIZED), denied(user, f"Topic:{TOPIC}")),
                (getattr(status, "code", answer), getattr(status, "message", None)))
