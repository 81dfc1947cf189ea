"""The 5.x SDKs that speak plain text by default (Python, Node.js) asked for TLS, against the reference
broker and Apache 5.5.0 each serving a certificate from files (as an application that checks certificates
needs: Apache's test-mode certificate has no subjectAltName, which gRPC's hostname check requires). The
SDKs check it against the server's certificate given as trust roots (tests/sdk5_clients.py); the Java and
Go SDKs speak TLS by default and run so in tests/test_sdk5_interop.py."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests import sdk5_clients as sdk5
from tests.sdk5_clients import Target

pytestmark = pytest.mark.interop


@pytest.fixture(scope="module", params=[sdk5.REFERENCE, pytest.param(sdk5.APACHE, marks=pytest.mark.slow)])
def broker(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    with sdk5.serve(request.param, tmp_path_factory.mktemp("sdk5-tls"), {}, certificate=True) as target:
        yield target


@pytest.fixture
def sdk(request: pytest.FixtureRequest) -> str:
    return sdk5.sdk_fixture(request)


@pytest.mark.parametrize("sdk", [pytest.param("python"), pytest.param("node", marks=pytest.mark.slow)],
                         indirect=True)
def test_send_and_receive_over_tls(sdk: str, broker: Target) -> None:
    topic, group = broker.topic(), broker.group()
    sent = sdk5.of(sdk5.run(sdk, "produce", broker.grpc_addr, tls=True, topic=topic, count=3), "sent")
    got = sdk5.of(sdk5.run(sdk, "consume-simple", broker.grpc_addr, tls=True, topic=topic, group=group,
                           count=3), "received")
    assert sorted(e["msgId"] for e in got) == sorted(e["msgId"] for e in sent)
