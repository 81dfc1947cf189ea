"""CONSUMER_SEND_MSG_BACK (36) over TCP: a refused message comes back through the group's retry topic
after its delay level, with reconsumeTimes counting up, and lands in the group's DLQ past the limit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.custom_header import encode_header
from rocketmq_spec.codec.store import decode_records
from rocketmq_spec.codec.store.record import MessageRecord
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.embedded import EmbeddedRocketMQ
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.headers import CONSUMER_SEND_MSG_BACK_REQUEST
from rocketmq_spec.spec.message_id import decode_offset_msg_id
from rocketmq_spec.spec.system_topics import DLQ_PREFIX, RETRY_PREFIX, SCHEDULE_TOPIC
from rocketmq_spec.spec.version import MQVersion
from tests.broker_support import run
from tests.messaging_support import pull, send, with_broker

GROUP = "cg-back"
RETRY_TOPIC = f"{RETRY_PREFIX}{GROUP}"
DLQ_TOPIC = f"{DLQ_PREFIX}{GROUP}"
SHORT_LEVELS = {"message_delay_level": "1s 1s 1s 1s 1s"}
"""Every level one second, so a retry comes back quickly; level 3 + reconsumeTimes stays within 5."""
POLL_MS = 4000
POLLS = 3
"""A retry copy is awaited with at most this many long polls of POLL_MS each."""


async def send_back(client: RemotingClient, offset: int, *, group: str = GROUP, delay_level: int = 0,
                    max_reconsume_times: int | None = None, version: int = int(MQVersion.V4_9_8),
                    unit_mode: bool = False) -> RemotingCommand:
    values: dict[str, Any] = {"offset": offset, "group": group, "delayLevel": delay_level,
                              "originTopic": "TopicS", "unitMode": unit_mode}
    if max_reconsume_times is not None:
        values["maxReconsumeTimes"] = max_reconsume_times
    fields = encode_header(CONSUMER_SEND_MSG_BACK_REQUEST, values)
    request = client.request(RequestCode.CONSUMER_SEND_MSG_BACK, fields)
    request.version = version
    return await client.invoke(request)


async def stored(client: RemotingClient, topic: str, queue_id: int = 0, offset: int = 0) -> MessageRecord:
    """The record at ``offset`` of a queue, waiting (bounded) for the delay scheduler to put it there."""
    for _ in range(POLLS):
        answer = await pull(client, topic, queue_id, offset, group="inspector", suspend_ms=POLL_MS,
                            timeout=POLL_MS / 1000 + 4)
        if answer.code == ResponseCode.SUCCESS:
            return decode_records(answer.body)[0]
    raise AssertionError(f"nothing arrived in {topic}:{queue_id} at offset {offset}")


async def send_original_offset(client: RemotingClient) -> int:
    """Send the message every test refuses; returns its commitlog offset (from the offsetMsgId)."""
    answer = await send(client, "TopicS", b"\x00refused body\xff",
                        {"TAGS": "TagR", "KEYS": "rk1 rk2", "color": "blue", "UNIQ_KEY": "CD" * 16,
                         "WAIT": "true"}, flag=5, born=1_700_000_000_123)
    assert answer.code == ResponseCode.SUCCESS and answer.ext_fields is not None
    return decode_offset_msg_id(answer.ext_fields["msgId"]).offset


async def send_original(client: RemotingClient) -> MessageRecord:
    await send_original_offset(client)
    return await stored(client, "TopicS")


def assert_copy_of(copy: MessageRecord, original: MessageRecord, reconsume_times: int) -> None:
    assert copy.body == original.body
    assert (copy.flag, copy.born_timestamp, copy.born_host) == (original.flag, original.born_timestamp,
                                                                original.born_host)
    assert copy.reconsume_times == reconsume_times
    for key in ("TAGS", "KEYS", "color", "UNIQ_KEY", "CLUSTER"):
        assert copy.properties[key] == original.properties[key]
    assert copy.properties["RETRY_TOPIC"] == "TopicS"
    assert copy.properties["ORIGIN_MESSAGE_ID"] == original.offset_msg_id


def test_refused_message_returns_through_retry_topic_with_growing_delay(tmp_path: Path) -> None:
    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        original = await send_original(client)

        answer = await send_back(client, original.physical_offset)
        assert (answer.code, answer.remark, answer.ext_fields) == (ResponseCode.SUCCESS, None, None)
        parked = await stored(client, SCHEDULE_TOPIC, queue_id=3 - 1)
        assert parked.properties["DELAY"] == "3"
        assert parked.properties["WAIT"] == "false"
        assert (parked.properties["REAL_TOPIC"], parked.properties["REAL_QID"]) == (RETRY_TOPIC, "0")
        first = await stored(client, RETRY_TOPIC)
        assert_copy_of(first, original, reconsume_times=1)
        assert mq.broker is not None and mq.broker.topics.get(RETRY_TOPIC) is not None

        # The copy is refused again: one level later, same origin, reconsumeTimes 2.
        assert (await send_back(client, first.physical_offset)).code == ResponseCode.SUCCESS
        assert (await stored(client, SCHEDULE_TOPIC, queue_id=4 - 1)).properties["DELAY"] == "4"
        second = await stored(client, RETRY_TOPIC, offset=1)
        assert_copy_of(second, original, reconsume_times=2)

    run(with_broker(tmp_path / "store", scenario, **SHORT_LEVELS))


def test_consumer_chosen_level_and_dead_letter_queue(tmp_path: Path) -> None:
    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        original = await send_original(client)
        assert (await send_back(client, original.physical_offset, delay_level=1)).code == ResponseCode.SUCCESS
        assert (await stored(client, SCHEDULE_TOPIC, queue_id=0)).properties["DELAY"] == "1"
        first = await stored(client, RETRY_TOPIC)

        # reconsumeTimes 1 reaches the header's limit of 1: straight to the DLQ, no delay.
        answer = await send_back(client, first.physical_offset, max_reconsume_times=1)
        assert answer.code == ResponseCode.SUCCESS
        dead = await stored(client, DLQ_TOPIC)
        assert_copy_of(dead, original, reconsume_times=2)
        assert (dead.topic, dead.properties["DELAY"]) == (DLQ_TOPIC, "0")

        # A negative level sends even a first refusal to the DLQ.
        straight = await send_back(client, original.physical_offset, delay_level=-1)
        assert straight.code == ResponseCode.SUCCESS
        direct = await stored(client, DLQ_TOPIC, offset=1)
        assert_copy_of(direct, original, reconsume_times=1)
        assert "REAL_TOPIC" not in direct.properties

    run(with_broker(tmp_path / "store", scenario, **SHORT_LEVELS))


def test_old_clients_get_the_group_limit(tmp_path: Path) -> None:
    """Before V3_4_9 the header's maxReconsumeTimes is ignored and the group's retryMaxTimes (16) holds."""
    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        original = await send_original(client)
        answer = await send_back(client, original.physical_offset, max_reconsume_times=0,
                                 version=int(MQVersion.V3_4_9) - 1)
        assert answer.code == ResponseCode.SUCCESS
        assert (await stored(client, SCHEDULE_TOPIC, queue_id=3 - 1)).properties["REAL_TOPIC"] == RETRY_TOPIC

    run(with_broker(tmp_path / "store", scenario, **SHORT_LEVELS))


def test_refusals_in_java_order(tmp_path: Path) -> None:
    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        offset = await send_original_offset(client)
        missing = offset + 7
        answer = await send_back(client, missing, group="SELF_TEST_C_GROUP")
        assert (answer.code, answer.remark) == (ResponseCode.SYSTEM_ERROR,
                                                f"look message by offset failed, {missing}")
        unknown = await send_back(client, offset, group="never-seen")
        assert unknown.code == ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST
        assert (unknown.remark or "").startswith("subscription group not exist, never-seen ")

    run(with_broker(tmp_path / "store", scenario, auto_create_subscription_group=False))


def test_read_only_broker_and_group_without_retry_queues(tmp_path: Path) -> None:
    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        assert mq.broker is not None
        refused = await send_back(client, 0)
        assert (refused.code, refused.remark) == (ResponseCode.NO_PERMISSION,
                                                  "the broker[127.0.0.1] sending message is forbidden")
        mq.broker.config.broker_permission = 6
        group = mq.broker.groups.find_or_create(GROUP)
        assert group is not None
        group.retry_queue_nums = 0
        dropped = await send_back(client, 0)
        assert (dropped.code, dropped.remark) == (ResponseCode.SUCCESS, None)
        assert mq.broker.topics.get(RETRY_TOPIC) is None

    run(with_broker(tmp_path / "store", scenario, broker_permission=4))


def test_unit_mode_marks_the_retry_topic(tmp_path: Path) -> None:
    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        original = await send_original(client)
        answer = await send_back(client, original.physical_offset, unit_mode=True)
        assert answer.code == ResponseCode.SUCCESS
        assert mq.broker is not None
        retry = mq.broker.topics.get(RETRY_TOPIC)
        assert retry is not None and retry.topic_sys_flag == 2 and retry.perm == 6

    run(with_broker(tmp_path / "store", scenario, **SHORT_LEVELS))


def test_dead_letter_copy_keeps_wait_and_the_original_store_host(tmp_path: Path) -> None:
    """``asyncConsumerSendMsgBack`` stores ``messageProperties2String`` of the map it built (WAIT=false
    included, no producer-path stripping) and ``setStoreHost(msgExt.getStoreHost())``: a copy made after
    a restart on another port still names the host that stored the original."""
    store = tmp_path / "store"

    async def first_life(mq: EmbeddedRocketMQ, client: RemotingClient) -> MessageRecord:
        return await send_original(client)

    async def second_life(mq: EmbeddedRocketMQ, client: RemotingClient) -> MessageRecord:
        answer = await send_back(client, original.physical_offset, delay_level=-1)
        assert answer.code == ResponseCode.SUCCESS
        return await stored(client, DLQ_TOPIC)

    original = run(with_broker(store, first_life))
    dead = run(with_broker(store, second_life))
    assert dead.properties["WAIT"] == "false"
    assert dead.store_host == original.store_host
