"""Apache RocketMQ's 5.x SDKs against the reference broker and Apache 5.5.0 (its proxy in local mode) with
ACL 2.0 on (authentication and authorization): a producer signing with the right credentials stores its
messages, one signing with a wrong secret is refused and stores nothing. Each SDK runs through its driver of
the client conformance suite (``RMQ_ACCESS_KEY`` / ``RMQ_SECRET_KEY``); the test makes the topic and reads
the messages back over remoting, signed as the initial (Super) user. Every SDK runs with its TLS default."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from rocketmq_spec.codec.acl import Credentials
from rocketmq_spec.spec.auth import LOCAL_AUTHENTICATION_PROVIDER, LOCAL_AUTHORIZATION_PROVIDER
from tests import sdk5_clients as sdk5
from tests.sdk5_clients import Target

pytestmark = pytest.mark.interop

ROOT, SECRET = "sdkRoot", "sdkRootSecret"
COUNT = 3


SETTINGS = {"authenticationMetadataProvider": LOCAL_AUTHENTICATION_PROVIDER,
            "authorizationMetadataProvider": LOCAL_AUTHORIZATION_PROVIDER,
            "authenticationEnabled": "true", "authorizationEnabled": "true",
            "initAuthenticationUser": json.dumps({"username": ROOT, "password": SECRET})}
"""broker.conf of both brokers (Apache's local proxy takes the same authentication and authorization)."""



@pytest.fixture(scope="module", params=sdk5.BROKERS)
def broker(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    with sdk5.serve(request.param, tmp_path_factory.mktemp("sdk5-auth"), SETTINGS,
                    Credentials(ROOT, SECRET)) as target:
        yield target


@pytest.fixture
def sdk(request: pytest.FixtureRequest) -> str:
    return sdk5.sdk_fixture(request)


SDKS = [pytest.param("python"),
        *(pytest.param(name, marks=pytest.mark.slow) for name in ("java", "node", "go"))]
"""The default run drives the Python SDK; ``-m slow`` the Java, Node.js and Go SDKs too."""
@pytest.mark.parametrize("sdk", SDKS, indirect=True)
def test_right_credentials_are_served(sdk: str, broker: Target) -> None:
    topic = broker.topic()
    sent = sdk5.of(sdk5.run(sdk, "produce", broker.grpc_addr, topic=topic, count=COUNT, access_key=ROOT,
                            secret_key=SECRET), "sent")
    assert len(sent) == COUNT
    assert len(broker.stored(topic)) == COUNT


@pytest.mark.parametrize("sdk", SDKS, indirect=True)
def test_wrong_secret_is_refused(sdk: str, broker: Target) -> None:
    topic = broker.topic()
    events = sdk5.run(sdk, "produce", broker.grpc_addr, check=False, topic=topic, count=COUNT,
                      access_key=ROOT, secret_key="not-the-secret")
    assert sdk5.of(events, "sent") == []
    assert sdk5.of(events, "error"), events
    assert len(broker.stored(topic)) == 0
