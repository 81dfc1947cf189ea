"""Edges of ACL 2.0 authorization over gRPC, the reference broker against Apache 5.5.0 (its proxy in local
mode, the same broker.conf): whose name a call is authorized under (RMQ-AUTHZ-GRPC-SUBJECT: a client-sent
``x-mq-authorization-ak`` first, the signed user only when there is none, nobody when authentication is
off) and Telemetry settings without publishing or subscription (RMQ-AUTHZ-GRPC-SETTINGS-ROLE), with
authentication on and off."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from rocketmq_spec.codec.acl import Credentials
from rocketmq_spec.codec.grpc.v2 import definition_pb2 as v2
from rocketmq_spec.codec.grpc.v2 import service_pb2 as rpc
from rocketmq_spec.conformance.grpc_client import ProxyClient
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.spec import authorization as authz
from rocketmq_spec.spec.auth import LOCAL_AUTHENTICATION_PROVIDER, LOCAL_AUTHORIZATION_PROVIDER
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.grpc_auth import AUTHORIZATION_AK
from rocketmq_spec.spec.grpc_codes import Code
from tests import sdk5_clients as sdk5
from tests.sdk5_clients import Target

pytestmark = pytest.mark.interop

ROOT = Credentials("edgeRoot", "edgeRootSecret")
"""The initial user: Super."""
BOB = Credentials("bob", "bobSecret1")
"""A Normal user without any ACL."""
SOURCE_IP = "127.0.0.1"


@dataclass(frozen=True)
class Served:
    target: Target
    authentication: bool
    topic: str


def _settings(authentication: bool) -> dict[str, str]:
    return {"authenticationMetadataProvider": LOCAL_AUTHENTICATION_PROVIDER,
            "authorizationMetadataProvider": LOCAL_AUTHORIZATION_PROVIDER,
            "authenticationEnabled": str(authentication).lower(), "authorizationEnabled": "true",
            "initAuthenticationUser": json.dumps({"username": ROOT.access_key, "password": ROOT.secret_key})}


async def _create_bob(client: RemotingClient) -> None:
    answer = await client.invoke(client.request(RequestCode.AUTH_CREATE_USER, {"username": BOB.access_key},
                                                json.dumps({"username": BOB.access_key,
                                                            "password": BOB.secret_key,
                                                            "userType": "Normal"}).encode()))
    assert answer.code == ResponseCode.SUCCESS, answer.remark


@pytest.fixture(scope="module", params=[(name, authentication) for name in sdk5.BROKERS
                                        for authentication in (True, False)],
                ids=lambda p: f"{p[0]}-{'authn' if p[1] else 'no-authn'}")
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    name, authentication = request.param
    with sdk5.serve(name, tmp_path_factory.mktemp("authz-edges"), _settings(authentication), ROOT) as target:
        target.remoting(_create_bob)
        yield Served(target, authentication, target.topic())


@contextlib.contextmanager
def _client(served: Served, signed: Credentials | None, sent_ak: str | None = None) -> Iterator[ProxyClient]:
    client = ProxyClient(served.target.grpc_addr, credentials=signed)
    if sent_ak is not None:
        own = client.metadata
        client.metadata = lambda: [*own(), (AUTHORIZATION_AK, sent_ak)]  # type: ignore[method-assign]
    with contextlib.closing(client):
        yield client


def _route(served: Served, signed: Credentials | None, sent_ak: str | None = None) -> tuple[int, str]:
    with _client(served, signed, sent_ak) as client:
        status = client.query_route(served.topic).status
    return status.code, status.message


def _denied(user: Credentials, topic: str) -> tuple[int, str]:
    return int(Code.UNAUTHORIZED), authz.NO_PERMISSION.format(
        subject=f"User:{user.access_key}", resource=f"Topic:{topic}", source_ip=SOURCE_IP,
        detail=authz.NO_MATCHED_POLICIES)


OK = (int(Code.OK), "OK")


@pytest.mark.parametrize("signed", [ROOT, BOB], ids=["super", "normal"])
def test_settings_without_a_role(served: Served, signed: Credentials) -> None:
    """Any signed user, a Super user too, meets the builder's AclException, answered on the stream."""
    with _client(served, signed) as client:
        settings = v2.Settings(client_type=v2.PRODUCER, access_point=client.endpoints())
        settings.request_timeout.FromSeconds(3)
        _, answer = client.announce(settings)
    assert isinstance(answer, rpc.TelemetryCommand), answer  # not a gRPC error ending the stream
    assert (answer.status.code, answer.status.message) == (int(Code.INTERNAL_SERVER_ERROR),
                                                           authz.SETTINGS_WITHOUT_ROLE_DETAIL)


def test_signed_user_is_the_subject(served: Served) -> None:
    """With authentication on, the signed user is authorized; off, a signature names nobody."""
    if served.authentication:
        assert _route(served, ROOT) == OK
        assert _route(served, BOB) == _denied(BOB, served.topic)
    else:
        assert _route(served, ROOT) == (int(Code.UNAUTHORIZED), authz.NO_SUBJECT)


def test_sent_authorization_ak_is_the_subject(served: Served) -> None:
    """A client-sent x-mq-authorization-ak names the subject over the signed user; unsigned, it passes
    only where authentication is off."""
    assert _route(served, BOB, sent_ak=ROOT.access_key) == OK
    if served.authentication:
        assert _route(served, None, sent_ak=ROOT.access_key)[0] == Code.UNAUTHORIZED
    else:
        assert _route(served, None, sent_ak=ROOT.access_key) == OK
        assert _route(served, None, sent_ak=BOB.access_key) == _denied(BOB, served.topic)
