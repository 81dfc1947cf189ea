"""Apache RocketMQ's 5.x SDKs against the reference broker's gRPC proxy: Python, Java, Node.js and Go.

Each SDK runs as a real client through its driver of the client conformance suite
(rocketmq_spec.conformance.clients.sdk5), the scenarios configured as the suite configures them; what a
producer did is read back from the broker over remoting and what a consumer got is compared with what was
sent: every message stored once with the id the SDK reported, received exactly once and not again after
its ack, received again one attempt later after its invisible duration was changed (consume-nack),
through a SimpleConsumer and a PushConsumer; a FIFO message group kept in one queue and consumed in send
order; committed transactions visible and rolled-back ones not; an orphaned half message resolved through
the producer's checker (the broker's check-back travels as a Telemetry command); a delay message held by
the broker's timer until its delivery time. The default run drives the Python SDK through the scenarios
and the Java and Node.js SDKs through one each; ``-m slow`` (tox -e sdk5) runs every SDK through every
scenario (the Go SDK's first build takes minutes).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.config import BrokerConfig
from rocketmq_spec.reference_broker.embedded import SyncEmbeddedRocketMQ
from rocketmq_spec.spec.grpc_mapping import TIMER_DELIVER_MS
from tests import sdk5_clients as sdk5

pytestmark = pytest.mark.interop

QUICK_CHECKS = {"transaction_time_out": 1000, "transaction_check_interval": 500, "transaction_check_max": 5}
"""Half messages are checked back within a second or two instead of Java's 6 s + 60 s."""

ALL_SCENARIOS = ("send", "fifo", "transaction", "recovery", "delay", "receive", "redelivery", "push",
                 "fifo-order", "timer")
DEFAULT_RUN = {("python", s) for s in ALL_SCENARIOS if s not in ("fifo", "delay")} | {
    ("java", "receive"), ("node", "transaction")}
"""The scenarios of the default run; every other pair is slow."""


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SyncEmbeddedRocketMQ]:
    store: Path = tmp_path_factory.mktemp("sdk5") / "store"
    with SyncEmbeddedRocketMQ(broker_config=BrokerConfig(listen_port=0, store_path_root_dir=str(store),
                                                         **QUICK_CHECKS)) as running:
        yield running


def _topic(broker: SyncEmbeddedRocketMQ, message_type: str) -> str:
    topic = f"sdk5-{message_type.lower()}-{uuid.uuid4().hex[:8]}"

    async def create() -> None:
        client = await RemotingClient.connect(broker.broker_addr)
        try:
            await sdk5.create_topic(client, topic, message_type)
        finally:
            await client.close()

    broker.call(create())
    return topic


def _group(broker: SyncEmbeddedRocketMQ) -> str:
    group = f"g-{uuid.uuid4().hex[:8]}"

    async def create() -> None:
        client = await RemotingClient.connect(broker.broker_addr)
        try:
            await sdk5.create_group(client, group)
        finally:
            await client.close()

    broker.call(create())
    return group


def _stored(broker: SyncEmbeddedRocketMQ, topic: str) -> list:
    async def read() -> list:
        client = await RemotingClient.connect(broker.broker_addr)
        try:
            return await sdk5.stored(client, topic)
        finally:
            await client.close()

    return broker.call(read())


def _params() -> Iterator[object]:
    for sdk in sdk5.SDK_NAMES:
        for scenario in ALL_SCENARIOS:
            marks = () if (sdk, scenario) in DEFAULT_RUN else (pytest.mark.slow,)
            yield pytest.param(sdk, scenario, marks=marks, id=f"{sdk}-{scenario}")


@pytest.fixture
def sdk(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    reason = sdk5.availability(name)
    if reason is not None:
        pytest.skip(f"{name} SDK unavailable here: {reason}")
    return name


@pytest.mark.parametrize(("sdk", "scenario"), list(_params()), indirect=["sdk"])
def test_sdk_against_reference_broker(sdk: str, scenario: str, broker: SyncEmbeddedRocketMQ) -> None:
    endpoint = broker.grpc_addr
    assert endpoint is not None
    SCENARIOS[scenario](sdk, endpoint, broker)


def _body(index: int) -> bytes:
    """The drivers' body of message ``index`` (no RMQ_BODY_B64): the index and a dash, padded with x."""
    return f"{index}-".encode().ljust(BODY_SIZE, b"x")


BODY_SIZE = 16


def _send(sdk: str, endpoint: str, broker: SyncEmbeddedRocketMQ) -> None:
    topic = _topic(broker, "NORMAL")
    sent = sdk5.of(sdk5.run(sdk, "produce", endpoint, topic=topic, count=10, tag="sdk5", keys="k1 k2",
                            body_size=BODY_SIZE), "sent")
    assert [e["index"] for e in sent] == list(range(10))
    records = _stored(broker, topic)
    assert sorted(r.uniq_key for r in records) == sorted(e["msgId"] for e in sent)
    assert sorted(r.application_body for r in records) == sorted(_body(i) for i in range(10))
    assert {r.tags for r in records} == {"sdk5"}
    assert {tuple(sorted(r.keys)) for r in records} == {("k1", "k2")}


def _fifo(sdk: str, endpoint: str, broker: SyncEmbeddedRocketMQ) -> None:
    topic = _topic(broker, "FIFO")
    sent = sdk5.of(sdk5.run(sdk, "produce-fifo", endpoint, topic=topic, count=8, message_groups=2), "sent")
    records = _stored(broker, topic)
    assert len(records) == len(sent) == 8
    for group in ("g0", "g1"):
        mine = [r for r in records if r.properties.get("__SHARDINGKEY") == group]
        assert len({r.queue_id for r in mine}) == 1, f"group {group} spread over queues"
        in_queue = [r.uniq_key for r in sorted(mine, key=lambda r: r.queue_offset)]
        assert in_queue == [e["msgId"] for e in sent if e["group"] == group]


def _transaction(sdk: str, endpoint: str, broker: SyncEmbeddedRocketMQ) -> None:
    topic = _topic(broker, "TRANSACTION")
    committed = sdk5.of(sdk5.run(sdk, "produce-transaction", endpoint, topic=topic, count=2,
                                 tx_answer="commit"), "sent")
    rolled_back = sdk5.of(sdk5.run(sdk, "produce-transaction", endpoint, topic=topic, count=1,
                                   tx_answer="rollback"), "sent")
    assert len(committed) == 2 and len(rolled_back) == 1
    visible = {r.uniq_key for r in _stored(broker, topic)}
    assert visible == {e["msgId"] for e in committed}


def _recovery(sdk: str, endpoint: str, broker: SyncEmbeddedRocketMQ) -> None:
    """An open transaction's producer stays up until the broker's check-back settled it."""
    topic = _topic(broker, "TRANSACTION")
    events = sdk5.run(sdk, "produce-transaction", endpoint, topic=topic, count=1, tx_answer="unknown",
                      tx_check_answer="commit")
    (sent,) = sdk5.of(events, "sent")
    assert sent["msgId"] in {e["msgId"] for e in sdk5.of(events, "checked")}
    deadline = time.monotonic() + 10
    while not _stored(broker, topic) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert [r.uniq_key for r in _stored(broker, topic)] == [sent["msgId"]]


def _delay(sdk: str, endpoint: str, broker: SyncEmbeddedRocketMQ) -> None:
    """The broker's timer holds the message until its delivery time, then puts it in the topic."""
    topic = _topic(broker, "DELAY")
    before = int(time.time() * 1000)
    events = sdk5.run(sdk, "produce-delay", endpoint, topic=topic, count=1, delay_ms=DELAY_MS)
    (sent,) = sdk5.of(events, "sent")
    deadline = time.monotonic() + DELAY_MS / 1000 + 15
    while not (records := _stored(broker, topic)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert [r.uniq_key for r in records] == [sent["msgId"]]
    deliver_ms = int(records[0].properties[TIMER_DELIVER_MS])
    assert before + DELAY_MS - 1000 <= deliver_ms <= sent["at"] + DELAY_MS + 1000  # Python: whole seconds
    assert records[0].store_timestamp >= deliver_ms, "put in the topic before its delivery time"


DELAY_MS = 3000
NACK_INVISIBLE_MS = 5000
"""What the drivers' consume-nack changes a first delivery's invisible duration to."""


def _received(events: list[dict]) -> list[dict]:
    return sdk5.of(events, "received")


def _nothing_more(sdk: str, endpoint: str, topic: str, group: str) -> bool:
    events = sdk5.run(sdk, "consume-simple", endpoint, topic=topic, group=group, count=1, timeout_s=15)
    return _received(events) == []


def _receive(sdk: str, endpoint: str, broker: SyncEmbeddedRocketMQ) -> None:
    """SimpleConsumer: every message exactly once, and nothing again once acked."""
    topic, group = _topic(broker, "NORMAL"), _group(broker)
    sent = sdk5.of(sdk5.run(sdk, "produce", endpoint, topic=topic, count=10), "sent")
    got = _received(sdk5.run(sdk, "consume-simple", endpoint, topic=topic, group=group, count=10))
    assert sorted(e["msgId"] for e in got) == sorted(e["msgId"] for e in sent)
    assert {e["reconsumeTimes"] for e in got} == {0}
    assert _nothing_more(sdk, endpoint, topic, group), "acked messages were delivered again"


def _redelivery(sdk: str, endpoint: str, broker: SyncEmbeddedRocketMQ) -> None:
    """A first delivery made invisible again comes back after the new invisible duration, one attempt
    later; once that redelivery is acked, nothing more comes."""
    topic, group = _topic(broker, "NORMAL"), _group(broker)
    sent = {e["msgId"] for e in sdk5.of(sdk5.run(sdk, "produce", endpoint, topic=topic, count=3), "sent")}
    got = _received(sdk5.run(sdk, "consume-nack", endpoint, topic=topic, group=group, count=3, timeout_s=90))
    first = [e for e in got if e["reconsumeTimes"] == 0]
    second = [e for e in got if e["reconsumeTimes"] == 1]
    assert {e["msgId"] for e in first} == {e["msgId"] for e in second} == sent
    assert len(got) == 6
    assert min(e["at"] for e in second) >= min(e["at"] for e in first) + NACK_INVISIBLE_MS - 1000, \
        "redelivered while invisible"
    assert _nothing_more(sdk, endpoint, topic, group)


def _push(sdk: str, endpoint: str, broker: SyncEmbeddedRocketMQ) -> None:
    """PushConsumer: every message exactly once through the SDK's own receive loop and acks."""
    topic, group = _topic(broker, "NORMAL"), _group(broker)
    sent = sdk5.of(sdk5.run(sdk, "produce", endpoint, topic=topic, count=5), "sent")
    got = _received(sdk5.run(sdk, "consume-push", endpoint, topic=topic, group=group, count=5, timeout_s=90))
    assert sorted(e["msgId"] for e in got) == sorted(e["msgId"] for e in sent)


def _fifo_order(sdk: str, endpoint: str, broker: SyncEmbeddedRocketMQ) -> None:
    """A consumer sees each message group in send order."""
    topic, group = _topic(broker, "FIFO"), _group(broker)
    sent = sdk5.of(sdk5.run(sdk, "produce-fifo", endpoint, topic=topic, count=12, message_groups=3), "sent")
    got = _received(sdk5.run(sdk, "consume-simple", endpoint, topic=topic, group=group, count=12))
    for name in ("g0", "g1", "g2"):
        assert [e["msgId"] for e in got if e["group"] == name] == [
            e["msgId"] for e in sent if e["group"] == name]


def _timer(sdk: str, endpoint: str, broker: SyncEmbeddedRocketMQ) -> None:
    """A delay message reaches a consumer at its delivery time, not before."""
    topic, group = _topic(broker, "DELAY"), _group(broker)
    events = sdk5.run(sdk, "produce-delay", endpoint, topic=topic, count=1, delay_ms=DELAY_MS)
    (sent,) = sdk5.of(events, "sent")
    (got,) = _received(sdk5.run(sdk, "consume-simple", endpoint, topic=topic, group=group, count=1))
    assert got["msgId"] == sent["msgId"]
    assert got["deliveryTimestamp"] is not None and got["at"] >= got["deliveryTimestamp"], "received early"


SCENARIOS = {"send": _send, "fifo": _fifo, "transaction": _transaction, "recovery": _recovery,
             "delay": _delay, "receive": _receive, "redelivery": _redelivery, "push": _push,
             "fifo-order": _fifo_order, "timer": _timer}
