"""The transaction check-back: half messages nobody ended are checked with a live producer of their
group, ended by its answer, and moved to TRANS_CHECK_MAX_TIME_TOPIC after transactionCheckMax checks."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from rocketmq_spec.codec import fastjson
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.custom_header import decode_header
from rocketmq_spec.codec.store import decode_record, decode_records
from rocketmq_spec.reference_broker.broker.transactions import _op_offset
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.client_requests import PRODUCER_GROUP
from rocketmq_spec.reference_broker.embedded import EmbeddedRocketMQ
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.headers import CHECK_TRANSACTION_STATE_REQUEST
from rocketmq_spec.spec.message_id import decode_offset_msg_id
from rocketmq_spec.spec.properties import PropertyKey
from rocketmq_spec.spec.sysflag import TransactionType
from rocketmq_spec.spec.system_topics import (
    TRANS_CHECK_GROUP,
    TRANS_CHECK_MAX_TIME_TOPIC,
    TRANS_HALF_TOPIC,
    TRANS_OP_HALF_TOPIC,
)
from tests.broker_support import body, fields, run, started, store_of
from tests.messaging_support import pull, send, with_broker

FAST_CHECKS = {"transaction_time_out": 0, "transaction_check_interval": 150}
"""Every half message is due at once and the service runs several times a second."""
UNIQ = "C0A80001000018B4AAC2" + "0" * 12
WAIT_CHECK = 10.0


async def _producer(client: RemotingClient) -> None:
    body = fastjson.dumps({"clientID": "127.0.0.1@tx", "consumerDataSet": [],
                           "producerDataSet": [{"groupName": PRODUCER_GROUP}]}).encode()
    answer = await client.invoke(client.request(RequestCode.HEART_BEAT, None, body))
    assert answer.code == ResponseCode.SUCCESS


async def _half(client: RemotingClient, body: bytes, topic: str = "TopicTx", queue_id: int = 1) -> None:
    props = {"TRAN_MSG": "true", "PGROUP": PRODUCER_GROUP, "UNIQ_KEY": UNIQ, "TAGS": "t"}
    answer = await send(client, topic, body, props, queue_id=queue_id, sys_flag=TransactionType.PREPARED,
                        born=int(time.time() * 1000))
    assert answer.code == ResponseCode.SUCCESS


async def _next_check(client: RemotingClient) -> RemotingCommand:
    async with asyncio.timeout(WAIT_CHECK):
        while True:
            pushed = await client.pushed.get()
            if pushed.code == RequestCode.CHECK_TRANSACTION_STATE:
                return pushed


async def _answer(client: RemotingClient, check: RemotingCommand, decision: int) -> RemotingCommand:
    header = decode_header(CHECK_TRANSACTION_STATE_REQUEST, check.ext_fields)
    end = {"producerGroup": PRODUCER_GROUP, "tranStateTableOffset": str(header["tranStateTableOffset"]),
           "commitLogOffset": str(header["commitLogOffset"]), "commitOrRollback": str(decision),
           "fromTransactionCheck": "true", "msgId": header["msgId"], "transactionId": header["transactionId"]}
    return await client.invoke(client.request(RequestCode.END_TRANSACTION, end))


def test_unended_half_message_is_checked_back_and_committed(tmp_path: Path) -> None:
    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        await _producer(client)
        await _half(client, b"pay")
        check = await _next_check(client)
        assert check.is_oneway
        header = decode_header(CHECK_TRANSACTION_STATE_REQUEST, check.ext_fields)
        assert (header["msgId"], header["transactionId"]) == (UNIQ, UNIQ)
        renewed = store_of(mq.broker).read_record(header["commitLogOffset"])
        assert renewed is not None and renewed.topic == TRANS_HALF_TOPIC
        assert renewed.queue_offset == header["tranStateTableOffset"] == 1
        assert header["offsetMsgId"] == renewed.offset_msg_id
        shown = decode_record(body(check))
        assert (shown.topic, shown.queue_id, shown.body, shown.physical_offset) == (
            "TopicTx", 1, b"pay", header["commitLogOffset"])
        assert shown.properties[PropertyKey.TRANSACTION_CHECK_TIMES] == "1"
        assert renewed.properties[PropertyKey.TRANSACTION_CHECK_TIMES] == "1"
        ended = await _answer(client, check, TransactionType.COMMIT)
        assert ended.code == ResponseCode.SUCCESS
        delivered = decode_records((await pull(client, "TopicTx", 1, 0)).body)
        assert [(r.body, r.transaction_type) for r in delivered] == [(b"pay", TransactionType.COMMIT)]
        await asyncio.sleep(0.6)  # several more runs: an ended transaction is not checked again
        assert all(c.code != RequestCode.CHECK_TRANSACTION_STATE for c in _drain(client))
        offsets = started(mq.broker).offsets
        assert offsets.query(TRANS_CHECK_GROUP, TRANS_HALF_TOPIC, 0) == 2
        assert offsets.query(TRANS_CHECK_GROUP, TRANS_OP_HALF_TOPIC, 0) == 1

    run(with_broker(tmp_path / "store", scenario, **FAST_CHECKS))


def test_rollback_answer_delivers_nothing(tmp_path: Path) -> None:
    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        await _producer(client)
        await _half(client, b"cancel")
        assert (await _answer(client, await _next_check(client), TransactionType.ROLLBACK)).code == 0
        assert (await pull(client, "TopicTx", 1, 0)).code == ResponseCode.PULL_NOT_FOUND

    run(with_broker(tmp_path / "store", scenario, **FAST_CHECKS))


def test_unanswered_checks_stop_at_the_limit_and_move_the_message(tmp_path: Path) -> None:
    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        await _producer(client)
        await _half(client, b"lost")
        checks = [decode_record(body(await _next_check(client))) for _ in range(2)]
        counts = [check.properties[PropertyKey.TRANSACTION_CHECK_TIMES] for check in checks]
        assert counts == ["1", "2"]
        for _ in range(50):
            moved = await pull(client, TRANS_CHECK_MAX_TIME_TOPIC, 0, 0)
            if moved.code == ResponseCode.SUCCESS:
                break
            await asyncio.sleep(0.1)
        (record,) = decode_records(moved.body)
        assert (record.body, record.properties[PropertyKey.REAL_TOPIC]) == (b"lost", "TopicTx")
        assert record.properties[PropertyKey.TRANSACTION_CHECK_TIMES] == "2"
        await asyncio.sleep(0.6)
        assert all(c.code != RequestCode.CHECK_TRANSACTION_STATE for c in _drain(client))

    run(with_broker(tmp_path / "store", scenario, transaction_check_max=2, **FAST_CHECKS))


def test_young_half_message_waits_for_the_timeout(tmp_path: Path) -> None:
    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        await _producer(client)
        await _half(client, b"soon")
        await asyncio.sleep(0.6)
        assert _drain(client) == []
        assert started(mq.broker).offsets.query(TRANS_CHECK_GROUP, TRANS_HALF_TOPIC, 0) == -1

    run(with_broker(tmp_path / "store", scenario, transaction_time_out=60_000,
                    transaction_check_interval=150))


def test_immune_half_message_is_set_aside_and_its_end_honoured(tmp_path: Path) -> None:
    """CHECK_IMMUNITY_TIME_IN_SECONDS: a young message is written again with the offset of its first copy
    (and not checked); ending the first copy ends a set-aside one too. (Copies set aside in earlier runs
    go on being set aside until their immunity is over, as in Java.)"""
    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        await _producer(client)
        props = {"TRAN_MSG": "true", "PGROUP": PRODUCER_GROUP, "UNIQ_KEY": UNIQ,
                 PropertyKey.CHECK_IMMUNITY_TIME_IN_SECONDS: "60"}
        sent = await send(client, "TopicTx", b"later", props, queue_id=1,
                          sys_flag=TransactionType.PREPARED, born=int(time.time() * 1000))
        store = store_of(mq.broker)
        for _ in range(50):
            if store.max_offset(TRANS_HALF_TOPIC, 0) > 1:
                break
            await asyncio.sleep(0.05)
        aside = decode_records(store.get_messages(TRANS_HALF_TOPIC, 0, 1, 1).body)[0]
        assert aside.properties[PropertyKey.TRANSACTION_PREPARED_QUEUE_OFFSET] == "0"
        assert aside.properties[PropertyKey.WAIT] == "false"
        first = store.read_record(decode_offset_msg_id(fields(sent)["msgId"]).offset)
        assert first is not None
        end = {"producerGroup": PRODUCER_GROUP, "tranStateTableOffset": "0",
               "commitLogOffset": str(first.physical_offset),
               "commitOrRollback": str(TransactionType.COMMIT), "msgId": UNIQ}
        assert (await client.invoke(client.request(RequestCode.END_TRANSACTION, end))).code == 0
        await asyncio.sleep(0.6)
        assert all(c.code != RequestCode.CHECK_TRANSACTION_STATE for c in _drain(client))
        # a copy naming offset 0 met the op message that ended offset 0: that op message is done
        assert started(mq.broker).offsets.query(TRANS_CHECK_GROUP, TRANS_OP_HALF_TOPIC, 0) == 1

    run(with_broker(tmp_path / "store", scenario, **FAST_CHECKS))


def test_op_offset_advances_over_a_gap_free_run() -> None:
    assert _op_offset([3, 1, 2, 5], 1) == 4
    assert _op_offset([2], 1) == 1


def _drain(client: RemotingClient) -> list[RemotingCommand]:
    drained = []
    while not client.pushed.empty():
        drained.append(client.pushed.get_nowait())
    return drained
