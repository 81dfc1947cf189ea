"""A client of the controller under test, playing the brokers of a broker-set of its own.

Each case makes a broker-set no other case uses (cases run in parallel against one controller) and plays
its brokers itself: it applies for their ids, heartbeats for them and registers them, as
``ReplicasManager`` does at a broker's start. The brokers' addresses are loopback ports nothing listens
on: the controller only records them.

Each broker makes its requests over a connection of its own, as real brokers do. The controller ties a
broker to the connection of its first heartbeat and closes that connection when the heartbeat runs out
(RMQ-CTL-HEARTBEAT): over one shared connection, a case letting its master die would lose the connection
its other brokers still use, at a moment set by the controller's scan.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rocketmq_spec.codec.bodies import decode_body, encode_body
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.custom_header import decode_header, encode_header
from rocketmq_spec.codec.fastjson import dumps_bytes
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.wire import Connection
from rocketmq_spec.spec.bodies import BodySpec
from rocketmq_spec.spec.codes import RequestCode
from rocketmq_spec.spec.controller import (
    CONTROLLER_REQUEST_HEADERS,
    CONTROLLER_RESPONSE_HEADERS,
    SYNC_STATE_SET,
)
from rocketmq_spec.spec.controller_rules import CHECK_CODE_SEPARATOR

from .support import expect_code, unique

CLUSTER = "rmq-spec-controller"
ALIVE_MS = 120_000
"""heartbeatTimeoutMills of the brokers a case keeps alive: longer than any case."""
CHECK_TIME = 1
"""The timestamp part of the check codes: any number does, only equality is compared."""


def address(broker_id: int) -> str:
    """A loopback address nothing listens on (ports below 1024 are refused at once)."""
    return f"127.0.0.1:{100 + broker_id}"


@dataclass
class Answer:
    command: RemotingCommand
    header: dict[str, Any]

    @property
    def code(self) -> int:
        return self.command.code


@dataclass
class BrokerSet:
    """The controller, as the brokers of one broker-set see it.

    ``connect`` opens a connection to the controller; ``connection`` is the set's own, for the requests no
    broker of it makes (a new broker's id, replica info, cleaning), and ``of(id)`` is broker ``id``'s."""

    connect: Callable[[], Connection]
    check: Check
    name: str = field(default_factory=lambda: unique("bs"))
    cluster: str = CLUSTER
    connection: Connection = field(init=False)
    _brokers: dict[int, Connection] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.connection = self.connect()

    def of(self, broker_id: int | None) -> Connection:
        """Broker ``broker_id``'s connection, opened at its first request (None: the set's own)."""
        if broker_id is None:
            return self.connection
        if broker_id not in self._brokers:
            self._brokers[broker_id] = self.connect()
        return self._brokers[broker_id]

    def call(self, code: RequestCode, values: dict[str, Any] | None = None,
             body: bytes | None = None, *, by: int | None = None) -> Answer:
        """A request over broker ``by``'s connection (None: the set's own)."""
        spec = CONTROLLER_REQUEST_HEADERS.get(code)
        ext = encode_header(spec, values) if spec is not None and values is not None else None
        response = self.of(by).call(int(code), ext, body)
        answer_spec = CONTROLLER_RESPONSE_HEADERS.get(code)
        header = decode_header(answer_spec, response.ext_fields) if answer_spec is not None else {}
        return Answer(response, header)

    def expect(self, what: str, answer: Answer, code: int) -> Answer:
        expect_code(self.check, what, answer.command, code)
        return answer

    def body(self, what: str, spec: BodySpec, answer: Answer) -> dict[str, Any]:
        self.check.that(f"{what}: has a body", bool(answer.command.body), expected=f"a {spec.java_class} "
            f"body",
                        actual=answer.command.body)
        return decode_body(spec, answer.command.body or b"{}")

    # -- the requests, as a broker makes them ---------------------------------------------------------------

    def next_id(self) -> Answer:
        return self.call(RequestCode.CONTROLLER_GET_NEXT_BROKER_ID, {"clusterName": self.cluster,
                         "brokerName": self.name})

    def apply(self, broker_id: int, check_code: str | None = None) -> Answer:
        code = check_code or f"{address(broker_id)}{CHECK_CODE_SEPARATOR}{CHECK_TIME}"
        return self.call(RequestCode.CONTROLLER_APPLY_BROKER_ID, {
            "clusterName": self.cluster, "brokerName": self.name, "appliedBrokerId": broker_id,
            "registerCheckCode": code}, by=broker_id)

    def heartbeat(self, broker_id: int | None, timeout_ms: int = ALIVE_MS) -> Answer:
        return self.call(RequestCode.BROKER_HEARTBEAT, {
            "clusterName": self.cluster, "brokerName": self.name, "brokerAddr": address(broker_id or 0),
            "brokerId": broker_id, "heartbeatTimeoutMills": timeout_ms}, by=broker_id)

    def register(self, broker_id: int) -> Answer:
        return self.call(RequestCode.CONTROLLER_REGISTER_BROKER, {
            "clusterName": self.cluster, "brokerName": self.name, "brokerId": broker_id,
            "brokerAddress": address(broker_id)}, by=broker_id)

    def elect(self, broker_id: int, *, designate: bool = False) -> Answer:
        return self.call(RequestCode.CONTROLLER_ELECT_MASTER, {
            "clusterName": self.cluster, "brokerName": self.name, "brokerId": broker_id,
            "designateElect": designate}, by=broker_id)

    def replica_info(self) -> Answer:
        return self.call(RequestCode.CONTROLLER_GET_REPLICA_INFO, {"brokerName": self.name})

    def alter(self, master: int, master_epoch: int, members: list[int], set_epoch: int) -> Answer:
        body = encode_body(SYNC_STATE_SET, {"syncStateSet": members, "syncStateSetEpoch": set_epoch})
        return self.call(RequestCode.CONTROLLER_ALTER_SYNC_STATE_SET, {
            "brokerName": self.name, "masterBrokerId": master, "masterEpoch": master_epoch}, body, by=master)

    def sync_state_data(self, *names: str) -> Answer:
        return self.call(RequestCode.CONTROLLER_GET_SYNC_STATE_DATA, None, dumps_bytes(list(names)))

    def clean(self, *, living: bool) -> Answer:
        return self.call(RequestCode.CLEAN_BROKER_DATA, {
            "clusterName": self.cluster, "brokerName": self.name, "isCleanLivingBroker": living})

    # -- set-ups --------------------------------------------------------------------------------------------

    def join(self, *broker_ids: int, alive: bool = True) -> None:
        """Brokers granted an id (in order, as GET_NEXT_BROKER_ID hands them out), heartbeating if
        ``alive``, and registered."""
        for broker_id in broker_ids:
            self.expect(f"apply for id {broker_id}", self.apply(broker_id), 0)
            if alive:
                self.expect(f"heartbeat of {broker_id}", self.heartbeat(broker_id), 0)
            self.expect(f"register {broker_id}", self.register(broker_id), 0)

    def with_master(self, master: int, *others: int) -> Answer:
        """A set whose first election made ``master`` its master (epochs 1, SyncStateSet {master})."""
        self.join(master, *others)
        return self.expect("first election", self.elect(master), 0)
