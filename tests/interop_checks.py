"""What the interop tests share: client availability, a broker that can be restarted on its store, the
messages they send and the exactly-once check of what comes back.

A message is identified by its first key (unique per test), so a delivery can be matched to what was
sent whatever msgId, queue or offset the path gave it.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import shutil
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest

from rocketmq_spec.codec.acl import Credentials, sign
from rocketmq_spec.codec.custom_header import encode_header
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.embedded import SyncEmbeddedRocketMQ
from rocketmq_spec.reference_broker.small_store import small_config
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.headers import CREATE_TOPIC_REQUEST
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC
from tests.interop_clients import (
    ALI_ONS,
    ROCKETMQ_NODEJS,
    Clients,
    ensure_installed,
    run_consumer,
    run_producer,
)

SHORT_DELAY_LEVELS = "1s 1s 1s 1s 1s"
"""Every delay level one second: a retried message (level 3 + reconsumeTimes, clamped to 5) is back
within seconds instead of the default 10 s, 30 s ..."""
IDLE_TIMEOUT_S = 20.0
"""A consumer run ends this long after its last delivery if it has not got everything; on loopback the
clients deliver within a second or two, so this only bounds a failing run."""
RETRY_IDLE_TIMEOUT_S = 30.0
"""The same for retry runs, which also wait for the delay levels and the schedule's polling."""
ROUTE_POLLS = 50
ROUTE_POLL_INTERVAL_S = 0.1
"""A created topic reaches the name server with the broker's next registration; it is awaited with at
most this many route queries."""
NODE_CLIENTS = (ALI_ONS, ROCKETMQ_NODEJS)


@functools.cache
def _clients() -> Clients:
    return ensure_installed()


def require(client: str) -> None:
    """Skip only when Node.js or npm is missing for a JavaScript client; any other reason a client
    cannot be installed or loaded fails the test with that reason."""
    if client in NODE_CLIENTS and (shutil.which("node") is None or shutil.which("npm") is None):
        pytest.skip(f"{client} needs Node.js and npm on PATH")
    clients = _clients()
    if not clients.available(client):
        pytest.fail(f"{client} cannot be installed or loaded here: {clients.reason(client)}")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def make_messages(prefix: str, count: int, tags: Sequence[str], *, properties: bool = True,
                  binary: bool = True, **extra: Any) -> list[dict[str, Any]]:
    """Messages with distinct keys, cycling through `tags`; binary bodies carry NUL and 0xff bytes.
    `extra` maps a field name to a function of the index (e.g. shardingKey)."""
    made = []
    for i in range(count):
        body = f"{prefix} body {i} ü".encode() + (b"\x00\xff\x01" if binary else b"")
        message: dict[str, Any] = {"tags": tags[i % len(tags)], "keys": f"{prefix}-{i} shared-{prefix}",
                                   "body_b64": b64(body)}
        if properties:
            message["properties"] = {"origin": prefix, "index": str(i)}
        message.update({name: value(i) for name, value in extra.items()})
        made.append(message)
    return made


def key_of(message: dict[str, Any]) -> str:
    return str(message["keys"]).split()[0]


def assert_consumed_once(sent: Sequence[dict[str, Any]], received: Sequence[dict[str, Any]], topic: str,
                         *, properties: bool = True) -> None:
    """Every message of `sent` was accepted exactly once, nothing else was, and each arrived intact:
    topic, body (byte for byte), tags, keys and, when the client can read them, user properties."""
    accepted = [event for event in received if event.get("accepted", True)]
    counts = Counter(key_of(event) for event in accepted)
    expected = {key_of(message): message for message in sent}
    assert {key: n for key, n in counts.items() if n != 1 or key not in expected} == {}
    assert sorted(counts) == sorted(expected)
    for event in accepted:
        message = expected[key_of(event)]
        assert event["topic"] == topic
        assert event["body_b64"] == message["body_b64"]
        assert (event["tags"], event["keys"]) == (message["tags"], message["keys"])
        if properties:
            wanted = message.get("properties", {})
            assert {name: event["properties"].get(name) for name in wanted} == wanted


class RestartableBroker:
    """An embedded name server and broker on one store directory. `restart` stops both and starts a new
    pair on the same store (on new free ports: clients reach it through the new name server address),
    which is what a broker restart between producing and consuming means for the clients."""

    def __init__(self, store: Path, **overrides: Any) -> None:
        self.store = store
        self.overrides = overrides
        self.running: SyncEmbeddedRocketMQ | None = None

    def start(self) -> RestartableBroker:
        config = small_config(self.store, **{"message_delay_level": SHORT_DELAY_LEVELS, **self.overrides})
        self.running = SyncEmbeddedRocketMQ(self.store, broker_config=config).start()
        return self

    def stop(self) -> None:
        if self.running is not None:
            self.running.stop()
            self.running = None

    def restart(self) -> None:
        self.stop()
        self.start()

    @property
    def namesrv_addr(self) -> str:
        if self.running is None:
            raise RuntimeError("broker not started")
        return self.running.namesrv_addr

    def create_topic(self, topic: str, queues: int = 4, *, credentials: Credentials | None = None) -> None:
        """UPDATE_AND_CREATE_TOPIC as mqadmin sends it (signed when ``credentials`` are given), then wait
        until the name server routes the topic (ali-ons never falls back to the TBW102 route for an
        unknown topic)."""
        if self.running is None:
            raise RuntimeError("broker not started")
        self.running.call(create_topic_at(self.running.broker_addr, self.running.namesrv_addr, topic, queues,
                                        credentials))

    def __enter__(self) -> RestartableBroker:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


async def create_topic_at(broker_addr: str, namesrv_addr: str, topic: str, queues: int,
                        credentials: Credentials | None) -> None:
    fields = encode_header(CREATE_TOPIC_REQUEST, {
        "topic": topic, "defaultTopic": DEFAULT_TOPIC, "readQueueNums": queues, "writeQueueNums": queues,
        "perm": 6, "topicFilterType": "SINGLE_TAG", "topicSysFlag": 0, "order": False})
    broker = await RemotingClient.connect(broker_addr)
    namesrv = await RemotingClient.connect(namesrv_addr)
    try:
        request = broker.request(RequestCode.UPDATE_AND_CREATE_TOPIC, fields)
        created = await broker.invoke(sign(request, credentials) if credentials else request)
        assert created.code == ResponseCode.SUCCESS, created.remark
        query = {"topic": topic}
        for _ in range(ROUTE_POLLS):
            route = await namesrv.invoke(namesrv.request(RequestCode.GET_ROUTEINFO_BY_TOPIC, query))
            if route.code == ResponseCode.SUCCESS:
                return
            await asyncio.sleep(ROUTE_POLL_INTERVAL_S)
        raise AssertionError(f"the name server has no route for {topic} after {ROUTE_POLLS} queries")
    finally:
        await broker.close()
        await namesrv.close()


def produce(client: str, broker: RestartableBroker, topic: str,
            sends: Sequence[tuple[str, list[dict[str, Any]]]]) -> list[dict[str, Any]]:
    """Send each list of messages in its mode (the driver fails unless every send succeeded)."""
    sent: list[dict[str, Any]] = []
    for mode, messages in sends:
        events = run_producer(client, broker.namesrv_addr, topic, messages, mode)
        covered = sorted(i for event in events for i in event.get("indexes") or [event["index"]])
        assert covered == list(range(len(messages))), events
        sent += messages
    return sent


def consume_across_restart(client: str, broker: RestartableBroker, topic: str,
                           before: Sequence[tuple[str, list[dict[str, Any]]]],
                           after: Sequence[tuple[str, list[dict[str, Any]]]], *, expression: str = "*",
                           selected: Sequence[str] | None = None, properties: bool = True
                           ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The shared push-consumer scenario: group `<topic>-G1` consumes what `before` sent; `after` is
    sent and the broker restarted on its store; then G1 must get exactly the `after` messages (its
    offsets survived) and a new group `<topic>-G2` exactly all of them. `selected` names the tags the
    expression matches (None: all). Returns (every message sent, G2's deliveries)."""
    keys = ["origin", "index"] if properties else []

    def wanted(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        return [m for m in messages if selected is None or m["tags"] in selected]

    def consume(group: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        received = run_consumer(client, broker.namesrv_addr, f"{topic}-{group}", topic, expression,
                                expect=len(messages), timeout=IDLE_TIMEOUT_S, property_keys=keys)
        assert_consumed_once(messages, received, topic, properties=properties)
        return received

    first = produce(client, broker, topic, before)
    consume("G1", wanted(first))
    second = produce(client, broker, topic, after)
    broker.restart()
    consume("G1", wanted(second))
    return first + second, consume("G2", wanted(first + second))


def retry_group(topic: str) -> str:
    """The consumer group `refused_then_accepted` uses for `topic`; its retry topic is `%RETRY%` + it."""
    return f"{topic}-GR"


def refused_then_accepted(client: str, broker: RestartableBroker, topic: str, message: dict[str, Any],
                          times: int, *, properties: bool = True) -> list[dict[str, Any]]:
    """A push consumer refuses the message `times` times (a CONSUMER_SEND_MSG_BACK each) and accepts the
    redelivery after that; every delivery must carry the original topic and content. Returns them."""
    produce(client, broker, topic, [("sync", [message])])
    received = run_consumer(client, broker.namesrv_addr, retry_group(topic), topic, "*", expect=1,
                            timeout=RETRY_IDLE_TIMEOUT_S, retry_times=times,
                            property_keys=["origin", "index"] if properties else [])
    assert [event["accepted"] for event in received] == [False] * times + [True]
    for event in received:
        assert_consumed_once([message], [{**event, "accepted": True}], topic, properties=properties)
    return received
