"""What the admin cases share: an admin tool's requests and a consumer that answers the broker's calls.

Admin answers are read with the codec's fastjson reader (their maps have MessageQueue keys) and the
spec's bean tables; requests are built from ``rocketmq_spec.spec.admin_headers``. The consumer side is a plain
connection that heartbeats and then answers whatever request the broker sends it, so the relay
commands (GET_CONSUMER_RUNNING_INFO, CONSUME_MESSAGE_DIRECTLY, RESET_CONSUMER_CLIENT_OFFSET) can be
followed end to end.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rocketmq_spec.codec.bodies import decode_body, encode_body
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.custom_header import encode_header
from rocketmq_spec.codec.fastjson import ObjectKey
from rocketmq_spec.codec.store import decode_records
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.wire import Connection
from rocketmq_spec.spec.admin_bodies import SUBSCRIPTION_GROUP_CONFIG, SUBSCRIPTION_GROUP_WRAPPER
from rocketmq_spec.spec.admin_headers import RESET_OFFSET_REQUEST
from rocketmq_spec.spec.bodies import HEARTBEAT_DATA, BodySpec
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.version import CURRENT_VERSION

from .messaging import Client, subscription
from .support import eventually, expect_code, expect_success, unique

FILLED = 3
"""Messages the cases store in queue 0 of their topics."""
BROKER_CALL_WAIT = 15.0
"""Seconds a consumer waits for the broker to call it (Java answers the admin after up to 10 s)."""


def body_of(check: Check, what: str, spec: BodySpec, response: RemotingCommand) -> dict[str, Any]:
    """The decoded JSON body of a successful admin answer."""
    expect_success(check, what, response)
    check.that(f"{what}: has a body", bool(response.body), expected="a JSON body", actual=response.body)
    return decode_body(spec, response.body or b"{}")


def by_queue(table: Mapping[Any, Any], topic: str) -> dict[int, Any]:
    """A MessageQueue-keyed map narrowed to one topic, keyed by queue id."""
    return {key.as_dict()["queueId"]: value for key, value in table.items()
            if isinstance(key, ObjectKey) and key.as_dict().get("topic") == topic}


PROPERTY_LINE = re.compile(r"\s*([^=:\s]+)\s*[=:]?\s*(.*)")
"""One line of Properties text as ``java.util.Properties.load`` reads it: the key ends at the first ``=``,
``:`` or blank, so ``key=value``, ``key:value`` and ``key value`` are the same setting (Apache writes the
first; Java's readers, mqadmin among them, accept all three)."""


def properties(body: bytes | None) -> dict[str, str]:
    """A Properties body as a dict (``#`` and ``!`` lines are comments), for checks that must not depend
    on the codec."""
    settings = {}
    for line in (body or b"").decode("utf-8", "replace").splitlines():
        if (found := PROPERTY_LINE.fullmatch(line)) and not found[1].startswith(("#", "!")):
            settings[found[1]] = found[2].strip()
    return settings


def known_group(client: Client, group: str) -> str:
    """Create the subscription group: 5.x refuses offsets of a group it does not have
    (RMQ-BRK-OFFSET-COMMIT-KNOWN), and creating it first is valid for every release."""
    expect_success(client.check, f"create group {group}", client.call(
        RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, {}, group_config(group)))
    return group


def commit(client: Client, group: str, topic: str, queue_id: int, offset: int) -> None:
    if group not in client.known_groups:
        client.known_groups.add(known_group(client, group))
    client.answer("UPDATE_CONSUMER_OFFSET", RequestCode.UPDATE_CONSUMER_OFFSET,
                  {"consumerGroup": group, "topic": topic, "queueId": queue_id, "commitOffset": offset})


@dataclass
class Consumer:
    """A push consumer's connection: it heartbeats, then answers the broker's calls like a Java client."""

    connection: Connection
    check: Check
    group: str
    topic: str
    client_id: str

    @classmethod
    def online(cls, connection: Connection, check: Check, topic: str, group: str | None = None) -> Consumer:
        consumer = cls(connection, check, group or unique("cg"), topic, unique("127.0.0.1@client"))
        body = encode_body(HEARTBEAT_DATA, {"clientID": consumer.client_id, "producerDataSet": [],
                                            "consumerDataSet": [subscription(consumer.group, topic)]})
        expect_success(check, "consumer HEART_BEAT", connection.call(RequestCode.HEART_BEAT, body=body))
        return consumer

    def called(self, code: int) -> RemotingCommand | None:
        """The next request the broker sends this consumer (skipping NOTIFY_CONSUMER_IDS_CHANGED)."""
        while True:
            command = self.connection.next_command(BROKER_CALL_WAIT)
            if command is None or (not command.is_response and command.code == code):
                return command
            if command.is_response or command.code != RequestCode.NOTIFY_CONSUMER_IDS_CHANGED:
                self.check.that("broker's call to the consumer", False, expected=code, actual=command.code)
                return None

    def answer(self, request: RemotingCommand, body: bytes) -> None:
        self.connection.send(request.response(0, None, None, body, version=int(CURRENT_VERSION)))


def filled_topic(client: Client) -> tuple[str, list[Any]]:
    """A topic of 4 queues whose queue 0 holds 3 messages; returns it and the stored records (once the
    target has dispatched them: Java's consume queues trail the commitlog by a moment)."""
    topic = client.create_topic()
    client.fill(topic, FILLED)
    eventually(lambda: client.pull(topic, 0, 0), lambda r: r.code == ResponseCode.SUCCESS
               and len(decode_records(r.body or b"")) == FILLED)
    return topic, client.pulled(topic).records


def refused(check: Check, what: str, response: RemotingCommand, code: int, remark: str) -> None:
    expect_code(check, what, response, code)
    check.remark(f"{what}: remark", remark, response.remark)


def listed_groups(client: Client, check: Check) -> dict[str, Any]:
    body = body_of(check, "all groups", SUBSCRIPTION_GROUP_WRAPPER,
                   client.call(RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, {}))
    return body.get("subscriptionGroupTable", {})


def group_config(group: str, *, broadcast: bool = True, retry_queues: int = 1) -> bytes:
    return encode_body(SUBSCRIPTION_GROUP_CONFIG, {
        "brokerId": 0, "consumeBroadcastEnable": broadcast, "consumeEnable": True,
        "consumeFromMinEnable": False, "groupName": group, "notifyConsumerIdsChangedEnable": True,
        "retryMaxTimes": 5, "retryQueueNums": retry_queues, "whichBrokerWhenConsumeSlowly": 1})


def query_cq(client: Client, topic: str, index: int, count: int, **extra: Any) -> RemotingCommand:
    return client.call(RequestCode.QUERY_CONSUME_QUEUE,
                       {"topic": topic, "queueId": 0, "index": index, "count": count, **extra})


def reset_offset(client: Client, topic: str, group: str, timestamp: int,
                 language: str = "JAVA") -> RemotingCommand:
    fields = encode_header(RESET_OFFSET_REQUEST, {"topic": topic, "group": group, "timestamp": timestamp,
                                                  "isForce": True})
    return client.connection.exchange(client.connection.command(
        RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, fields, language=language))
