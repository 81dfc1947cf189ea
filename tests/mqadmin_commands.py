"""The mqadmin commands the admin area covers, runnable against any name server, with their output shapes.

Each command is run through a launcher: by default mqadmin (``MQAdminStartup``) of a release provisioned
from Maven Central (:data:`MQADMIN_RELEASE`), or any other given in ``RMQ_MQADMIN`` (an Apache RocketMQ
install's ``bin/mqadmin``, say). Placeholders
({ns}, {broker}, {topic} ...) are filled from a :class:`Scene` that the caller prepared on the target.
``shape`` reduces an output to what must match between two brokers: the lines with every number, address,
id and time replaced by a token, so a reference broker and Apache RocketMQ can be compared line by line.

Run as a script to compare two targets: ``python3 -m tests.mqadmin_commands NS_A NS_B`` prints, per
command, whether the shapes agree and the lines that differ.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rocketmq_spec.apache.drivers import java_command
from rocketmq_spec.apache.maven import resolve
from rocketmq_spec.apache.releases import release as apache_release
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC
from tests import process_tree
from tests.java_programs import compile_program

if TYPE_CHECKING:
    from rocketmq_spec.admin.wire import AdminConnection

MQADMIN_ENV = "RMQ_MQADMIN"
COMMAND_TIMEOUT = 120
"""Seconds for one mqadmin run: a JVM start on a loaded machine takes 5-15 s."""
FAILURE_MARKERS = ("command failed", "Caused by:", "Exception in thread")
"""What mqadmin prints when a command did not work (it often exits 0 all the same); a bare exception
name is not one: queryMsgById prints the exceptions of its message tracks as data."""


@dataclass(frozen=True)
class Scene:
    """Names and ids on the target the commands refer to."""

    ns: str
    broker: str
    broker_name: str
    cluster: str
    topic: str
    group: str
    key: str
    msg_id: str
    """UNIQ_KEY of a stored message."""
    offset_msg_id: str
    client_id: str
    """A client of ``group`` connected to the broker (empty when none is)."""


@dataclass(frozen=True)
class AdminCommand:
    name: str
    args: str
    needs_client: bool = False
    """The command asks a connected consumer of the scene's group (consumerStatus)."""

    def argv(self, scene: Scene) -> list[str]:
        return [self.name, *shlex.split(self.args.format(**scene.__dict__))]


_NEW = "{topic}_new"
COMMANDS: tuple[AdminCommand, ...] = (
    AdminCommand("clusterList", "-n {ns}"),
    AdminCommand("brokerStatus", "-n {ns} -b {broker}"),
    AdminCommand("topicList", "-n {ns}"),
    AdminCommand("topicRoute", "-n {ns} -t {topic}"),
    AdminCommand("topicStatus", "-n {ns} -t {topic}"),
    AdminCommand("topicClusterList", "-n {ns} -t {topic}"),
    AdminCommand("updateTopic", f"-n {{ns}} -b {{broker}} -t {_NEW} -r 2 -w 2"),
    AdminCommand("updateTopicPerm", f"-n {{ns}} -b {{broker}} -t {_NEW} -p 4"),
    AdminCommand("deleteTopic", f"-n {{ns}} -c {{cluster}} -t {_NEW}"),
    AdminCommand("updateSubGroup", "-n {ns} -b {broker} -g {group}_sub -r 3"),
    AdminCommand("deleteSubGroup", "-n {ns} -b {broker} -g {group}_sub"),
    AdminCommand("consumerProgress", "-n {ns} -g {group}"),
    AdminCommand("consumerConnection", "-n {ns} -g {group}"),
    AdminCommand("producerConnection", "-n {ns} -g {group}_producer -t {topic}"),
    AdminCommand("consumerStatus", "-n {ns} -g {group} -i {client_id}", needs_client=True),
    AdminCommand("queryMsgById", "-n {ns} -i {offset_msg_id}"),
    AdminCommand("queryMsgByKey", "-n {ns} -t {topic} -k {key}"),
    AdminCommand("queryMsgByUniqueKey", "-n {ns} -t {topic} -i {msg_id}"),
    AdminCommand("queryMsgByOffset", "-n {ns} -t {topic} -b {broker_name} -i 0 -o 0"),
    AdminCommand("printMsg", "-n {ns} -t {topic}"),
    AdminCommand("resetOffsetByTime", "-n {ns} -g {group} -t {topic} -s now"),
    AdminCommand("cloneGroupOffset", "-n {ns} -s {group} -d {group}_clone -t {topic}"),
    AdminCommand("statsAll", "-n {ns} -t {topic}"),
    AdminCommand("getBrokerConfig", "-n {ns} -b {broker}"),
    AdminCommand("updateBrokerConfig", "-n {ns} -b {broker} -k defaultTopicQueueNums -v 4"),
    AdminCommand("wipeWritePerm", "-n {ns} -b {broker_name}"),
    AdminCommand("addWritePerm", "-n {ns} -b {broker_name}"),
    AdminCommand("allocateMQ", "-n {ns} -t {topic} -i 10.0.0.1,10.0.0.2"),
    AdminCommand("updateKvConfig", "-n {ns} -s admin_ns -k admin_key -v admin_value"),
    AdminCommand("deleteKvConfig", "-n {ns} -s admin_ns -k admin_key"),
    AdminCommand("getNamesrvConfig", "-n {ns}"),
    AdminCommand("updateNamesrvConfig", "-n {ns} -k orderMessageEnable -v false"),
    AdminCommand("queryCq", "-n {ns} -t {topic} -q 0 -i 0 -c 2 -b {broker}"),
    AdminCommand("cleanExpiredCQ", "-n {ns} -b {broker}"),
    AdminCommand("deleteExpiredCommitLog", "-n {ns} -b {broker}"),
)


MQADMIN_RELEASE = "4.9.7"
"""The newest 4.x release the project's Maven repository serves: the line whose mqadmin these commands
and their output shapes were written for."""
MQADMIN_MAIN = "org.apache.rocketmq.tools.command.MQAdminStartup"


def launcher(home: Path) -> list[str]:
    """``RMQ_MQADMIN`` when set, else the provisioned release's mqadmin with ``home`` as its home
    (raises ``rocketmq_spec.apache.ProvisionError`` where it cannot be provisioned)."""
    value = os.environ.get(MQADMIN_ENV)
    return shlex.split(value) if value else java_command(MQADMIN_RELEASE, MQADMIN_MAIN, home=home)


BATCH_TIMEOUT_S = 600.0
WARM_UP = "clusterList"
"""Run once before the judged commands: a cold JVM's first RPC can exceed mqadmin's 3 s timeout."""
_FRAME = re.compile(r"^=== BEGIN (\S+)\n(.*?)^=== END \1$", re.M | re.S)


def run_batch(release: str, commands: Sequence[AdminCommand], scene: Scene, home: Path) -> dict[str, str]:
    """Each command's output (standard output and error) by name, all run by ``release``'s mqadmin in one
    JVM (``tests/java/MqadminBatch.java``) after a warm-up, with ``home`` as its home (written as
    :data:`launcher`'s is): a JVM start per command costs seconds, more on a loaded machine. Raises
    ``tests.java_programs.JavaUnavailable`` without a JDK."""
    jars = os.pathsep.join(map(str, resolve(apache_release(release), progress=False)))
    classes = compile_program("MqadminBatch", jars, home / "classes")
    warm_up = next(c for c in commands if c.name == WARM_UP)
    lines = "\n".join("\t".join(command.argv(scene)) for command in (warm_up, *commands))
    launch = java_command(release, "MqadminBatch", home=home, extra_classpath=(classes,))
    done = process_tree.run(launch, check=True, capture_output=True, text=True, timeout=BATCH_TIMEOUT_S,
                            input=lines)
    return {match.group(1): match.group(2) for match in _FRAME.finditer(done.stdout)}


def problems(commands: Sequence[AdminCommand], outputs: dict[str, str]) -> dict[str, str]:
    """The commands that printed nothing or failed, with what they printed."""
    return {command.name: outputs.get(command.name, "(printed nothing)") for command in commands
            if command.name not in outputs or failed(outputs[command.name])}


def run(launch: Sequence[str], argv: Sequence[str]) -> str:
    done = process_tree.run([*launch, *argv], capture_output=True, text=True, timeout=COMMAND_TIMEOUT,
                            check=False)
    return done.stdout + done.stderr


def failed(output: str) -> bool:
    return any(marker in output for marker in FAILURE_MARKERS)


_VOLATILE = [
    (re.compile(r"@[0-9a-f]{5,8}\b"), "@HASH"),
    (re.compile(r"\d+\.\d+\.\d+\.\d+(:\d+)?(@[\w#.@-]+)?"), "ADDR"),
    (re.compile(r"\b[0-9A-F]{32}\b"), "MSGID"),
    (re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d([,.]\d+)?"), "TIME"),
    (re.compile(r"[\w%-]*_[0-9a-f]{8,}[\w-]*"), "NAME"),
    (re.compile(r"broker-\w+"), "BROKER"),
    (re.compile(r"-?\d+(\.\d+)?(E-?\d+)?"), "N"),
    (re.compile(r"[ \t]+"), " "),
]


def shape(output: str) -> list[str]:
    """The output's lines with volatile parts replaced, blank lines and JVM warnings dropped, sorted:
    mqadmin walks Java hash sets and maps, so the order of lines is not part of the shape."""
    lines = []
    for line in output.splitlines():
        if not line.strip() or line.startswith(("WARNING", "OpenJDK", "SLF4J", "RocketMQLog")):
            continue
        for pattern, token in _VOLATILE:
            line = pattern.sub(token, line)
        lines.append(line.strip())
    return sorted(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Print, per command (all, or those named), whether two targets' outputs have the same shape; the
    scenes are JSON files of :class:`Scene` fields."""
    import json
    import tempfile

    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 2:
        print(f"usage: [{MQADMIN_ENV}='…'] python3 -m tests.mqadmin_commands A.json B.json [COMMAND…]")
        return 2
    launch = launcher(Path(tempfile.mkdtemp(prefix="rmq-mqadmin-")))
    scenes = [Scene(**json.loads(Path(path).read_text(encoding="utf-8"))) for path in args[:2]]
    differing = 0
    for command in (c for c in COMMANDS if not args[2:] or c.name in args[2:]):
        outputs = [run(launch, command.argv(scene)) for scene in scenes]
        shapes = [shape(out) for out in outputs]
        same = shapes[0] == shapes[1]
        differing += not same
        flags = " ".join("FAILED" if failed(out) else "ok" for out in outputs)
        print(f"{'SAME' if same else 'DIFF'} {command.name} [{flags}]", flush=True)
        if not same:
            for label, lines in zip("AB", shapes, strict=True):
                for line in lines[:12]:
                    print(f"    {label}| {line}")
    return 1 if differing else 0


if __name__ == "__main__":
    raise SystemExit(main())


def prepare(ns: str, broker: str, broker_name: str, *, cluster: str = "DefaultCluster",
            label: str = "admin", messages: int = 3) -> Scene:
    """A topic of 4 queues holding ``messages`` keyed messages in queue 0, and a group that committed
    offset 1 on each queue; created over the wire with the spec's tables."""
    import time
    import uuid

    from rocketmq_spec.admin.wire import AdminConnection
    from rocketmq_spec.codec.store import decode_records
    from rocketmq_spec.spec.codes import RequestCode
    from rocketmq_spec.spec.properties import encode_properties

    suffix = uuid.uuid4().hex[:10]
    topic, group, key = f"{label}_topic_{suffix}", f"{label}_group_{suffix}", f"key_{suffix}"
    with AdminConnection(broker) as connection:
        connection.call(RequestCode.UPDATE_AND_CREATE_TOPIC, {
            "topic": topic, "defaultTopic": DEFAULT_TOPIC, "readQueueNums": 4, "writeQueueNums": 4, "perm": 6,
            "topicFilterType": "SINGLE_TAG", "topicSysFlag": 0, "order": False})
        for number in range(messages):
            uniq = uuid.uuid4().hex.upper()
            connection.call(RequestCode.SEND_MESSAGE_V2, {
                "producerGroup": f"{group}_producer", "topic": topic, "defaultTopic": DEFAULT_TOPIC,
                "defaultTopicQueueNums": 4, "queueId": 0, "sysFlag": 0,
                "bornTimestamp": int(time.time() * 1000),
                "flag": 0, "properties": encode_properties({"KEYS": key, "TAGS": "TagA", "UNIQ_KEY": uniq,
                                                            "WAIT": "true"}),
                "reconsumeTimes": 0, "unitMode": False, "batch": False}, f"message {number}".encode())
        create_group(connection, group)
        for queue_id in range(4):
            connection.call(RequestCode.UPDATE_CONSUMER_OFFSET, {"consumerGroup": group, "topic": topic,
                                                                 "queueId": queue_id, "commitOffset": 1})
        for _ in range(50):  # Java dispatches to the index a moment after the put
            found = connection.call(RequestCode.QUERY_MESSAGE, {
                "topic": topic, "key": key, "maxNum": 32, "beginTimestamp": 0,
                "endTimestamp": 2**63 - 1}, accept=(0, 22))
            records = decode_records(found.command.body or b"")
            if records:
                break
            time.sleep(0.2)
    first = records[0]
    return Scene(ns, broker, broker_name, cluster, topic, group, key, first.uniq_key or "",
                 first.offset_msg_id, "")


def create_group(connection: AdminConnection, group: str) -> None:
    """Create ``group``'s subscription config, as an operator does before a group commits offsets: 5.x
    brokers refuse UPDATE_CONSUMER_OFFSET of a group without one (SUBSCRIPTION_GROUP_NOT_EXIST)."""
    from rocketmq_spec.codec.bodies import encode_body
    from rocketmq_spec.spec.admin_bodies import SUBSCRIPTION_GROUP_CONFIG
    from rocketmq_spec.spec.codes import RequestCode

    config = encode_body(SUBSCRIPTION_GROUP_CONFIG, {
        "groupName": group, "consumeEnable": True, "consumeBroadcastEnable": True, "retryQueueNums": 1,
        "retryMaxTimes": 16, "brokerId": 0, "whichBrokerWhenConsumeSlowly": 1})
    connection.call(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, {}, config)
