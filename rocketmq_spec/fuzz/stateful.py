"""Model-based testing of a live broker: random sequences of client operations, each checked against
``rocketmq_spec.fuzz.model.BrokerModel``.

The machine creates topics, sends single and batch messages, pulls, commits and queries consumer
offsets, and restarts the broker when the target can be restarted; hypothesis shrinks a failing
sequence to the shortest one that still breaks the model. Targets are reached only over TCP: anything
with a broker address (and optionally a way to restart it) can be tested.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any, Protocol

from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, initialize, precondition, rule

from rocketmq_spec.codec.batch import BatchBlock, encode_batch
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.custom_header import decode_header, encode_header
from rocketmq_spec.codec.store import decode_records
from rocketmq_spec.fuzz.model import BrokerModel
from rocketmq_spec.fuzz.stateful_five import FiveRules
from rocketmq_spec.fuzz.strategies.primitives import bodies
from rocketmq_spec.fuzz.wire import WireConnection, next_opaque
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.headers import (
    CREATE_TOPIC_REQUEST,
    PULL_MESSAGE_REQUEST,
    PULL_MESSAGE_RESPONSE,
    QUERY_CONSUMER_OFFSET_REQUEST,
    SEND_MESSAGE_REQUEST_V2,
    SEND_MESSAGE_RESPONSE,
    UPDATE_CONSUMER_OFFSET_REQUEST,
    HeaderSpec,
)
from rocketmq_spec.spec.sysflag import PERM_READ_WRITE, PullSysFlag
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC

REQUEST_TIMEOUT = 10.0
"""Seconds to wait for any answer; Java clients give up after 3 s, a loaded CI box needs more."""

DISPATCH_POLLS = 100
DISPATCH_POLL_INTERVAL = 0.02
"""A message is pullable only once the broker has dispatched it to its consume queue, which Java does
asynchronously; a pull that races the dispatch is retried this many times, this far apart."""

MAX_QUEUES = 4
MAX_TOPICS = 4
"""Topics per run: a fifth topic exercises nothing the first four did not."""
MAX_BATCH = 4
MAX_PULL = 8
GROUPS = ("ModelGroupA", "ModelGroupB")
PRODUCER_GROUP = "ModelProducer"


class ModelTarget(Protocol):
    @property
    def broker_addr(self) -> str: ...

    @property
    def can_restart(self) -> bool: ...

    def restart(self) -> None:
        """Stop the broker cleanly and start it again on the same store; ``broker_addr`` may change."""


class BrokerClient:
    """The few requests the machine makes, over one connection, every answer checked for its code."""

    def __init__(self, addr: str) -> None:
        self.conn = WireConnection(addr)

    def call(self, code: int, spec: HeaderSpec, values: dict[str, Any], body: bytes | None = None
             ) -> RemotingCommand:
        request = RemotingCommand.request(code, encode_header(spec, values), body, opaque=next_opaque())
        response = self.conn.request(request, REQUEST_TIMEOUT)
        if response is None:
            raise AssertionError(f"no answer to request {code} {values} within {REQUEST_TIMEOUT} s")
        return response

    def close(self) -> None:
        self.conn.close()


def _expect(response: RemotingCommand, *codes: int) -> None:
    assert response.code in codes, f"response code {response.code} ({response.remark!r}), expected {codes}"


def machine_for(make_target: Callable[[], ModelTarget], release: Callable[[ModelTarget], None]
                ) -> type[RuleBasedStateMachine]:
    """A state machine class whose runs each get a fresh target from ``make_target``."""

    class BrokerMachine(FiveRules, RuleBasedStateMachine):
        topics = Bundle("topics")

        def __init__(self) -> None:
            super().__init__()
            self.model = BrokerModel()
            self.target = make_target()
            self.client = BrokerClient(self.target.broker_addr)
            self.run_id = uuid.uuid4().hex[:8]
            """Names are unique per run, so a long-lived external target's old state does not leak in."""

        def teardown(self) -> None:
            self.client.close()
            release(self.target)

        @initialize(target=topics, queue_count=st.integers(1, MAX_QUEUES))
        def first_topic(self, queue_count: int) -> str:
            self._setup_five(GROUPS, self._create_named)
            return self._create(queue_count)

        @precondition(lambda self: len(self.model.topics) < MAX_TOPICS)
        @rule(target=topics, queue_count=st.integers(1, MAX_QUEUES))
        def create_topic(self, queue_count: int) -> str:
            return self._create(queue_count)

        def _create(self, queue_count: int) -> str:
            topic = f"Model_{self.run_id}_{len(self.model.topics)}"
            self._create_named(topic, queue_count)
            self.model.create_topic(topic, queue_count)
            return topic

        def _create_named(self, topic: str, queue_count: int) -> None:
            response = self.client.call(RequestCode.UPDATE_AND_CREATE_TOPIC, CREATE_TOPIC_REQUEST, {
                "topic": topic, "defaultTopic": DEFAULT_TOPIC, "readQueueNums": queue_count,
                "writeQueueNums": queue_count, "perm": int(PERM_READ_WRITE), "topicFilterType": "SINGLE_TAG",
                "topicSysFlag": 0, "order": False})
            _expect(response, ResponseCode.SUCCESS)

        def _queue(self, topic: str, queue: int) -> int:
            return queue % self.model.topics[topic]

        @rule(topic=topics, queue=st.integers(0, MAX_QUEUES - 1), body=bodies(min_size=1, max_size=64))
        def send(self, topic: str, queue: int, body: bytes) -> None:
            self._send(RequestCode.SEND_MESSAGE_V2, topic, self._queue(topic, queue), [body], body, False)

        @rule(topic=topics, queue=st.integers(0, MAX_QUEUES - 1),
              batch=st.lists(bodies(min_size=1, max_size=32), min_size=1, max_size=MAX_BATCH))
        def send_batch(self, topic: str, queue: int, batch: list[bytes]) -> None:
            body = encode_batch([BatchBlock(0, item, "") for item in batch])
            self._send(RequestCode.SEND_BATCH_MESSAGE, topic, self._queue(topic, queue), batch, body, True)

        def _send(self, code: int, topic: str, queue_id: int, messages: list[bytes], body: bytes,
                  batch: bool) -> None:
            response = self.client.call(code, SEND_MESSAGE_REQUEST_V2, {
                "producerGroup": PRODUCER_GROUP, "topic": topic, "defaultTopic": DEFAULT_TOPIC,
                "defaultTopicQueueNums": MAX_QUEUES, "queueId": queue_id, "sysFlag": 0,
                "bornTimestamp": int(time.time() * 1000), "flag": 0, "properties": "", "reconsumeTimes": 0,
                "unitMode": False, "batch": batch}, body)
            _expect(response, ResponseCode.SUCCESS)
            header = decode_header(SEND_MESSAGE_RESPONSE, response.ext_fields)
            expected = self.model.append(topic, queue_id, messages)
            assert (header["queueId"], header["queueOffset"]) == (queue_id, expected)

        @rule(topic=topics, queue=st.integers(0, MAX_QUEUES - 1), beyond=st.integers(-2, 1),
              max_msgs=st.integers(1, MAX_PULL), data=st.data())
        def pull(self, topic: str, queue: int, beyond: int, max_msgs: int, data: st.DataObject) -> None:
            queue_id = self._queue(topic, queue)
            high = self.model.max_offset(topic, queue_id)
            offset = data.draw(st.integers(0, high - 1)) if beyond < 0 and high else high + max(beyond, 0)
            response = self._pull(topic, queue_id, offset, max_msgs)
            header = decode_header(PULL_MESSAGE_RESPONSE, response.ext_fields)
            assert header["maxOffset"] == high
            if offset < high:
                _expect(response, ResponseCode.SUCCESS)
                records = decode_records(response.body)
                wanted = self.model.messages(topic, queue_id, offset, max_msgs)
                assert records, "a successful pull returns at least one message"
                assert [r.body for r in records] == wanted[:len(records)]
                assert [r.queue_offset for r in records] == list(range(offset, offset + len(records)))
                assert header["nextBeginOffset"] == offset + len(records)
            elif offset == high:
                _expect(response, ResponseCode.PULL_NOT_FOUND)
                assert header["nextBeginOffset"] == offset
            else:
                _expect(response, ResponseCode.PULL_OFFSET_MOVED)
                # Java corrects an offset past the end to the queue's max offset
                # (DefaultMessageStore.getMessage, OFFSET_OVERFLOW_BADLY).
                assert header["nextBeginOffset"] == high

        def _pull(self, topic: str, queue_id: int, offset: int, max_msgs: int) -> RemotingCommand:
            values = {"consumerGroup": GROUPS[0], "topic": topic, "queueId": queue_id, "queueOffset": offset,
                      "maxMsgNums": max_msgs, "sysFlag": int(PullSysFlag.SUBSCRIPTION), "commitOffset": 0,
                      "suspendTimeoutMillis": 0, "subscription": "*", "subVersion": 0,
                      "expressionType": "TAG"}
            for _ in range(DISPATCH_POLLS):
                response = self.client.call(RequestCode.PULL_MESSAGE, PULL_MESSAGE_REQUEST, values)
                if response.code != ResponseCode.PULL_NOT_FOUND \
                        or offset >= self.model.max_offset(topic, queue_id):
                    return response
                time.sleep(DISPATCH_POLL_INTERVAL)
            return response

        @rule(group=st.sampled_from(GROUPS), topic=topics, queue=st.integers(0, MAX_QUEUES - 1),
              data=st.data())
        def commit_offset(self, group: str, topic: str, queue: int, data: st.DataObject) -> None:
            queue_id = self._queue(topic, queue)
            offset = data.draw(st.integers(0, self.model.max_offset(topic, queue_id)))
            response = self.client.call(RequestCode.UPDATE_CONSUMER_OFFSET, UPDATE_CONSUMER_OFFSET_REQUEST, {
                "consumerGroup": group, "topic": topic, "queueId": queue_id, "commitOffset": offset})
            _expect(response, ResponseCode.SUCCESS)
            self.model.commit(group, topic, queue_id, offset)

        @rule(group=st.sampled_from(GROUPS), topic=topics, queue=st.integers(0, MAX_QUEUES - 1))
        def query_offset(self, group: str, topic: str, queue: int) -> None:
            queue_id = self._queue(topic, queue)
            response = self.client.call(RequestCode.QUERY_CONSUMER_OFFSET, QUERY_CONSUMER_OFFSET_REQUEST, {
                "consumerGroup": group, "topic": topic, "queueId": queue_id})
            committed = self.model.committed(group, topic, queue_id)
            if committed is None:
                # Java answers 0 for a never-committed queue whose first message is still in memory.
                _expect(response, ResponseCode.SUCCESS, ResponseCode.QUERY_NOT_FOUND)
                if response.code == ResponseCode.SUCCESS:
                    assert (response.ext_fields or {}).get("offset") == "0"
            else:
                _expect(response, ResponseCode.SUCCESS)
                assert (response.ext_fields or {}).get("offset") == str(committed)

        @precondition(lambda self: self.target.can_restart)
        @rule()
        def restart(self) -> None:
            self.client.close()
            self.target.restart()
            self.client = BrokerClient(self.target.broker_addr)

    return BrokerMachine
