"""The reference broker's non-store handlers over TCP, judged against Java 4.9.8's answers."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from rocketmq_spec.codec import fastjson
from rocketmq_spec.codec.store.configs import load_config
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.embedded import EmbeddedRocketMQ
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.system_topics import (
    DEFAULT_TOPIC,
    SCHEDULE_TOPIC,
    TIMER_TOPIC,
    TRANS_HALF_TOPIC,
    TRANS_OP_HALF_TOPIC,
)
from tests.broker_support import body, config_file, fields, golden_command, run, started

T = TypeVar("T")


async def _with_broker(scenario: Callable[[EmbeddedRocketMQ, RemotingClient], Awaitable[T]], tmp_path: Path,
                       wire_release: str | None = None) -> T:
    async with EmbeddedRocketMQ(tmp_path / "store", wire_release=wire_release) as mq:
        client = await RemotingClient.connect(mq.broker_addr)
        try:
            return await scenario(mq, client)
        finally:
            await client.close()


def _heartbeat(client_id: str, group: str, topic: str) -> bytes:
    return fastjson.dumps({
        "clientID": client_id,
        "consumerDataSet": [{
            "consumeFromWhere": "CONSUME_FROM_LAST_OFFSET", "consumeType": "CONSUME_PASSIVELY",
            "groupName": group, "messageModel": "CLUSTERING", "unitMode": False,
            "subscriptionDataSet": [{"classFilterMode": False, "codeSet": [], "expressionType": "TAG",
                                     "subString": "*", "subVersion": 1, "tagsSet": [], "topic": topic}]}],
        "producerDataSet": [{"groupName": "CLIENT_INNER_PRODUCER"}]}).encode()


def test_system_topics_registered_and_persisted(tmp_path: Path) -> None:
    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        namesrv = await RemotingClient.connect(mq.namesrv_addr)
        route = await namesrv.invoke(namesrv.request(RequestCode.GET_ROUTEINFO_BY_TOPIC,
                                                     {"topic": DEFAULT_TOPIC}))
        await namesrv.close()
        data = fastjson.loads(body(route))
        assert data["queueDatas"] == [{"brokerName": "broker-a", "perm": 7, "readQueueNums": 8,
                                       "topicSysFlag": 0, "writeQueueNums": 8}]
        assert data["brokerDatas"][0]["brokerAddrs"] == {"0": mq.broker_addr}
        table = load_config(config_file(mq.store_path, "topics.json"))["topicConfigTable"]
        golden = fastjson.loads(body(golden_command("json", 1)))["topicConfigSerializeWrapper"]
        assert set(table) == set(golden["topicConfigTable"])
        assert table[SCHEDULE_TOPIC] == golden["topicConfigTable"][SCHEDULE_TOPIC]
        assert table["DefaultCluster"]["perm"] == 7

    run(_with_broker(scenario, tmp_path, wire_release="4.9.8"))  # the golden registration is 4.9.8's


def test_5x_system_topics(tmp_path: Path) -> None:
    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        table = load_config(config_file(mq.store_path, "topics.json"))["topicConfigTable"]
        assert table["rmq_sys_REVIVE_LOG_DefaultCluster"]["readQueueNums"] == 8
        assert {TIMER_TOPIC, "rmq_sys_SYNC_BROKER_MEMBER_broker-a", TRANS_HALF_TOPIC,
                TRANS_OP_HALF_TOPIC} <= set(table)

    run(_with_broker(scenario, tmp_path))


def test_create_topic_like_java_and_route_follows(tmp_path: Path) -> None:
    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        request = golden_command("json", 337)
        request.opaque = 7
        response = await client.invoke(request)
        expected = golden_command("json", 340)
        assert (response.code, response.remark, response.ext_fields) == (
            expected.code, expected.remark, expected.ext_fields)
        created = started(mq.broker).topics.get("GoldenTopicA")
        assert created is not None and created.write_queue_nums == 4
        namesrv = await RemotingClient.connect(mq.namesrv_addr)
        try:
            for _ in range(100):
                route = await namesrv.invoke(namesrv.request(RequestCode.GET_ROUTEINFO_BY_TOPIC,
                                                             {"topic": "GoldenTopicA"}))
                if route.code == ResponseCode.SUCCESS:
                    break
                await asyncio.sleep(0.02)
        finally:
            await namesrv.close()
        assert route.code == ResponseCode.SUCCESS
        conflict = dict(fields(request), topic=SCHEDULE_TOPIC)
        refused = await client.invoke(client.request(RequestCode.UPDATE_AND_CREATE_TOPIC, conflict))
        assert refused.code == ResponseCode.SYSTEM_ERROR
        assert refused.remark == "The topic[SCHEDULE_TOPIC_XXXX] is conflict with system topic."
        deleted = await client.invoke(client.request(RequestCode.DELETE_TOPIC_IN_BROKER,
                                                     {"topic": "GoldenTopicA"}))
        assert deleted.code == ResponseCode.SUCCESS and started(mq.broker).topics.get("GoldenTopicA") is None
        everything = await client.invoke(client.request(RequestCode.GET_ALL_TOPIC_CONFIG))
        assert DEFAULT_TOPIC in fastjson.loads(body(everything))["topicConfigTable"]

    run(_with_broker(scenario, tmp_path, wire_release="4.9.8"))  # 4.9.8's answers


def test_heartbeat_notifies_group_and_lists_consumers(tmp_path: Path) -> None:
    async def scenario(mq: EmbeddedRocketMQ, first: RemotingClient) -> None:
        answer = await first.invoke(first.request(RequestCode.HEART_BEAT, None, _heartbeat("c1", "G", "T")))
        expected = golden_command("json", 253)
        assert (answer.code, answer.ext_fields, answer.remark) == (expected.code, expected.ext_fields, None)
        notified = await asyncio.wait_for(first.pushed.get(), 5)
        assert notified.code == RequestCode.NOTIFY_CONSUMER_IDS_CHANGED and notified.is_oneway
        assert notified.ext_fields == {"consumerGroup": "G"}
        retry = started(mq.broker).topics.get("%RETRY%G")
        assert retry is not None and retry.read_queue_nums == 1
        second = await RemotingClient.connect(mq.broker_addr)
        await second.invoke(second.request(RequestCode.HEART_BEAT, None, _heartbeat("c2", "G", "T")))
        assert (await asyncio.wait_for(first.pushed.get(), 5)).ext_fields == {"consumerGroup": "G"}
        by_group = {"consumerGroup": "G"}
        listed = await first.invoke(first.request(RequestCode.GET_CONSUMER_LIST_BY_GROUP, by_group))
        assert listed.ext_fields == {}
        assert sorted(fastjson.loads(body(listed))["consumerIdList"]) == ["c1", "c2"]
        await second.close()
        assert (await asyncio.wait_for(first.pushed.get(), 5)).ext_fields == {"consumerGroup": "G"}
        gone = await first.invoke(first.request(RequestCode.UNREGISTER_CLIENT,
                                                {"clientID": "c1", "consumerGroup": "G"}))
        assert (gone.code, gone.ext_fields) == (ResponseCode.SUCCESS, {})
        nobody = await first.invoke(first.request(RequestCode.GET_CONSUMER_LIST_BY_GROUP, by_group))
        assert (nobody.code, nobody.remark) == (ResponseCode.SYSTEM_ERROR, "no consumer for this group, G")

    run(_with_broker(scenario, tmp_path))


def test_consumer_offsets_query_update_persist(tmp_path: Path) -> None:
    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        where = {"consumerGroup": "G", "topic": "T", "queueId": "3"}
        first = await client.invoke(client.request(RequestCode.QUERY_CONSUMER_OFFSET, where))
        assert (first.code, first.ext_fields) == (ResponseCode.SUCCESS, {"offset": "0"})
        await client.send(client.request(RequestCode.UPDATE_CONSUMER_OFFSET, {**where, "commitOffset": "26"},
                                         oneway=True))
        updated = await client.invoke(client.request(RequestCode.UPDATE_CONSUMER_OFFSET,
                                                     {**where, "queueId": "1", "commitOffset": "7"}))
        assert (updated.code, updated.ext_fields) == (ResponseCode.SUCCESS, {})
        assert client.pushed.empty()
        now = await client.invoke(client.request(RequestCode.QUERY_CONSUMER_OFFSET, where))
        assert now.ext_fields == {"offset": "26"}

    run(_with_broker(scenario, tmp_path, wire_release="4.9.8"))  # 4.9.8's answers
    text = config_file(tmp_path / "store", "consumerOffset.json").read_text()
    assert "\"T@G\":{3:26,1:7}" in text.replace("\n", "").replace("\t", "")


def test_lock_batch_lease(tmp_path: Path) -> None:
    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        queues = [{"brokerName": "broker-a", "queueId": q, "topic": "T"} for q in (0, 1)]

        def lock_set(client_id: str, mqs: list[dict[str, Any]]) -> bytes:
            return fastjson.dumps({"clientId": client_id, "consumerGroup": "G", "mqSet": mqs}).encode()

        locked = await client.invoke(client.request(RequestCode.LOCK_BATCH_MQ, None, lock_set("a", queues)))
        assert fastjson.loads(body(locked)) == {"lockOKMQSet": queues}
        other = await client.invoke(client.request(RequestCode.LOCK_BATCH_MQ, None, lock_set("b", queues)))
        assert fastjson.loads(body(other)) == {"lockOKMQSet": []}
        await client.invoke(client.request(RequestCode.UNLOCK_BATCH_MQ, None, lock_set("a", queues[:1])))
        after = await client.invoke(client.request(RequestCode.LOCK_BATCH_MQ, None, lock_set("b", queues)))
        assert fastjson.loads(body(after)) == {"lockOKMQSet": queues[:1]}

    run(_with_broker(scenario, tmp_path))


def test_fast_port_does_not_serve_pull(tmp_path: Path) -> None:
    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        fast = await RemotingClient.connect(mq.broker_fast_addr)
        try:
            pull = await fast.invoke(fast.request(RequestCode.PULL_MESSAGE, {"topic": "T"}))
            assert (pull.code, pull.remark) == (ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
                                                " request type 11 not supported")
            beat = await fast.invoke(fast.request(RequestCode.HEART_BEAT, None, _heartbeat("c", "G", "T")))
            assert beat.code == ResponseCode.SUCCESS
        finally:
            await fast.close()

    run(_with_broker(scenario, tmp_path))


def test_unregister_broker_on_stop(tmp_path: Path) -> None:
    async def scenario(mq: EmbeddedRocketMQ, client: RemotingClient) -> None:
        await started(mq.broker).stop()
        namesrv = await RemotingClient.connect(mq.namesrv_addr)
        cluster = await namesrv.invoke(namesrv.request(RequestCode.GET_BROKER_CLUSTER_INFO))
        await namesrv.close()
        assert fastjson.loads(body(cluster)) == {"brokerAddrTable": {}, "clusterAddrTable": {}}
        mq.broker = None

    run(_with_broker(scenario, tmp_path))
