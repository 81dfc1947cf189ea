"""The judging server and scenarios: a real name server and broker behind the recording relay.

One :class:`JudgingServer` serves a whole run: the broker is started once (``rocketmq_spec.targets``, as a
subprocess: the suite never imports a broker), and each scenario gets its own topic and group, and a relay
of its own (listening ports, recording, script; a gRPC relay too when the target serves gRPC), so that
scenarios can run side by side without one's frames or scripted answers reaching another's client. A
scenario whose consumer needs messages gets them from the suite itself, sent straight to the broker before
the driver starts, so the relay records only the client's traffic.
"""

from __future__ import annotations

import base64
import contextlib
import re
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rocketmq_spec.admin.groups import sub_group_body
from rocketmq_spec.admin.operations import Admin
from rocketmq_spec.admin.wire import AdminError
from rocketmq_spec.codec.custom_header import encode_header
from rocketmq_spec.conformance.clients import driver
from rocketmq_spec.conformance.clients.grpc_relay import GrpcMessage, GrpcRecording, GrpcRelay
from rocketmq_spec.conformance.clients.recording import Event, Frame, Recording, Role
from rocketmq_spec.conformance.clients.relay_server import Relay
from rocketmq_spec.conformance.clients.script import Rule, Script
from rocketmq_spec.conformance.recorder import Exchange
from rocketmq_spec.conformance.wire import Endpoint, Wire
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.headers import SEND_MESSAGE_REQUEST_V2
from rocketmq_spec.spec.properties import PropertyKey, encode_properties
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC
from rocketmq_spec.spec.topic_attributes import MESSAGE_TYPE
from rocketmq_spec.targets import EMBEDDED, started

QUICK_TRANSACTION_CHECKS = {
    "transactionTimeOut": 1000,
    "transactionCheckInterval": 500,
    "transactionCheckMax": 3,
}
"""Broker settings (Java's broker.conf keys) that check a half message back within seconds instead of
after 6 s and every 60 s, so a transaction scenario sees its check-back."""
ADMIN_TIMEOUT_S = 10.0
ROUTE_WAIT_S = 30.0
"""How long a created topic may take to show in the name server's routes (a broker registers it with
its next registration, at once for the reference broker and Java's registerIncrementBrokerData)."""


@dataclass(frozen=True)
class Scenario:
    """One run of a driver: the contract scenario, its settings and the relay's script. ``key`` names the
    run: cases asking for the same key share one run (a run serves every clause judged from it)."""

    key: str
    name: str
    count: int = 3
    body_size: int = 32
    body: bytes | None = None
    tag: str | None = "TagA"
    keys: str | None = "k1 k2"
    idle_s: float = 0.0
    timeout_s: float = 30.0
    rules: tuple[Rule, ...] = ()
    queues: int = 4
    create_topic: bool = True
    prefill: int = 0
    """Messages the suite stores in the topic before the driver starts (for consumers)."""
    prefill_groups: int = 0
    """When set, prefilled message ``i`` belongs to message group ``g<i % prefill_groups>``, each group
    in a queue of its own (as a FIFO producer sends them)."""
    message_type: str | None = None
    """The topic's ``message.type`` attribute (FIFO, TRANSACTION...): a 5.x SDK's message of another
    type than NORMAL is refused by a topic without it."""
    orderly: bool = False
    """The consumer group consumes in order (``updateSubGroup -o true``): a proxy answers fifo in Settings."""
    tx_answer: str = "commit"
    tx_check_answer: str = "commit"
    protocol: str = "remoting"
    """What the driver is to speak: ``remoting`` (RMQ_NAMESRV) or ``grpc`` (RMQ_ENDPOINT)."""
    credentials: tuple[str, str] | None = None
    """(access key, secret key) the client signs with (ACL 1.0)."""


@dataclass
class ScenarioRun:
    scenario: Scenario
    topic: str
    group: str
    broker_addr: str
    """The relay's broker address: the only one a client should reach."""
    frames: list[Frame]
    connection_events: list[Event]
    driver: driver.DriverRun
    prefilled: list[bytes] = field(default_factory=list)
    wall_start: float = 0.0
    """The wall clock when the recording started (frame times are relative to it)."""

    grpc: list[GrpcMessage] = field(default_factory=list)
    """What crossed the gRPC relay (a 5.x SDK's RPCs)."""
    seconds: float = 0.0
    """How long the run took, topic creation and prefill included (the report's scenario times)."""

    def wall_ms(self, frame: Frame) -> int:
        """A frame's arrival on the wall clock, in ms, as a client's timestamps count."""
        return int((self.wall_start + frame.at) * 1000)

    def to_broker(self) -> list[Frame]:
        return [f for f in self.frames if f.role is Role.BROKER]


def body_of(scenario: Scenario) -> bytes:
    """The body a driver is told to send (RMQ_BODY_B64 is always given, so bodies can be compared)."""
    if scenario.body is not None:
        return scenario.body
    return bytes((i * 7 + 1) % 251 for i in range(scenario.body_size))


class JudgingServer:
    def __init__(self, workdir: Path, target: str = EMBEDDED) -> None:
        self.workdir = workdir
        self.target = target
        self._stack = contextlib.ExitStack()
        self._serial = 0
        self._serial_lock = threading.Lock()
        self.namesrv_addr = ""
        self.broker_addr = ""
        self.proxy_addr: str | None = None
        """The target's gRPC endpoint, when it serves one (5.x SDKs are given a relay of it: RMQ_ENDPOINT)."""

    def __enter__(self) -> JudgingServer:
        running = self._stack.enter_context(
            started(self.target, self.workdir / "target", broker_config=QUICK_TRANSACTION_CHECKS)
        )
        self.namesrv_addr, self.broker_addr = running.namesrv_addr, running.broker_addr
        self.proxy_addr = running.proxy_addr
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    @contextlib.contextmanager
    def _relays(self, script: Script) -> Iterator[tuple[Relay, Recording, GrpcRelay | None]]:
        """A scenario's own relays, cut and closed when it ends (a killed driver's connections too)."""
        with contextlib.ExitStack() as stack:
            relay = Relay({Role.NAMESRV: self.namesrv_addr, Role.BROKER: self.broker_addr})
            relay.start()
            stack.callback(relay.stop)
            grpc_relay = None
            if self.proxy_addr:
                grpc_relay = GrpcRelay(self.proxy_addr)
                grpc_relay.start()
                stack.callback(grpc_relay.stop)
            recording = stack.enter_context(relay.scenario(script))
            yield relay, recording, grpc_relay

    def _names(self, scenario: Scenario) -> tuple[str, str]:
        with self._serial_lock:
            self._serial += 1
            serial = self._serial
        stem = re.sub(r"[^A-Za-z0-9_-]", "_", scenario.key)[:60]
        return f"CT_{stem}_{serial}", f"CG_{stem}_{serial}"

    def _create_topic_and_group(self, topic: str, group: str, scenario: Scenario) -> None:
        """The topic and the consumer group, as an application's operator creates them first: a 5.5.0
        proxy refuses a consumer's settings for a group the broker does not have
        (``Rule.GRPC_SETTINGS_GROUP_REQUIRED``), whatever autoCreateSubscriptionGroup says."""
        admin = Admin(self.namesrv_addr, ADMIN_TIMEOUT_S)
        queues = scenario.queues
        attributes = f"+{MESSAGE_TYPE}={scenario.message_type}" if scenario.message_type else None
        admin.update_topic(
            topic, broker=self.broker_addr, cluster=None, read_queues=queues, write_queues=queues,
            attributes=attributes,
        )
        options = {"orderly": True} if scenario.orderly else {}
        admin.update_sub_group(sub_group_body(group, options), broker=self.broker_addr, cluster=None)
        deadline = time.monotonic() + ROUTE_WAIT_S
        while True:
            try:
                admin.route(topic)
                return
            except AdminError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def _prefill(self, topic: str, scenario: Scenario, body: bytes) -> list[bytes]:
        """Store the scenario's messages straight at the broker: one per queue in turn, or each message
        group in its own queue."""
        wire = Wire(Exchange())
        connection = wire.connect(Endpoint.parse(self.broker_addr))
        bodies = []
        try:
            for index in range(scenario.prefill):
                message = body + str(index).encode()
                properties = {PropertyKey.WAIT: "true", PropertyKey.TAGS: "TagA"}
                queue = index % scenario.queues
                if scenario.prefill_groups:
                    queue = index % scenario.prefill_groups % scenario.queues
                    properties[PropertyKey.SHARDING_KEY] = f"g{index % scenario.prefill_groups}"
                values = {
                    "producerGroup": "CLIENT_SUITE_PREFILL",
                    "topic": topic,
                    "defaultTopic": DEFAULT_TOPIC,
                    "defaultTopicQueueNums": 4,
                    "queueId": queue,
                    "sysFlag": 0,
                    "bornTimestamp": int(time.time() * 1000),
                    "flag": 0,
                    "properties": encode_properties(properties),
                }
                answer = connection.call(
                    RequestCode.SEND_MESSAGE_V2, encode_header(SEND_MESSAGE_REQUEST_V2, values), message
                )
                if answer.code != ResponseCode.SUCCESS:
                    raise AdminError(f"prefill send to {topic} answered {answer.code}: {answer.remark}")
                bodies.append(message)
        finally:
            wire.close()
        return bodies

    def run(
        self, argv: Sequence[str], scenario: Scenario, extra_env: Mapping[str, str] | None = None
    ) -> ScenarioRun:
        """One scenario from topic creation to the driver's exit; safe to call from several threads at once
        (each call has its own topic, group, relays and work directory)."""
        assert self.namesrv_addr, "use the server as a context manager"
        began = time.monotonic()
        topic, group = self._names(scenario)
        if scenario.create_topic:
            self._create_topic_and_group(topic, group, scenario)
        body = body_of(scenario)
        prefilled = self._prefill(topic, scenario, body) if scenario.prefill else []
        workdir = self.workdir / "drivers" / topic
        workdir.mkdir(parents=True, exist_ok=True)
        rules = tuple(rule.bound(topic) for rule in scenario.rules)
        with self._relays(Script(rules)) as (relay, recording, grpc_relay):
            env = {
                **(extra_env or {}),
                **environment(scenario, relay.addresses[Role.NAMESRV], topic, group, body, workdir),
                "RMQ_ENDPOINT": grpc_relay.address if grpc_relay else "",
            }
            grpc_recording = grpc_relay.begin() if grpc_relay else GrpcRecording()
            result = driver.run(argv, scenario.name, env, scenario.timeout_s, recording.now, cwd=workdir)
            time.sleep(0.2)  # the last frames the client wrote before exiting reach the relay
            broker = relay.addresses[Role.BROKER]
        frames, events = recording.snapshot()
        return ScenarioRun(
            scenario,
            topic,
            group,
            broker,
            frames,
            events,
            result,
            prefilled,
            recording.wall_start,
            grpc_recording.snapshot(),
            time.monotonic() - began,
        )


def environment(
    scenario: Scenario, namesrv: str, topic: str, group: str, body: bytes, workdir: Path
) -> dict[str, str]:
    """The contract's variables for one scenario; the optional ones are left out when unused."""
    env = {
        "RMQ_PROTOCOL": scenario.protocol,
        "RMQ_NAMESRV": namesrv,
        "RMQ_TLS": "0",
        "RMQ_TOPIC": topic,
        "RMQ_GROUP": group,
        "RMQ_COUNT": str(scenario.count),
        "RMQ_BODY_SIZE": str(len(body)),
        "RMQ_BODY_B64": base64.b64encode(body).decode(),
        "RMQ_TIMEOUT_S": f"{scenario.timeout_s:g}",
        "RMQ_IDLE_S": f"{scenario.idle_s:g}",
        "RMQ_TX_ANSWER": scenario.tx_answer,
        "RMQ_TX_CHECK_ANSWER": scenario.tx_check_answer,
        "RMQ_DELAY_MS": "0",
        "RMQ_DELAY_LEVEL": "0",
        "RMQ_WORKDIR": str(workdir),
        "HOME": str(workdir),
    }
    if scenario.tag:
        env["RMQ_TAG"] = scenario.tag
    if scenario.keys:
        env["RMQ_KEYS"] = scenario.keys
    if scenario.credentials:
        env["RMQ_ACCESS_KEY"], env["RMQ_SECRET_KEY"] = scenario.credentials
    return env


@contextlib.contextmanager
def judging_server(workdir: Path, target: str = EMBEDDED) -> Iterator[JudgingServer]:
    with JudgingServer(workdir, target) as server:
        yield server
