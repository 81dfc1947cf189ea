"""The reference name server over TCP, judged against what Java's 4.9.8 name server answered."""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from rocketmq_spec.codec import fastjson
from rocketmq_spec.codec.command import RemotingCommand, encode
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.config import NamesrvConfig
from rocketmq_spec.reference_broker.namesrv.server import NameServer
from rocketmq_spec.spec import remarks
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.frame import SerializeType
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC, SCHEDULE_TOPIC
from tests.broker_support import body, fields, golden_command, host_port, run

T = TypeVar("T")


async def _with_namesrv(scenario: Callable[[NameServer, RemotingClient], Awaitable[T]],
                        serialize_type: SerializeType = SerializeType.JSON,
                        config: NamesrvConfig | None = None) -> T:
    namesrv = NameServer(config or NamesrvConfig(listen_port=0, kv_config_path=None))
    await namesrv.start()
    client = await RemotingClient.connect(namesrv.addr, serialize_type)
    try:
        return await scenario(namesrv, client)
    finally:
        await client.close()
        await namesrv.stop()


def _replay(session: str, seq: int, opaque: int = 0) -> RemotingCommand:
    request = golden_command(session, seq)
    request.opaque = opaque
    return request


def test_register_then_route_and_cluster_info_match_java_bytes() -> None:
    async def scenario(namesrv: NameServer, client: RemotingClient) -> None:
        registered = await client.invoke(_replay("json", 1, 10))
        expected = golden_command("json", 2)
        assert (registered.code, registered.ext_fields, registered.body, registered.remark) == (
            expected.code, expected.ext_fields, expected.body, expected.remark)
        assert registered.opaque == 10 and registered.is_response
        route = await client.invoke(_replay("json", 4, 11))
        assert route.code == ResponseCode.SUCCESS
        assert route.body == golden_command("json", 5).body
        assert route.ext_fields is None
        cluster = await client.invoke(_replay("json", 3, 12))
        assert cluster.body == golden_command("json", 6).body

    run(_with_namesrv(scenario))


def test_rocketmq_serialization_is_echoed() -> None:
    async def scenario(namesrv: NameServer, client: RemotingClient) -> None:
        registered = await client.invoke(_replay("rocketmq", 1, 3))
        assert registered.serialize_type is SerializeType.ROCKETMQ
        assert registered.code == ResponseCode.SUCCESS
        cluster = await client.invoke(_replay("rocketmq", 4, 4))
        assert cluster.serialize_type is SerializeType.ROCKETMQ
        assert cluster.body == golden_command("rocketmq", 5).body

    run(_with_namesrv(scenario, SerializeType.ROCKETMQ))


def test_unknown_topic_gets_java_remark() -> None:
    async def scenario(namesrv: NameServer, client: RemotingClient) -> None:
        response = await client.invoke(_replay("json", 11, 5))
        expected = golden_command("json", 12)
        assert (response.code, response.remark) == (expected.code, expected.remark)
        assert response.code == ResponseCode.TOPIC_NOT_EXIST

    # the golden remark is 4.9.8's: its FAQ link is the one releases before 5.1.0 give (RMQ-ERR-FAQ-URL)
    legacy = NamesrvConfig(listen_port=0, kv_config_path=None, wire_release="4.9.8")
    run(_with_namesrv(scenario, config=legacy))


def test_old_clients_get_unquoted_integer_keys() -> None:
    async def scenario(namesrv: NameServer, client: RemotingClient) -> None:
        await client.invoke(_replay("json", 1, 1))
        old = client.request(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": DEFAULT_TOPIC})
        old.version = 400
        answer = body(await client.invoke(old))
        assert b'"brokerAddrs":{0:"127.0.0.2:10911"}' in answer
        asked = client.request(RequestCode.GET_ROUTEINFO_BY_TOPIC,
                               {"topic": DEFAULT_TOPIC, "acceptStandardJsonOnly": "true"})
        asked.version = 400
        assert b'"brokerAddrs":{"0":"127.0.0.2:10911"}' in body(await client.invoke(asked))

    run(_with_namesrv(scenario))


def test_unregister_removes_routes() -> None:
    async def scenario(namesrv: NameServer, client: RemotingClient) -> None:
        await client.invoke(_replay("json", 1, 1))
        gone = await client.invoke(_replay("json", 723, 2))
        assert gone.code == ResponseCode.SUCCESS and gone.ext_fields is None
        route = await client.invoke(_replay("json", 4, 3))
        assert route.code == ResponseCode.TOPIC_NOT_EXIST
        cluster = fastjson.loads(body(await client.invoke(_replay("json", 3, 4))))
        assert cluster == {"brokerAddrTable": {}, "clusterAddrTable": {}}

    run(_with_namesrv(scenario))


def test_bad_crc_is_refused() -> None:
    async def scenario(namesrv: NameServer, client: RemotingClient) -> None:
        request = _replay("json", 1, 1)
        request.ext_fields = {**fields(request), "bodyCrc32": "12345"}
        response = await client.invoke(request)
        assert (response.code, response.remark) == (ResponseCode.SYSTEM_ERROR,
                                                    remarks.REGISTER_CRC_MISMATCH.template)

    run(_with_namesrv(scenario))


def test_kv_config_round_trip() -> None:
    async def scenario(namesrv: NameServer, client: RemotingClient) -> None:
        key = {"namespace": "ORDER_TOPIC_CONFIG", "key": "T"}
        missing = await client.invoke(client.request(RequestCode.GET_KV_CONFIG, key))
        assert missing.code == ResponseCode.QUERY_NOT_FOUND
        assert missing.remark == "No config item, Namespace: ORDER_TOPIC_CONFIG Key: T"
        put = await client.invoke(client.request(RequestCode.PUT_KV_CONFIG, {**key, "value": "broker-a:4"}))
        assert put.code == ResponseCode.SUCCESS
        got = await client.invoke(client.request(RequestCode.GET_KV_CONFIG, key))
        assert got.ext_fields == {"value": "broker-a:4"}
        listed = await client.invoke(client.request(RequestCode.GET_KVLIST_BY_NAMESPACE,
                                                    {"namespace": "ORDER_TOPIC_CONFIG"}))
        assert fastjson.loads(body(listed)) == {"table": {"T": "broker-a:4"}}
        registered = await client.invoke(_replay("json", 1, 99))
        assert fastjson.loads(body(registered)) == {"table": {"T": "broker-a:4"}}
        await client.invoke(client.request(RequestCode.DELETE_KV_CONFIG, key))
        again = await client.invoke(client.request(RequestCode.GET_KV_CONFIG, key))
        assert again.code == ResponseCode.QUERY_NOT_FOUND
        # as 4.9.8 answers: an emptied namespace still exists, one never created does not
        emptied = await client.invoke(client.request(RequestCode.GET_KVLIST_BY_NAMESPACE,
                                                     {"namespace": "ORDER_TOPIC_CONFIG"}))
        assert (emptied.code, emptied.body) == (ResponseCode.SUCCESS, b'{"table":{}}')
        never = await client.invoke(client.request(RequestCode.GET_KVLIST_BY_NAMESPACE,
                                                   {"namespace": "never"}))
        assert (never.code, never.remark) == (ResponseCode.QUERY_NOT_FOUND,
                                              "No config item, Namespace: never")

    run(_with_namesrv(scenario))


def test_kv_config_survives_a_restart(tmp_path: Path) -> None:
    """PUT_KV_CONFIG and DELETE_KV_CONFIG are written to kvConfigPath at once, in the one-line
    ``{"configTable":...}`` layout of KVConfigManager, and a name server started on the file answers them."""
    path = tmp_path / "namesrv" / "kvConfig.json"
    config = NamesrvConfig(listen_port=0, kv_config_path=str(path))

    async def first(namesrv: NameServer, client: RemotingClient) -> None:
        for namespace, key, value in (("ORDER_TOPIC_CONFIG", "T", "broker-a:4"), ("NS", "gone", "x"),
                                      ("NS", "kept", "y")):
            request = client.request(RequestCode.PUT_KV_CONFIG, {"namespace": namespace, "key": key,
                                                                 "value": value})
            assert (await client.invoke(request)).code == ResponseCode.SUCCESS
        await client.invoke(client.request(RequestCode.DELETE_KV_CONFIG, {"namespace": "NS", "key": "gone"}))

    async def second(namesrv: NameServer, client: RemotingClient) -> None:
        got = await client.invoke(client.request(RequestCode.GET_KV_CONFIG, {"namespace": "NS",
                                                                                 "key": "kept"}))
        assert got.ext_fields == {"value": "y"}
        gone = await client.invoke(client.request(RequestCode.GET_KV_CONFIG, {"namespace": "NS",
                                                                                  "key": "gone"}))
        assert gone.code == ResponseCode.QUERY_NOT_FOUND
        registered = await client.invoke(_replay("json", 1, 99))
        assert fastjson.loads(body(registered)) == {"table": {"T": "broker-a:4"}}

    run(_with_namesrv(first, config=config))
    assert "\n" not in path.read_text()
    assert fastjson.loads(path.read_bytes()) == {"configTable": {"ORDER_TOPIC_CONFIG": {"T": "broker-a:4"},
                                                                 "NS": {"kept": "y"}}}
    assert (tmp_path / "namesrv" / "kvConfig.json.bak").exists()
    run(_with_namesrv(second, config=config))


def test_unreadable_kv_config_file_starts_empty(tmp_path: Path) -> None:
    path = tmp_path / "kvConfig.json"
    path.write_text("not json")
    assert NameServer(NamesrvConfig(listen_port=0, kv_config_path=str(path))).kv.table == {}


def test_topic_list_delete_and_wipe_write_perm() -> None:
    async def scenario(namesrv: NameServer, client: RemotingClient) -> None:
        await client.invoke(_replay("json", 1, 1))
        listed = fastjson.loads(body(await client.invoke(
            client.request(RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER))))
        assert DEFAULT_TOPIC in listed["topicList"] and SCHEDULE_TOPIC in listed["topicList"]
        wiped = await client.invoke(client.request(RequestCode.WIPE_WRITE_PERM_OF_BROKER,
                                                   {"brokerName": "broker-a"}))
        assert wiped.ext_fields == {"wipeTopicCount": str(len(listed["topicList"]))}
        route = fastjson.loads(body(await client.invoke(_replay("json", 4, 5))))
        assert route["queueDatas"][0]["perm"] == 5
        await client.invoke(client.request(RequestCode.DELETE_TOPIC_IN_NAMESRV, {"topic": DEFAULT_TOPIC}))
        assert (await client.invoke(_replay("json", 4, 6))).code == ResponseCode.TOPIC_NOT_EXIST

    run(_with_namesrv(scenario))


def test_query_data_version() -> None:
    async def scenario(namesrv: NameServer, client: RemotingClient) -> None:
        register = _replay("json", 1, 1)
        await client.invoke(register)
        names = ("brokerName", "brokerAddr", "clusterName", "brokerId")
        identity = {k: fields(register)[k] for k in names}
        version = fastjson.loads(body(register))["topicConfigSerializeWrapper"]["dataVersion"]
        same = await client.invoke(client.request(RequestCode.QUERY_DATA_VERSION, identity,
                                                  fastjson.dumps(version).encode()))
        assert same.ext_fields == {"changed": "false"}
        assert fastjson.loads(body(same)) == version
        newer = {**version, "counter": version["counter"] + 1}
        changed = await client.invoke(client.request(RequestCode.QUERY_DATA_VERSION, identity,
                                                     fastjson.dumps(newer).encode()))
        assert changed.ext_fields == {"changed": "true"}

    run(_with_namesrv(scenario))


def test_unsupported_code_missing_field_and_oneway() -> None:
    async def scenario(namesrv: NameServer, client: RemotingClient) -> None:
        unsupported = await client.invoke(client.request(RequestCode.PULL_MESSAGE))
        assert unsupported.code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED
        assert unsupported.remark == " request type 11 not supported"
        unknown = await client.invoke(client.request(4242))
        assert unknown.remark == " request type 4242 not supported"
        missing = client.request(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"acceptStandardJsonOnly": "true"})
        answer = await client.invoke(missing)
        assert answer.code == ResponseCode.SYSTEM_ERROR and answer.opaque == missing.opaque
        assert "topic" in (answer.remark or "")
        # A oneway request is processed but never answered: the next answer is for the next request.
        put = {"namespace": "n", "key": "k", "value": "v"}
        await client.send(client.request(RequestCode.PUT_KV_CONFIG, put, oneway=True))
        got = await client.invoke(client.request(RequestCode.GET_KV_CONFIG, {"namespace": "n", "key": "k"}))
        assert got.ext_fields == {"value": "v"}
        assert client.pushed.empty()

    run(_with_namesrv(scenario))


def test_malformed_frame_closes_only_that_connection() -> None:
    async def scenario(namesrv: NameServer, client: RemotingClient) -> None:
        reader, writer = await asyncio.open_connection(*host_port(namesrv.addr))
        # 12 bytes: a 5.x server decodes nothing before 12 have come (RMQ-FRAME-PROXY-PREAMBLE)
        writer.write(struct.pack(">i", 2) + b"\x00" * 8)
        await writer.drain()
        assert await asyncio.wait_for(reader.read(), 5) == b""
        writer.close()
        bad_type = bytearray(encode(client.request(RequestCode.GET_BROKER_CLUSTER_INFO)))
        bad_type[4] = 7
        reader, writer = await asyncio.open_connection(*host_port(namesrv.addr))
        writer.write(bytes(bad_type))
        await writer.drain()
        assert await asyncio.wait_for(reader.read(), 5) == b""
        writer.close()
        still = await client.invoke(client.request(RequestCode.GET_BROKER_CLUSTER_INFO))
        assert still.code == ResponseCode.SUCCESS

    run(_with_namesrv(scenario))


def test_broker_removed_when_its_connection_closes() -> None:
    async def scenario(namesrv: NameServer, client: RemotingClient) -> None:
        broker_side = await RemotingClient.connect(namesrv.addr)
        await broker_side.invoke(_replay("json", 1, 1))
        assert (await client.invoke(_replay("json", 4, 2))).code == ResponseCode.SUCCESS
        await broker_side.close()
        for _ in range(100):
            if not namesrv.routes.brokers:
                break
            await asyncio.sleep(0.02)
        assert (await client.invoke(_replay("json", 4, 3))).code == ResponseCode.TOPIC_NOT_EXIST

    run(_with_namesrv(scenario))
