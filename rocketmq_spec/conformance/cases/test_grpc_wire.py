"""RocketMQ 5's gRPC protocol below the RPCs: the paths they are served at, the field numbers their
requests are read with, unknown fields, and where a refusal goes (``rocketmq_spec.spec.grpc_schema``).

Requests here are encoded by hand from the spec's tables (field numbers, the service's package and name)
and sent at the path the spec names, so a proxy whose names or numbers differ from the tables fails even
where the generated classes would agree with it.
"""

from __future__ import annotations

import grpc
import pytest

from rocketmq_spec.codec.grpc.protowire import length_delimited
from rocketmq_spec.codec.grpc.v2 import service_pb2 as rpc
from rocketmq_spec.conformance.case import Row, case, table
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.grpc_client import ProxyClient
from rocketmq_spec.spec.grpc_codes import Code
from rocketmq_spec.spec.grpc_definition import RESOURCE
from rocketmq_spec.spec.grpc_schema import PACKAGE, SERVICE, ProtoMessage
from rocketmq_spec.spec.grpc_service import QUERY_ROUTE_REQUEST

from .grpc_support import code_name, expect_status, typed_topic
from .messaging import Client
from .support import unique

pytestmark = pytest.mark.xdist_group("grpc")

UNKNOWN_FIELD = 1000
"""A field number no release of the proto declares (a newer client's field, to a server)."""


def _path(rpc_name: str) -> str:
    return f"/{PACKAGE}.{SERVICE}/{rpc_name}"


def _field(message: ProtoMessage, name: str, payload: bytes) -> bytes:
    """One length-delimited field of ``message``, numbered as the spec's table says."""
    return length_delimited(next(f.number for f in message.fields if f.name == name), payload)


def _route_request(topic: str) -> bytes:
    return _field(QUERY_ROUTE_REQUEST, "topic", _field(RESOURCE, "name", topic.encode()))


def _unknown_field() -> bytes:
    return length_delimited(UNKNOWN_FIELD, b"newer")


def _route(check: Check, client: ProxyClient, request: bytes) -> rpc.QueryRouteResponse:
    try:
        body, code = client.raw(_path("QueryRoute"), request)
    except grpc.RpcError as error:
        check.that("QueryRoute: gRPC status", False, expected="OK",
                   actual=f"{error.code().name} {error.details()}")
        return rpc.QueryRouteResponse()
    check.equal("QueryRoute: gRPC status", "OK", code.name)
    return rpc.QueryRouteResponse.FromString(body)


@case("RMQ-GRPC-WIRE-NAMES", "QueryRoute at /apache.rocketmq.v2.MessagingService/QueryRoute, its topic "
      "encoded by the table's field numbers, answers OK with the topic's queues.")
def test_route_at_the_spec_path(proxy_client: ProxyClient, admin: Client, check: Check) -> None:
    topic = typed_topic(admin, "NORMAL", queues=2)
    answer = _route(check, proxy_client, _route_request(topic))
    expect_status(check, "QueryRoute", answer.status, Code.OK)
    check.equal("queues of the topic", {(topic, 0), (topic, 1)},
                {(q.topic.name, q.id) for q in answer.message_queues})


@case("RMQ-GRPC-UNKNOWN-FIELDS", "A QueryRoute request carrying a field no proto release declares is "
      "served as if the field were not there.")
def test_unknown_field_skipped(proxy_client: ProxyClient, admin: Client, check: Check) -> None:
    topic = typed_topic(admin, "NORMAL", queues=2)
    answer = _route(check, proxy_client, _unknown_field() + _route_request(topic) + _unknown_field())
    expect_status(check, "QueryRoute with an unknown field", answer.status, Code.OK)
    check.equal("queue ids", [0, 1], sorted(q.id for q in answer.message_queues))


def _refused_rpc(rpc_name: str, request: bytes, expected: Code) -> Row:
    return Row(rpc_name.lower(), "RMQ-GRPC-STATUS-IN-BODY", f"A refused {rpc_name} answers gRPC OK with "
               f"{expected.name} in its status.", (rpc_name, request, expected))


@table("refused", [
    _refused_rpc("QueryRoute", _route_request(f"nowhere{unique('')}"), Code.TOPIC_NOT_FOUND),
    _refused_rpc("SendMessage", b"", Code.MESSAGE_CORRUPTED),
])
def test_refusal_in_the_status(refused: tuple[str, bytes, Code], proxy_client: ProxyClient,
                               check: Check) -> None:
    rpc_name, request, expected = refused
    try:
        body, code = proxy_client.raw(_path(rpc_name), request)
    except grpc.RpcError as error:
        check.that(f"{rpc_name}: gRPC status", False, expected=f"OK with {expected.name} in the body",
                   actual=f"{error.code().name} {error.details()}")
        return
    check.equal(f"{rpc_name}: gRPC status", "OK", code.name)
    status = getattr(rpc, f"{rpc_name}Response").FromString(body).status
    check.that(f"{rpc_name}: status code", status.code == expected, expected=expected.name,
               actual=f"{code_name(status.code)} {status.message}")
    check.that(f"{rpc_name}: status message", bool(status.message), expected="a reason", actual="")
