"""The stateful model's 5.x rules: POP (send, pop, ack) and timer messages (send, delivery on time).

Mixed into the broker machine of :mod:`rocketmq_spec.fuzz.stateful`; every rule waits on ``five``, set from
the version word the target answers with, so a 4.x target runs the 4.x rules only. """

from __future__ import annotations

import time
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from rocketmq_spec.codec.bodies import encode_body
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.custom_header import decode_header
from rocketmq_spec.codec.store import decode_records
from rocketmq_spec.fuzz.model import FiveModel
from rocketmq_spec.fuzz.strategies.primitives import bodies
from rocketmq_spec.spec.admin_bodies import SUBSCRIPTION_GROUP_CONFIG
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.headers import PULL_MESSAGE_REQUEST, SEND_MESSAGE_REQUEST_V2, HeaderSpec
from rocketmq_spec.spec.pop import (
    ACK_MESSAGE_REQUEST,
    POP_MESSAGE_REQUEST,
    POP_MESSAGE_RESPONSE,
    build_extra_info,
)
from rocketmq_spec.spec.properties import PropertyKey, encode_properties
from rocketmq_spec.spec.releases import is_5x
from rocketmq_spec.spec.sysflag import PullSysFlag
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC

INVISIBLE_MS = 600_000
"""Longer than any run: a popped message never comes back within one, so the model stays exact."""
MAX_TIMERS = 6
TIMER_SLACK_MS = 3_000
"""How late a timer message may be delivered on a loaded machine before the model calls it missing."""
POP_GROUP = "ModelPopGroup"


class FiveRules:
    """Rules over ``self.client`` (a BrokerClient), ``self.run_id`` and ``self.five``."""

    client: Any
    run_id: str
    five: bool
    five_model: FiveModel

    def _setup_five(self, groups: tuple[str, ...], create_topic: Any) -> None:
        """Create the run's groups (5.x refuses offsets of unknown groups) and, for a 5.x target, the POP
        and timer topics of one queue."""
        self.five_model = FiveModel()
        for group in (*groups, POP_GROUP):
            body = encode_body(SUBSCRIPTION_GROUP_CONFIG, {
                "brokerId": 0, "consumeBroadcastEnable": True, "consumeEnable": True,
                "consumeFromMinEnable": True, "groupName": group, "notifyConsumerIdsChangedEnable": True,
                "retryMaxTimes": 16, "retryQueueNums": 1, "whichBrokerWhenConsumeSlowly": 1})
            answer = self.client.call(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, HeaderSpec("", ()), {},
                                      body)
            assert answer.code == ResponseCode.SUCCESS, answer.remark
        self.five = is_5x(answer.version)
        if self.five:
            create_topic(self._pop_topic, 1)
            create_topic(self._timer_topic, 1)

    @property
    def _pop_topic(self) -> str:
        return f"ModelPop_{self.run_id}"

    @property
    def _timer_topic(self) -> str:
        return f"ModelTimer_{self.run_id}"

    def _send_one(self, topic: str, body: bytes, properties: dict[str, str]) -> RemotingCommand:
        return self.client.call(RequestCode.SEND_MESSAGE_V2, SEND_MESSAGE_REQUEST_V2, {
            "producerGroup": "ModelProducer", "topic": topic, "defaultTopic": DEFAULT_TOPIC,
            "defaultTopicQueueNums": 1, "queueId": 0, "sysFlag": 0, "bornTimestamp": int(time.time() * 1000),
            "flag": 0, "properties": encode_properties(properties), "reconsumeTimes": 0, "unitMode": False,
            "batch": False}, body)

    @precondition(lambda self: self.five)
    @rule(body=bodies(min_size=1, max_size=32))
    def pop_send(self, body: bytes) -> None:
        assert self._send_one(self._pop_topic, body, {}).code == ResponseCode.SUCCESS
        self.five_model.pop_sent.append(body)

    @precondition(lambda self: self.five)
    @rule(max_nums=st.integers(1, 4))
    def pop(self, max_nums: int) -> None:
        """The next unpopped messages in order (RMQ-POP-FOUND, RMQ-POP-INVISIBLE), or POLLING_TIMEOUT."""
        model = self.five_model
        waiting = len(model.pop_sent) - model.popped
        answer = self.client.call(RequestCode.POP_MESSAGE, POP_MESSAGE_REQUEST, {
            "consumerGroup": POP_GROUP, "topic": self._pop_topic, "queueId": 0, "maxMsgNums": max_nums,
            "invisibleTime": INVISIBLE_MS, "pollTime": 3000 if waiting else 0,
            "bornTime": int(time.time() * 1000), "initMode": 1})
        if not waiting:
            assert answer.code == ResponseCode.POLLING_TIMEOUT, (answer.code, answer.remark)
            return
        assert answer.code == ResponseCode.SUCCESS, (answer.code, answer.remark)
        header = decode_header(POP_MESSAGE_RESPONSE, answer.ext_fields)
        records = decode_records(answer.body)
        expected = list(range(model.popped, model.popped + len(records)))
        assert 1 <= len(records) <= min(max_nums, waiting)
        assert [r.queue_offset for r in records] == expected
        assert [r.body for r in records] == model.pop_sent[model.popped:model.popped + len(records)]
        for record in records:
            model.inflight[record.queue_offset] = build_extra_info(
                model.popped, header["popTime"], header["invisibleTime"], header["reviveQid"], "0",
                _broker_name(self.client), 0, record.queue_offset)
        model.popped += len(records)

    @precondition(lambda self: self.five and self.five_model.inflight)
    @rule(data=st.data())
    def ack(self, data: st.DataObject) -> None:
        offset = data.draw(st.sampled_from(sorted(self.five_model.inflight)))
        receipt = self.five_model.inflight.pop(offset)
        answer = self.client.call(RequestCode.ACK_MESSAGE, ACK_MESSAGE_REQUEST, {
            "consumerGroup": POP_GROUP, "topic": self._pop_topic, "queueId": 0, "extraInfo": receipt,
            "offset": offset})
        assert answer.code == ResponseCode.SUCCESS, (answer.code, answer.remark)

    @precondition(lambda self: self.five and len(self.five_model.timers) < MAX_TIMERS)
    @rule(delay_ms=st.integers(1000, 3000), body=bodies(min_size=1, max_size=32))
    def timer_send(self, delay_ms: int, body: bytes) -> None:
        sent_at = int(time.time() * 1000)
        answer = self._send_one(self._timer_topic, body, {PropertyKey.TIMER_DELAY_MS: str(delay_ms)})
        assert answer.code == ResponseCode.SUCCESS, (answer.code, answer.remark)
        self.five_model.timers.append((body, sent_at + delay_ms))

    @precondition(lambda self: self.five and self.five_model.timers)
    @rule()
    def timer_check(self) -> None:
        """Due messages are in the topic (RMQ-TIMER-PROPERTIES), messages not yet due are not."""
        delivered = self._timer_bodies()
        now = int(time.time() * 1000)
        for body, due in self.five_model.timers:
            if due + TIMER_SLACK_MS < now:
                assert body in delivered, f"timer message due at {due} not delivered by {now}"
            elif due > now:  # the pull came before ``now``: the broker's clock had not reached due
                assert body not in delivered, f"timer message due at {due} delivered early ({now})"

    def _timer_bodies(self) -> list[bytes]:
        answer = self.client.call(RequestCode.PULL_MESSAGE, PULL_MESSAGE_REQUEST, {
            "consumerGroup": POP_GROUP, "topic": self._timer_topic, "queueId": 0, "queueOffset": 0,
            "maxMsgNums": 32, "sysFlag": int(PullSysFlag.SUBSCRIPTION), "commitOffset": 0,
            "suspendTimeoutMillis": 0, "subscription": "*", "subVersion": 0, "expressionType": "TAG"})
        return [r.body for r in decode_records(answer.body)] if answer.code == ResponseCode.SUCCESS else []


def _broker_name(client: Any) -> str:
    """The target's brokerName (GET_BROKER_CONFIG): a receipt names it and Java matches acks by it."""
    answer = client.call(RequestCode.GET_BROKER_CONFIG, HeaderSpec("", ()), {})
    for line in (answer.body or b"").decode("utf-8", "replace").splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "brokerName":
            return value.strip()
    return ""
