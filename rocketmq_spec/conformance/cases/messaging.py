"""A producer and consumer as the cases need them: every request built from the spec's header tables.

The cases judge what a broker stores and hands back, so the client side must be beyond doubt: requests are
built by ``rocketmq_spec.codec`` from ``rocketmq_spec.spec.headers`` exactly as a Java 4.9.8 client fills
them, and answers are decoded by the same codec that reads a store. Each case creates topics and groups of
its own (see :func:`rocketmq_spec.conformance.cases.support.unique`), so cases running in parallel never see
each other's messages.
"""

from __future__ import annotations

import ipaddress
import operator
import secrets
import time
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from rocketmq_spec.codec.batch import BatchBlock, encode_batch
from rocketmq_spec.codec.bodies import encode_body
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.custom_header import decode_header, encode_header
from rocketmq_spec.codec.store import MessageRecord, decode_records
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.verdict import Failure
from rocketmq_spec.conformance.wire import RESPONSE_TIMEOUT, Connection
from rocketmq_spec.spec.behaviour import BRK_VISIBILITY, VISIBILITY_BOUND_MS
from rocketmq_spec.spec.bodies import HEARTBEAT_DATA
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.hashing import java_string_hash
from rocketmq_spec.spec.headers import (
    PULL_MESSAGE_RESPONSE,
    SEND_MESSAGE_REQUEST,
    SEND_MESSAGE_REQUEST_V2,
    SEND_MESSAGE_RESPONSE,
    header_for,
)
from rocketmq_spec.spec.message_id import UniqKey, decode_offset_msg_id, encode_uniq_key
from rocketmq_spec.spec.properties import KEY_SEPARATOR, PropertyKey, encode_properties
from rocketmq_spec.spec.release_rules import Rule, holds
from rocketmq_spec.spec.sysflag import (
    PERM_READ_WRITE,
    TRANSACTION_MASK,
    CompressionType,
    PullSysFlag,
    TransactionType,
    with_compression,
)
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC

from .support import eventually, expect_success, unique

QUEUES = 4
"""Queues of the topics the cases create: a producer's default (``defaultTopicQueueNums``)."""


ALL_TAGS = "*"

PULL_BATCH = 32
"""maxMsgNums of a push consumer (``pullBatchSize``): more than any case stores in one queue."""

SUSPEND_HEADROOM = 5.0
"""Seconds a suspended pull may take beyond its own hold time: Java's PullRequestHoldService re-checks
parked pulls every 5 s, so an expired one is answered up to that much late."""

UNIQ_KEY_SUITE_IP = "192.0.2.1"
"""TEST-NET-1 address put in the UNIQ_KEYs the suite makes: a producer IP no real client has."""


def uniq_key() -> str:
    """A fresh UNIQ_KEY laid out as a Java producer makes it; the random tail keeps it unique per case."""
    return encode_uniq_key(UniqKey(UNIQ_KEY_SUITE_IP, secrets.randbelow(1 << 16), secrets.randbits(31),
                                   secrets.randbits(31), secrets.randbelow(1 << 16)))


@dataclass(frozen=True)
class Message:
    """What a producer sends: the parts a broker must store and hand back unchanged."""

    body: bytes = b"conformance"
    tags: str | None = None
    keys: tuple[str, ...] = ()
    user: dict[str, str] = field(default_factory=dict)
    flag: int = 0
    sys_flag: int = 0
    born_timestamp: int = field(default_factory=lambda: int(time.time() * 1000))
    uniq: str = field(default_factory=uniq_key)
    wait: bool = True
    """WAIT: whether the producer waits for the store (and a SYNC_MASTER's slave) before the answer."""

    @classmethod
    def compressed(cls, text: bytes, **fields: Any) -> Message:
        """A body compressed by the producer (zlib, as Java does above 4 KiB): the broker keeps it as is."""
        return cls(zlib.compress(text), sys_flag=with_compression(0, CompressionType.ZLIB), **fields)

    @property
    def properties(self) -> dict[str, str]:
        """The properties the producer sets, WAIT included as a Java Message's constructor does."""
        system = {PropertyKey.TAGS: self.tags, PropertyKey.KEYS: KEY_SEPARATOR.join(self.keys) or None,
                  PropertyKey.UNIQ_KEY: self.uniq, PropertyKey.WAIT: "true" if self.wait else "false"}
        return {**self.user, **{k: v for k, v in system.items() if v is not None}}

    @property
    def stored_properties(self) -> dict[str, str]:
        """The properties a broker keeps: all but WAIT, which it strips."""
        return {k: v for k, v in self.properties.items() if k != PropertyKey.WAIT}


@dataclass(frozen=True)
class SendResult:
    msg_ids: list[str]
    queue_id: int
    queue_offset: int
    response: RemotingCommand


@dataclass(frozen=True)
class Pulled:
    response: RemotingCommand
    header: dict[str, Any]
    records: list[MessageRecord]


def pull_header(response: RemotingCommand) -> dict[str, Any]:
    return decode_header(PULL_MESSAGE_RESPONSE, response.ext_fields)


def subscription(group: str, topic: str, expression: str = ALL_TAGS) -> dict[str, Any]:
    """A push consumer's ConsumerData for one topic, as a heartbeat carries it."""
    tags = [] if expression == ALL_TAGS else [t.strip() for t in expression.split("||") if t.strip()]
    return {"consumeFromWhere": "CONSUME_FROM_LAST_OFFSET", "consumeType": "CONSUME_PASSIVELY",
            "groupName": group, "messageModel": "CLUSTERING", "unitMode": False,
            "subscriptionDataSet": [{"classFilterMode": False, "codeSet": [java_string_hash(t) for t in tags],
                                     "expressionType": "TAG", "subString": expression, "subVersion": 0,
                                     "tagsSet": tags, "topic": topic}]}


class Client:
    """One connection to the broker used as producer, consumer and admin; each call checks its answer.

    A broker may answer a send before the message is readable (``RMQ-BRK-VISIBILITY``), so the client
    remembers what it stored and every read it makes afterwards first waits, bounded, until all of it is
    readable: no case can judge a read that raced its own writes.
    """

    def __init__(self, connection: Connection, check: Check) -> None:
        self.connection = connection
        self.check = check
        self.producer_group = unique("pg")
        self._version: int | None = None
        self.known_groups: set[str] = set()
        """Subscription groups this client created (``admin_support.known_group``)."""
        self._unsettled: dict[tuple[str, int], int] = {}
        """(topic, queueId) -> the offset past the last message stored there and not yet seen readable."""

    def request(self, code: int, values: Mapping[str, Any], body: bytes | None = None, *,
                oneway: bool = False) -> RemotingCommand:
        """A request whose custom header is built from the spec's table for ``code``."""
        spec = header_for(code, is_response=False)
        assert spec is not None, f"rocketmq_spec.spec.headers has no request header for code {code}"
        return self.connection.command(code, encode_header(spec, values), body, oneway=oneway)

    def call(self, code: int, values: Mapping[str, Any], body: bytes | None = None) -> RemotingCommand:
        """A request and its answer, sent once everything this client stored is readable."""
        self.settle()
        return self.connection.exchange(self.request(code, values, body))

    def target_version(self) -> int:
        """The ``version`` word the target writes in its answers: which release rules it follows
        (``rocketmq_spec.spec.release_rules``)."""
        if self._version is None:
            self._version = self.connection.call(RequestCode.GET_MAX_OFFSET,
                                                 {"topic": DEFAULT_TOPIC, "queueId": "0"}).version
        return self._version

    def follows(self, rule: Rule) -> bool:
        return holds(rule, self.target_version())

    # -- visibility ------------------------------------------------------------------------------------

    def settle(self) -> None:
        """Wait until every message this client stored is counted by GET_MAX_OFFSET of its queue.

        The max offset counts consume-queue entries, which is what pulls and offset lookups read; polling
        it is bounded by ``VISIBILITY_BOUND_MS`` and a queue that stays short ends the case, citing the
        visibility clause.
        """
        for (topic, queue_id), stored in sorted(self._unsettled.items()):
            seen = eventually(partial(self._max_offset, topic, queue_id), partial(operator.le, stored),
                              VISIBILITY_BOUND_MS / 1000)
            if seen < stored:
                raise Failure(f"{BRK_VISIBILITY.id}: {topic}/{queue_id} counts {seen} messages "
                              f"{VISIBILITY_BOUND_MS} ms after {stored} were stored",
                              expected=stored, actual=seen)
        self._unsettled.clear()

    def expect_stored(self, topic: str, queue_id: int, end: int) -> None:
        """A message the broker stored on its own account (a committed half message) counts as one sent:
        the next read of the queue waits until it reaches ``end`` (``RMQ-BRK-VISIBILITY``)."""
        queue = (topic, queue_id)
        self._unsettled[queue] = max(self._unsettled.get(queue, 0), end)

    def _max_offset(self, topic: str, queue_id: int) -> int:
        """The queue's max offset, -1 when the broker does not answer SUCCESS (the wait then runs out)."""
        code = RequestCode.GET_MAX_OFFSET
        response = self.connection.exchange(self.request(code, {"topic": topic, "queueId": queue_id}))
        spec = header_for(code, is_response=True)
        if response.code != ResponseCode.SUCCESS or spec is None:
            return -1
        return int(decode_header(spec, response.ext_fields)["offset"])

    def answer(self, what: str, code: int, values: Mapping[str, Any]) -> dict[str, Any]:
        """The decoded response header of a request that must succeed."""
        response = expect_success(self.check, what, self.call(code, values))
        spec = header_for(code, is_response=True)
        assert spec is not None, f"rocketmq_spec.spec.headers has no response header for code {code}"
        return decode_header(spec, response.ext_fields)

    # -- topics ----------------------------------------------------------------------------------------

    def create_topic(self, queues: int = QUEUES, *, name: str | None = None) -> str:
        topic = name or unique("topic")
        expect_success(self.check, f"create {topic}", self.create_topic_request(topic, queues))
        return topic

    def create_topic_request(self, topic: str, queues: int = QUEUES, *,
                             attributes: str | None = None) -> RemotingCommand:
        """``attributes``: the 5.x topic attribute changes (``+key=value,-key``), left out when None."""
        return self.call(RequestCode.UPDATE_AND_CREATE_TOPIC, {
            "topic": topic, "defaultTopic": DEFAULT_TOPIC, "readQueueNums": queues, "writeQueueNums": queues,
            "perm": int(PERM_READ_WRITE), "topicFilterType": "SINGLE_TAG", "topicSysFlag": 0, "order": False,
            "attributes": attributes})

    # -- producing -------------------------------------------------------------------------------------

    def send_values(self, topic: str, queue_id: int, message: Message, *, batch: bool = False,
                    properties_text: str | None = None) -> dict[str, Any]:
        """The send header's values for ``message``, as a Java producer fills them; ``properties_text``
        replaces its encoded properties (for cases about how a broker reads the string)."""
        properties = encode_properties(message.properties) if properties_text is None else properties_text
        return {"producerGroup": self.producer_group, "topic": topic, "defaultTopic": DEFAULT_TOPIC,
                "defaultTopicQueueNums": QUEUES, "queueId": queue_id, "sysFlag": message.sys_flag,
                "bornTimestamp": message.born_timestamp, "flag": message.flag,
                "properties": properties, "reconsumeTimes": 0, "unitMode": False, "batch": batch}

    def send_command(self, topic: str, message: Message | None = None, *, queue_id: int = 0,
                     code: int = RequestCode.SEND_MESSAGE_V2, properties_text: str | None = None,
                     **fields: Any) -> RemotingCommand:
        """The send request itself, for cases that put it on the wire and read its answer later.
        ``fields`` sets other attributes of the request (``serialize_type``)."""
        message = message or Message()
        spec = SEND_MESSAGE_REQUEST if code == RequestCode.SEND_MESSAGE else SEND_MESSAGE_REQUEST_V2
        header = encode_header(spec, self.send_values(topic, queue_id, message, batch=False,
                                                      properties_text=properties_text))
        return self.connection.command(code, header, message.body, **fields)

    def send_request(self, topic: str, message: Message | None = None, *, queue_id: int = 0,
                     code: int = RequestCode.SEND_MESSAGE_V2, properties_text: str | None = None,
                     **fields: Any) -> RemotingCommand:
        """The broker's answer, unjudged: for cases about refusals."""
        return self.connection.exchange(self.send_command(topic, message, queue_id=queue_id, code=code,
                                                          properties_text=properties_text, **fields))

    def send(self, topic: str, message: Message | None = None, *, queue_id: int = 0,
             code: int = RequestCode.SEND_MESSAGE_V2, **fields: Any) -> SendResult:
        """A send that must succeed. A half message (PREPARED) is parked in the half topic, which the
        topic's queue never counts, so it is not waited for as a stored message is."""
        parked = message is not None and message.sys_flag & TRANSACTION_MASK == TransactionType.PREPARED
        response = self.send_request(topic, message, queue_id=queue_id, code=code, **fields)
        return self._result(topic, f"send to {topic}/{queue_id}", response, settle=not parked)

    def send_batch(self, topic: str, messages: list[Message], *, queue_id: int = 0) -> SendResult:
        """A batch as a Java producer sends it: WAIT in the header, each message's properties in its block."""
        values = {**self.send_values(topic, queue_id, Message(), batch=True),
                  "properties": encode_properties({PropertyKey.WAIT: "true"})}
        body = encode_batch([BatchBlock(m.flag, m.body, encode_properties(m.stored_properties))
                             for m in messages])
        response = self.connection.call(RequestCode.SEND_BATCH_MESSAGE,
                                        encode_header(SEND_MESSAGE_REQUEST_V2, values), body)
        return self._result(topic, f"batch send to {topic}/{queue_id}", response)

    def _result(self, topic: str, what: str, response: RemotingCommand, *, settle: bool = True) -> SendResult:
        """A send that must succeed; what it stored in the topic's queue is remembered until seen
        readable (``settle``)."""
        expect_success(self.check, what, response)
        header = decode_header(SEND_MESSAGE_RESPONSE, response.ext_fields)
        result = SendResult(header["msgId"].split(","), header["queueId"], header["queueOffset"], response)
        if settle:
            queue = (topic, result.queue_id)
            self._unsettled[queue] = max(self._unsettled.get(queue, 0),
                                         result.queue_offset + len(result.msg_ids))
        return result

    def viewed(self, what: str, response: RemotingCommand) -> MessageRecord:
        """The record a successful send's answer names, read back by VIEW_MESSAGE_BY_ID of its offsetMsgId
        (for a delayed message: the parked one)."""
        expect_success(self.check, what, response)
        msg_id = decode_header(SEND_MESSAGE_RESPONSE, response.ext_fields)["msgId"].split(",")[0]
        view = self.call(RequestCode.VIEW_MESSAGE_BY_ID, {"offset": decode_offset_msg_id(msg_id).offset})
        records = decode_records(expect_success(self.check, f"{what}: VIEW_MESSAGE_BY_ID", view).body)
        self.check.equal(f"{what}: records viewed", 1, len(records))
        return records[0]

    def fill(self, topic: str, count: int, *, queue_id: int = 0) -> list[Message]:
        """``count`` messages sent one by one to one queue; returns what was sent, in order."""
        sent = [Message(f"message {i}".encode(), tags=f"T{i % 3}", keys=(f"k{i}",)) for i in range(count)]
        for message in sent:
            self.send(topic, message, queue_id=queue_id)
        return sent

    # -- consuming -------------------------------------------------------------------------------------

    def pull_command(self, topic: str, queue_id: int, offset: int, *, group: str | None = None,
                     expression: str = ALL_TAGS, suspend_ms: int = 0, lite: bool = False,
                     commit_offset: int | None = None) -> RemotingCommand:
        """A PULL_MESSAGE carrying its subscription (FLAG_SUBSCRIPTION), so no heartbeat is needed first;
        ``lite``: the LITE_PULL_MESSAGE a 5.x lite pull consumer sends instead (FLAG_LITE_PULL_MESSAGE);
        ``commit_offset``: the consumer offset a push consumer's pull carries (FLAG_COMMIT_OFFSET)."""
        flags = PullSysFlag.SUBSCRIPTION | (PullSysFlag.SUSPEND if suspend_ms else PullSysFlag(0))
        if lite:
            flags |= PullSysFlag.LITE_PULL_MESSAGE
        if commit_offset is not None:
            flags |= PullSysFlag.COMMIT_OFFSET
        code = RequestCode.LITE_PULL_MESSAGE if lite else RequestCode.PULL_MESSAGE
        return self.request(code, {
            "consumerGroup": group or unique("cg"), "topic": topic, "queueId": queue_id,
            "queueOffset": offset, "maxMsgNums": PULL_BATCH, "sysFlag": int(flags),
            "commitOffset": commit_offset or 0,
            "suspendTimeoutMillis": suspend_ms, "subscription": expression, "subVersion": 0,
            "expressionType": "TAG"})

    def pull(self, topic: str, queue_id: int, offset: int, **options: Any) -> RemotingCommand:
        self.settle()
        return self.connection.exchange(self.pull_command(topic, queue_id, offset, **options),
                                        timeout=RESPONSE_TIMEOUT)

    def pulled(self, topic: str, queue_id: int = 0, offset: int = 0, **options: Any) -> Pulled:
        """A pull that must find messages: SUCCESS, its header and its records."""
        response = expect_success(self.check, f"pull {topic}/{queue_id}@{offset}",
                                  self.pull(topic, queue_id, offset, **options))
        return Pulled(response, pull_header(response), decode_records(response.body))

    # -- clients ---------------------------------------------------------------------------------------

    def heartbeat(self, client_id: str, consumers: list[dict[str, Any]]) -> RemotingCommand:
        body = encode_body(HEARTBEAT_DATA, {"clientID": client_id, "consumerDataSet": consumers,
                                            "producerDataSet": []})
        return self.connection.call(RequestCode.HEART_BEAT, body=body)

    @property
    def local_host(self) -> tuple[str, int]:
        """The address the broker sees this client at: the born host of what it sends."""
        host, port = self.connection.local_address
        return str(ipaddress.ip_address(host)), port
