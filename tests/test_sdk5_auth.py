"""Apache RocketMQ's 5.x SDKs against the reference broker with ACL 2.0 on (authentication and
authorization): a producer signing with the right credentials stores its messages, one signing with a wrong
secret is refused and stores nothing. Each SDK runs through its driver of the client conformance suite
(``RMQ_ACCESS_KEY`` / ``RMQ_SECRET_KEY``); the test makes the topic and reads the messages back over
remoting, signed as the initial (Super) user."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from rocketmq_spec.codec.acl import Credentials, sign
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.config import BrokerConfig
from rocketmq_spec.reference_broker.embedded import SyncEmbeddedRocketMQ
from rocketmq_spec.spec.auth import LOCAL_AUTHENTICATION_PROVIDER, LOCAL_AUTHORIZATION_PROVIDER
from tests import sdk5_clients as sdk5

pytestmark = pytest.mark.interop

ROOT, SECRET = "sdkRoot", "sdkRootSecret"
COUNT = 3


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SyncEmbeddedRocketMQ]:
    store: Path = tmp_path_factory.mktemp("sdk5-auth") / "store"
    config = BrokerConfig(listen_port=0, store_path_root_dir=str(store),
                          authentication_metadata_provider=LOCAL_AUTHENTICATION_PROVIDER,
                          authorization_metadata_provider=LOCAL_AUTHORIZATION_PROVIDER,
                          authentication_enabled=True, authorization_enabled=True,
                          init_authentication_user=json.dumps({"username": ROOT, "password": SECRET}))
    with SyncEmbeddedRocketMQ(broker_config=config) as running:
        yield running


@pytest.fixture
def sdk(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    reason = sdk5.availability(name)
    if reason is not None:
        pytest.skip(f"{name} SDK unavailable here: {reason}")
    return name


async def _signed(broker: SyncEmbeddedRocketMQ) -> RemotingClient:
    """A remoting client whose every request is signed as the initial user."""
    client = await RemotingClient.connect(broker.broker_addr)
    unsigned = client.request
    client.request = lambda *args, **kwargs: sign(unsigned(*args, **kwargs),  # type: ignore[method-assign]
                                                  Credentials(ROOT, SECRET))
    return client


def _topic(broker: SyncEmbeddedRocketMQ) -> str:
    topic = f"sdk5-auth-{uuid.uuid4().hex[:8]}"

    async def create() -> None:
        client = await _signed(broker)
        try:
            await sdk5.create_topic(client, topic, "NORMAL")
        finally:
            await client.close()

    broker.call(create())
    return topic


def _stored(broker: SyncEmbeddedRocketMQ, topic: str) -> int:
    async def read() -> int:
        client = await _signed(broker)
        try:
            return len(await sdk5.stored(client, topic))
        finally:
            await client.close()

    return broker.call(read())


SDKS = [pytest.param("python"),
        *(pytest.param(name, marks=pytest.mark.slow) for name in ("java", "node", "go"))]
"""The default run drives the Python SDK; ``-m slow`` the Java, Node.js and Go SDKs too."""
TLS_BY_DEFAULT = {"java", "go"}
"""SDKs whose default is TLS accepting any certificate (the broker's self-signed one, permissive mode): they
run as they are by default. The Python and Node.js SDKs default to plain text."""


@pytest.mark.parametrize("sdk", SDKS, indirect=True)
def test_right_credentials_are_served(sdk: str, broker: SyncEmbeddedRocketMQ) -> None:
    topic = _topic(broker)
    assert broker.grpc_addr is not None
    sent = sdk5.of(sdk5.run(sdk, "produce", broker.grpc_addr, topic=topic, count=COUNT, access_key=ROOT,
                            secret_key=SECRET, tls=int(sdk in TLS_BY_DEFAULT)), "sent")
    assert len(sent) == COUNT
    assert _stored(broker, topic) == COUNT


@pytest.mark.parametrize("sdk", SDKS, indirect=True)
def test_wrong_secret_is_refused(sdk: str, broker: SyncEmbeddedRocketMQ) -> None:
    topic = _topic(broker)
    assert broker.grpc_addr is not None
    events = sdk5.run(sdk, "produce", broker.grpc_addr, check=False, topic=topic, count=COUNT,
                      access_key=ROOT, secret_key="not-the-secret", tls=int(sdk in TLS_BY_DEFAULT))
    assert sdk5.of(events, "sent") == []
    assert sdk5.of(events, "error"), events
    assert _stored(broker, topic) == 0
