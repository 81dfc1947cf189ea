"""Helpers for driving the reference broker's send, pull and query paths over TCP."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from codec.batch import BatchBlock, encode_batch
from codec.command import RemotingCommand
from codec.custom_header import encode_header
from reference_broker.client import RemotingClient
from reference_broker.config import BrokerConfig
from reference_broker.embedded import EmbeddedRocketMQ
from spec.codes import RequestCode
from spec.headers import PULL_MESSAGE_REQUEST, SEND_MESSAGE_REQUEST, SEND_MESSAGE_REQUEST_V2
from spec.properties import encode_properties
from spec.sysflag import PullSysFlag

T = TypeVar("T")

SMALL_STORE = {"mapped_file_size_commit_log": 1024 * 1024, "mapped_file_size_consume_queue": 20 * 1000,
               "max_hash_slot_num": 1000, "max_index_num": 4000}
"""Store file sizes small enough that a test store costs a few MiB, not a GiB-sized sparse file."""
PRODUCER_GROUP = "pg"


def small_config(store: Path, **overrides: Any) -> BrokerConfig:
    return BrokerConfig(listen_port=0, store_path_root_dir=str(store), **{**SMALL_STORE, **overrides})


async def with_broker(store: Path, scenario: Callable[[EmbeddedRocketMQ, RemotingClient], Awaitable[T]],
                      **overrides: Any) -> T:
    async with EmbeddedRocketMQ(store, broker_config=small_config(store, **overrides)) as mq:
        client = await RemotingClient.connect(mq.broker_addr)
        try:
            return await scenario(mq, client)
        finally:
            await client.close()


def send_fields(topic: str, properties: dict[str, str], *, queue_id: int = 0, born: int = 1_700_000_000_000,
                flag: int = 0, sys_flag: int = 0, batch: bool = False, reconsume_times: int = 0,
                v2: bool = True, default_topic: str = "TBW102") -> dict[str, str]:
    values: dict[str, Any] = {
        "producerGroup": PRODUCER_GROUP, "topic": topic, "defaultTopic": default_topic,
        "defaultTopicQueueNums": 4, "queueId": queue_id, "sysFlag": sys_flag, "bornTimestamp": born,
        "flag": flag, "properties": encode_properties(properties), "reconsumeTimes": reconsume_times,
        "unitMode": False, "batch": batch}
    return encode_header(SEND_MESSAGE_REQUEST_V2 if v2 else SEND_MESSAGE_REQUEST, values)


async def send(client: RemotingClient, topic: str, body: bytes, properties: dict[str, str],
               **options: Any) -> RemotingCommand:
    code = RequestCode.SEND_MESSAGE_V2 if options.get("v2", True) else RequestCode.SEND_MESSAGE
    return await client.invoke(client.request(code, send_fields(topic, properties, **options), body))


async def send_batch(client: RemotingClient, topic: str, blocks: list[BatchBlock],
                     **options: Any) -> RemotingCommand:
    fields = send_fields(topic, {"WAIT": "true"}, batch=True, **options)
    return await client.invoke(client.request(RequestCode.SEND_BATCH_MESSAGE, fields, encode_batch(blocks)))


def pull_fields(topic: str, queue_id: int, offset: int, *, group: str = "cg", expression: str | None = "*",
                suspend_ms: int = 0, commit_offset: int | None = None, max_nums: int = 32) -> dict[str, str]:
    flags = PullSysFlag.SUBSCRIPTION if expression is not None else PullSysFlag(0)
    if suspend_ms:
        flags |= PullSysFlag.SUSPEND
    if commit_offset is not None:
        flags |= PullSysFlag.COMMIT_OFFSET
    return encode_header(PULL_MESSAGE_REQUEST, {
        "consumerGroup": group, "topic": topic, "queueId": queue_id, "queueOffset": offset,
        "maxMsgNums": max_nums, "sysFlag": int(flags), "commitOffset": commit_offset or 0,
        "suspendTimeoutMillis": suspend_ms, "subscription": expression, "subVersion": 0,
        "expressionType": "TAG"})


async def pull(client: RemotingClient, topic: str, queue_id: int, offset: int, *, timeout: float = 6.0,
               **options: Any) -> RemotingCommand:
    return await client.invoke(client.request(RequestCode.PULL_MESSAGE,
                                              pull_fields(topic, queue_id, offset, **options)), timeout)
