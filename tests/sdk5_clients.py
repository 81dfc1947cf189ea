"""Run Apache RocketMQ's 5.x SDKs (rocketmq_spec.conformance.clients.sdk5) against a gRPC endpoint and
read what they did, with the reference broker or Apache 5.5.0 on the other end.

Each call runs one driver in its own process with a hard timeout and returns its JSON events; a failed
run raises ``SdkRunError`` with the events and the stderr tail, so a test failure says what the SDK saw.
A driver runs with its SDK's own TLS default unless told otherwise: TLS in Java and Go (accepting any
certificate, such as the test-mode one both brokers serve), plain text in Python and Node.js. Those two
check a server's certificate when TLS is asked for, so they are then given the server's own certificate
as trust roots (gRPC's ``GRPC_DEFAULT_SSL_ROOTS_FILE_PATH``), which must name the address dialled. The
broker side of a test (typed topics, groups, reading back what was stored) goes over remoting, through
:class:`Target`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
import tempfile
import time
import uuid
from collections.abc import Callable, Coroutine, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import grpc
import pytest

from rocketmq_spec.admin.groups import sub_group_body
from rocketmq_spec.apache.cluster import ApacheRocketMQ
from rocketmq_spec.codec.acl import Credentials, sign
from rocketmq_spec.codec.store import decode_records
from rocketmq_spec.codec.store.record import MessageRecord
from rocketmq_spec.conformance.clients import sdk5 as installer
from rocketmq_spec.conformance.grpc_client import ProxyClient
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.config import BrokerConfig, NamesrvConfig, apply_properties
from rocketmq_spec.reference_broker.embedded import SyncEmbeddedRocketMQ
from rocketmq_spec.reference_broker.tls import self_signed
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC
from rocketmq_spec.spec.tls import PROXY_TLS_CERT_PATH, PROXY_TLS_KEY_PATH, PROXY_TLS_TEST_MODE
from tests import process_tree
from tests.java_programs import require_release
from tests.messaging_support import pull

RUN_TIMEOUT_S = 180.0
APACHE = "5.5.0"
REFERENCE = "reference"
BROKERS = (REFERENCE, APACHE)
"""What every SDK scenario is run against: the reference broker's gRPC proxy and Apache 5.5.0's."""

SDK_NAMES = installer.SDK_NAMES
TLS_BY_DEFAULT = frozenset({"java", "go"})
"""SDKs that speak TLS by default (``enableSsl``) and trust any certificate."""
CHECKS_CERTIFICATE = frozenset({"python", "node"})
"""SDKs that speak plain text by default and, asked for TLS, check the certificate against trust roots
(Apache's test-mode certificate names only CN=localhost, which gRPC's hostname check does not read: they
need a certificate served from files, ``serve(certificate=True)``, naming 127.0.0.1)."""

T = TypeVar("T")


class SdkRunError(AssertionError):
    def __init__(self, sdk: str, scenario: str, events: list[dict[str, Any]], stderr: str) -> None:
        super().__init__(f"{sdk} driver {scenario} failed: events {events}, stderr tail:\n{stderr[-3000:]}")
        self.events = events


def availability(sdk: str) -> str | None:
    """None when the SDK is installed and its driver built here, else why not."""
    (result,) = installer.install((sdk,))
    return None if result.available else str(result.reason)


@contextmanager
def _trusting(endpoint: str) -> Iterator[dict[str, str]]:
    """The environment that makes a certificate-checking SDK trust the server's own certificate, fetched
    from it; the SDK still checks that it names the address dialled."""
    host, port = endpoint.rsplit(":", 1)
    with tempfile.NamedTemporaryFile("w", prefix="sdk5-roots-", suffix=".pem") as roots:
        roots.write(ssl.get_server_certificate((host, int(port))))
        roots.flush()
        yield {"GRPC_DEFAULT_SSL_ROOTS_FILE_PATH": roots.name}


def run(sdk: str, scenario: str, endpoint: str, *, check: bool = True, tls: bool | None = None,
        **settings: Any) -> list[dict[str, Any]]:
    """Run ``scenario`` as the client suite does (``count=10`` is ``RMQ_COUNT=10``); the driver's events.
    ``tls`` overrides the SDK's default. With ``check``, the run must end with ``done``, exit 0 and
    report no error."""
    argv, env = installer.driver_command(next(s for s in installer.SDKS if s.name == sdk))
    tls = sdk in TLS_BY_DEFAULT if tls is None else tls
    env.update({"RMQ_PROTOCOL": "grpc", "RMQ_TLS": "1" if tls else "0", "RMQ_TIMEOUT_S": "60"})
    env.update({f"RMQ_{key.upper()}": str(value) for key, value in settings.items()})
    trust: contextlib.AbstractContextManager[dict[str, str]] = (
        _trusting(endpoint) if tls and sdk in CHECKS_CERTIFICATE else contextlib.nullcontext({}))
    with trust as extra:
        env.update(extra, RMQ_ENDPOINT=endpoint)
        done = process_tree.run([*argv, scenario], env=env, capture_output=True, text=True,
                                    timeout=RUN_TIMEOUT_S, check=False)
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    failed = done.returncode != 0 or not events or events[-1]["event"] != "done" or of(events, "error")
    if check and failed:
        raise SdkRunError(sdk, scenario, events, done.stderr)
    return events


def of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == kind]


@dataclass(frozen=True)
class Target:
    """A running broker the SDKs are pointed at, and remoting access to it for the test's own side."""

    name: str
    broker_addr: str
    grpc_addr: str
    call: Callable[[Coroutine[Any, Any, Any]], Any]
    """Runs a coroutine where the broker's clients may run (the embedded broker's loop, or a new one)."""
    credentials: Credentials | None = None
    """What the test's remoting requests are signed with when the broker authenticates."""

    def remoting(self, work: Callable[[RemotingClient], Coroutine[Any, Any, T]]) -> T:
        """Open a remoting client to the broker, run ``work`` with it, close it."""
        async def session() -> T:
            client = await RemotingClient.connect(self.broker_addr)
            if self.credentials is not None:
                unsigned, credentials = client.request, self.credentials
                client.request = lambda *args, **kwargs: sign(  # type: ignore[method-assign]
                    unsigned(*args, **kwargs), credentials)
            try:
                return await work(client)
            finally:
                await client.close()

        result: T = self.call(session())
        return result

    def topic(self, message_type: str = "NORMAL") -> str:
        """A new topic of ``message_type`` (its ``message.type`` attribute, which SDKs check)."""
        topic = f"sdk5-{message_type.lower()}-{uuid.uuid4().hex[:8]}"
        self.remoting(lambda client: create_topic(client, topic, message_type))
        return topic

    def group(self) -> str:
        group = f"g-{uuid.uuid4().hex[:8]}"
        self.remoting(lambda client: create_group(client, group))
        return group

    def stored(self, topic: str) -> list[MessageRecord]:
        return self.remoting(lambda client: stored(client, topic))


@contextmanager
def serve(name: str, home: Path, properties: Mapping[str, str], credentials: Credentials | None = None, *,
          certificate: bool = False) -> Iterator[Target]:
    """The reference broker (embedded) or Apache 5.5.0 (its broker inside its proxy, local mode) with the
    same broker.conf ``properties``; the test skips when Apache is not provisioned here. ``certificate``:
    the gRPC port serves a certificate given in files (naming localhost and 127.0.0.1) instead of the
    test-mode one, set as each broker reads it (broker.conf's ``tls.*``, Apache's rmq-proxy.json)."""
    files: dict[str, str] = {}
    if certificate:
        home.mkdir(parents=True, exist_ok=True)
        for kind, pem in zip(("cert", "key"), self_signed(), strict=True):
            (home / f"{kind}.pem").write_bytes(pem)
            files[kind] = str(home / f"{kind}.pem")
    if name == APACHE:
        require_release(APACHE)
        proxy = {PROXY_TLS_TEST_MODE: False, PROXY_TLS_CERT_PATH: files["cert"],
                 PROXY_TLS_KEY_PATH: files["key"]} if certificate else {}
        with ApacheRocketMQ(APACHE, home=home / "apache", broker_config=dict(properties), grpc=True,
                            heap_mb=384, proxy_config=proxy) as apache:
            assert apache.grpc_addr is not None
            _warm(apache.grpc_addr)
            yield Target(name, apache.broker_addr, apache.grpc_addr, asyncio.run, credentials)
        return
    config = BrokerConfig(listen_port=0, store_path_root_dir=str(home / "store"))
    served = {"tls.test.mode.enable": "false", "tls.server.certPath": files["cert"],
              "tls.server.keyPath": files["key"]} if certificate else {}
    apply_properties({**properties, **served}, config, NamesrvConfig())
    with SyncEmbeddedRocketMQ(broker_config=config) as running:
        assert running.grpc_addr is not None
        yield Target(name, running.broker_addr, running.grpc_addr, running.call, credentials)


WARM_UP_S = 120.0


def _warm(grpc_addr: str) -> None:
    """Wait for one QueryRoute answer (any status) from Apache's proxy. It counts as started once its
    broker registered, but its first call (routes from the name server, classes loaded) may then take
    longer on a loaded machine than an SDK's 3 s request timeout, which failed the first scenario."""
    deadline = time.monotonic() + WARM_UP_S
    with contextlib.closing(ProxyClient(grpc_addr)) as client:
        while True:
            try:
                client.query_route(f"warm-up-{uuid.uuid4().hex[:8]}")
                return
            except grpc.RpcError:
                if time.monotonic() > deadline:
                    raise


def sdk_fixture(request: pytest.FixtureRequest) -> str:
    """The SDK a test is parametrized with, skipping when it cannot be driven here."""
    name: str = request.param
    reason = availability(name)
    if reason is not None:
        pytest.skip(f"{name} SDK unavailable here: {reason}")
    return name


async def create_group(client: RemotingClient, group: str) -> None:
    """A consumer group on the broker, as ``mqadmin updateSubGroup`` makes it: 5.5.0's proxy refuses a
    consumer's settings for a group its broker does not have (RMQ-GRPC-SETTINGS-GROUP)."""
    answer = await client.invoke(client.request(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, None,
                                                sub_group_body(group, {})))
    if answer.code != ResponseCode.SUCCESS:
        raise AssertionError(f"group {group} not created: {answer.code} {answer.remark}")


async def create_topic(client: RemotingClient, topic: str, message_type: str, queues: int = 4) -> None:
    header = {"topic": topic, "defaultTopic": DEFAULT_TOPIC, "readQueueNums": str(queues),
              "writeQueueNums": str(queues), "perm": "6", "topicFilterType": "SINGLE_TAG", "order": "false",
              "attributes": f"+message.type={message_type}"}
    answer = await client.invoke(client.request(RequestCode.UPDATE_AND_CREATE_TOPIC, header))
    assert answer.code == ResponseCode.SUCCESS, answer.remark


async def stored(client: RemotingClient, topic: str, queues: int = 4) -> list[MessageRecord]:
    """Every message a consumer of ``topic`` can pull now, queue by queue."""
    records: list[MessageRecord] = []
    for queue_id in range(queues):
        answer = await pull(client, topic, queue_id, 0)
        if answer.code == ResponseCode.SUCCESS:
            records += decode_records(answer.body)
    return records
