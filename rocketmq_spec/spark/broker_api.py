"""The few RocketMQ operations the Spark source and sink need, as calls on a :class:`WireClient`.

Headers are built and read through ``rocketmq_spec.codec.custom_header`` with the tables of
``rocketmq_spec.spec.headers``, bodies through ``rocketmq_spec.codec.bodies``, and pulled messages are decoded
with the codec's CommitLog record decoder: a PULL_MESSAGE body is the stored records back to back. """

from __future__ import annotations

import datetime
import itertools
import os
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass

from rocketmq_spec.codec.bodies import decode_body
from rocketmq_spec.codec.custom_header import decode_header, encode_header
from rocketmq_spec.codec.store import decode_records
from rocketmq_spec.codec.store.record import MessageRecord
from rocketmq_spec.spark.wire import WireClient
from rocketmq_spec.spec import headers
from rocketmq_spec.spec.bodies import TOPIC_ROUTE_DATA
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.errors import SpecViolation
from rocketmq_spec.spec.message_id import UniqKey, encode_uniq_key, uniq_key_time_diff
from rocketmq_spec.spec.properties import PropertyKey, encode_properties
from rocketmq_spec.spec.sysflag import PermName, PullSysFlag
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC

DEFAULT_TOPIC_QUEUES = 4
"""Queues of an auto-created topic (the Java producer's ``defaultTopicQueueNums``)."""
MASTER_ID = "0"
"""brokerAddrs key of a master, the only broker that takes writes."""
PULL_BATCH = 32
"""Messages per PULL_MESSAGE (the Java consumer's ``pullBatchSize``)."""
ROUTE_TIMEOUT = 40.0
"""Seconds to wait for a new topic's route: past the 30 s period at which brokers re-register."""
ROUTE_POLL = 0.2

_UNIQ_COUNTER = itertools.count()
_UNIQ_PREFIX = (os.getpid() & 0xFFFF, random.getrandbits(31))


@dataclass(frozen=True)
class QueueRoute:
    broker_name: str
    broker_addr: str
    queue_id: int

    @property
    def key(self) -> str:
        """The queue's name in streaming offsets: stable across restarts, unlike the address."""
        return f"{self.broker_name}/{self.queue_id}"


def serving_address(addrs: Mapping[str, str], *, writable: bool) -> str | None:
    """The broker of a master-slave set to talk to: the master; for reads, while the set has no master,
    the slave with the lowest brokerId, as a Java consumer falls back to a slave."""
    if writable or MASTER_ID in addrs or not addrs:
        return addrs.get(MASTER_ID)
    return addrs[min(addrs, key=int)]


def topic_route(namesrv: WireClient, topic: str, *, writable: bool = False) -> list[QueueRoute]:
    """Read (or, with ``writable``, write) queues of ``topic`` on every broker of its route, in
    broker/queue order, each at the address :func:`serving_address` picks; none when the name server
    does not know the topic."""
    response = namesrv.invoke(RequestCode.GET_ROUTEINFO_BY_TOPIC,
                              encode_header(headers.GET_ROUTE_INFO_REQUEST, {"topic": topic}),
                              accept=(ResponseCode.SUCCESS, ResponseCode.TOPIC_NOT_EXIST))
    if response.code != ResponseCode.SUCCESS:
        return []
    route = decode_body(TOPIC_ROUTE_DATA, response.body or b"{}")
    masters = {b["brokerName"]: serving_address({str(k): v for k, v in b["brokerAddrs"].items()},
                                                writable=writable)
               for b in route.get("brokerDatas", [])}
    queues: list[QueueRoute] = []
    for data in route.get("queueDatas", []):
        permission = PermName.WRITE if writable else PermName.READ
        addr = masters.get(data["brokerName"])
        if addr is None or not data["perm"] & permission:
            continue
        count = data["writeQueueNums"] if writable else data["readQueueNums"]
        queues += [QueueRoute(data["brokerName"], addr, q) for q in range(count)]
    return sorted(queues, key=lambda q: (q.broker_name, q.queue_id))


def _offset(client: WireClient, code: int, spec: headers.HeaderSpec, values: Mapping[str, object],
            accept: tuple[int, ...] = (ResponseCode.SUCCESS,)) -> int | None:
    response = client.invoke(code, encode_header(spec, values), accept=accept)
    if response.code != ResponseCode.SUCCESS:
        return None
    answer = headers.header_for(code, True)
    assert answer is not None, f"no response header for request {code}"
    return int(decode_header(answer, response.ext_fields)["offset"])


def max_offset(client: WireClient, topic: str, queue_id: int) -> int:
    """One past the last message of the queue."""
    value = _offset(client, RequestCode.GET_MAX_OFFSET, headers.GET_MAX_OFFSET_REQUEST,
                    {"topic": topic, "queueId": queue_id})
    assert value is not None
    return value


def min_offset(client: WireClient, topic: str, queue_id: int) -> int:
    value = _offset(client, RequestCode.GET_MIN_OFFSET, headers.GET_MIN_OFFSET_REQUEST,
                    {"topic": topic, "queueId": queue_id})
    assert value is not None
    return value


def committed_offset(client: WireClient, group: str, topic: str, queue_id: int) -> int | None:
    """The group's stored offset, or None when the broker has none (QUERY_NOT_FOUND)."""
    return _offset(client, RequestCode.QUERY_CONSUMER_OFFSET, headers.QUERY_CONSUMER_OFFSET_REQUEST,
                   {"consumerGroup": group, "topic": topic, "queueId": queue_id},
                   accept=(ResponseCode.SUCCESS, ResponseCode.QUERY_NOT_FOUND))


def commit_offset(client: WireClient, group: str, topic: str, queue_id: int, offset: int) -> None:
    """UPDATE_CONSUMER_OFFSET, two-way so that a commit is known to have reached the broker."""
    client.invoke(RequestCode.UPDATE_CONSUMER_OFFSET, encode_header(headers.UPDATE_CONSUMER_OFFSET_REQUEST, {
        "consumerGroup": group, "topic": topic, "queueId": queue_id, "commitOffset": offset}))


@dataclass(frozen=True)
class PullResult:
    found: bool
    next_begin_offset: int
    records: list[MessageRecord]


def pull(client: WireClient, group: str, topic: str, queue_id: int, offset: int,
         max_messages: int = PULL_BATCH) -> PullResult:
    """One non-suspending pull; the offset is never committed through the pull (commits are explicit)."""
    fields = encode_header(headers.PULL_MESSAGE_REQUEST, {
        "consumerGroup": group, "topic": topic, "queueId": queue_id, "queueOffset": offset,
        "maxMsgNums": max_messages, "sysFlag": int(PullSysFlag.SUBSCRIPTION), "commitOffset": 0,
        "suspendTimeoutMillis": 0, "subscription": "*", "subVersion": 0, "expressionType": "TAG"})
    response = client.invoke(RequestCode.PULL_MESSAGE, fields, accept=(
        ResponseCode.SUCCESS, ResponseCode.PULL_NOT_FOUND, ResponseCode.PULL_RETRY_IMMEDIATELY,
        ResponseCode.PULL_OFFSET_MOVED))
    values = decode_header(headers.PULL_MESSAGE_RESPONSE, response.ext_fields)
    if response.code == ResponseCode.PULL_OFFSET_MOVED:
        raise SpecViolation(f"offset {offset} of {topic}/{queue_id} is no longer in the queue",
                            expected=f">= {values['minOffset']}", seen=offset)
    found = response.code == ResponseCode.SUCCESS
    return PullResult(found, values["nextBeginOffset"], decode_records(response.body) if found else [])


def new_uniq_key() -> str:
    """A UNIQ_KEY in the Java client's layout, so brokers and tools that decode it see sane fields; a
    random number stands in for the class-loader hash, which only has to differ between processes."""
    pid, loader = _UNIQ_PREFIX
    now = datetime.datetime.now()
    month_start = now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    time_diff = uniq_key_time_diff(int(now.timestamp() * 1000), int(month_start.timestamp() * 1000))
    return encode_uniq_key(UniqKey("127.0.0.1", pid, loader, time_diff, next(_UNIQ_COUNTER) & 0xFFFF))


@dataclass(frozen=True)
class SendResult:
    offset_msg_id: str
    queue_id: int
    queue_offset: int
    uniq_key: str


def send(client: WireClient, route: QueueRoute, topic: str, body: bytes, *, producer_group: str,
         tags: str | None = None, keys: str | None = None, properties: Mapping[str, str] | None = None,
         uniq_key: str | None = None) -> SendResult:
    """SEND_MESSAGE_V2 of one message to one queue; user properties go after the reserved ones. The
    UNIQ_KEY (the message id clients see) is ``uniq_key`` when given, else a new one."""
    uniq = uniq_key or new_uniq_key()
    props = {PropertyKey.UNIQ_KEY: uniq, PropertyKey.TAGS: tags, PropertyKey.KEYS: keys,
             PropertyKey.WAIT: "true", **(properties or {})}
    fields = encode_header(headers.SEND_MESSAGE_REQUEST_V2, {
        "producerGroup": producer_group, "topic": topic, "defaultTopic": DEFAULT_TOPIC,
        "defaultTopicQueueNums": DEFAULT_TOPIC_QUEUES, "queueId": route.queue_id, "sysFlag": 0,
        "bornTimestamp": int(time.time() * 1000), "flag": 0, "properties": encode_properties(props),
        "reconsumeTimes": 0, "unitMode": False, "batch": False, "bname": route.broker_name})
    response = client.invoke(RequestCode.SEND_MESSAGE_V2, fields, body)
    values = decode_header(headers.SEND_MESSAGE_RESPONSE, response.ext_fields)
    return SendResult(values["msgId"], values["queueId"], values["queueOffset"], uniq)


def create_topic(client: WireClient, topic: str, queues: int) -> None:
    """UPDATE_AND_CREATE_TOPIC on one broker: read/write queues, read-write permission, single tag."""
    client.invoke(RequestCode.UPDATE_AND_CREATE_TOPIC, encode_header(headers.CREATE_TOPIC_REQUEST, {
        "topic": topic, "defaultTopic": DEFAULT_TOPIC, "readQueueNums": queues, "writeQueueNums": queues,
        "perm": int(PermName.READ | PermName.WRITE), "topicFilterType": "SINGLE_TAG", "order": False}))


def await_route(namesrv: WireClient, topic: str, queues: int, *, timeout: float = ROUTE_TIMEOUT) -> None:
    """Wait until the name server routes ``queues`` write queues of ``topic`` (brokers register a new
    topic asynchronously)."""
    deadline = time.monotonic() + timeout
    while len(topic_route(namesrv, topic, writable=True)) < queues:
        if time.monotonic() > deadline:
            raise TimeoutError(f"the name server does not route {queues} queues of {topic} after {timeout} s")
        time.sleep(ROUTE_POLL)
