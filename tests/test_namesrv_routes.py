"""The name server's route table without sockets or clocks: expiry, slaves, data versions."""

from __future__ import annotations

from typing import Any

from rocketmq_spec.reference_broker.namesrv.routes import RegisterResult, RouteTable

TOPIC = {"T": {"topicName": "T", "perm": 6, "readQueueNums": 4, "writeQueueNums": 4, "topicSysFlag": 0}}


def _register(table: RouteTable, broker_id: int, addr: str, now: float, version: int = 1,
              topics: dict[str, dict[str, Any]] = TOPIC) -> RegisterResult:
    result = table.register(cluster="C", broker_addr=addr, broker_name="b", broker_id=broker_id,
                            ha_server_addr=f"{addr}-ha", data_version={"counter": version, "timestamp": 1},
                            topic_configs=topics, filter_servers=[], channel=addr, now=now)
    assert result is not None, f"{addr} refused"
    return result


def _route(table: RouteTable, topic: str) -> dict[str, Any]:
    route = table.route(topic)
    assert route is not None, f"no route for {topic}"
    return route


def test_expiry_drops_silent_brokers_only() -> None:
    table = RouteTable()
    _register(table, 0, "m:1", now=0.0)
    assert table.expire(now=120.0, timeout=120.0) == []
    assert table.expire(now=120.5, timeout=120.0) == ["m:1"]
    assert table.route("T") is None
    assert table.cluster_info() == {"brokerAddrTable": {}, "clusterAddrTable": {}}


def test_slave_learns_master_and_does_not_change_queue_data() -> None:
    table = RouteTable()
    assert _register(table, 0, "m:1", now=0.0).master_addr is None
    slave_topics = {"T": {**TOPIC["T"], "perm": 4}}
    result = _register(table, 1, "s:1", now=0.0, topics=slave_topics)
    assert (result.master_addr, result.ha_server_addr) == ("m:1", "m:1-ha")
    route = _route(table, "T")
    assert route["queueDatas"][0]["perm"] == 6
    assert route["brokerDatas"][0]["brokerAddrs"] == {0: "m:1", 1: "s:1"}


def test_queue_data_only_refreshed_when_data_version_changes() -> None:
    table = RouteTable()
    _register(table, 0, "m:1", now=0.0, version=1)
    changed = {"T": {**TOPIC["T"], "writeQueueNums": 8}}
    _register(table, 0, "m:1", now=1.0, version=1, topics=changed)
    assert _route(table, "T")["queueDatas"][0]["writeQueueNums"] == 4
    _register(table, 0, "m:1", now=2.0, version=2, topics=changed)
    assert _route(table, "T")["queueDatas"][0]["writeQueueNums"] == 8


def test_channel_close_removes_its_broker() -> None:
    table = RouteTable()
    _register(table, 0, "m:1", now=0.0)
    assert table.channel_closed("other") == []
    assert table.channel_closed("m:1") == ["m:1"]
    assert table.route("T") is None
