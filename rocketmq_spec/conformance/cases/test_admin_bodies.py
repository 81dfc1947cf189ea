"""How admin bodies are written, byte for byte: MessageQueue-keyed maps and Properties text.

The admin cases elsewhere read answers through the codec's fastjson reader, which accepts any key order
and any text encoding it can guess; mqadmin and the Dashboard are stricter (fastjson's MessageQueue keys,
``MixAll.string2Properties`` over UTF-8). These cases read the raw bytes, so a broker that writes a map
key as a string or reorders its properties, or a setting in another encoding, fails here.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.conformance.case import Row, table
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.target import Server
from rocketmq_spec.conformance.wire import Wire
from rocketmq_spec.spec.admin import ADMIN_UPDATE_CONFIG
from rocketmq_spec.spec.codes import RequestCode, ResponseCode

from .admin_support import FILLED, Consumer, commit, filled_topic, properties, reset_offset
from .messaging import QUEUES, Client
from .support import expect_success, unique

NON_ASCII_VALUE = "Région-ü-東京"
"""A setting value beyond ASCII and Latin-1: it reaches Java's Properties reader intact only escaped."""


def _topic_stats(client: Client, _wire: Wire, _broker: Server, topic: str) -> RemotingCommand:
    return client.call(RequestCode.GET_TOPIC_STATS_INFO, {"topic": topic})


def _consume_stats(client: Client, _wire: Wire, _broker: Server, topic: str) -> RemotingCommand:
    group = unique("cg")
    for queue_id in range(QUEUES):
        commit(client, group, topic, queue_id, 0)
    return client.call(RequestCode.GET_CONSUME_STATS, {"consumerGroup": group, "topic": topic})


def _reset_body(client: Client, wire: Wire, broker: Server, topic: str) -> RemotingCommand:
    """An online group's reset: every release answers its ResetOffsetBody (5.2.0+ also an offline one's)."""
    consumer = Consumer.online(wire.connect(broker.endpoint), client.check, topic)
    for queue_id in range(QUEUES):
        commit(client, consumer.group, topic, queue_id, FILLED if queue_id == 0 else 0)
    return reset_offset(client, topic, consumer.group, -1)


Asker = Callable[[Client, Wire, Server, str], RemotingCommand]


@table("asker", [
    Row("topic-stats", "RMQ-ADMIN-BODY-OBJECT-KEYS", "TopicStatsTable's offsetTable writes each MessageQueue "
        "key as a JSON object of brokerName, queueId, topic in that order.", _topic_stats),
    Row("consume-stats", "RMQ-ADMIN-BODY-OBJECT-KEYS", "ConsumeStats' offsetTable writes each MessageQueue "
        "key as a JSON object of brokerName, queueId, topic in that order.", _consume_stats),
    Row("reset-offset", "RMQ-ADMIN-BODY-OBJECT-KEYS", "ResetOffsetBody's offsetTable writes each "
        "MessageQueue key as a JSON object of brokerName, queueId, topic in that order.", _reset_body),
])
def test_message_queue_keys(asker: Asker, client: Client, wire: Wire, broker: Server, check: Check) -> None:
    topic, _ = filled_topic(client)
    answer = expect_success(check, "admin answer", asker(client, wire, broker, topic))
    key = re.compile(rb'\{"brokerName":"[^"]*","queueId":(\d+),"topic":"' + re.escape(topic.encode())
                     + rb'"\}:')
    check.equal("queues keyed by an alphabetical MessageQueue object", list(range(QUEUES)),
                sorted(int(found) for found in key.findall(answer.body or b"")))


PROPERTIES_LINE = re.compile(r"[^=\s]+=.*")
"""A line ``MixAll.properties2String`` writes: the key, ``=``, the value as it is."""


@table("code", [
    Row("broker", "RMQ-ADMIN-BODY-PROPERTIES", "GET_BROKER_CONFIG's body is UTF-8 Properties text, one "
        "key=value per line.", RequestCode.GET_BROKER_CONFIG),
    Row("namesrv", "RMQ-ADMIN-BODY-PROPERTIES", "GET_NAMESRV_CONFIG's body is UTF-8 Properties text, one "
        "key=value per line.", RequestCode.GET_NAMESRV_CONFIG),
])
def test_config_lines(code: int, broker: Server, namesrv: Server, wire: Wire, check: Check) -> None:
    server = namesrv if code == RequestCode.GET_NAMESRV_CONFIG else broker
    body = expect_success(check, "config", wire.connect(server.endpoint).call(code)).body or b""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        check.that("UTF-8 text", False, expected="UTF-8", actual=str(error))
        return
    lines = [line for line in text.split("\n") if line]
    check.that("settings listed", len(lines) > 1, expected="key=value lines", actual=text[:120])
    check.equal("lines not key=value", [], [line for line in lines if not PROPERTIES_LINE.fullmatch(line)])


@table("setting", [
    Row("broker", "RMQ-ADMIN-BODY-PROPERTIES", "UPDATE_BROKER_CONFIG reads its body as Properties.load reads "
        "bytes (ISO-8859-1, \\uXXXX escapes) and GET_BROKER_CONFIG writes UTF-8: an escaped value comes back "
        "as its UTF-8 bytes, raw UTF-8 bytes one character per byte (regionId, restored).",
        (RequestCode.UPDATE_BROKER_CONFIG, RequestCode.GET_BROKER_CONFIG, "regionId")),
    Row("namesrv", "RMQ-ADMIN-BODY-PROPERTIES", "UPDATE_NAMESRV_CONFIG reads its body as Properties.load "
        "reads bytes (ISO-8859-1, \\uXXXX escapes) and GET_NAMESRV_CONFIG writes UTF-8: an escaped value "
        "comes back as its UTF-8 bytes, raw UTF-8 bytes one character per byte (productEnvName, restored).",
        (RequestCode.UPDATE_NAMESRV_CONFIG, RequestCode.GET_NAMESRV_CONFIG, "productEnvName")),
])
def test_config_text_round_trip(setting: tuple[int, int, str], broker: Server, namesrv: Server, wire: Wire,
                                check: Check) -> None:
    """Only a text setting can carry a value beyond ASCII back. Every release of Apache RocketMQ applies any
    key of its config objects at once; an implementation may apply some only after a restart (rocketmq-rust
    1.0.0 changes no text setting of its broker or name server at run time), so the update is a step of
    RMQ-ADMIN-UPDATE-CONFIG: a refusal, or a listing that still shows the value from before, is charged
    there, and the text encoding is judged only on a value the target applied."""
    update, get, key = setting
    server = namesrv if update == RequestCode.UPDATE_NAMESRV_CONFIG else broker
    connection = wire.connect(server.endpoint)
    before = properties(expect_success(check, "config", connection.call(get)).body).get(key)
    check.that(f"{key} listed", before is not None, expected=f"{key}=…", actual=None)
    if before is None:
        return
    escaped = "".join(c if c.isascii() else f"\\u{ord(c):04x}" for c in NON_ASCII_VALUE)
    sent_as_read = {escaped.encode("ascii"): NON_ASCII_VALUE,
                    NON_ASCII_VALUE.encode("utf-8"): NON_ASCII_VALUE.encode("utf-8").decode("latin-1")}
    try:
        for sent, read in sent_as_read.items():
            answer = connection.call(update, body=key.encode() + b"=" + sent + b"\n")
            check.that(f"update of {key} at run time", answer.code == ResponseCode.SUCCESS,
                       expected=ResponseCode.SUCCESS, actual=f"{answer.code} {answer.remark or ''}".strip(),
                       clause=ADMIN_UPDATE_CONFIG.id)
            after = connection.call(get).body or b""
            check.that(f"{key} applied at run time", properties(after).get(key) != before,
                       expected=f"{key} other than {before!r}", actual=f"{key}={before} "
                       f"({answer.remark or 'no remark'})", clause=ADMIN_UPDATE_CONFIG.id)
            wanted = f"{key}={read}\n".encode()
            check.that(f"{sent!r} written back as UTF-8", wanted in after, expected=wanted,
                       actual=[line for line in after.split(b"\n") if line.startswith(key.encode())])
    finally:
        connection.call(update, body=f"{key}={before}\n".encode())
