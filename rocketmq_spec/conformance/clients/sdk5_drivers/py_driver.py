"""Drive PyPI ``rocketmq-python-client`` (Apache RocketMQ's 5.x Python SDK, gRPC) as a client-suite driver.

    py_driver.py SCENARIO        (configuration in RMQ_* variables; README.md beside it)

One process per scenario, JSON events on stdout; the other languages' drivers take the same scenarios and
print the same events. The SDK runs with its default settings: only the endpoint, credentials, TLS (its
``tls_enable``, off by default, on when RMQ_TLS=1) and what a scenario needs are set.
Run with ``PYTHONPATH`` holding the installed SDK, as ``rocketmq_spec.conformance.clients.sdk5 run python``
does.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from rocketmq import (
    ClientConfiguration,
    ConsumeResult,
    Credentials,
    FilterExpression,
    Message,
    MessageListener,
    Producer,
    PushConsumer,
    SimpleConsumer,
    TransactionChecker,
    TransactionResolution,
)

_OUT = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
os.dup2(2, 1)  # the SDK's prints and logging go to stderr; stdout carries events only
_LOCK = threading.Lock()
ENV = os.environ
UNSUPPORTED = 3
SHUTDOWN_MARGIN_S = 5.0
RECEIVE_INVISIBLE_S = 15
"""The invisible duration of a receive: the SDK's examples' 15 s."""
NACK_INVISIBLE_S = 5
"""consume-nack changes a first delivery's invisible duration to this, then acks the redelivery."""
EXTEND_INVISIBLE_S = 30
"""consume-extend changes each delivery's invisible duration to this (more time), then acks it."""
BATCH = 16


def emit(event: str, **fields: Any) -> None:
    with _LOCK:
        _OUT.write(json.dumps({"event": event, **fields}) + "\n")


def now_ms() -> int:
    return int(time.time() * 1000)


def budget() -> float:
    """The monotonic time by which the scenario stops, leaving the SDK time to shut down."""
    total = float(ENV.get("RMQ_TIMEOUT_S", "60"))
    return time.monotonic() + max(total - SHUTDOWN_MARGIN_S, total / 2)


def received(message: Any) -> None:
    emit("received", msgId=message.message_id, topic=message.topic,
         body_b64=base64.b64encode(message.body or b"").decode(),
         reconsumeTimes=(message.delivery_attempt or 1) - 1, tag=message.tag, keys=sorted(message.keys or ()),
         group=message.message_group, deliveryTimestamp=message.delivery_timestamp, at=now_ms())


def body(index: int) -> bytes:
    """RMQ_BODY_B64 when set, else the index in decimal and a dash, padded with 'x' to RMQ_BODY_SIZE."""
    if ENV.get("RMQ_BODY_B64"):
        return base64.b64decode(ENV["RMQ_BODY_B64"])
    return f"{index}-".encode().ljust(int(ENV.get("RMQ_BODY_SIZE", "16")), b"x")


def message(index: int) -> Message:
    built = Message()
    built.topic = ENV["RMQ_TOPIC"]
    built.body = body(index)
    if ENV.get("RMQ_TAG"):
        built.tag = ENV["RMQ_TAG"]
    for key in ENV.get("RMQ_KEYS", "").split():
        built.keys = key  # the setter adds one key at a time
    return built


def configuration() -> ClientConfiguration:
    return ClientConfiguration(ENV["RMQ_ENDPOINT"], Credentials(ENV.get("RMQ_ACCESS_KEY", ""),
                                                                ENV.get("RMQ_SECRET_KEY", "")))


TLS = ENV.get("RMQ_TLS") == "1"
RESOLUTIONS = {"commit": TransactionResolution.COMMIT, "rollback": TransactionResolution.ROLLBACK,
               "unknown": TransactionResolution.TRANSACTION_RESOLUTION_UNSPECIFIED}


class Checker(TransactionChecker):
    def __init__(self, answer: str, open_ids: set[str]) -> None:
        self.answer = answer
        self.open_ids = open_ids

    def check(self, message: Message) -> TransactionResolution:
        emit("checked", msgId=message.message_id, answer=self.answer)
        if self.answer != "unknown":
            self.open_ids.discard(message.message_id)
        return RESOLUTIONS[self.answer]


def produce(kind: str) -> None:
    """Sends one by one (``kind`` normal, async, delay, fifo or transaction)."""
    open_ids: set[str] = set()
    answer, check_answer = ENV.get("RMQ_TX_ANSWER", "commit"), ENV.get("RMQ_TX_CHECK_ANSWER", "commit")
    checker = Checker(check_answer, open_ids) if kind == "transaction" else None
    producer = Producer(configuration(), (ENV["RMQ_TOPIC"],), checker=checker, tls_enable=TLS)
    producer.startup()
    emit("ready")
    deadline, groups = budget(), int(ENV.get("RMQ_MESSAGE_GROUPS", "2"))
    try:
        for index in range(int(ENV.get("RMQ_COUNT", "1"))):
            if time.monotonic() >= deadline:
                break
            built, group = message(index), None
            if kind == "fifo":
                group = built.message_group = f"g{index % groups}"
            if kind == "delay":
                built.delivery_timestamp = round(time.time() + int(ENV["RMQ_DELAY_MS"]) / 1000)  # in seconds
            try:
                if kind == "transaction":
                    transaction = producer.begin_transaction()
                    receipt = producer.send(built, transaction)
                    if answer == "unknown":
                        open_ids.add(receipt.message_id)
                    else:
                        (transaction.commit if answer == "commit" else transaction.rollback)()
                elif kind == "async":
                    receipt = producer.send_async(built).result()
                else:
                    receipt = producer.send(built)
                emit("sent", index=index, msgId=receipt.message_id, status=None, group=group, at=now_ms())
            except Exception as exc:  # a send the SDK gave up on is an event, not the driver's failure
                emit("error", stage="send", message=f"{type(exc).__name__}: {exc}")
        while open_ids and time.monotonic() < deadline:
            time.sleep(0.1)
        # started RMQ_IDLE_S more: the SDK heartbeats 1 s after start, then every 10 s
        time.sleep(max(0.0, min(float(ENV.get("RMQ_IDLE_S", "0")), deadline - time.monotonic())))
    finally:
        producer.shutdown()


SETTINGS_NOT_YET_KNOWN = ("NullPointerException. org.apache.rocketmq.proxy.grpc.v2.consumer."
                          "ReceiveMessageActivity.receiveMessage(")
"""What a proxy answers (50001) a receive that overtook the client's first Settings on its Telemetry stream,
Apache 5.5.0's and the reference broker's alike (RMQ-GRPC-RECEIVE-BEFORE-SETTINGS): this SDK starts both
at once without waiting for the Settings answer, so on a loaded machine the receive may arrive first. An
application's receive loop tries again, as this one does."""


def _receive(consumer: SimpleConsumer) -> list[Message]:
    try:
        return consumer.receive(BATCH, RECEIVE_INVISIBLE_S) or []
    except Exception as exc:  # the SDK raises its own exception types, all carrying the proxy's message
        if not any(text in str(exc) for text in SETTINGS_NOT_YET_KNOWN):
            raise
        time.sleep(0.5)
        return []


def extend_then_ack(consumer: SimpleConsumer, got: Message) -> None:
    """consume-extend: the delivery gets more time (its invisible duration changed), then is acked; the ack
    must carry the receipt handle that change answered, which the SDK keeps on the message."""
    consumer.change_invisible_duration(got, EXTEND_INVISIBLE_S)
    consumer.ack(got)


def consume_simple(nack: bool, extend: bool = False) -> None:
    """Receive and ack; with ``nack``, a first delivery's invisible duration is changed instead and only its
    redelivery is acked (and counted); with ``extend``, each delivery is extended before its ack."""
    consumer = SimpleConsumer(configuration(), ENV["RMQ_GROUP"],
                              {ENV["RMQ_TOPIC"]: FilterExpression(ENV.get("RMQ_TAG") or "*")}, tls_enable=TLS)
    consumer.startup()
    emit("ready")
    done, wanted, deadline = 0, int(ENV.get("RMQ_COUNT", "1")), budget()
    try:
        while done < wanted and time.monotonic() < deadline:
            for got in _receive(consumer):
                received(got)
                if nack and (got.delivery_attempt or 1) == 1:
                    consumer.change_invisible_duration(got, NACK_INVISIBLE_S)
                elif extend:
                    extend_then_ack(consumer, got)
                    done += 1
                else:
                    consumer.ack(got)
                    done += 1
    finally:
        consumer.shutdown()


class Listener(MessageListener):
    def __init__(self) -> None:
        self.count = 0

    def consume(self, message: Message) -> ConsumeResult:
        received(message)
        self.count += 1
        return ConsumeResult.SUCCESS


def push_consumer(listener: Listener) -> PushConsumer:
    consumer = PushConsumer(configuration(), ENV["RMQ_GROUP"], listener,
                            {ENV["RMQ_TOPIC"]: FilterExpression(ENV.get("RMQ_TAG") or "*")}, tls_enable=TLS)
    consumer.startup()
    return consumer


def consume_push() -> None:
    listener = Listener()
    consumer = push_consumer(listener)
    emit("ready")
    deadline, wanted = budget(), int(ENV.get("RMQ_COUNT", "1"))
    try:
        while listener.count < wanted and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        consumer.shutdown()


def idle(seconds: float) -> None:
    """One producer and one push consumer, started, left alone for ``seconds`` and shut down."""
    producer = Producer(configuration(), (ENV["RMQ_TOPIC"],), tls_enable=TLS)
    producer.startup()
    consumer = push_consumer(Listener())
    emit("ready")
    time.sleep(max(0.0, min(seconds, budget() - time.monotonic())))
    consumer.shutdown()
    producer.shutdown()


SCENARIOS: dict[str, Callable[[], None]] = {
    "produce": lambda: produce("normal"), "produce-async": lambda: produce("async"),
    "produce-delay": lambda: produce("delay"), "produce-fifo": lambda: produce("fifo"),
    "produce-transaction": lambda: produce("transaction"),
    "consume-simple": lambda: consume_simple(False), "consume-pop": lambda: consume_simple(False),
    "consume-nack": lambda: consume_simple(True),
    "consume-extend": lambda: consume_simple(False, extend=True), "consume-push": consume_push,
    "idle": lambda: idle(float(ENV.get("RMQ_IDLE_S", "0"))), "shutdown": lambda: idle(0.0)}


def main(argv: list[str]) -> int:
    scenario = argv[1] if len(argv) > 1 else ""
    if ENV.get("RMQ_PROTOCOL", "grpc") != "grpc":
        emit("unsupported", reason=f"a gRPC SDK does not speak {ENV['RMQ_PROTOCOL']}")
        return UNSUPPORTED
    if scenario not in SCENARIOS:
        emit("unsupported", reason=f"scenario {scenario!r} is not offered by the Python SDK's driver")
        return UNSUPPORTED
    try:
        SCENARIOS[scenario]()
    except Exception as exc:  # what the SDK raised (a failed start, say) is an event
        emit("error", stage=scenario, message=f"{type(exc).__name__}: {exc}")
    emit("done")
    return 0


if __name__ == "__main__":
    status = main(sys.argv)
    _OUT.flush()
    os._exit(status)  # the SDK's scheduler threads are not daemons
