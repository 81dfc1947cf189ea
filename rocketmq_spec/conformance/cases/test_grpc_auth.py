"""ACL 2.0 authentication of gRPC calls (``rmq-conformance --authn`` / ``--auth-user`` with a proxy): the
signature of a 5.x SDK, and the proxy's answers to calls that are not signed by a known user."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from rocketmq_spec.codec.acl import Credentials
from rocketmq_spec.codec.grpc.v2 import definition_pb2 as v2
from rocketmq_spec.codec.grpc.v2 import service_pb2 as rpc
from rocketmq_spec.codec.grpc_auth import hex_signature
from rocketmq_spec.conformance.case import Row, case, table
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.grpc_client import ProxyClient
from rocketmq_spec.conformance.wire import Endpoint, Wire
from rocketmq_spec.spec.auth import AuthenticationRemark
from rocketmq_spec.spec.grpc_auth import ALGORITHM, AUTHORIZATION, DATE_TIME, DATE_TIME_MISSING
from rocketmq_spec.spec.grpc_codes import Code

DATE = "20250101T000000Z"
"""Any date-time: the proxy checks the signature over it, not its freshness."""


@pytest.fixture
def unsigned(proxy: Endpoint, wire: Wire) -> Iterator[ProxyClient]:
    client = ProxyClient(str(proxy), tls=wire.tls)
    with contextlib.closing(client):
        yield client


def _route(client: ProxyClient, extra: list[tuple[str, str]]) -> v2.Status:
    request = rpc.QueryRouteRequest(topic=v2.Resource(name="rmq_spec_auth_probe"),
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
