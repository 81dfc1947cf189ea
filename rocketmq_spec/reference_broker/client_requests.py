"""The header fields of a producer's send and a consumer's pull, filled as Java's client fills them.

Whatever drives the reference broker's send and pull paths over the wire — the benchmarks, the tests, a
store filled for a demonstration — builds its requests here, so every driver sends the same headers.
"""

from __future__ import annotations

from typing import Any

from rocketmq_spec.codec.custom_header import encode_header
from rocketmq_spec.spec.headers import PULL_MESSAGE_REQUEST, SEND_MESSAGE_REQUEST, SEND_MESSAGE_REQUEST_V2
from rocketmq_spec.spec.properties import encode_properties
from rocketmq_spec.spec.sysflag import PullSysFlag
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC

PRODUCER_GROUP = "pg"


def send_fields(topic: str, properties: dict[str, str], *, queue_id: int = 0, born: int = 1_700_000_000_000,
                flag: int = 0, sys_flag: int = 0, batch: bool = False, reconsume_times: int = 0,
                v2: bool = True, default_topic: str = DEFAULT_TOPIC) -> dict[str, str]:
    values: dict[str, Any] = {
        "producerGroup": PRODUCER_GROUP, "topic": topic, "defaultTopic": default_topic,
        "defaultTopicQueueNums": 4, "queueId": queue_id, "sysFlag": sys_flag, "bornTimestamp": born,
        "flag": flag, "properties": encode_properties(properties), "reconsumeTimes": reconsume_times,
        "unitMode": False, "batch": batch}
    return encode_header(SEND_MESSAGE_REQUEST_V2 if v2 else SEND_MESSAGE_REQUEST, values)


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
