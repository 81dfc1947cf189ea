"""The reference broker's store-backed handlers over TCP: what is sent comes back, with Java's answers."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rocketmq_spec.codec.batch import BatchBlock
from rocketmq_spec.codec.command import RemotingCommand, decode
from rocketmq_spec.codec.store import decode_records
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.client_requests import PRODUCER_GROUP, pull_fields
from rocketmq_spec.reference_broker.embedded import EmbeddedRocketMQ
from rocketmq_spec.spec import remarks
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.frame import SerializeType
from rocketmq_spec.spec.golden import CLIENT_FRAMES, JAVA_FRAMES
from rocketmq_spec.spec.message_id import decode_offset_msg_id
from rocketmq_spec.spec.release_rules import Rule, holds
from rocketmq_spec.spec.sysflag import TransactionType
from rocketmq_spec.spec.system_topics import SCHEDULE_TOPIC
from rocketmq_spec.spec.wire_release import wire_release
from tests.broker_support import fields, golden_command, host_port, run, started, store_of
from tests.messaging_support import pull, send, send_batch, with_broker

SEND_EXT = {"MSG_REGION": "DefaultRegion", "TRACE_ON": "true"}


def test_send_v1_v2_and_batch_then_pull_back_exactly(tmp_path: Path) -> None:
    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        sent = [
            (b"v1 body", {"TAGS": "TagA", "KEYS": "k1 k2", "color": "red", "WAIT": "true"}, False, 11),
            (b"\x00\xffbinary v2", {"TAGS": "TagB", "KEYS": "k3", "UNIQ_KEY": "AB" * 16}, True, 0),
        ]
        answers = [await send(client, "TopicM", body, props, v2=v2, flag=flag, born=1_700_000_000_000 + i)
                   for i, (body, props, v2, flag) in enumerate(sent)]
        blocks = [BatchBlock(7, b"batch-%d" % i, f"TAGS\x01TagC\x02KEYS\x01bk{i}") for i in range(3)]
        batch = await send_batch(client, "TopicM", blocks)
        for answer in [*answers, batch]:
            assert answer.code == ResponseCode.SUCCESS and answer.remark is None
            assert {k: fields(answer)[k] for k in SEND_EXT} == SEND_EXT
        assert [int(fields(a)["queueOffset"]) for a in [*answers, batch]] == [0, 1, 2]
        ids = [fields(a)["msgId"] for a in answers] + fields(batch)["msgId"].split(",")
        assert len(ids) == 5

        pulled = await pull(client, "TopicM", 0, 0)
        assert (pulled.code, pulled.remark) == (ResponseCode.SUCCESS, "FOUND")
        assert pulled.ext_fields == {"suggestWhichBrokerId": "0", "nextBeginOffset": "5", "minOffset": "0",
                                     "maxOffset": "5"}
        got = decode_records(pulled.body)
        assert [r.queue_offset for r in got] == [0, 1, 2, 3, 4]
        assert [r.body for r in got] == [b for b, *_ in sent] + [b.body for b in blocks]
        assert [r.flag for r in got] == [11, 0, 7, 7, 7]
        assert [r.tags for r in got] == ["TagA", "TagB", "TagC", "TagC", "TagC"]
        assert got[0].keys == ["k1", "k2"] and got[0].properties["color"] == "red"
        assert got[1].uniq_key == "AB" * 16
        assert [r.keys for r in got[2:]] == [["bk0"], ["bk1"], ["bk2"]]
        local_host, local_port = host_port(client._stream.local)
        for record, msg_id in zip(got, ids, strict=True):
            assert record.offset_msg_id == msg_id
            assert record.properties["CLUSTER"] == "DefaultCluster"
            assert (record.born_host.ip, record.born_host.port) == (local_host, local_port)
            assert str(record.store_host) == mq.broker_addr
        assert "WAIT" not in got[0].properties and "WAIT" not in got[1].properties
        assert [r.born_timestamp for r in got[:2]] == [1_700_000_000_000, 1_700_000_000_001]

        decoded = decode_offset_msg_id(ids[3])
        assert f"{decoded.host}:{decoded.port}" == mq.broker_addr
        view = await client.invoke(client.request(RequestCode.VIEW_MESSAGE_BY_ID,
                                                  {"offset": str(decoded.offset)}))
        assert view.code == ResponseCode.SUCCESS and view.body == got[3].encode()
        missing = await client.invoke(client.request(RequestCode.VIEW_MESSAGE_BY_ID, {"offset": "999999"}))
        assert (missing.code, missing.remark) == (ResponseCode.SYSTEM_ERROR,
                                                  "can not find message by the offset, 999999")

    run(with_broker(tmp_path / "store", scenario, wire_release="4.9.8"))  # 4.9.8's answers


def test_cpp_client_batch_flag_one_is_not_a_batch(tmp_path: Path) -> None:
    """The C++ 1.2 client sends its batches as SEND_MESSAGE with batch=1, which Java's Boolean.parseBoolean
    reads as false (RMQ-CMD-BOOLEAN): the broker stores the whole batch body as one message."""
    frame = CLIENT_FRAMES / "py-rocketmq-0.4.4" / "broker-all" / "0011_in_c1_code10.bin"

    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        request = decode(frame.read_bytes())
        response = await client.invoke(request)
        assert response.code == ResponseCode.SUCCESS
        assert len(fields(response)["msgId"].split(",")) == 1
        got = decode_records((await pull(client, "TopicTest", 2, 0)).body)
        assert [r.body for r in got] == [request.body]

    run(with_broker(tmp_path / "store", scenario))


def test_golden_send_answered_like_java(tmp_path: Path) -> None:
    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        for request_seq in _golden_send_requests():
            request = golden_command("json", request_seq)
            response = await client.invoke(request)
            expected = _golden_response(request_seq)
            assert (response.code, response.remark) == (expected.code, expected.remark)
            assert set(fields(response)) == set(fields(expected))
            assert response.serialize_type is request.serialize_type

    run(with_broker(tmp_path / "store", scenario))


def _golden_index() -> list[dict[str, Any]]:
    frames = json.loads((JAVA_FRAMES / "INDEX.json").read_text())["frames"]
    return [f for f in frames if f["session"] == "json"]


def _golden_send_requests() -> list[int]:
    seen: dict[str, int] = {}
    for frame in _golden_index():
        if not frame["isResponse"] and frame["codeName"] in ("SEND_MESSAGE", "SEND_MESSAGE_V2",
                                                               "SEND_BATCH_MESSAGE"):
            seen.setdefault(frame["codeName"], frame["seq"])
    return list(seen.values())


def _golden_response(request_seq: int) -> RemotingCommand:
    for frame in _golden_index():
        if frame["isResponse"] and frame.get("requestSeq") == request_seq:
            return golden_command("json", frame["seq"])
    raise LookupError(request_seq)


@pytest.mark.parametrize("release", ["4.9.8", "5.5.0"])
def test_send_checks_refuse_like_java(tmp_path: Path, release: str) -> None:
    invalid = holds(Rule.SEND_CHECK_INVALID_PARAMETER, wire_release(release).version)
    bad_code = ResponseCode.INVALID_PARAMETER if invalid else ResponseCode.SYSTEM_ERROR

    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        forbidden = await send(client, SCHEDULE_TOPIC, b"x", {})
        assert forbidden.code == ResponseCode.NO_PERMISSION
        assert forbidden.remark == "Sending message to topic[SCHEDULE_TOPIC_XXXX] is forbidden."
        assert forbidden.ext_fields == SEND_EXT
        illegal = await send(client, "bad topic", b"x", {})
        assert illegal.code == bad_code and "illegal characters" in (illegal.remark or "")
        missing = await send(client, "NoTemplate", b"x", {}, default_topic="NoSuchTopic")
        assert missing.code == ResponseCode.TOPIC_NOT_EXIST
        assert (missing.remark or "").startswith("topic[NoTemplate] not exist, apply first please!")
        created = await send(client, "Auto", b"x", {}, queue_id=-1)
        assert created.code == ResponseCode.SUCCESS and int(fields(created)["queueId"]) in range(4)
        auto = started(mq.broker).topics.get("Auto")
        assert auto is not None and auto.write_queue_nums == 4
        too_far = await send(client, "Auto", b"x", {}, queue_id=4)
        assert too_far.code == bad_code
        assert (too_far.remark or "").startswith("request queueId[4] is illegal, TopicConfig [topicName=Auto,"
                                                 " readQueueNums=4, writeQueueNums=4, perm=RW-")
        huge = await send(client, "Auto", b"x" * (4 * 1024 * 1024 + 1), {})
        assert huge.code == ResponseCode.MESSAGE_ILLEGAL

    run(with_broker(tmp_path / "store", scenario, wire_release=release))


def test_pull_statuses(tmp_path: Path) -> None:
    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        await send(client, "TopicP", b"a", {"TAGS": "A"})
        await send(client, "TopicP", b"b", {"TAGS": "B"})

        async def status(queue_id: int, offset: int, **options: Any) -> tuple[int, str | None, str | None]:
            answer = await pull(client, "TopicP", queue_id, offset, **options)
            return answer.code, answer.remark, (answer.ext_fields or {}).get("nextBeginOffset")

        assert await status(0, 2) == (ResponseCode.PULL_NOT_FOUND, "OFFSET_OVERFLOW_ONE", "2")
        assert await status(0, 9) == (ResponseCode.PULL_OFFSET_MOVED, "OFFSET_OVERFLOW_BADLY", "2")
        # Queue 1 is configured but never written: Java's findConsumeQueue makes it an empty queue, and
        # golden frame 305 is 4.9.8's answer to a pull of such a queue (a retry topic nothing reached).
        java = golden_command("json", 305)
        unwritten = await pull(client, "TopicP", 1, 0)
        assert (unwritten.code, unwritten.remark, unwritten.ext_fields) == (java.code, java.remark,
                                                                            java.ext_fields)
        assert await status(1, 3) == (ResponseCode.PULL_OFFSET_MOVED, "NO_MESSAGE_IN_QUEUE", "0")
        assert await status(0, 0, expression="C || D") == (ResponseCode.PULL_RETRY_IMMEDIATELY,
                                                           "NO_MATCHED_MESSAGE", "2")
        only_b = await pull(client, "TopicP", 0, 0, expression=" B ||  ")
        assert [r.body for r in decode_records(only_b.body)] == [b"b"]
        both = await pull(client, "TopicP", 0, 0, expression="A||B")
        assert [r.body for r in decode_records(both.body)] == [b"a", b"b"]
        one = await pull(client, "TopicP", 0, 0, max_nums=1)
        assert len(decode_records(one.body)) == 1 and fields(one)["nextBeginOffset"] == "1"

        unknown = await pull(client, "NoSuchTopic", 0, 0)
        assert unknown.code == ResponseCode.TOPIC_NOT_EXIST and unknown.ext_fields == {}
        bad_queue = await pull(client, "TopicP", 7, 0)
        assert bad_queue.code == ResponseCode.SYSTEM_ERROR
        assert (bad_queue.remark or "").startswith(
            "queueId[7] is illegal, topic:[TopicP] topicConfig.readQueueNums:[4]")
        no_heartbeat = await pull(client, "TopicP", 0, 0, expression=None)
        assert no_heartbeat.code == ResponseCode.SUBSCRIPTION_NOT_EXIST
        sql = await client.invoke(client.request(RequestCode.PULL_MESSAGE, {
            **pull_fields("TopicP", 0, 0), "expressionType": "SQL92", "subscription": "a > 1"}))
        assert (sql.code, sql.remark) == (ResponseCode.SYSTEM_ERROR,
                                          "The broker does not support consumer to filter message by SQL92")
        fast = await RemotingClient.connect(mq.broker_fast_addr)
        try:
            refused = await pull(fast, "TopicP", 0, 0)
        finally:
            await fast.close()
        assert (refused.code, refused.remark) == (ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
                                                  " request type 11 not supported")

    run(with_broker(tmp_path / "store", scenario, wire_release="4.9.8"))  # 4.9.8's answers


def test_long_poll_woken_by_matching_send_and_timing_out(tmp_path: Path) -> None:
    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        await send(client, "TopicL", b"first", {"TAGS": "A"})
        binary = await RemotingClient.connect(mq.broker_addr, SerializeType.ROCKETMQ)
        try:
            parked = asyncio.ensure_future(pull(binary, "TopicL", 0, 1, expression="B", suspend_ms=15_000,
                                                timeout=20))
            hold = started(started(mq.broker).hold)
            await _until(lambda: hold.parked_count == 1)
            await send(client, "TopicL", b"not for it", {"TAGS": "A"})
            await asyncio.sleep(0.05)
            assert not parked.done()
            await send(client, "TopicL", b"wanted", {"TAGS": "B"})
            woken = await asyncio.wait_for(parked, 5)
        finally:
            await binary.close()
        assert (woken.code, woken.remark) == (ResponseCode.SUCCESS, "FOUND")
        assert [r.body for r in decode_records(woken.body)] == [b"wanted"]
        assert woken.serialize_type is SerializeType.JSON
        assert hold.parked_count == 0

        timed_out = await pull(client, "TopicL", 0, 3, suspend_ms=300)
        assert (timed_out.code, timed_out.remark) == (ResponseCode.PULL_NOT_FOUND, "OFFSET_OVERFLOW_ONE")
        assert fields(timed_out)["nextBeginOffset"] == "3"

    run(with_broker(tmp_path / "store", scenario))


async def _until(condition: Callable[[], bool], attempts: int = 200) -> None:
    for _ in range(attempts):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition not reached")


def test_query_by_key_and_unique_key(tmp_path: Path) -> None:
    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        uniq = "C0A80001000018B4AAC2000000000001"
        await send(client, "TopicQ", b"one", {"KEYS": "order-1 order-2", "UNIQ_KEY": uniq})
        await send(client, "TopicQ", b"two", {"KEYS": "order-2"})

        async def query(key: str, unique: bool = False) -> RemotingCommand:
            header = {"topic": "TopicQ", "key": key, "maxNum": "64", "beginTimestamp": "0",
                      "endTimestamp": str(2**63 - 1), "_UNIQUE_KEY_QUERY": "true" if unique else "false"}
            return await client.invoke(client.request(RequestCode.QUERY_MESSAGE, header))

        by_key = await query("order-2")
        assert by_key.code == ResponseCode.SUCCESS
        assert sorted(r.body for r in decode_records(by_key.body)) == [b"one", b"two"]
        assert set(fields(by_key)) == {"indexLastUpdateTimestamp", "indexLastUpdatePhyoffset"}
        by_uniq = await query(uniq, unique=True)
        assert [r.body for r in decode_records(by_uniq.body)] == [b"one"]
        nothing = await query("order-9")
        assert (nothing.code, nothing.remark) == (ResponseCode.QUERY_NOT_FOUND,
                                                  remarks.QUERY_NOT_FOUND.template)

    run(with_broker(tmp_path / "store", scenario))


def test_offset_lookups_and_consumer_offsets(tmp_path: Path) -> None:
    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        for i in range(3):
            await send(client, "TopicO", b"m%d" % i, {})
            await asyncio.sleep(0.005)
        stored = decode_records((await pull(client, "TopicO", 0, 0)).body)

        async def ask(code: RequestCode, **extra: str) -> RemotingCommand:
            return await client.invoke(client.request(code, {"topic": "TopicO", "queueId": "0", **extra}))

        assert (await ask(RequestCode.GET_MAX_OFFSET)).ext_fields == {"offset": "3"}
        assert (await ask(RequestCode.GET_MIN_OFFSET)).ext_fields == {"offset": "0"}
        earliest = await ask(RequestCode.GET_EARLIEST_MSG_STORETIME)
        assert earliest.ext_fields == {"timestamp": str(stored[0].store_timestamp)}
        for record in stored:
            found = await ask(RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, timestamp=str(record.store_timestamp))
            offset = int(fields(found)["offset"])
            assert store_of(mq.broker).message_store_timestamp("TopicO", 0, offset) == record.store_timestamp
        unknown = await client.invoke(client.request(RequestCode.GET_MAX_OFFSET,
                                                     {"topic": "Nope", "queueId": "0"}))
        assert (unknown.code, unknown.ext_fields) == (ResponseCode.SUCCESS, {"offset": "0"})

        query = {"consumerGroup": "cg", "topic": "TopicO", "queueId": "0"}
        first = await client.invoke(client.request(RequestCode.QUERY_CONSUMER_OFFSET, query))
        assert first.ext_fields == {"offset": "0"}
        await pull(client, "TopicO", 0, 0, commit_offset=2)
        committed = await client.invoke(client.request(RequestCode.QUERY_CONSUMER_OFFSET, query))
        assert committed.ext_fields == {"offset": "2"}
        await client.invoke(client.request(RequestCode.UPDATE_CONSUMER_OFFSET,
                                           {**query, "commitOffset": "3"}))
        updated = await client.invoke(client.request(RequestCode.QUERY_CONSUMER_OFFSET, query))
        assert updated.ext_fields == {"offset": "3"}

    run(with_broker(tmp_path / "store", scenario))


def test_transaction_commit_rollback_and_unknown(tmp_path: Path) -> None:
    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        async def half(body: bytes) -> RemotingCommand:
            props = {"TRAN_MSG": "true", "PGROUP": PRODUCER_GROUP, "UNIQ_KEY": "AA" * 16}
            return await send(client, "TopicT", body, props, sys_flag=TransactionType.PREPARED)

        async def end(answer: RemotingCommand, decision: int, group: str = PRODUCER_GROUP,
                      **options: Any) -> RemotingCommand:
            offset = decode_offset_msg_id(fields(answer)["msgId"]).offset
            header = {"producerGroup": group, "tranStateTableOffset": fields(answer)["queueOffset"],
                      "commitLogOffset": str(offset), "commitOrRollback": str(decision), "msgId": "AA" * 16}
            return await client.invoke(client.request(RequestCode.END_TRANSACTION, header), **options)

        committed, rolled_back, unknown = await half(b"commit me"), await half(b"roll back"), await half(b"?")
        assert committed.code == ResponseCode.SUCCESS
        assert (await pull(client, "TopicT", 0, 0)).code == ResponseCode.PULL_NOT_FOUND
        wrong = await end(committed, TransactionType.COMMIT, group="other")
        assert (wrong.code, wrong.remark) == (ResponseCode.SYSTEM_ERROR,
                                              remarks.PRODUCER_GROUP_WRONG.template)
        ok = await end(committed, TransactionType.COMMIT)
        assert (ok.code, ok.remark) == (ResponseCode.SUCCESS, None)
        assert (await end(rolled_back, TransactionType.ROLLBACK)).code == ResponseCode.SUCCESS
        with pytest.raises(TimeoutError):
            await end(unknown, TransactionType.NOT_TYPE, timeout=0.3)
        delivered = decode_records((await pull(client, "TopicT", 0, 0)).body)
        assert [r.body for r in delivered] == [b"commit me"]
        assert delivered[0].transaction_type is TransactionType.COMMIT

    run(with_broker(tmp_path / "store", scenario))


@pytest.mark.parametrize("release", ["4.9.8", "5.5.0"])
def test_retry_topic_past_reconsume_limit_goes_to_dlq(tmp_path: Path, release: str) -> None:
    """The group's limit is 16: 4.9.8 dead-letters at 16 reconsumes, 5.x keeps that one and at 17."""
    past = int(holds(Rule.RETRY_SEND_DLQ_PAST_LIMIT, wire_release(release).version))

    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        retried = await send(client, "%RETRY%cg", b"again", {}, reconsume_times=15 + past)
        dead = await send(client, "%RETRY%cg", b"dead", {}, reconsume_times=16 + past)
        assert retried.code == dead.code == ResponseCode.SUCCESS
        assert [r.body for r in decode_records((await pull(client, "%RETRY%cg", 0, 0)).body)] == [b"again"]
        assert [r.body for r in decode_records((await pull(client, "%DLQ%cg", 0, 0)).body)] == [b"dead"]
        dlq = started(mq.broker).topics.get("%DLQ%cg")
        assert dlq is not None and dlq.write_queue_nums == 1

    run(with_broker(tmp_path / "store", scenario, wire_release=release))
