"""Drive PyPI `rocketmq==0.4.4` (the bundled Apache RocketMQ C++ client 1.2.x) from the command line.

One process per run, JSON lines on stdout (see interop/README.md).  Run with the interpreter that
installed the client and `PYTHONPATH=.cache/interop/python` (tests/interop_clients.py does this):

    py_rocketmq.py produce --namesrv 127.0.0.1:9876 --topic T --mode sync --messages msgs.json
    py_rocketmq.py push --namesrv 127.0.0.1:9876 --group G --topic T --expression 'TagA' --expect 3
    py_rocketmq.py pull --namesrv 127.0.0.1:9876 --group G --topic T --expect 3

The C API of this client is narrower than the C++ client behind it; where the driver reaches past it
(exact body lengths, log location), the function says why.
"""

from __future__ import annotations

import argparse
import base64
import ctypes
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rocketmq.client import Message, Producer, PullConsumer, PushConsumer, RecvMessage
from rocketmq.exceptions import ffi_check
from rocketmq.ffi import MSG_CALLBACK_FUNC, _CConsumeStatus, dll

# The C++ client logs INFO lines for every request into $HOME/logs/rocketmq-cpp by default; WARN keeps
# the files small while still recording what went wrong when a run fails.
LOG_LEVEL_WARN = 3
# Property keys read back from every received message: the C API can only look properties up by name.
STANDARD_PROPERTY_KEYS = (
    "UNIQ_KEY",
    "KEYS",
    "TAGS",
    "WAIT",
    "DELAY",
    "RETRY_TOPIC",
    "ORIGIN_MESSAGE_ID",
    "REAL_TOPIC",
    "REAL_QID",
    "MAX_OFFSET",
    "MIN_OFFSET",
    "CONSUME_START_TIME",
)
# libstdc++'s pre-C++11 (copy-on-write) std::string keeps {length, capacity, refcount} in the 24 bytes
# before its characters; the bundled library is built with that ABI (it exports no __cxx11 symbols).
COW_STRING_HEADER = 24
# A pull that finds nothing new returns at once (this client pulls without suspension), so the pull
# loop waits this long before polling again instead of spinning.
PULL_POLL_INTERVAL_S = 0.2
# Shutting a C++ client down unregisters it and flushes consumer offsets; if the broker never answers,
# the driver must still exit so the test reports the hang instead of becoming it.
SHUTDOWN_GRACE_S = 15.0
# The push consumer takes a consume result into its offset table on its own thread after the listener
# returns; waiting this long after the last expected message lets shutdown persist an offset past it,
# so a later run of the same group does not get it again.
OFFSET_SETTLE_S = 0.5

_get_body_pointer = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)(("GetMessageBody", dll))


class EventWriter:
    """Owns the real stdout; the C++ library may print there, so fd 1 is pointed at stderr instead."""

    def __init__(self) -> None:
        self._stream = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
        os.dup2(2, 1)
        self._lock = threading.Lock()

    def emit(self, event: str, **fields: Any) -> None:
        with self._lock:
            self._stream.write(json.dumps({"event": event, **fields}) + "\n")


def load_messages(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Messages come from a JSON file (arbitrary bytes as base64) or are generated from the flags."""
    if args.messages:
        messages: list[dict[str, Any]] = json.loads(Path(args.messages).read_text())
        return messages
    properties = dict(item.split("=", 1) for item in args.property)
    return [
        {
            "tags": args.tags,
            "keys": args.keys,
            "properties": properties,
            "body_b64": args.body_b64 or base64.b64encode(f"interop-{index}".encode()).decode(),
        }
        for index in range(args.count)
    ]


def build_message(spec: dict[str, Any], topic: str) -> Message:
    message = Message(spec.get("topic") or topic)
    if spec.get("tags"):
        message.set_tags(spec["tags"])
    if spec.get("keys"):
        message.set_keys(spec["keys"])
    for key, value in (spec.get("properties") or {}).items():
        message.set_property(key, value)
    body = base64.b64decode(spec.get("body_b64", ""))
    # Message.set_body passes a NUL-terminated string; the length-taking call keeps binary bodies whole.
    ffi_check(dll.SetByteMessageBody(message, body, len(body)))
    return message


def message_body(message: RecvMessage) -> tuple[bytes, bool]:
    """The C API returns the body as a C string, which ends at the first NUL byte.

    The pointer is the data of the message's own std::string, so the exact length is read from the
    string's header; it is trusted only if the header is self-consistent.  Returns (body, exact).
    """
    pointer = _get_body_pointer(message._handle)
    if not pointer:
        return b"", True
    length, capacity = (ctypes.c_size_t * 2).from_address(pointer - COW_STRING_HEADER)
    visible = ctypes.string_at(pointer)
    consistent = len(visible) <= length <= capacity and ctypes.string_at(pointer + length, 1) == b"\0"
    if not consistent:
        return visible, False
    return ctypes.string_at(pointer, length), True


def _text(value: bytes | None) -> str | None:
    return value.decode("utf-8", "replace") if value else None


def describe_received(message: RecvMessage, property_keys: list[str]) -> dict[str, Any]:
    body, exact = message_body(message)
    properties = {}
    for key in dict.fromkeys([*STANDARD_PROPERTY_KEYS, *property_keys]):
        value = message.get_property(key)
        if value:
            properties[key] = value.decode("utf-8", "replace")
    return {
        "topic": message.topic,
        "tags": _text(message.tags),
        "keys": _text(message.keys),
        "body_b64": base64.b64encode(body).decode(),
        "bodyExact": exact,
        "properties": properties,
        "msgId": message.id,
        "queueId": message.queue_id,
        "queueOffset": message.queue_offset,
        "reconsumeTimes": message.reconsume_times,
        "commitLogOffset": message.commit_log_offset,
        "storeSize": message.store_size,
        "bornTimestamp": message.born_timestamp,
        "storeTimestamp": message.store_timestamp,
    }


def quiet_logs(setter_prefix: str, handle: int) -> None:
    """The Python binding has no logging setters; the C API it wraps does.

    Only the level takes effect: the log file under $HOME/logs/rocketmq-cpp is opened when the library
    loads, before any setter can run, so callers choose the location by choosing $HOME.
    """
    ffi_check(getattr(dll, f"Set{setter_prefix}LogLevel")(handle, LOG_LEVEL_WARN))


def shutdown_within_grace(out: EventWriter, shutdown: Callable[[], None]) -> None:
    timer = threading.Timer(
        SHUTDOWN_GRACE_S,
        lambda: (
            out.emit("error", stage="shutdown", message=f"client shutdown exceeded {SHUTDOWN_GRACE_S} s"),
            os._exit(3),
        ),
    )
    timer.daemon = True
    timer.start()
    shutdown()
    timer.cancel()


def send_result_fields(result: Any) -> dict[str, Any]:
    return {"status": result.status.name, "msgId": result.msg_id, "queueOffset": result.offset}


ONS_CHANNEL = "ALIYUN"
"""The channel the C++ client signs and sends as OnsChannel (the binding's default)."""


def sign_with(client: Producer | PushConsumer | PullConsumer, args: argparse.Namespace) -> None:
    """ACL 1.0: the C++ client signs every request once it has session credentials."""
    if args.access_key is not None:
        client.set_session_credentials(args.access_key, args.secret_key or "", ONS_CHANNEL)


def produce(args: argparse.Namespace, out: EventWriter) -> int:
    specs = load_messages(args)
    producer = Producer(args.group, timeout=args.send_timeout_ms)
    quiet_logs("Producer", producer._handle)
    producer.set_namesrv_addr(args.namesrv)
    sign_with(producer, args)
    producer.start()
    failures = 0
    try:
        failures = SENDERS[args.mode](producer, specs, args, out)
        time.sleep(args.stay)  # started longer: a producer's scheduled heartbeats come after its sends
    finally:
        shutdown_within_grace(out, producer.shutdown)
    out.emit("done", sent=len(specs) - failures, errors=failures)
    return 1 if failures else 0


def _send_each(
    send: Callable[[Message, dict[str, Any]], dict[str, Any]],
    specs: list[dict[str, Any]],
    args: argparse.Namespace,
    out: EventWriter,
) -> int:
    failures = 0
    for index, spec in enumerate(specs):
        try:
            fields = send(build_message(spec, args.topic), spec)
        except Exception as exc:  # the binding raises a different class per C status code
            failures += 1
            out.emit("error", index=index, stage="send", type=type(exc).__name__, message=str(exc))
        else:
            out.emit("sent", index=index, **fields)
    return failures


def send_sync(
    producer: Producer, specs: list[dict[str, Any]], args: argparse.Namespace, out: EventWriter
) -> int:
    return _send_each(
        lambda message, _: {"queueId": None, **send_result_fields(producer.send_sync(message))},
        specs,
        args,
        out,
    )


def send_oneway(
    producer: Producer, specs: list[dict[str, Any]], args: argparse.Namespace, out: EventWriter
) -> int:
    def send(message: Message, _: dict[str, Any]) -> dict[str, Any]:
        producer.send_oneway(message)
        return {"status": None, "msgId": None, "queueId": None, "queueOffset": None}

    return _send_each(send, specs, args, out)


def send_orderly(
    producer: Producer, specs: list[dict[str, Any]], args: argparse.Namespace, out: EventWriter
) -> int:
    """Orderly sends pick the queue client-side; the selector records its choice for the report."""
    chosen: list[int] = []

    def select(queue_count: int, _message: RecvMessage, arg: int) -> int:
        queue_id = ctypes.cast(arg, ctypes.POINTER(ctypes.c_int))[0] % queue_count
        chosen.append(queue_id)
        return queue_id

    def send(message: Message, spec: dict[str, Any]) -> dict[str, Any]:
        result = producer.send_orderly(message, int(spec.get("shardingKey", 0)), queue_selector=select)
        return {"queueId": chosen[-1], **send_result_fields(result)}

    return _send_each(send, specs, args, out)


def send_async(
    producer: Producer, specs: list[dict[str, Any]], args: argparse.Namespace, out: EventWriter
) -> int:
    pending = threading.Semaphore(0)
    failures = 0
    # The C++ client reads the messages after send_async returns; they must outlive the callbacks.
    in_flight = [build_message(spec, args.topic) for spec in specs]

    def on_success(index: int) -> Callable[[Any], None]:
        def done(result: Any) -> None:
            out.emit("sent", index=index, queueId=None, **send_result_fields(result))
            pending.release()

        return done

    def on_failure(index: int) -> Callable[[Exception], None]:
        def failed(exc: Exception) -> None:
            nonlocal failures
            failures += 1
            out.emit("error", index=index, stage="send", type=type(exc).__name__, message=str(exc))
            pending.release()

        return failed

    submitted = 0
    for index, message in enumerate(in_flight):
        try:
            producer.send_async(message, on_success(index), on_failure(index))
        except Exception as exc:  # rejected before sending, e.g. by the client's own validation
            on_failure(index)(exc)
            pending.acquire()
        else:
            submitted += 1
    deadline = time.monotonic() + args.send_timeout_ms / 1000 * len(specs) + SHUTDOWN_GRACE_S
    for completed in range(submitted):
        if not pending.acquire(timeout=max(0.0, deadline - time.monotonic())):
            out.emit("error", stage="send", message=f"{submitted - completed} async sends never completed")
            return failures + submitted - completed
    return failures


def send_batch(
    producer: Producer, specs: list[dict[str, Any]], args: argparse.Namespace, out: EventWriter
) -> int:
    """A batch has one result; the event lists the indexes it covers."""
    try:
        result = producer.send_batch([build_message(spec, args.topic) for spec in specs])
    except Exception as exc:  # the binding raises a different class per C status code
        out.emit(
            "error", indexes=list(range(len(specs))), stage="send", type=type(exc).__name__, message=str(exc)
        )
        return len(specs)
    out.emit("sent", indexes=list(range(len(specs))), queueId=None, **send_result_fields(result))
    return 0


SENDERS: dict[str, Callable[[Producer, list[dict[str, Any]], argparse.Namespace, EventWriter], int]] = {
    "sync": send_sync,
    "async": send_async,
    "oneway": send_oneway,
    "orderly": send_orderly,
    "batch": send_batch,
}


class Arrivals:
    """Counts received messages and tells the main thread when to stop waiting."""

    def __init__(self, expect: int) -> None:
        self.expect = expect
        self.count = 0
        self.last = time.monotonic()
        self.changed = threading.Condition()

    def record(self) -> None:
        with self.changed:
            self.count += 1
            self.last = time.monotonic()
            self.changed.notify_all()

    def wait(self, idle_timeout: float) -> None:
        """Return after `expect` messages, or once none has arrived for `idle_timeout` seconds."""
        with self.changed:
            while self.count < self.expect:
                remaining = self.last + idle_timeout - time.monotonic()
                if remaining <= 0:
                    return
                self.changed.wait(remaining)


def subscribe(
    consumer: PushConsumer, topic: str, expression: str, listener: Callable[[RecvMessage], bool]
) -> None:
    """Register `listener` (True = consumed, False = redeliver later) straight with the C API.

    PushConsumer.subscribe re-raises a listener's exception inside the ctypes callback, which ctypes
    turns into return value 0, i.e. CONSUME_SUCCESS: through it a listener can never ask for a retry.
    """

    def on_message(_consumer: int, handle: int) -> int:
        accepted = listener(RecvMessage(handle))
        return (_CConsumeStatus.CONSUME_SUCCESS if accepted else _CConsumeStatus.RECONSUME_LATER).value

    callback = MSG_CALLBACK_FUNC(on_message)
    consumer._callback_refs.append(callback)
    ffi_check(dll.Subscribe(consumer._handle, topic.encode(), expression.encode()))
    ffi_check(dll.RegisterMessageCallback(consumer._handle, callback))


def push(args: argparse.Namespace, out: EventWriter) -> int:
    arrivals = Arrivals(args.expect)
    consumer = PushConsumer(args.group)
    quiet_logs("PushConsumer", consumer._handle)
    consumer.set_namesrv_addr(args.namesrv)
    sign_with(consumer, args)
    consumer.set_thread_count(1)

    def on_message(message: RecvMessage) -> bool:
        # Redelivered copies come from the group's retry topic with reconsumeTimes counting up.
        accepted = message.reconsume_times >= args.retry_times
        out.emit("received", accepted=accepted, **describe_received(message, args.property_key))
        if accepted:
            arrivals.record()
        return accepted

    subscribe(consumer, args.topic, args.expression, on_message)
    consumer.start()
    arrivals.wait(args.idle_timeout)
    time.sleep(OFFSET_SETTLE_S)
    shutdown_within_grace(out, consumer.shutdown)
    out.emit("done", received=arrivals.count)
    return 0 if arrivals.count >= args.expect else 1


def pull(args: argparse.Namespace, out: EventWriter) -> int:
    consumer = PullConsumer(args.group)
    quiet_logs("PullConsumer", consumer._handle)
    consumer.set_namesrv_addr(args.namesrv)
    sign_with(consumer, args)
    consumer.start()
    received = 0
    last = time.monotonic()
    try:
        while received < args.expect and time.monotonic() - last < args.idle_timeout:
            swept = 0
            for message in consumer.pull(args.topic, args.expression):
                out.emit("received", accepted=True, **describe_received(message, args.property_key))
                received += 1
                swept += 1
            if swept:
                last = time.monotonic()
            else:
                time.sleep(PULL_POLL_INTERVAL_S)
    finally:
        shutdown_within_grace(out, consumer.shutdown)
    out.emit("done", received=received)
    return 0 if received >= args.expect else 1


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--namesrv", required=True, help="name server host:port")
    common.add_argument("--topic", required=True)
    common.add_argument("--access-key", help="ACL access key (set_session_credentials)")
    common.add_argument("--secret-key", help="ACL secret key")

    producer = commands.add_parser("produce", parents=[common])
    producer.add_argument("--group", default="PID_INTEROP_PY")
    producer.add_argument("--mode", choices=sorted(SENDERS), default="sync")
    producer.add_argument(
        "--messages", help="JSON file: list of {tags, keys, properties, body_b64, topic, shardingKey}"
    )
    producer.add_argument("--count", type=int, default=1)
    producer.add_argument("--tags")
    producer.add_argument("--keys")
    producer.add_argument("--property", action="append", default=[], metavar="KEY=VALUE")
    producer.add_argument("--body-b64")
    producer.add_argument("--send-timeout-ms", type=int, default=3000)
    producer.add_argument("--stay", type=float, default=0.0, help="seconds to stay started after the sends")

    for name in ("push", "pull"):
        consumer = commands.add_parser(name, parents=[common])
        consumer.add_argument("--group", required=True)
        consumer.add_argument("--expression", default="*")
        consumer.add_argument("--expect", type=int, required=True)
        consumer.add_argument("--idle-timeout", type=float, default=20.0)
        consumer.add_argument(
            "--property-key",
            action="append",
            default=[],
            help="user property to read back from each message (repeatable)",
        )
    commands.choices["push"].add_argument(
        "--retry-times",
        type=int,
        default=0,
        help="answer RECONSUME_LATER until a message comes back with this reconsumeTimes",
    )
    return parser.parse_args(argv)


COMMANDS: dict[str, Callable[[argparse.Namespace, EventWriter], int]] = {
    "produce": produce,
    "push": push,
    "pull": pull,
}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    out = EventWriter()
    try:
        status = COMMANDS[args.command](args, out)
    except Exception as exc:  # reported as an event so the caller sees it next to the others
        out.emit("error", stage=args.command, type=type(exc).__name__, message=str(exc))
        status = 2
    sys.stdout.flush()
    # The binding's destructors call into a library that is already shut down; skip them.
    os._exit(status)


if __name__ == "__main__":
    main()
