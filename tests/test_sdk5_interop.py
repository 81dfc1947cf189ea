"""Apache RocketMQ's 5.x SDKs against the reference broker's gRPC proxy and Apache 5.5.0's (its broker
inside its proxy, local mode, the same broker.conf): Python, Java, Node.js and Go, with their defaults
(TLS in Java and Go, plain text in Python and Node.js, on the one port both brokers serve both on).

Each SDK runs as a real client through its driver of the client conformance suite
(rocketmq_spec.conformance.clients.sdk5), the scenarios configured as the suite configures them; what a
producer did is read back from the broker over remoting and what a consumer got is compared with what was
sent: every message stored once with the id the SDK reported, received exactly once and not again after
its ack, received again one attempt later after its invisible duration was changed (consume-nack),
through a SimpleConsumer and a PushConsumer; a FIFO message group kept in one queue and consumed in send
order; committed transactions visible and rolled-back ones not; an orphaned half message resolved through
the producer's checker (the broker's check-back travels as a Telemetry command); a delay message held by
the broker's timer until its delivery time. The default run drives the Python SDK through the scenarios
and the Java and Node.js SDKs through one each, against the reference broker; ``-m slow`` (tox -e sdk5)
runs every SDK through every scenario against both brokers (the Go SDK's first build takes minutes).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from rocketmq_spec.spec.grpc_mapping import TIMER_DELIVER_MS
from tests import sdk5_clients as sdk5
from tests.sdk5_clients import Target

pytestmark = pytest.mark.interop

ALL_SCENARIOS = ("send", "fifo", "transaction", "recovery", "delay", "receive", "redelivery", "push",
                 "fifo-order", "timer")
DEFAULT_RUN = {("python", s) for s in ALL_SCENARIOS if s not in ("fifo", "delay")} | {
    ("java", "receive"), ("node", "transaction")}
"""The scenarios of the default run; every other pair is slow."""


QUICK_CHECKS = {"transactionTimeOut": "1000", "transactionCheckInterval": "500", "transactionCheckMax": "5"}
"""broker.conf of both brokers: half messages are checked back within a second or two instead of Java's
6 s + 60 s."""


@pytest.fixture(scope="module", params=[sdk5.REFERENCE, pytest.param(sdk5.APACHE, marks=pytest.mark.slow)])
def broker(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    with sdk5.serve(request.param, tmp_path_factory.mktemp("sdk5"), QUICK_CHECKS) as target:
        yield target


def _params() -> Iterator[object]:
    for sdk in sdk5.SDK_NAMES:
        for scenario in ALL_SCENARIOS:
            marks = () if (sdk, scenario) in DEFAULT_RUN else (pytest.mark.slow,)
            yield pytest.param(sdk, scenario, marks=marks, id=f"{sdk}-{scenario}")


@pytest.fixture
def sdk(request: pytest.FixtureRequest) -> str:
    return sdk5.sdk_fixture(request)


@pytest.mark.parametrize(("sdk", "scenario"), list(_params()), indirect=["sdk"])
def test_sdk_against_broker(sdk: str, scenario: str, broker: Target) -> None:
    """Each SDK with its default settings: TLS in Java and Go, plain text in Python and Node.js."""
    SCENARIOS[scenario](sdk, broker.grpc_addr, broker)


@pytest.mark.parametrize("sdk", [pytest.param(name, marks=pytest.mark.slow)
                                 for name in sorted(sdk5.TLS_BY_DEFAULT)], indirect=True)
def test_plain_text_when_asked(sdk: str, broker: Target) -> None:
    """An SDK that speaks TLS by default is served on the same port when it asks for plain text
    (permissive mode, Apache's proxy's default)."""
    topic = broker.topic()
    sent = sdk5.of(sdk5.run(sdk, "produce", broker.grpc_addr, tls=False, topic=topic, count=2), "sent")
    assert sorted(str(r.uniq_key) for r in broker.stored(topic)) == sorted(e["msgId"] for e in sent)


def _body(index: int) -> bytes:
    """The drivers' body of message ``index`` (no RMQ_BODY_B64): the index and a dash, padded with x."""
    return f"{index}-".encode().ljust(BODY_SIZE, b"x")


BODY_SIZE = 16


def _send(sdk: str, endpoint: str, broker: Target) -> None:
    topic = broker.topic("NORMAL")
    sent = sdk5.of(sdk5.run(sdk, "produce", endpoint, topic=topic, count=10, tag="sdk5", keys="k1 k2",
                            body_size=BODY_SIZE), "sent")
    assert [e["index"] for e in sent] == list(range(10))
    records = broker.stored(topic)
    assert sorted(str(r.uniq_key) for r in records) == sorted(e["msgId"] for e in sent)
    assert sorted(r.application_body for r in records) == sorted(_body(i) for i in range(10))
    assert {r.tags for r in records} == {"sdk5"}
    assert {tuple(sorted(r.keys)) for r in records} == {("k1", "k2")}


def _fifo(sdk: str, endpoint: str, broker: Target) -> None:
    topic = broker.topic("FIFO")
    sent = sdk5.of(sdk5.run(sdk, "produce-fifo", endpoint, topic=topic, count=8, message_groups=2), "sent")
    records = broker.stored(topic)
    assert len(records) == len(sent) == 8
    for group in ("g0", "g1"):
        mine = [r for r in records if r.properties.get("__SHARDINGKEY") == group]
        assert len({r.queue_id for r in mine}) == 1, f"group {group} spread over queues"
        in_queue = [r.uniq_key for r in sorted(mine, key=lambda r: r.queue_offset)]
        assert in_queue == [e["msgId"] for e in sent if e["group"] == group]


def _transaction(sdk: str, endpoint: str, broker: Target) -> None:
    topic = broker.topic("TRANSACTION")
    committed = sdk5.of(sdk5.run(sdk, "produce-transaction", endpoint, topic=topic, count=2,
                                 tx_answer="commit"), "sent")
    rolled_back = sdk5.of(sdk5.run(sdk, "produce-transaction", endpoint, topic=topic, count=1,
                                   tx_answer="rollback"), "sent")
    assert len(committed) == 2 and len(rolled_back) == 1
    visible = {r.uniq_key for r in broker.stored(topic)}
    assert visible == {e["msgId"] for e in committed}


def _recovery(sdk: str, endpoint: str, broker: Target) -> None:
    """An open transaction's producer stays up until the broker's check-back settled it. Each check the
    producer answers with a commit may put a copy in the topic: a check is repeated (on the half message
    put back at its check) while the answer to the one before is on its way, and neither Apache's
    EndTransactionProcessor nor the reference broker looks for an earlier commit (Apache 5.5.0 stored the
    Java SDK's message twice so in one run)."""
    topic = broker.topic("TRANSACTION")
    events = sdk5.run(sdk, "produce-transaction", endpoint, topic=topic, count=1, tx_answer="unknown",
                      tx_check_answer="commit")
    (sent,) = sdk5.of(events, "sent")
    checks = [e for e in sdk5.of(events, "checked") if e["msgId"] == sent["msgId"]]
    assert checks
    deadline = time.monotonic() + 10
    while not broker.stored(topic) and time.monotonic() < deadline:
        time.sleep(0.2)
    copies = [r.uniq_key for r in broker.stored(topic)]
    assert set(copies) == {sent["msgId"]} and len(copies) <= len(checks), (copies, checks)


def _delay(sdk: str, endpoint: str, broker: Target) -> None:
    """The broker's timer holds the message until its delivery time, then puts it in the topic."""
    topic = broker.topic("DELAY")
    before = int(time.time() * 1000)
    events = sdk5.run(sdk, "produce-delay", endpoint, topic=topic, count=1, delay_ms=DELAY_MS)
    (sent,) = sdk5.of(events, "sent")
    deadline = time.monotonic() + DELAY_MS / 1000 + 15
    while not (records := broker.stored(topic)) and time.monotonic() < deadline:
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


def _receive(sdk: str, endpoint: str, broker: Target) -> None:
    """SimpleConsumer: every message exactly once, and nothing again once acked."""
    topic, group = broker.topic("NORMAL"), broker.group()
    sent = sdk5.of(sdk5.run(sdk, "produce", endpoint, topic=topic, count=10), "sent")
    got = _received(sdk5.run(sdk, "consume-simple", endpoint, topic=topic, group=group, count=10))
    assert sorted(e["msgId"] for e in got) == sorted(e["msgId"] for e in sent)
    assert {e["reconsumeTimes"] for e in got} == {0}
    assert _nothing_more(sdk, endpoint, topic, group), "acked messages were delivered again"


def _redelivery(sdk: str, endpoint: str, broker: Target) -> None:
    """A first delivery made invisible again comes back after the new invisible duration, one attempt
    later; once that redelivery is acked, nothing more comes."""
    topic, group = broker.topic("NORMAL"), broker.group()
    sent = {e["msgId"] for e in sdk5.of(sdk5.run(sdk, "produce", endpoint, topic=topic, count=3), "sent")}
    got = _received(sdk5.run(sdk, "consume-nack", endpoint, topic=topic, group=group, count=3, timeout_s=90))
    first = [e for e in got if e["reconsumeTimes"] == 0]
    second = [e for e in got if e["reconsumeTimes"] == 1]
    assert {e["msgId"] for e in first} == {e["msgId"] for e in second} == sent
    assert len(got) == 6
    assert min(e["at"] for e in second) >= min(e["at"] for e in first) + NACK_INVISIBLE_MS - 1000, \
        "redelivered while invisible"
    assert _nothing_more(sdk, endpoint, topic, group)


def _push(sdk: str, endpoint: str, broker: Target) -> None:
    """PushConsumer: every message exactly once through the SDK's own receive loop and acks."""
    topic, group = broker.topic("NORMAL"), broker.group()
    sent = sdk5.of(sdk5.run(sdk, "produce", endpoint, topic=topic, count=5), "sent")
    got = _received(sdk5.run(sdk, "consume-push", endpoint, topic=topic, group=group, count=5, timeout_s=90))
    assert sorted(e["msgId"] for e in got) == sorted(e["msgId"] for e in sent)


def _fifo_order(sdk: str, endpoint: str, broker: Target) -> None:
    """A consumer sees each message group in send order."""
    topic, group = broker.topic("FIFO"), broker.group()
    sent = sdk5.of(sdk5.run(sdk, "produce-fifo", endpoint, topic=topic, count=12, message_groups=3), "sent")
    got = _received(sdk5.run(sdk, "consume-simple", endpoint, topic=topic, group=group, count=12))
    for name in ("g0", "g1", "g2"):
        assert [e["msgId"] for e in got if e["group"] == name] == [
            e["msgId"] for e in sent if e["group"] == name]


def _timer(sdk: str, endpoint: str, broker: Target) -> None:
    """A delay message reaches a consumer at its delivery time, not before."""
    topic, group = broker.topic("DELAY"), broker.group()
    events = sdk5.run(sdk, "produce-delay", endpoint, topic=topic, count=1, delay_ms=DELAY_MS)
    (sent,) = sdk5.of(events, "sent")
    (got,) = _received(sdk5.run(sdk, "consume-simple", endpoint, topic=topic, group=group, count=1))
    assert got["msgId"] == sent["msgId"]
    assert got["deliveryTimestamp"] is not None and got["at"] >= got["deliveryTimestamp"], "received early"


SCENARIOS = {"send": _send, "fifo": _fifo, "transaction": _transaction, "recovery": _recovery,
             "delay": _delay, "receive": _receive, "redelivery": _redelivery, "push": _push,
             "fifo-order": _fifo_order, "timer": _timer}
