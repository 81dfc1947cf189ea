"""The session layer of the test client: routes, heartbeats, offsets, unregistration, and their breaks."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from connection import Closed, Connection, broken

from rocketmq_spec.codec.bodies import decode_body
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.spec.bodies import TOPIC_ROUTE_DATA
from rocketmq_spec.spec.client import (
    DEFAULT_TOPIC_QUEUE_NUMS,
    HEARTBEAT_INTERVAL,
    PERSIST_OFFSET_INTERVAL,
    POLL_NAMESERVER_INTERVAL,
)
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.system_topics import DEFAULT_TOPIC

ENV = os.environ
TOPIC = ENV["RMQ_TOPIC"]
GROUP = ENV["RMQ_GROUP"]
_lock = threading.Lock()
FIRST_HEARTBEAT_S = 1.0
"""The first tick of Java's heartbeat schedule (MQClientInstance.startScheduledTask: 1000 ms)."""


def emit(event: str, **fields: Any) -> None:
    with _lock:
        sys.stdout.write(json.dumps({"event": event, **fields}) + "\n")
        sys.stdout.flush()


@dataclass
class Route:
    broker: str
    write_queues: int
    read_queues: int


@dataclass
class Client:
    producer: bool = False
    consumer: bool = False
    client_id: str = field(
        default_factory=lambda: (
            "nohost" if broken("bad-client-id") else f"127.0.0.1@{os.getpid()}#{time.monotonic_ns()}"
        )
    )
    route: Route | None = None
    offsets: dict[int, int] = field(default_factory=dict)
    """queue -> next offset to consume (what a commit reports)."""
    started_offsets: dict[int, int] = field(default_factory=dict)
    _namesrv: Connection | None = None
    _broker: Connection | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    unregistered: bool = False
    sent: bool = False
    """Whether a send was made (``no-heartbeat-after-send`` stops heartbeats from then on)."""

    # -- connections ------------------------------------------------------------------------------------

    check_answer: Callable[[Connection, RemotingCommand], None] | None = None
    """Answers the broker's CHECK_TRANSACTION_STATE, once a transactional producer set it."""

    def on_request(self, connection: Connection, command: RemotingCommand) -> None:
        """The broker's requests: a transaction check-back goes to the producer's checker."""
        if command.code == RequestCode.CHECK_TRANSACTION_STATE and self.check_answer is not None:
            self.check_answer(connection, command)

    def namesrv(self) -> Connection:
        if self._namesrv is None or self._namesrv.closed:
            self._namesrv = Connection(ENV["RMQ_NAMESRV"], self.on_request)
        return self._namesrv

    def broker(self) -> Connection:
        assert self.route is not None
        if self._broker is not None and self._broker.closed and broken("no-reconnect"):
            raise Closed("the broker connection was lost and this client does not reconnect")
        if self._broker is None or self._broker.closed:
            self._broker = Connection(self.route.broker, self.on_request)
        return self._broker

    # -- routes -----------------------------------------------------------------------------------------

    def fetch_route(self) -> None:
        topic = DEFAULT_TOPIC if broken("no-route-first") else TOPIC
        answer = self.namesrv().request(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": topic})
        assert answer is not None
        template = answer.code == ResponseCode.TOPIC_NOT_EXIST and not broken("no-tbw102")
        if template:
            answer = self.namesrv().request(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": DEFAULT_TOPIC})
            assert answer is not None
        if answer.code != ResponseCode.SUCCESS:
            raise RuntimeError(f"no route for {topic}: code {answer.code} {answer.remark}")
        data = decode_body(TOPIC_ROUTE_DATA, answer.body or b"{}")
        queue = data["queueDatas"][0]
        broker = data["brokerDatas"][0]["brokerAddrs"]
        address = broker.get(0) or broker.get("0")
        cap = DEFAULT_TOPIC_QUEUE_NUMS.value if template else queue["writeQueueNums"]
        self.route = Route(address, min(queue["writeQueueNums"], cap), min(queue["readQueueNums"], cap))

    # -- heartbeats -------------------------------------------------------------------------------------

    def heartbeat(self) -> None:
        if broken("skip-heartbeat") or (self.sent and broken("no-heartbeat-after-send")):
            return
        data: dict[str, Any] = {
            "clientID": "" if broken("bad-heartbeat") else self.client_id,
            "producerDataSet": [],
            "consumerDataSet": [],
        }
        if self.producer:
            data["producerDataSet"].append({"groupName": GROUP})
        if self.consumer:
            data["consumerDataSet"].append(
                {
                    "groupName": GROUP,
                    "consumeType": "CONSUME_PASSIVELY",
                    "messageModel": "CLUSTERING",
                    "consumeFromWhere": "CONSUME_FROM_LAST_OFFSET",
                    "unitMode": False,
                    "subscriptionDataSet": [
                        {
                            "classFilterMode": False,
                            "topic": TOPIC,
                            "subString": "*",
                            "tagsSet": [],
                            "codeSet": [],
                            "subVersion": int(time.time() * 1000),
                            "expressionType": "TAG",
                        }
                    ],
                }
            )
        self.broker().request(RequestCode.HEART_BEAT, {}, json.dumps(data).encode())

    # -- offsets ----------------------------------------------------------------------------------------

    def commit(self) -> None:
        if broken("no-commit"):
            return
        for queue_id, offset in sorted(self.offsets.items()):
            reported = offset + 100 if broken("commit-too-far") else offset
            self.broker().request(
                RequestCode.UPDATE_CONSUMER_OFFSET,
                {
                    "consumerGroup": GROUP,
                    "topic": TOPIC,
                    "queueId": str(queue_id),
                    "commitOffset": str(reported),
                },
                oneway=True,
            )

    # -- the periodic tasks of a started client --------------------------------------------------------

    def start(self) -> None:
        """Java's order: a consumer heartbeats at start, before it pulls; a producer's start() heartbeat finds
        no broker before its first send fetches a route, so its first is the schedule's, 1 s after start."""
        self.fetch_route()
        if self.consumer:
            self.heartbeat()
        threading.Thread(target=self._periodic, daemon=True).start()

    def _periodic(self) -> None:
        """Route, heartbeat and offset tasks at the Java client's periods (one tick per second), and the
        heartbeat of MQClientInstance.startScheduledTask's first tick, 1 s after start."""
        started = time.monotonic()
        if not self._stop.wait(FIRST_HEARTBEAT_S):
            self._run("heartbeat")
        done = {"route": 0, "heartbeat": 0, "commit": 0}
        periods = {
            "route": POLL_NAMESERVER_INTERVAL.value / 1000,
            "heartbeat": HEARTBEAT_INTERVAL.value / 1000,
            "commit": PERSIST_OFFSET_INTERVAL.value / 1000,
        }
        while not self._stop.wait(1.0):
            elapsed = time.monotonic() - started
            for task, period in periods.items():
                if int(elapsed // period) <= done[task]:
                    continue
                done[task] = int(elapsed // period)
                self._run(task)

    def _run(self, task: str) -> None:
        try:
            if task == "route" and not broken("no-route-poll"):
                self.fetch_route()
            elif task == "heartbeat" and not broken("heartbeat-once"):
                self.heartbeat()
            elif task == "commit" and self.consumer and not broken("commit-only-shutdown"):
                self.commit()
        except (Closed, TimeoutError, RuntimeError, OSError) as exc:
            emit("error", stage=task, message=str(exc))

    def shutdown(self) -> None:
        self._stop.set()
        try:
            if self.consumer and not broken("no-final-commit"):
                self.commit()
            if not broken("skip-unregister"):
                for kind in (["producerGroup"] if self.producer else []) + (
                    ["consumerGroup"] if self.consumer else []
                ):
                    self.broker().request(
                        RequestCode.UNREGISTER_CLIENT, {"clientID": self.client_id, kind: GROUP}, timeout=3.0
                    )
            if broken("late-request"):
                self.heartbeat()
        except (Closed, TimeoutError, OSError) as exc:
            emit("error", stage="shutdown", message=str(exc))
        for connection in (self._broker, self._namesrv):
            if connection is not None:
                connection.close()
