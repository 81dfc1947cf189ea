"""POP consumption on the reference broker (5.x wire release): pop, ack, batch ack, change invisible time,
peek, notification, polling info, revive into the pop retry topic, ordered pop, request modes; a 4.9.8
broker answers every POP code as not supported."""

from __future__ import annotations

import base64
import time
from pathlib import Path
from typing import Any

from rocketmq_spec.codec.bodies import decode_body, encode_body
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.custom_header import encode_header
from rocketmq_spec.codec.store import MessageRecord, decode_records
from rocketmq_spec.codec.store.configs import consumer_offsets_from_json, load_config
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.embedded import EmbeddedRocketMQ
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.pop import (
    ACK_MESSAGE_REQUEST,
    BATCH_ACK_BODY,
    CHANGE_INVISIBLE_TIME_REQUEST,
    NOTIFICATION_REQUEST,
    POLLING_INFO_REQUEST,
    POP_MESSAGE_REQUEST,
    QUERY_ASSIGNMENT_REQUEST_BODY,
    QUERY_ASSIGNMENT_RESPONSE_BODY,
    SET_MESSAGE_REQUEST_MODE_BODY,
    build_extra_info,
    pop_retry_topic,
    revive_topic,
)
from rocketmq_spec.spec.properties import PropertyKey
from rocketmq_spec.spec.store_layout import ORDER_INFO_FILE
from rocketmq_spec.spec.system_topics import REVIVE_GROUP
from tests.broker_support import run
from tests.messaging_support import send, with_broker

GROUP = "popGroup"


def _pop_fields(topic: str, *, queue_id: int = -1, max_nums: int = 32, invisible: int = 60_000,
                poll: int = 0, order: bool = False, group: str = GROUP) -> dict[str, str]:
    return encode_header(POP_MESSAGE_REQUEST, {
        "consumerGroup": group, "topic": topic, "queueId": queue_id, "maxMsgNums": max_nums,
        "invisibleTime": invisible, "pollTime": poll, "bornTime": int(time.time() * 1000), "initMode": 1,
        "order": order})


async def pop(client: RemotingClient, topic: str, **options: Any) -> RemotingCommand:
    return await client.invoke(client.request(RequestCode.POP_MESSAGE, _pop_fields(topic, **options)), 30)


def receipts(answer: RemotingCommand) -> list[tuple[MessageRecord, str]]:
    """What a client makes of a POP answer: each record with its receipt, from the header's offset infos."""
    ext = answer.ext_fields or {}
    starts = {tuple(e.split()[:2]): int(e.split()[2]) for e in ext["startOffsetInfo"].split(";") if e}
    retry_of = {q: r for r, q in starts}
    found = []
    for record in decode_records(answer.body):
        queue = str(record.queue_id)
        retry = retry_of.get(queue, "0") if PropertyKey.POP_CK not in record.properties else \
            record.properties[PropertyKey.POP_CK].split()[4]
        receipt = record.properties.get(PropertyKey.POP_CK) or build_extra_info(
            starts[(retry,
                    queue)], int(ext["popTime"]), int(ext["invisibleTime"]), int(ext["reviveQid"]), retry,
            "broker-a", record.queue_id, record.queue_offset)
        found.append((record, receipt))
    return found


async def ack(client: RemotingClient, topic: str, record: MessageRecord, receipt: str,
              group: str = GROUP) -> RemotingCommand:
    fields = encode_header(ACK_MESSAGE_REQUEST, {"consumerGroup": group, "topic": topic,
                                                 "queueId": record.queue_id,
                                                 "extraInfo": receipt, "offset": int(receipt.split()[7])})
    return await client.invoke(client.request(RequestCode.ACK_MESSAGE, fields))


async def _fill(client: RemotingClient, topic: str, count: int, queue_id: int = 0) -> None:
    for number in range(count):
        answer = await send(client, topic, f"m{number}".encode(), {"KEYS": f"k{number}"}, queue_id=queue_id)
        assert answer.code == ResponseCode.SUCCESS


def test_pop_hides_then_ack_removes(tmp_path: Path) -> None:
    async def scenario(_: EmbeddedRocketMQ, client: RemotingClient) -> None:
        await _fill(client, "PopT", 3)
        first = await pop(client, "PopT", invisible=60_000)
        assert first.code == ResponseCode.SUCCESS and first.remark == "FOUND"
        popped = receipts(first)
        assert sorted(r.body for r, _ in popped) == [b"m0", b"m1", b"m2"]
        assert first.ext_fields is not None and int(first.ext_fields["reviveQid"]) < 8
        again = await pop(client, "PopT")
        assert again.code == ResponseCode.POLLING_TIMEOUT and again.remark == "NO_MESSAGE_IN_QUEUE"
        for record, receipt in popped:
            assert (await ack(client, "PopT", record, receipt)).code == ResponseCode.SUCCESS
        illegal = await client.invoke(client.request(RequestCode.ACK_MESSAGE, encode_header(
            ACK_MESSAGE_REQUEST, {"consumerGroup": GROUP, "topic": "PopT", "queueId": 0,
                                  "extraInfo": popped[0][1],
                                  "offset": 99})))
        assert illegal.code == ResponseCode.NO_MESSAGE

    run(with_broker(tmp_path / "store", scenario))


def test_unacked_message_is_revived_into_the_retry_topic(tmp_path: Path) -> None:
    async def scenario(_: EmbeddedRocketMQ, client: RemotingClient) -> None:
        await _fill(client, "PopR", 2)
        popped = receipts(await pop(client, "PopR", invisible=2000))
        kept = next((r, rc) for r, rc in popped if r.body == b"m0")
        assert (await ack(client, "PopR", *kept)).code == ResponseCode.SUCCESS
        revived = await pop(client, "PopR", invisible=60_000, poll=15_000)
        assert revived.code == ResponseCode.SUCCESS
        [(record, receipt)] = receipts(revived)
        assert record.body == b"m1" and record.topic == "PopR" and record.reconsume_times == 1
        assert PropertyKey.FIRST_POP_TIME in record.properties and receipt.split()[4] == "1"
        assert (await ack(client, "PopR", record, receipt)).code == ResponseCode.SUCCESS

    run(with_broker(tmp_path / "store", scenario))


def test_change_invisible_time_and_batch_ack(tmp_path: Path) -> None:
    async def scenario(_: EmbeddedRocketMQ, client: RemotingClient) -> None:
        await _fill(client, "PopC", 3)
        answer = await pop(client, "PopC", invisible=60_000)
        popped = receipts(answer)
        record, receipt = popped[0]
        changed = await client.invoke(client.request(RequestCode.CHANGE_MESSAGE_INVISIBLETIME, encode_header(
            CHANGE_INVISIBLE_TIME_REQUEST, {"consumerGroup": GROUP, "topic": "PopC", "queueId": 0,
                                            "extraInfo": receipt, "offset": record.queue_offset,
                                            "invisibleTime": 1000})))
        assert changed.code == ResponseCode.SUCCESS and changed.ext_fields is not None
        assert changed.ext_fields["invisibleTime"] == "1000"
        ext = answer.ext_fields or {}
        bits = sum(1 << i for i in (1, 2))
        entry = {"c": GROUP, "t": "PopC", "r": "0", "so": 0, "q": 0, "rq": int(ext["reviveQid"]),
                 "pt": int(ext["popTime"]), "it": 60_000, "b": base64.b64encode(bits.to_bytes(1,
                                                                                              "little")).decode()}
        batch = await client.invoke(client.request(RequestCode.BATCH_ACK_MESSAGE, {},
                                                   encode_body(BATCH_ACK_BODY, {"brokerName": "broker-a",
                                                                                "acks": [entry]})))
        assert batch.code == ResponseCode.SUCCESS
        back = await pop(client, "PopC", poll=15_000)
        assert [r.body for r, _ in receipts(back)] == [record.body]

    run(with_broker(tmp_path / "store", scenario))


def test_ordered_pop_locks_the_queue_until_acked(tmp_path: Path) -> None:
    async def scenario(_: EmbeddedRocketMQ, client: RemotingClient) -> None:
        await _fill(client, "PopO", 3)
        first = await pop(client, "PopO", queue_id=0, max_nums=2, order=True)
        assert first.code == ResponseCode.SUCCESS and (first.ext_fields or {})["reviveQid"] == "999"
        assert (first.ext_fields or {})["orderCountInfo"] == "0 0 0"
        blocked = await pop(client, "PopO", queue_id=0, order=True)
        assert blocked.code == ResponseCode.POLLING_TIMEOUT
        for record, receipt in receipts(first):
            await ack(client, "PopO", record, receipt)
        following = await pop(client, "PopO", queue_id=0, order=True)
        assert [r.body for r, _ in receipts(following)] == [b"m2"]

    run(with_broker(tmp_path / "store", scenario))


def test_an_ordered_lock_survives_a_restart_in_javas_order_info_file(tmp_path: Path) -> None:
    """An ack commits the batch's first offset not yet acked (``commitAndNext``); the lock on the rest is
    in config/consumerOrderInfo.json, so the restarted broker still answers nothing for the queue."""
    store = tmp_path / "store"

    async def before(_: EmbeddedRocketMQ, client: RemotingClient) -> None:
        await _fill(client, "PopR", 3)
        first = await pop(client, "PopR", queue_id=0, max_nums=3, order=True)
        record, receipt = receipts(first)[0]
        assert (await ack(client, "PopR", record, receipt)).code == ResponseCode.SUCCESS

    async def after(_: EmbeddedRocketMQ, client: RemotingClient) -> None:
        assert (await pop(client, "PopR", queue_id=0, order=True)).code == ResponseCode.POLLING_TIMEOUT

    run(with_broker(store, before))
    saved = load_config(store / "config" / ORDER_INFO_FILE)
    info = saved["table"][f"PopR@{GROUP}"][0]
    assert (saved["orderInfoCount"], info["o"], info["cm"], info["i"]) == (1, [0, 1, 2], 1, 60_000)
    assert consumer_offsets_from_json(load_config(store / "config" / "consumerOffset.json"))[
        ("PopR", GROUP)][0] == 1
    run(with_broker(store, after))


def test_notification_polling_info_peek_and_long_polling(tmp_path: Path) -> None:
    async def scenario(_: EmbeddedRocketMQ, client: RemotingClient) -> None:
        await _fill(client, "PopN", 0)
        await send(client, "PopN", b"seed", {}, queue_id=0)
        await pop(client, "PopN")  # the group starts at the queue's minimum
        notify = encode_header(NOTIFICATION_REQUEST, {"consumerGroup": GROUP, "topic": "PopN", "queueId": -1,
                                                       "pollTime": 200, "bornTime": int(time.time() * 1000)})
        none = await client.invoke(client.request(RequestCode.NOTIFICATION, notify))
        assert none.code == ResponseCode.SUCCESS and (none.ext_fields or {})["hasMsg"] == "false"
        info = await client.invoke(client.request(RequestCode.POLLING_INFO, encode_header(
            POLLING_INFO_REQUEST, {"consumerGroup": GROUP, "topic": "PopN", "queueId": 0})))
        assert info.code == ResponseCode.SUCCESS and (info.ext_fields or {})["pollingNum"] == "0"
        held = client.invoke(client.request(RequestCode.POP_MESSAGE, _pop_fields("PopN", poll=20_000)), 30)
        await send(client, "PopN", b"late", {}, queue_id=1)
        answer = await held
        assert answer.code == ResponseCode.SUCCESS and [r.body for r, _ in receipts(answer)] == [b"late"]

    run(with_broker(tmp_path / "store", scenario))


def test_request_mode_and_assignment(tmp_path: Path) -> None:
    async def scenario(_: EmbeddedRocketMQ, client: RemotingClient) -> None:
        await _fill(client, "PopA", 1)
        mode = {"topic": "PopA", "consumerGroup": GROUP, "mode": "POP", "popShareQueueNum": 0}
        answer = await client.invoke(client.request(RequestCode.SET_MESSAGE_REQUEST_MODE, {},
                                                    encode_body(SET_MESSAGE_REQUEST_MODE_BODY, mode)))
        assert answer.code == ResponseCode.SUCCESS
        query = {"topic": "PopA", "consumerGroup": GROUP, "clientId": "c1", "strategyName": "AVG",
                 "messageModel": "CLUSTERING"}
        assigned = await client.invoke(client.request(RequestCode.QUERY_ASSIGNMENT, {},
                                                      encode_body(QUERY_ASSIGNMENT_REQUEST_BODY, query)))
        body = decode_body(QUERY_ASSIGNMENT_RESPONSE_BODY, assigned.body or b"{}")
        assert [(a["messageQueue"]["queueId"], a["mode"]) for a in body["messageQueueAssignments"]] == [(-1,
                                                                                                         "POP")]

    run(with_broker(tmp_path / "store", scenario))


def test_a_4_9_8_broker_has_no_pop(tmp_path: Path) -> None:
    async def scenario(_: EmbeddedRocketMQ, client: RemotingClient) -> None:
        answer = await pop(client, "Pop4")
        assert answer.code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED and answer.version == 409
        assert pop_retry_topic("T", "G") == "%RETRY%G_T"

    run(with_broker(tmp_path / "store", scenario, wire_release="4.9.8"))



def test_a_restart_revives_what_was_not_revived_and_nothing_twice(tmp_path: Path) -> None:
    """RMQ-POP-REVIVE-OFFSET: the revive group's committed offset is the last checkpoint decided (Java's
    meaning, resumed at + 1). Group "done" has its checkpoint revived (and the revived messages acked)
    before a clean stop; group "open" popped with an invisible time that outlasts the stop, so its
    checkpoint is still a pending timer. After the restart "open" gets its messages back once, and "done"
    nothing again."""
    store, topic = tmp_path / "store", "PopRestart"
    revive = revive_topic("DefaultCluster")
    done, opened = "revivedBeforeStop", "pendingAtStop"

    async def before(_: EmbeddedRocketMQ, client: RemotingClient) -> None:
        await _fill(client, topic, 2)
        assert (await pop(client, topic, invisible=2000, group=done)).code == ResponseCode.SUCCESS
        back = receipts(await pop(client, topic, invisible=300_000, poll=15_000, group=done))
        assert sorted(r.body for r, _ in back) == [b"m0", b"m1"]
        for record, receipt in back:
            assert (await ack(client, topic, record, receipt, group=done)).code == ResponseCode.SUCCESS
        assert (await pop(client, topic, invisible=8000, group=opened)).code == ResponseCode.SUCCESS

    run(with_broker(store, before))
    committed = consumer_offsets_from_json(load_config(store / "config" / "consumerOffset.json"))
    revive_offsets = committed[(revive, REVIVE_GROUP)]
    assert sorted(revive_offsets.values()) == [0]  # the one checkpoint revived, at offset 0 of its queue

    async def after(_: EmbeddedRocketMQ, client: RemotingClient) -> None:
        back = receipts(await pop(client, topic, invisible=300_000, poll=20_000, group=opened))
        assert sorted(r.body for r, _ in back) == [b"m0", b"m1"]
        assert {r.reconsume_times for r, _ in back} == {1}
        again = await pop(client, topic, invisible=300_000, poll=3000, group=done)
        assert again.code == ResponseCode.POLLING_TIMEOUT, receipts(again)

    run(with_broker(store, after))
