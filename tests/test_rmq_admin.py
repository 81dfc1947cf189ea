"""``rmq-admin``: each command against the embedded broker, in both output forms, and its failures.

The broker is prepared over the wire (a topic holding keyed messages, a group with committed offsets),
so every figure the commands print is one the test caused.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

from rocketmq_spec.admin.auth_commands import AUTH_COMMANDS
from rocketmq_spec.admin.cli import COMMANDS, main
from rocketmq_spec.admin.groups import OPTION_FIELDS, sub_group_body
from rocketmq_spec.admin.wire import AdminConnection
from rocketmq_spec.codec.bodies import encode_body
from rocketmq_spec.conformance.cases.messaging import subscription
from rocketmq_spec.reference_broker.config import BrokerConfig, NamesrvConfig
from rocketmq_spec.reference_broker.embedded import SyncEmbeddedRocketMQ
from rocketmq_spec.spec.bodies import HEARTBEAT_DATA
from rocketmq_spec.spec.codes import RequestCode
from rocketmq_spec.spec.tls import TLS_MODE_KEY, TlsMode
from rocketmq_spec.spec.wire_release import DEFAULT_RELEASE, wire_release
from tests.mqadmin_commands import Scene, prepare
from tests.test_rmq_admin_auth import expected_rows

DEFAULT_VERSION_NAME = wire_release(DEFAULT_RELEASE).version_name
"""The version a default reference broker reports (V5_5_0)."""

MESSAGES = 3


@pytest.fixture(scope="module")
def scene() -> Iterator[Scene]:
    with SyncEmbeddedRocketMQ() as mq:
        yield prepare(mq.namesrv_addr, mq.broker_addr, mq.embedded.broker_config.broker_name,
                      messages=MESSAGES)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


ROUTE_WAIT_S = 10.0


def as_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def test_every_command_is_tested() -> None:
    """Each command has a test of its name here, or (the ACL 2.0 commands) runs in the scenario of
    tests/test_rmq_admin_auth.py against the embedded broker and Apache 5.5.0."""
    tested = {name.removeprefix("test_") for name in globals() if name.startswith("test_")}
    assert {name for name in COMMANDS if name not in tested and name not in AUTH_COMMANDS} == set()
    assert set(expected_rows("b")) - {"gone"} == set(AUTH_COMMANDS)


def test_clusterList(scene: Scene, capsys: pytest.CaptureFixture[str]) -> None:
    rows = as_json(capsys, "clusterList", "-n", scene.ns)
    assert [(r["cluster"], r["brokerName"], r["brokerId"], r["addr"], r["version"]) for r in rows] == [
        (scene.cluster, scene.broker_name, 0, scene.broker, DEFAULT_VERSION_NAME)]
    code, out, _ = run(capsys, "clusterList", "-n", scene.ns)
    assert code == 0 and out.splitlines()[0].startswith("#cluster") and scene.broker in out


def test_brokerStatus(scene: Scene, capsys: pytest.CaptureFixture[str]) -> None:
    status = as_json(capsys, "brokerStatus", "-n", scene.ns, "-b", scene.broker)
    assert int(status["msgPutTotalTodayNow"]) >= MESSAGES
    code, out, _ = run(capsys, "brokerStatus", "-n", scene.ns, "-b", scene.broker)
    assert code == 0 and any(line.startswith("brokerVersionDesc") and line.endswith(DEFAULT_VERSION_NAME)
                             for line in out.splitlines())


def test_topicList(scene: Scene, capsys: pytest.CaptureFixture[str]) -> None:
    assert {"topic": scene.topic} in as_json(capsys, "topicList", "-n", scene.ns)


def test_topicRoute(scene: Scene, capsys: pytest.CaptureFixture[str]) -> None:
    route = as_json(capsys, "topicRoute", "-n", scene.ns, "-t", scene.topic)
    assert [(q["brokerName"], q["readQueueNums"], q["writeQueueNums"]) for q in route["queueDatas"]] == [
        (scene.broker_name, 4, 4)]


def test_topicStatus(scene: Scene, capsys: pytest.CaptureFixture[str]) -> None:
    rows = as_json(capsys, "topicStatus", "-n", scene.ns, "-t", scene.topic)
    assert [(r["queueId"], r["minOffset"], r["maxOffset"]) for r in rows] == [
        (0, 0, MESSAGES), (1, 0, 0), (2, 0, 0), (3, 0, 0)]
    assert rows[0]["lastUpdateTimestamp"] > 0


def test_updateTopic(scene: Scene, capsys: pytest.CaptureFixture[str]) -> None:
    topic = scene.topic + "_update"
    done = as_json(capsys, "updateTopic", "-n", scene.ns, "-c", scene.cluster, "-t", topic,
                   "-r", "2", "-w", "2")
    assert [row["broker"] for row in done] == [scene.broker]
    # the broker registers a created topic with its name servers after it answered the creation (its
    # registration task is woken), so the route may lag the answer by a moment on a loaded machine
    deadline = time.monotonic() + ROUTE_WAIT_S
    while (found := run(capsys, "topicStatus", "-n", scene.ns, "-t", topic, "--json"))[0] != 0:
        assert time.monotonic() < deadline, found[2]
        time.sleep(0.2)
    assert [r["queueId"] for r in json.loads(found[1])] == [0, 1]


def test_deleteTopic(scene: Scene, capsys: pytest.CaptureFixture[str]) -> None:
    topic = scene.topic + "_delete"
    as_json(capsys, "updateTopic", "-n", scene.ns, "-b", scene.broker, "-t", topic)
    deleted = as_json(capsys, "deleteTopic", "-n", scene.ns, "-c", scene.cluster, "-t", topic)
    assert [row["result"] for row in deleted] == ["deleted"]
    assert {"topic": topic} not in as_json(capsys, "topicList", "-n", scene.ns)


def test_consumerProgress(scene: Scene, capsys: pytest.CaptureFixture[str]) -> None:
    rows = as_json(capsys, "consumerProgress", "-n", scene.ns, "-g", scene.group)
    mine = [r for r in rows if r["topic"] == scene.topic]
    assert [(r["queueId"], r["brokerOffset"], r["consumerOffset"], r["diff"]) for r in mine] == [
        (0, MESSAGES, 1, MESSAGES - 1), (1, 0, 1, -1), (2, 0, 1, -1), (3, 0, 1, -1)]


def test_consumerConnection(scene: Scene, capsys: pytest.CaptureFixture[str]) -> None:
    """Without a client the command says so in one line and fails; with one it names it."""
    code, out, err = run(capsys, "consumerConnection", "-n", scene.ns, "-g", scene.group)
    assert code == 1 and out == "" and len(err.strip().splitlines()) == 1 and "not online" in err
    heartbeat = encode_body(HEARTBEAT_DATA, {"clientID": "127.0.0.1@test", "producerDataSet": [],
                                             "consumerDataSet": [subscription(scene.group, scene.topic)]})
    with AdminConnection(scene.broker) as consumer:
        consumer.call(RequestCode.HEART_BEAT, body=heartbeat)
        rows = as_json(capsys, "consumerConnection", "-n", scene.ns, "-g", scene.group)
    assert [(r["clientId"], r["language"], r["consumeType"]) for r in rows] == [
        ("127.0.0.1@test", "JAVA", "CONSUME_PASSIVELY")]


def test_queryMsgByKey(scene: Scene, capsys: pytest.CaptureFixture[str]) -> None:
    rows = as_json(capsys, "queryMsgByKey", "-n", scene.ns, "-t", scene.topic, "-k", scene.key)
    assert sorted(r["queueOffset"] for r in rows) == list(range(MESSAGES))
    assert scene.msg_id in {r["msgId"] for r in rows}
    code, out, _ = run(capsys, "queryMsgByKey", "-n", scene.ns, "-t", scene.topic, "-k", scene.key)
    assert code == 0 and out.splitlines()[0].startswith("#msgId") and len(out.splitlines()) == MESSAGES + 1
    by_tag = as_json(capsys, "queryMsgByKey", "-n", scene.ns, "-t", scene.topic, "-k", "TagA", "-p", "T")
    assert sorted(r["queueOffset"] for r in by_tag) == list(range(MESSAGES))  # 5.5.0 indexes the tags


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("argv", [
    ["topicStatus", "-n", "not-an-address", "-t", "T"],
    ["updateTopic", "-n", "127.0.0.1:9876", "-t", "T", "-r", "0"],
    ["topicStatus", "-n", "127.0.0.1:9876"],
    ["noSuchCommand", "-n", "127.0.0.1:9876"],
])
def test_bad_input_is_one_line_and_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    _, err = capsys.readouterr()
    assert exited.value.code == 2 and len(err.strip().splitlines()) == 1


def test_unreachable_name_server_is_one_line_and_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "clusterList", "-n", f"127.0.0.1:{_free_port()}", "--timeout", "2")
    assert code == 1 and out == "" and err.count("\n") == 1 and "cannot connect" in err


def test_refusal_is_one_line_and_exit_1(scene: Scene, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "topicRoute", "-n", scene.ns, "-t", "no_such_topic_anywhere")
    assert code == 1 and err.count("\n") == 1 and "TOPIC_NOT_EXIST" in err


def _group_config(scene: Scene, group: str) -> dict[str, Any] | None:
    with AdminConnection(scene.broker) as connection:
        answer = connection.call(RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG)
    table = json.loads(answer.command.body or b"{}")["subscriptionGroupTable"]
    found: dict[str, Any] | None = table.get(group)
    return found


def test_updateSubGroup_sends_the_bytes_mqadmin_5_5_0_sends() -> None:
    """What ``mqadmin updateSubGroup -g G -o true`` puts on the wire, printed by the 5.5.0 jar."""
    options = dict.fromkeys(OPTION_FIELDS) | {"orderly": True}
    assert sub_group_body("G", options) == (
        b'{"attributes":{},"brokerId":0,"consumeBroadcastEnable":false,"consumeEnable":true,'
        b'"consumeFromMinEnable":false,"consumeMessageOrderly":true,"consumeTimeoutMinute":15,"groupName":"G",'
        b'"groupRetryPolicy":{"type":"CUSTOMIZED"},"groupSysFlag":0,"notifyConsumerIdsChangedEnable":true,'
        b'"retryMaxTimes":16,"retryQueueNums":1,"whichBrokerWhenConsumeSlowly":1}')


def test_updateSubGroup(scene: Scene, capsys: pytest.CaptureFixture[str]) -> None:
    group = scene.group + "_fifo"
    done = as_json(capsys, "updateSubGroup", "-n", scene.ns, "-c", scene.cluster, "-g", group, "-o", "true",
                   "-r", "5", "-q", "2", "--attributes", "+a=b")
    assert [row["broker"] for row in done] == [scene.broker]
    stored = _group_config(scene, group)
    assert stored is not None
    assert (stored["consumeMessageOrderly"], stored["retryMaxTimes"], stored["retryQueueNums"],
            stored["consumeBroadcastEnable"]) == (True, 5, 2, False)
    code, _, err = run(capsys, "updateSubGroup", "-n", scene.ns, "-g", group)
    assert code == 1 and "needs -b BROKER_ADDR or -c CLUSTER" in err


def test_deleteSubGroup(scene: Scene, capsys: pytest.CaptureFixture[str]) -> None:
    group = scene.group + "_gone"
    as_json(capsys, "updateSubGroup", "-n", scene.ns, "-b", scene.broker, "-g", group)
    assert _group_config(scene, group) is not None
    deleted = as_json(capsys, "deleteSubGroup", "-n", scene.ns, "-b", scene.broker, "-g", group, "-r", "true")
    assert [row["result"] for row in deleted] == ["deleted"]
    assert _group_config(scene, group) is None


def test_getBrokerConfig(scene: Scene, capsys: pytest.CaptureFixture[str]) -> None:
    settings = as_json(capsys, "getBrokerConfig", "-n", scene.ns, "-b", scene.broker)
    assert settings["brokerName"] == scene.broker_name and settings["brokerClusterName"] == scene.cluster


def test_updateBrokerConfig(scene: Scene, capsys: pytest.CaptureFixture[str]) -> None:
    before = as_json(capsys, "getBrokerConfig", "-n", scene.ns, "-b", scene.broker)["defaultTopicQueueNums"]
    wanted = str(int(before) + 1)
    done = as_json(capsys, "updateBrokerConfig", "-n", scene.ns, "-c", scene.cluster, "-k",
                   "defaultTopicQueueNums", "-v", wanted)
    assert [row["broker"] for row in done] == [scene.broker]
    after = as_json(capsys, "getBrokerConfig", "-n", scene.ns, "-b", scene.broker)
    assert after["defaultTopicQueueNums"] == wanted


def test_tls_reaches_servers_that_refuse_plain_text(capsys: pytest.CaptureFixture[str]) -> None:
    broker, namesrv = BrokerConfig(listen_port=0), NamesrvConfig(listen_port=0, kv_config_path=None)
    for settings in (broker.tls, namesrv.tls):
        settings.set(TLS_MODE_KEY, TlsMode.ENFORCING.value)
    with SyncEmbeddedRocketMQ(broker_config=broker, namesrv_config=namesrv) as mq:
        listed = as_json(capsys, "clusterList", "-n", mq.namesrv_addr, "--tls")
        code, _, err = run(capsys, "clusterList", "-n", mq.namesrv_addr)
    assert [row["brokerName"] for row in listed] == [broker.broker_name]
    assert code == 1 and "closed the connection" in err
