"""The little of a client the harness needs, over the codec: frames, one-shot exchanges, topic set-up.

Requests go straight to the broker's address (no name server), as a benchmark producer does, so the same
calls work against the reference broker and a Java one.
"""

from __future__ import annotations

import asyncio
import itertools
import socket
import struct
import time

from rocketmq_spec.codec.command import RemotingCommand, decode, encode
from rocketmq_spec.codec.custom_header import encode_header
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.frame import LENGTH_FIELD_SIZE
from rocketmq_spec.spec.headers import (
    CREATE_TOPIC_REQUEST,
    GET_MAX_OFFSET_REQUEST,
    PULL_MESSAGE_REQUEST,
    SEND_MESSAGE_REQUEST_V2,
)
from rocketmq_spec.spec.properties import encode_properties
from rocketmq_spec.spec.sysflag import PullSysFlag

CLIENT_VERSION = 435
"""A 4.9.x client's version ordinal, so the broker answers as it answers current clients."""
PROBE_TIMEOUT_S = 5.0
PRODUCER_GROUP = "SoakProducerGroup"
_opaques = itertools.count(1)


def request(code: int, ext_fields: dict[str, str] | None = None, body: bytes | None = None, *,
            flag: int = 0, opaque: int | None = None) -> RemotingCommand:
    return RemotingCommand(code, version=CLIENT_VERSION, opaque=next(_opaques) if opaque is None else opaque,
                           flag=flag, ext_fields=ext_fields, body=body)


def host_port(addr: str) -> tuple[str, int]:
    host, _, port = addr.rpartition(":")
    return host, int(port)


def max_offset_request(topic: str, queue_id: int) -> RemotingCommand:
    return request(RequestCode.GET_MAX_OFFSET,
                   encode_header(GET_MAX_OFFSET_REQUEST, {"topic": topic, "queueId": queue_id}))


def pull_request(topic: str, queue_id: int, offset: int, *, group: str, max_nums: int,
                 suspend_ms: int = 0) -> RemotingCommand:
    """PULL_MESSAGE with the subscription "*" in the request (no heartbeat needed); a long poll when
    ``suspend_ms`` is given."""
    flags = PullSysFlag.SUBSCRIPTION | (PullSysFlag.SUSPEND if suspend_ms else PullSysFlag(0))
    return request(RequestCode.PULL_MESSAGE, encode_header(PULL_MESSAGE_REQUEST, {
        "consumerGroup": group, "topic": topic, "queueId": queue_id, "queueOffset": offset,
        "maxMsgNums": max_nums, "sysFlag": int(flags), "commitOffset": 0, "suspendTimeoutMillis": suspend_ms,
        "subscription": "*", "subVersion": 0, "expressionType": "TAG"}))


def send_request(topic: str, queue_id: int, body: bytes, properties: dict[str, str]) -> RemotingCommand:
    """SEND_MESSAGE_V2 straight to a queue, as a producer that chose it sends."""
    return request(RequestCode.SEND_MESSAGE_V2, encode_header(SEND_MESSAGE_REQUEST_V2, {
        "producerGroup": PRODUCER_GROUP, "topic": topic, "defaultTopic": "TBW102", "defaultTopicQueueNums": 4,
        "queueId": queue_id, "sysFlag": 0, "bornTimestamp": int(time.time() * 1000), "flag": 0,
        "properties": encode_properties(properties), "reconsumeTimes": 0, "unitMode": False,
        "batch": False}), body)


async def read_command(reader: asyncio.StreamReader) -> RemotingCommand:
    (length,) = struct.unpack(">i", await reader.readexactly(LENGTH_FIELD_SIZE))
    return decode(struct.pack(">i", length) + await reader.readexactly(length))


async def probe(addr: str, topic: str) -> float | None:
    """A control request on a fresh connection: seconds until it was answered, None if it was not."""
    started = time.perf_counter()
    try:
        async with asyncio.timeout(PROBE_TIMEOUT_S):
            reader, writer = await asyncio.open_connection(*host_port(addr))
            try:
                writer.write(encode(max_offset_request(topic, 0)))
                answer = await read_command(reader)
            finally:
                writer.close()
    except (TimeoutError, OSError, asyncio.IncompleteReadError):
        return None
    return time.perf_counter() - started if answer.code == ResponseCode.SUCCESS else None


def wait_until_answering(addr: str, timeout: float) -> None:
    """Block until ``addr`` answers a request (any answer), or raise TimeoutError."""
    deadline = time.monotonic() + timeout
    frame = encode(max_offset_request("TBW102", 0))
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(host_port(addr), timeout=2) as sock:
                sock.sendall(frame)
                if sock.recv(4):
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise TimeoutError(f"{addr} did not answer within {timeout:.0f} s")


async def create_topic(addr: str, topic: str, queues: int) -> None:
    client = await RemotingClient.connect(addr)
    try:
        fields = encode_header(CREATE_TOPIC_REQUEST, {
            "topic": topic, "defaultTopic": "TBW102", "readQueueNums": queues, "writeQueueNums": queues,
            "perm": 6, "topicFilterType": "SINGLE_TAG", "topicSysFlag": 0, "order": False})
        answer = await client.invoke(request(RequestCode.UPDATE_AND_CREATE_TOPIC, fields))
        if answer.code != ResponseCode.SUCCESS:
            raise RuntimeError(f"cannot create {topic} on {addr}: {answer.remark}")
    finally:
        await client.close()


async def max_offset(client: RemotingClient, topic: str, queue_id: int) -> int:
    answer = await client.invoke(max_offset_request(topic, queue_id))
    if answer.code != ResponseCode.SUCCESS or not answer.ext_fields:
        raise RuntimeError(f"GET_MAX_OFFSET {topic}/{queue_id}: {answer.code} {answer.remark}")
    return int(answer.ext_fields["offset"])
