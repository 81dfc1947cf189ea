"""HA roles over the wire: where a master takes slaves and how it reads them, which sends wait for a slave,
the brokerId a master registers with, and what a slave is served and serves (``rocketmq_spec.spec.ha``).

The master cases speak to the target's broker (an ASYNC_MASTER) and its HA port; the SYNC_MASTER and
slave cases need the parts ``--sync-master`` and ``--ha-slave``/``--ha-feed`` give (the embedded target
has both).
"""

from __future__ import annotations

import json
import time

from rocketmq_spec.codec.fastjson import loads as fastjson_loads
from rocketmq_spec.codec.ha import encode_report
from rocketmq_spec.conformance.case import Row, case, table
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.ha_peer import SlavePeer
from rocketmq_spec.conformance.target import FedSlave, Server
from rocketmq_spec.conformance.verdict import Unsupported
from rocketmq_spec.conformance.wire import Endpoint, Wire
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.ha import HA_PORT_OFFSET
from rocketmq_spec.spec.sysflag import PullSysFlag

from .ha_support import HEARTBEAT_WAIT, store_one
from .messaging import Client, Message, pull_header
from .pop_support import broker_setting
from .support import expect_code, expect_success, unique

QUIET = 0.5
"""Time for the master to read a report before the case goes on."""


def _ha_port(broker: Server) -> Endpoint:
    return Endpoint(broker.endpoint.host, broker.endpoint.port + HA_PORT_OFFSET)


@case("RMQ-HA-PORT", "The broker's listenPort + 1 takes a slave without RemotingCommand framing: a bare "
      "8-byte report is answered with a transfer block starting at the reported offset.")
def test_ha_port_is_listen_port_plus_one(client: Client, broker: Server, check: Check) -> None:
    stored = store_one(client, check, client.create_topic())
    try:
        peer = SlavePeer(_ha_port(broker))
    except OSError as exc:
        check.that("listenPort + 1 accepts a slave", False, expected="a connection", actual=str(exc))
        return
    try:
        peer.report(stored.end)
        block = peer.block(HEARTBEAT_WAIT)
        check.equal("first block offset", stored.end, block.offset if block else None)
    finally:
        peer.close()


@case("RMQ-HA-REPORT", "Of two reports arriving together (0, then the CommitLog end) the master takes the "
      "last: its first block starts at the end, not at its last file's start as a report of 0 would.")
def test_master_takes_the_last_report(client: Client, ha_master: Endpoint, check: Check) -> None:
    stored = store_one(client, check, client.create_topic())
    peer = SlavePeer(ha_master)
    try:
        peer.sock.sendall(encode_report(0) + encode_report(stored.end))
        block = peer.block(HEARTBEAT_WAIT)
        check.equal("first block offset", stored.end, block.offset if block else None)
    finally:
        peer.close()


@case("RMQ-HA-ASYNC-MASTER", "An ASYNC_MASTER answers a send SUCCESS while its slave acknowledges nothing.")
def test_async_master_does_not_wait(client: Client, ha_master: Endpoint, check: Check) -> None:
    role = broker_setting(client, "brokerRole")
    if role != "ASYNC_MASTER":
        raise Unsupported(f"the target is a {role or 'broker of unknown role'}, not an ASYNC_MASTER",
                          expected="ASYNC_MASTER", actual=role)
    topic = client.create_topic()
    stored = store_one(client, check, topic)
    peer = SlavePeer(ha_master)
    try:
        peer.report(stored.end)
        time.sleep(QUIET)  # the master counts the slave once its report is read
        expect_success(check, "send, the slave silent", client.send_request(topic, Message(b"not waited")))
    finally:
        peer.close()


@case("RMQ-HA-ASYNC-MASTER", "A SYNC_MASTER answers a send with WAIT=false SUCCESS without any slave.")
def test_sync_master_no_wait(sync_master: Server, wire: Wire, check: Check) -> None:
    client = Client(wire.connect(sync_master.endpoint), check)
    answer = client.send_request(client.create_topic(), Message(b"not waited", wait=False))
    expect_success(check, "send with WAIT=false, no slave", answer)


@case("RMQ-HA-ROLE-ID", "The target's broker, a master, is registered with brokerId 0 under its brokerName.")
def test_master_registers_as_zero(client: Client, namesrv: Server, wire: Wire, check: Check) -> None:
    name = broker_setting(client, "brokerName")
    answer = wire.connect(namesrv.endpoint).call(RequestCode.GET_BROKER_CLUSTER_INFO)
    info = fastjson_loads(expect_success(check, "GET_BROKER_CLUSTER_INFO", answer).body or b"{}")
    addrs = (info.get("brokerAddrTable", {}).get(name) or {}).get("brokerAddrs", {})
    ports = {str(broker_id): addr.rpartition(":")[2] for broker_id, addr in addrs.items()}
    check.equal(f"{name}: brokerAddrs", {"0": str(client.connection.endpoint.port)}, ports)


@table("served", [
    Row("topic-config", "RMQ-HA-SLAVE-SYNC", "GET_ALL_TOPIC_CONFIG (21) answers the topic config table.",
        (RequestCode.GET_ALL_TOPIC_CONFIG, "topicConfigTable")),
    Row("consumer-offset", "RMQ-HA-SLAVE-SYNC", "GET_ALL_CONSUMER_OFFSET (43) answers the offset table.",
        (RequestCode.GET_ALL_CONSUMER_OFFSET, "offsetTable")),
    Row("delay-offset", "RMQ-HA-SLAVE-SYNC", "GET_ALL_DELAY_OFFSET (45) answers the delay offset table.",
        (RequestCode.GET_ALL_DELAY_OFFSET, "offsetTable")),
    Row("subscription-group", "RMQ-HA-SLAVE-SYNC", "GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201) answers the "
        "subscription group table.",
        (RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, "subscriptionGroupTable")),
])
def test_master_serves_slave_sync(served: tuple[int, str], client: Client, check: Check) -> None:
    code, table_key = served
    answer = client.connection.call(code)
    # a code the master does not serve fails here: a slave could not sync (not UNSUPPORTED)
    check.equal(f"{RequestCode(code).name}: code", ResponseCode.SUCCESS, answer.code)
    body = fastjson_loads(answer.body or b"{}")
    check.that(f"{table_key} in the body", isinstance(body, dict) and table_key in body,
               expected=table_key, actual=sorted(body) if isinstance(body, dict) else body)


@case("RMQ-HA-SLAVE-READ", "A master's pull answer suggests brokerId 0 (slaveReadEnable false, or a group "
      "of brokerId 0 not lagging).")
def test_pull_suggests_the_master(client: Client, check: Check) -> None:
    topic = client.create_topic()
    client.send(topic)
    answer = expect_success(check, "pull", client.pull(topic, 0, 0))
    check.equal("suggestWhichBrokerId", 0, pull_header(answer).get("suggestWhichBrokerId"))


@case("RMQ-HA-SLAVE-PULL-OFFSETS", "A slave answers a pull past its queue's end 20 PULL_RETRY_IMMEDIATELY "
      "and does not commit the consumer offset the pull carries.")
def test_slave_pull_offsets(fed_slave: FedSlave, wire: Wire, check: Check) -> None:
    slave = Client(wire.connect(fed_slave.broker.endpoint), check)
    topic, group = slave.create_topic(), unique("slave_cg")
    answer = slave.call(RequestCode.PULL_MESSAGE, {
        "consumerGroup": group, "topic": topic, "queueId": 0, "queueOffset": 5, "maxMsgNums": 1,
        "sysFlag": int(PullSysFlag.SUBSCRIPTION | PullSysFlag.COMMIT_OFFSET), "commitOffset": 3,
        "suspendTimeoutMillis": 0, "subscription": "*", "subVersion": 0, "expressionType": "TAG"})
    expect_code(check, "pull past the end", answer, ResponseCode.PULL_RETRY_IMMEDIATELY)
    committed = slave.call(RequestCode.QUERY_CONSUMER_OFFSET, {"consumerGroup": group, "topic": topic,
                                                              "queueId": 0})
    check.that("offset 3 not committed", (committed.ext_fields or {}).get("offset") != "3",
               expected="no offset 3", actual=f"{committed.code} {json.dumps(committed.ext_fields)}")
