"""Drive PyPI ``rocketmq-python-client`` (Apache RocketMQ's 5.x Python SDK, gRPC) from the command line.

One process per run, JSON lines on stdout (interop/sdk5/README.md); the other languages' drivers take the
same commands and print the same events. Run with ``PYTHONPATH=.cache/interop/sdk5/python``:

    py_driver.py produce --endpoint 127.0.0.1:8081 --topic T --count 10
                         [--kind normal|fifo|delay|transaction] [--groups 2] [--delay-ms 3000]
                         [--resolution commit|rollback|none] [--check commit|rollback] [--wait-checks N]
                         [--timeout S]
    py_driver.py receive --endpoint ... --group G --topic T --expect N [--invisible-s 20] [--ack yes|no]
                         [--idle-timeout S] [--timeout S]
    py_driver.py push --endpoint ... --group G --topic T --expect N [--idle-timeout S] [--timeout S]
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import threading
import time
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


def emit(event: str, **fields: Any) -> None:
    with _LOCK:
        _OUT.write(json.dumps({"event": event, **fields}) + "\n")


def received(message: Any, **extra: Any) -> None:
    emit("received", messageId=message.message_id, topic=message.topic, tag=message.tag,
         keys=sorted(message.keys or ()), group=message.message_group,
         body_b64=base64.b64encode(message.body or b"").decode(), attempt=message.delivery_attempt,
         deliveryTimestamp=message.delivery_timestamp, at=int(time.time() * 1000), **extra)


class Checker(TransactionChecker):
    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.checked: list[str] = []

    def check(self, message: Message) -> TransactionResolution:
        self.checked.append(message.message_id)
        emit("checked", messageId=message.message_id, resolution=self.answer)
        return TransactionResolution.COMMIT if self.answer == "commit" else TransactionResolution.ROLLBACK


def produce(args: argparse.Namespace, config: ClientConfiguration) -> bool:
    checker = Checker(args.check) if args.kind == "transaction" else None
    producer = Producer(config, (args.topic,), checker=checker) if checker else Producer(config,
                                                                                         (args.topic,))
    producer.startup()
    ok = True
    try:
        for index in range(args.count):
            message = Message()
            message.topic = args.topic
            message.body = f"{args.kind}-{index}".encode()
            message.tag = "sdk5"
            message.keys = f"k{index}"
            group = f"g{index % args.groups}" if args.kind == "fifo" else None
            if group:
                message.message_group = group
            if args.kind == "delay":
                message.delivery_timestamp = round(time.time() + args.delay_ms / 1000)  # seconds here
            try:
                if args.kind == "transaction":
                    transaction = producer.begin_transaction()
                    receipt = producer.send(message, transaction)
                    if args.resolution == "commit":
                        transaction.commit()
                    elif args.resolution == "rollback":
                        transaction.rollback()
                else:
                    receipt = producer.send(message)
                emit("sent", index=index, messageId=receipt.message_id, group=group,
                     at=int(time.time() * 1000))
            except Exception as exc:  # the event says what failed; the exit status says that it did
                ok = False
                emit("error", stage="send", index=index, message=f"{type(exc).__name__}: {exc}")
        deadline = time.monotonic() + args.timeout
        while checker is not None and len(checker.checked) < args.wait_checks and time.monotonic() < deadline:
            time.sleep(0.1)
        if checker is not None and len(checker.checked) < args.wait_checks:
            ok = False
            emit("error", stage="check", message=f"{len(checker.checked)} of {args.wait_checks} checks")
    finally:
        producer.shutdown()
    return ok


def receive(args: argparse.Namespace, config: ClientConfiguration) -> bool:
    consumer = SimpleConsumer(config, args.group, {args.topic: FilterExpression()}, await_duration=5)
    consumer.startup()
    count = 0
    try:
        deadline, idle_since = time.monotonic() + args.timeout, time.monotonic()
        while (count < args.expect and time.monotonic() < deadline
               and time.monotonic() - idle_since < args.idle_timeout):
            for message in consumer.receive(16, args.invisible_s) or ():
                idle_since = time.monotonic()
                received(message)
                count += 1
                if args.ack == "yes":
                    consumer.ack(message)
    finally:
        consumer.shutdown()
    return count >= args.expect


class Listener(MessageListener):
    def __init__(self) -> None:
        self.count = 0
        self.last = time.monotonic()

    def consume(self, message: Message) -> ConsumeResult:
        received(message)
        self.count += 1
        self.last = time.monotonic()
        return ConsumeResult.SUCCESS


def push(args: argparse.Namespace, config: ClientConfiguration) -> bool:
    listener = Listener()
    consumer = PushConsumer(config, args.group, listener, {args.topic: FilterExpression()})
    consumer.startup()
    try:
        deadline = time.monotonic() + args.timeout
        while (listener.count < args.expect and time.monotonic() < deadline
               and time.monotonic() - listener.last < args.idle_timeout):
            time.sleep(0.1)
    finally:
        consumer.shutdown()
    return listener.count >= args.expect


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("command", choices=("produce", "receive", "push"))
    parser.add_argument("--endpoint", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--group", default="sdk5-group")
    parser.add_argument("--count", type=int, default=1)
    parser.add_argument("--kind", choices=("normal", "fifo", "delay", "transaction"), default="normal")
    parser.add_argument("--groups", type=int, default=2)
    parser.add_argument("--delay-ms", type=int, default=3000)
    parser.add_argument("--resolution", choices=("commit", "rollback", "none"), default="commit")
    parser.add_argument("--check", choices=("commit", "rollback"), default="commit")
    parser.add_argument("--wait-checks", type=int, default=0)
    parser.add_argument("--expect", type=int, default=1)
    parser.add_argument("--invisible-s", type=int, default=20)
    parser.add_argument("--ack", choices=("yes", "no"), default="yes")
    parser.add_argument("--idle-timeout", type=float, default=20.0)
    parser.add_argument("--timeout", type=float, default=60.0)
    args = parser.parse_args()
    config = ClientConfiguration(args.endpoint, Credentials(), request_timeout=10)
    try:
        ok = {"produce": produce, "receive": receive, "push": push}[args.command](args, config)
    except Exception as exc:
        emit("error", stage=args.command, message=f"{type(exc).__name__}: {exc}")
        ok = False
    emit("done", ok=ok)
    _OUT.flush()
    os._exit(0 if ok else 1)  # the SDK's scheduler threads are not daemons


if __name__ == "__main__":
    sys.exit(main())
