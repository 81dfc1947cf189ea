"""Name server: registrations the suite sends itself, and what routes and cluster info then say.

Each case registers a broker of its own (unique cluster, broker and topic names) on a port nothing
listens on, so cases running in parallel, and the target's real brokers, never see each other's data.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass, replace
from typing import Any

import pytest

from rocketmq_spec.codec.bodies import encode_register_broker_body
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.custom_header import decode_header, encode_header
from rocketmq_spec.codec.fastjson import loads as fastjson_loads
from rocketmq_spec.conformance.case import Row, case, table, waits_on_target
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.target import Server
from rocketmq_spec.conformance.wire import Connection, Wire
from rocketmq_spec.spec import remarks
from rocketmq_spec.spec.behaviour import BROKER_EXPIRY_MS, BROKER_SCAN_INTERVAL_MS
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.hashing import masked_crc32
from rocketmq_spec.spec.headers import (
    QUERY_DATA_VERSION_REQUEST,
    QUERY_DATA_VERSION_RESPONSE,
    REGISTER_BROKER_REQUEST,
    UNREGISTER_BROKER_REQUEST,
)
from rocketmq_spec.spec.release_rules import REGISTER_FAILED_REMARK, Rule, holds
from rocketmq_spec.spec.sysflag import PERM_READ_WRITE
from rocketmq_spec.spec.version import MQVersion

from .support import eventually, expect_code, expect_success, unique

QUEUES = 4
UNUSED_PORT = 1
"""Port of the fake brokers' addresses: nothing listens there, the name server only stores it."""


def _fake_addr() -> str:
    """A loopback address of its own: name servers key broker liveness by address, so parallel cases
    sharing one address would drop each other's brokers."""
    a, b, c = secrets.token_bytes(3)
    return f"127.{a}.{b}.{max(c, 1)}:{UNUSED_PORT}"


@dataclass(frozen=True)
class FakeBroker:
    cluster: str
    name: str
    topic: str
    addr: str
    topic_count: int = 2
    """Topics the registration body holds (at most two): see :attr:`topics`."""

    @classmethod
    def fresh(cls) -> FakeBroker:
        return cls(unique("cluster"), unique("broker"), unique("topic"), _fake_addr())

    @property
    def topics(self) -> tuple[str, ...]:
        """The topic the cases look at and a second one: 5.x refuses a first registration holding exactly
        one topic (RMQ-NS-REGISTER-FIRST), and two are valid for every release."""
        return (self.topic, f"{self.topic}_second")[:self.topic_count]

    def body(self) -> bytes:
        """The body a 4.9.x broker sends: its topic configs and a dataVersion of timestamp and counter."""
        configs = {name: {"order": False, "perm": int(PERM_READ_WRITE), "readQueueNums": QUEUES,
                          "topicFilterType": "SINGLE_TAG", "topicName": name, "topicSysFlag": 0,
                          "writeQueueNums": QUEUES} for name in self.topics}
        return json.dumps({"filterServerList": [], "topicConfigSerializeWrapper": {
            "dataVersion": {"counter": 1, "timestamp": int(time.time() * 1000)},
            "topicConfigTable": configs}}).encode()

    @property
    def ha_addr(self) -> str:
        """Its HA address: the broker's host, listenPort + 1 (a slave without haMasterAddress follows it)."""
        host, _, port = self.addr.rpartition(":")
        return f"{host}:{int(port) + 1}"

    def identity(self, broker_id: int = 0) -> dict[str, Any]:
        return {"brokerName": self.name, "brokerAddr": self.addr, "clusterName": self.cluster,
                "brokerId": broker_id}

    def register(self, connection: Connection, *, broker_id: int = 0, crc: int | None = None,
                 oneway: bool = False, compressed: bool = False) -> RemotingCommand:
        """``compressed``: the zlib form a broker sends with compressedRegister."""
        body = self.body()
        if compressed:
            body = encode_register_broker_body(json.loads(body), compressed=True)
        fields = encode_header(REGISTER_BROKER_REQUEST, {
            **self.identity(broker_id), "haServerAddr": self.ha_addr, "compressed": compressed,
            "bodyCrc32": masked_crc32(body) if crc is None else crc})
        return connection.command(RequestCode.REGISTER_BROKER, fields, body, oneway=oneway)

    def unregister(self, connection: Connection) -> RemotingCommand:
        return connection.command(RequestCode.UNREGISTER_BROKER,
                                  encode_header(UNREGISTER_BROKER_REQUEST, self.identity()))


def _route(connection: Connection, topic: str) -> RemotingCommand:
    return connection.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": topic})


def _cluster_info(connection: Connection) -> dict[str, Any]:
    response = connection.call(RequestCode.GET_BROKER_CLUSTER_INFO)
    return fastjson_loads(response.body or b"{}")


def _registered(check: Check, namesrv: Server, wire: Wire) -> tuple[FakeBroker, Connection]:
    """A broker registered the way 4.9.x registers, as the step a case about routes, cluster info or
    expiry needs: a refused registration is charged to RMQ-NS-REGISTER, not to the case's clause, whose
    own behaviour was then not seen."""
    broker = FakeBroker.fresh()
    connection = wire.connect(namesrv.endpoint)
    expect_success(check, "REGISTER_BROKER", connection.exchange(broker.register(connection)),
                   clause="RMQ-NS-REGISTER")
    return broker, connection


@case("RMQ-NS-REGISTER", "A registered master's topic is routed to it with the registered queues.")
def test_registration_routes_topic(namesrv: Server, wire: Wire, check: Check) -> None:
    broker, connection = _registered(check, namesrv, wire)
    response = expect_success(check, "route", _route(connection, broker.topic))
    route = fastjson_loads(response.body or b"{}")
    queues = [q for q in route.get("queueDatas", []) if q.get("brokerName") == broker.name]
    check.equal("queue data of the broker", [(QUEUES, QUEUES, int(PERM_READ_WRITE))],
                [(q.get("readQueueNums"), q.get("writeQueueNums"), q.get("perm")) for q in queues])
    addrs = [b.get("brokerAddrs") for b in route.get("brokerDatas", []) if b.get("brokerName") == broker.name]
    check.equal("broker addresses", [{"0": broker.addr}], [{str(k): v for k, v in a.items()} for a in addrs])


@case("RMQ-NS-REGISTER", "A 4.9.x broker's first registration, carrying all its topics (two here) in the "
      "body it sends — no static-topic mapping fields, topic configs without attributes, a dataVersion of "
      "timestamp and counter only — registers it and routes each of its topics.")
def test_first_registration_of_a_4x_broker(namesrv: Server, wire: Wire, check: Check) -> None:
    broker = FakeBroker.fresh()
    connection = wire.connect(namesrv.endpoint)
    expect_success(check, "REGISTER_BROKER with two topics", connection.exchange(broker.register(connection)))
    for topic in broker.topics:
        response = expect_success(check, f"route of {topic}", _route(connection, topic))
        route = fastjson_loads(response.body or b"{}")
        check.equal(f"brokers routed for {topic}", [broker.name],
                    [data.get("brokerName") for data in route.get("brokerDatas", [])])


@table("topic_count", [
    Row("one-topic", "RMQ-NS-REGISTER-FIRST", "From 5.0.0 a broker's first REGISTER_BROKER holding exactly "
        "one topic is refused with 1 \"register broker failed\" and routes nothing (4.x accepts it).", 1),
    Row("two-topics", "RMQ-NS-REGISTER-FIRST", "A broker's first REGISTER_BROKER holding two topics is "
        "accepted by every release and routes both.", 2),
])
def test_first_registration_topic_count(topic_count: int, namesrv: Server, wire: Wire, check: Check) -> None:
    broker = replace(FakeBroker.fresh(), topic_count=topic_count)
    connection = wire.connect(namesrv.endpoint)
    answer = connection.exchange(broker.register(connection))
    refused = topic_count == 1 and holds(Rule.FIRST_REGISTRATION_NOT_SINGLE_TOPIC, answer.version)
    if refused:
        expect_code(check, "first registration with one topic", answer, ResponseCode.SYSTEM_ERROR)
        check.remark("remark", REGISTER_FAILED_REMARK, answer.remark)
    else:
        expect_success(check, f"first registration with {topic_count} topics", answer)
    wanted = ResponseCode.TOPIC_NOT_EXIST if refused else ResponseCode.SUCCESS
    check.equal("routes", {topic: wanted for topic in broker.topics},
                {topic: _route(connection, topic).code for topic in broker.topics})


@case("RMQ-NS-REGISTER", "REGISTER_BROKER is answered with the KV table of namespace ORDER_TOPIC_CONFIG "
      "as body, which holds a pair put there just before.")
def test_registration_answers_order_topics(namesrv: Server, wire: Wire, check: Check) -> None:
    broker, connection = FakeBroker.fresh(), wire.connect(namesrv.endpoint)
    key = {"namespace": "ORDER_TOPIC_CONFIG", "key": broker.topic}
    expect_success(check, "PUT_KV_CONFIG", connection.call(RequestCode.PUT_KV_CONFIG,
                                                           {**key, "value": f"{broker.name}:{QUEUES}"}))
    try:
        answer = expect_success(check, "REGISTER_BROKER", connection.exchange(broker.register(connection)))
        table = fastjson_loads(answer.body or b"{}").get("table") or {}
        check.equal("the pair in the answer's table", f"{broker.name}:{QUEUES}", table.get(broker.topic))
    finally:
        connection.call(RequestCode.DELETE_KV_CONFIG, key)


@case("RMQ-NS-REGISTER", "A registered broker is listed in cluster info under its cluster.")
def test_registration_in_cluster_info(namesrv: Server, wire: Wire, check: Check) -> None:
    broker, connection = _registered(check, namesrv, wire)
    info = _cluster_info(connection)
    check.equal("cluster members", [broker.name], info.get("clusterAddrTable", {}).get(broker.cluster))
    check.that("broker table entry", broker.name in info.get("brokerAddrTable", {}),
               expected=broker.name, actual=sorted(info.get("brokerAddrTable", {}))[:5])


@case("RMQ-NS-CLUSTER-INFO", "Cluster info lists a registered broker field by field: clusterAddrTable maps "
      "its cluster to its name, brokerAddrTable its name to its broker data (cluster, brokerAddrs).")
def test_cluster_info_fields(namesrv: Server, wire: Wire, check: Check) -> None:
    broker, connection = _registered(check, namesrv, wire)
    info = _cluster_info(connection)
    check.equal("clusterAddrTable entry", [broker.name], info.get("clusterAddrTable", {}).get(broker.cluster))
    data = info.get("brokerAddrTable", {}).get(broker.name) or {}
    check.equal("brokerAddrTable entry", {"brokerName": broker.name, "cluster": broker.cluster,
                                          "brokerAddrs": {"0": broker.addr}},
                {"brokerName": data.get("brokerName"), "cluster": data.get("cluster"),
                 "brokerAddrs": {str(k): v for k, v in (data.get("brokerAddrs") or {}).items()}})


ROUTE_KEYS = {"brokerDatas", "queueDatas"}
QUEUE_KEYS = {"brokerName", "perm", "readQueueNums", "writeQueueNums", "topicSysFlag"}
BROKER_KEYS = {"brokerName", "cluster", "brokerAddrs"}


@case("RMQ-NS-ROUTE-SHAPE", "Route data has brokerDatas and queueDatas with their documented keys.")
def test_route_shape(namesrv: Server, wire: Wire, check: Check) -> None:
    broker, connection = _registered(check, namesrv, wire)
    route = fastjson_loads(expect_success(check, "route", _route(connection, broker.topic)).body or b"{}")
    check.equal("missing route keys", set(), ROUTE_KEYS - set(route))
    for queue in route["queueDatas"]:
        check.equal("missing queue data keys", set(), QUEUE_KEYS - set(queue))
    for data in route["brokerDatas"]:
        check.equal("missing broker data keys", set(), BROKER_KEYS - set(data))


@case("RMQ-NS-ROUTE-SHAPE", "The route of a registered master's topic is, field by field, the queue data it "
      "registered (perm, queue counts, topicSysFlag 0) and its broker data (cluster, brokerAddrs {0: addr}).")
def test_route_fields(namesrv: Server, wire: Wire, check: Check) -> None:
    broker, connection = _registered(check, namesrv, wire)
    route = fastjson_loads(expect_success(check, "route", _route(connection, broker.topic)).body or b"{}")
    queues = [q for q in route.get("queueDatas", []) if q.get("brokerName") == broker.name]
    registered = {"brokerName": broker.name, "perm": int(PERM_READ_WRITE), "readQueueNums": QUEUES,
                  "writeQueueNums": QUEUES, "topicSysFlag": 0}
    check.equal("queue data", [registered], [{key: q.get(key) for key in sorted(QUEUE_KEYS)} for q in queues])
    datas = [b for b in route.get("brokerDatas", []) if b.get("brokerName") == broker.name]
    check.equal("broker data", [{"brokerName": broker.name, "cluster": broker.cluster,
                                 "brokerAddrs": {"0": broker.addr}}],
                [{"brokerName": b.get("brokerName"), "cluster": b.get("cluster"), "brokerAddrs": {
                    str(k): v for k, v in (b.get("brokerAddrs") or {}).items()}} for b in datas])
    check.note("keys beyond the documented ones", sorted({k for q in queues for k in q} - QUEUE_KEYS)
               + sorted({k for b in datas for k in b} - BROKER_KEYS))


@table("fields", [
    Row("standard-json-by-version", "RMQ-NS-ROUTE-STANDARD-JSON",
        "A route request of version 409 gets route data that is standard JSON.", ({}, 409)),
    Row("standard-json-from-4.9.4", "RMQ-NS-ROUTE-STANDARD-JSON",
        "A route request of version 401 (V4_9_4, the first release to ask for it) gets standard JSON.",
        ({}, MQVersion.V4_9_4)),
    Row("standard-json-by-flag", "RMQ-NS-ROUTE-STANDARD-JSON",
        "A version-0 route request with acceptStandardJsonOnly=true gets standard JSON.",
        ({"acceptStandardJsonOnly": "true"}, 0)),
])
def test_route_standard_json(fields: tuple[dict[str, str], int], namesrv: Server, wire: Wire,
                             check: Check) -> None:
    broker, connection = _registered(check, namesrv, wire)
    extra, version = fields
    response = connection.call(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": broker.topic, **extra},
                               version=version)
    body = expect_success(check, "route", response).body or b""
    try:
        json.loads(body)
        standard = True
    except ValueError:
        standard = False
    check.that("route data parses as strict JSON", standard, expected="standard JSON", actual=body[:200])


@case("RMQ-NS-QUERY-DATA-VERSION", "QUERY_DATA_VERSION with another DataVersion than the registered one "
      "answers changed=true and the registered version; with that version, changed=false.")
def test_query_data_version(namesrv: Server, wire: Wire, check: Check) -> None:
    broker, connection = _registered(check, namesrv, wire)

    def query(version: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
        response = expect_success(check, "QUERY_DATA_VERSION", connection.call(
            RequestCode.QUERY_DATA_VERSION, encode_header(QUERY_DATA_VERSION_REQUEST, {
                **broker.identity(), "brokerId": 0}), json.dumps(version).encode()))
        changed = decode_header(QUERY_DATA_VERSION_RESPONSE, response.ext_fields)["changed"]
        return changed, fastjson_loads(response.body or b"{}")

    changed, registered = query({"counter": 999, "timestamp": 1})
    check.equal("changed for another version", True, changed)
    check.equal("registered version's counter", 1, registered.get("counter"))
    changed, _ = query({"counter": registered.get("counter"), "timestamp": registered.get("timestamp")})
    check.equal("changed for the registered version", False, changed)


@case("RMQ-NS-REGISTER-ONEWAY", "A oneway registration is applied and not answered.")
def test_oneway_registration(namesrv: Server, wire: Wire, check: Check) -> None:
    broker = FakeBroker.fresh()
    connection = wire.connect(namesrv.endpoint)
    request = broker.register(connection, oneway=True)
    connection.send(request)
    route = eventually(lambda: _route(connection, broker.topic), lambda r: r.code == ResponseCode.SUCCESS)
    expect_success(check, "route after a oneway registration", route)
    check.equal("answer to the oneway registration", None, connection.response_to(request.opaque, 0.1))


@case("RMQ-NS-BODY-CRC", "A registration whose bodyCrc32 does not match its body is refused and ignored.")
def test_body_crc_mismatch(namesrv: Server, wire: Wire, check: Check) -> None:
    broker = FakeBroker.fresh()
    connection = wire.connect(namesrv.endpoint)
    request = broker.register(connection, crc=masked_crc32(broker.body()) ^ 1)
    expect_code(check, "registration with a wrong CRC", connection.exchange(request),
                ResponseCode.SYSTEM_ERROR)
    expect_code(check, "route of its topic", _route(connection, broker.topic), ResponseCode.TOPIC_NOT_EXIST)


@case("RMQ-NS-SLAVE", "A slave registers under its brokerId and learns its master's address.")
def test_slave_registration(namesrv: Server, wire: Wire, check: Check) -> None:
    broker, connection = _registered(check, namesrv, wire)
    slave = FakeBroker(broker.cluster, broker.name, broker.topic, _fake_addr())
    response = expect_success(check, "slave registration",
                              connection.exchange(slave.register(connection, broker_id=1)))
    check.equal("masterAddr", broker.addr, (response.ext_fields or {}).get("masterAddr"))
    route = fastjson_loads(_route(connection, broker.topic).body or b"{}")
    addrs = {str(k): v for b in route.get("brokerDatas", []) for k, v in b.get("brokerAddrs", {}).items()}
    check.equal("brokerAddrs", {"0": broker.addr, "1": slave.addr}, addrs)


@case("RMQ-HA-MASTER-ADDR", "A slave's REGISTER_BROKER answer names its master's haServerAddr and "
      "masterAddr, which a slave without haMasterAddress replicates and syncs from.")
def test_slave_learns_master_ha_address(namesrv: Server, wire: Wire, check: Check) -> None:
    broker, connection = _registered(check, namesrv, wire)
    slave = FakeBroker(broker.cluster, broker.name, broker.topic, _fake_addr())
    response = expect_success(check, "slave registration",
                              connection.exchange(slave.register(connection, broker_id=1)))
    header = response.ext_fields or {}
    check.equal("haServerAddr", broker.ha_addr, header.get("haServerAddr"))
    check.equal("masterAddr", broker.addr, header.get("masterAddr"))


@case("RMQ-NS-UNREGISTER", "UNREGISTER_BROKER removes the broker's routes and its cluster entry.")
def test_unregister(namesrv: Server, wire: Wire, check: Check) -> None:
    broker, connection = _registered(check, namesrv, wire)
    expect_success(check, "UNREGISTER_BROKER", connection.exchange(broker.unregister(connection)))
    # 5.x answers first and unregisters in batches on a thread of its own (BatchUnregistrationService)
    route = eventually(lambda: _route(connection, broker.topic), lambda r: r.code != ResponseCode.SUCCESS)
    expect_code(check, "route after unregistering", route, ResponseCode.TOPIC_NOT_EXIST)
    info = _cluster_info(connection)
    check.that("cluster info no longer lists it", broker.name not in info.get("brokerAddrTable", {}),
               expected="absent", actual=info.get("brokerAddrTable", {}).get(broker.name))


@case("RMQ-NS-CHANNEL-CLOSE", "Closing the registering connection drops the broker at once.")
def test_channel_close(namesrv: Server, wire: Wire, check: Check) -> None:
    broker, connection = _registered(check, namesrv, wire)
    connection.close()
    other = wire.connect(namesrv.endpoint)
    route = eventually(lambda: _route(other, broker.topic), lambda r: r.code != ResponseCode.SUCCESS)
    expect_code(check, "route after the connection closed", route, ResponseCode.TOPIC_NOT_EXIST)


@table("step", [
    Row("kv-put-get", "RMQ-NS-KV", "A value put with PUT_KV_CONFIG is returned by GET_KV_CONFIG.", "get"),
    Row("kv-delete", "RMQ-NS-KV", "After DELETE_KV_CONFIG the key is answered QUERY_NOT_FOUND.", "delete"),
])
def test_kv_config(step: str, namesrv: Server, wire: Wire, check: Check) -> None:
    connection = wire.connect(namesrv.endpoint)
    key = {"namespace": unique("ns"), "key": "k"}
    expect_success(check, "PUT_KV_CONFIG", connection.call(RequestCode.PUT_KV_CONFIG, {**key, "value": "v1"}))
    if step == "delete":
        expect_success(check, "DELETE_KV_CONFIG", connection.call(RequestCode.DELETE_KV_CONFIG, key))
        expect_code(check, "GET_KV_CONFIG", connection.call(RequestCode.GET_KV_CONFIG, key),
                    ResponseCode.QUERY_NOT_FOUND)
        return
    response = expect_success(check, "GET_KV_CONFIG", connection.call(RequestCode.GET_KV_CONFIG, key))
    check.equal("value", "v1", (response.ext_fields or {}).get("value"))


@table("namespace", [
    Row("kv-list", "RMQ-NS-KV-LIST", "GET_KVLIST_BY_NAMESPACE lists the pair put into a namespace.",
        "filled"),
    Row("kv-list-emptied", "RMQ-NS-KV-LIST", "A namespace whose only key was deleted is listed as an empty "
        "table.", "emptied"),
    Row("kv-list-never-used", "RMQ-NS-KV-LIST", "A namespace never used is answered 22 QUERY_NOT_FOUND.",
        "never"),
])
def test_kv_list(namespace: str, namesrv: Server, wire: Wire, check: Check) -> None:
    connection = wire.connect(namesrv.endpoint)
    key = {"namespace": unique("ns"), "key": "k"}
    if namespace != "never":
        put = connection.call(RequestCode.PUT_KV_CONFIG, {**key, "value": "v"})
        expect_success(check, "PUT_KV_CONFIG", put)
    if namespace == "emptied":
        expect_success(check, "DELETE_KV_CONFIG", connection.call(RequestCode.DELETE_KV_CONFIG, key))
    listed = connection.call(RequestCode.GET_KVLIST_BY_NAMESPACE, {"namespace": key["namespace"]})
    if namespace == "never":
        expect_code(check, "GET_KVLIST_BY_NAMESPACE", listed, ResponseCode.QUERY_NOT_FOUND)
        return
    expect_success(check, "GET_KVLIST_BY_NAMESPACE", listed)
    table = fastjson_loads(listed.body) if listed.body else None
    check.equal("body", {"table": {"k": "v"} if namespace == "filled" else {}}, table)


@case("RMQ-NS-EXPIRY", "A registered broker (connection kept open) is still routed after the name server's "
      "expiry scan has run over it: it expires 120 s after its registration, not at the next scan.")
@waits_on_target
def test_not_expired_at_the_next_scan(namesrv: Server, wire: Wire, check: Check) -> None:
    broker, connection = _registered(check, namesrv, wire)
    time.sleep(BROKER_SCAN_INTERVAL_MS / 1000 + 2)
    expect_success(check, "route after a scan", _route(connection, broker.topic))


@pytest.mark.slow
@case("RMQ-NS-EXPIRY", "A broker that stops re-registering (connection kept open) is dropped after 120 s.")
def test_expiry(namesrv: Server, wire: Wire, check: Check) -> None:
    broker, _ = _registered(check, namesrv, wire)
    # Routes are read on a connection of their own: Java closes the expired broker's channel.
    lookup = wire.connect(namesrv.endpoint)
    deadline = (BROKER_EXPIRY_MS + 2 * BROKER_SCAN_INTERVAL_MS) / 1000
    route = eventually(lambda: _route(lookup, broker.topic), lambda r: r.code != ResponseCode.SUCCESS,
                       timeout=deadline)
    expect_code(check, "route after the expiry time", route, ResponseCode.TOPIC_NOT_EXIST)


@case("RMQ-ERR-FAQ-URL", "GET_ROUTEINFO_BY_TOPIC of an unknown topic answers 17 \"No topic route info in "
      "name server for the topic: <t>\" and the FAQ line of the name server's release.")
def test_no_route_remark(namesrv: Server, wire: Wire, check: Check) -> None:
    topic = f"rmq_spec_no_route_{secrets.token_hex(4)}"
    answer = wire.connect(namesrv.endpoint).call(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": topic})
    expected = remarks.NO_ROUTE.format(topic=topic, version=answer.version)
    expect_code(check, "answer", answer, ResponseCode.TOPIC_NOT_EXIST)
    # the clause is about words no client branches on (a route lookup acts on 17): shown, not judged
    check.remark("remark", expected, answer.remark)
