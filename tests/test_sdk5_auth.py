"""Apache RocketMQ's 5.x SDKs against the reference broker and Apache 5.5.0 (its proxy in local mode) with
ACL 2.0 on (authentication and authorization): a producer signing with the right credentials stores its
messages, one signing with a wrong secret is refused and stores nothing. Each SDK runs through its driver of
the client conformance suite (``RMQ_ACCESS_KEY`` / ``RMQ_SECRET_KEY``); the test makes the topic and reads
the messages back over remoting, signed as the initial (Super) user."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from rocketmq_spec.apache.cluster import ApacheRocketMQ
from rocketmq_spec.apache.maven import cached_classpath
from rocketmq_spec.apache.releases import release
from rocketmq_spec.codec.acl import Credentials, sign
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.config import BrokerConfig, NamesrvConfig, apply_properties
from rocketmq_spec.reference_broker.embedded import SyncEmbeddedRocketMQ
from rocketmq_spec.spec.auth import LOCAL_AUTHENTICATION_PROVIDER, LOCAL_AUTHORIZATION_PROVIDER
from tests import sdk5_clients as sdk5

pytestmark = pytest.mark.interop

ROOT, SECRET = "sdkRoot", "sdkRootSecret"
APACHE = "5.5.0"
COUNT = 3


SETTINGS = {"authenticationMetadataProvider": LOCAL_AUTHENTICATION_PROVIDER,
            "authorizationMetadataProvider": LOCAL_AUTHORIZATION_PROVIDER,
            "authenticationEnabled": "true", "authorizationEnabled": "true",
            "initAuthenticationUser": json.dumps({"username": ROOT, "password": SECRET})}
"""broker.conf of both brokers (Apache's local proxy takes the same authentication and authorization)."""


@dataclass(frozen=True)
class Broker:
    broker_addr: str
    grpc_addr: str
    call: Callable[[Coroutine[Any, Any, Any]], Any]


@pytest.fixture(scope="module", params=["reference", APACHE])
def broker(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    home: Path = tmp_path_factory.mktemp("sdk5-auth")
    if request.param == APACHE:
        if cached_classpath(release(APACHE)) is None:
            pytest.skip(f"Apache RocketMQ {APACHE} is not provisioned (rmq-apache classpath {APACHE})")
        with ApacheRocketMQ(APACHE, home=home / "apache", broker_config=SETTINGS, grpc=True,
                            heap_mb=384) as apache:
            yield Broker(apache.broker_addr, apache.grpc_addr, asyncio.run)
        return
    config = BrokerConfig(listen_port=0, store_path_root_dir=str(home / "store"))
    apply_properties(SETTINGS, config, NamesrvConfig())
    with SyncEmbeddedRocketMQ(broker_config=config) as running:
        assert running.grpc_addr is not None
        yield Broker(running.broker_addr, running.grpc_addr, running.call)


@pytest.fixture
def sdk(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    reason = sdk5.availability(name)
    if reason is not None:
        pytest.skip(f"{name} SDK unavailable here: {reason}")
    return name


async def _signed(broker: Broker) -> RemotingClient:
    """A remoting client whose every request is signed as the initial user."""
    client = await RemotingClient.connect(broker.broker_addr)
    unsigned = client.request
    client.request = lambda *args, **kwargs: sign(unsigned(*args, **kwargs),  # type: ignore[method-assign]
                                                  Credentials(ROOT, SECRET))
    return client


def _topic(broker: Broker) -> str:
    topic = f"sdk5-auth-{uuid.uuid4().hex[:8]}"

    async def create() -> None:
        client = await _signed(broker)
        try:
            await sdk5.create_topic(client, topic, "NORMAL")
        finally:
            await client.close()

    broker.call(create())
    return topic


def _stored(broker: Broker, topic: str) -> int:
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
def test_right_credentials_are_served(sdk: str, broker: Broker) -> None:
    topic = _topic(broker)
    sent = sdk5.of(sdk5.run(sdk, "produce", broker.grpc_addr, topic=topic, count=COUNT, access_key=ROOT,
                            secret_key=SECRET, tls=int(sdk in TLS_BY_DEFAULT)), "sent")
    assert len(sent) == COUNT
    assert _stored(broker, topic) == COUNT


@pytest.mark.parametrize("sdk", SDKS, indirect=True)
def test_wrong_secret_is_refused(sdk: str, broker: Broker) -> None:
    topic = _topic(broker)
    events = sdk5.run(sdk, "produce", broker.grpc_addr, check=False, topic=topic, count=COUNT,
                      access_key=ROOT, secret_key="not-the-secret", tls=int(sdk in TLS_BY_DEFAULT))
    assert sdk5.of(events, "sent") == []
    assert sdk5.of(events, "error"), events
    assert _stored(broker, topic) == 0
