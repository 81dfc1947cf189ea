"""Helpers for driving the reference broker's send, pull and query paths over TCP.

The request headers come from ``rocketmq_spec.reference_broker.client_requests``, the small store from
``rocketmq_spec.reference_broker.small_store``; what is here only sends them and waits for the answer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from rocketmq_spec.codec.batch import BatchBlock, encode_batch
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.client_requests import pull_fields, send_fields
from rocketmq_spec.reference_broker.embedded import EmbeddedRocketMQ
from rocketmq_spec.reference_broker.small_store import small_config
from rocketmq_spec.spec.codes import RequestCode

T = TypeVar("T")


async def with_broker(store: Path, scenario: Callable[[EmbeddedRocketMQ, RemotingClient], Awaitable[T]],
                      **overrides: Any) -> T:
    async with EmbeddedRocketMQ(store, broker_config=small_config(store, **overrides)) as mq:
        client = await RemotingClient.connect(mq.broker_addr)
        try:
            return await scenario(mq, client)
        finally:
            await client.close()


async def send(client: RemotingClient, topic: str, body: bytes, properties: dict[str, str],
               **options: Any) -> RemotingCommand:
    code = RequestCode.SEND_MESSAGE_V2 if options.get("v2", True) else RequestCode.SEND_MESSAGE
    return await client.invoke(client.request(code, send_fields(topic, properties, **options), body))


async def send_batch(client: RemotingClient, topic: str, blocks: list[BatchBlock],
                     **options: Any) -> RemotingCommand:
    fields = send_fields(topic, {"WAIT": "true"}, batch=True, **options)
    return await client.invoke(client.request(RequestCode.SEND_BATCH_MESSAGE, fields, encode_batch(blocks)))


async def pull(client: RemotingClient, topic: str, queue_id: int, offset: int, *, timeout: float = 6.0,
               **options: Any) -> RemotingCommand:
    return await client.invoke(client.request(RequestCode.PULL_MESSAGE,
                                              pull_fields(topic, queue_id, offset, **options)), timeout)
