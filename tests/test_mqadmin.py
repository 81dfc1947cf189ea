"""Apache RocketMQ's own mqadmin against the reference broker: every command of the admin area runs.

Needs a launcher in ``RMQ_MQADMIN`` (``/path/to/rocketmq/bin/mqadmin`` or any wrapper taking mqadmin's
arguments); skipped without one. A consumer and a producer of the scene's group are kept online by a
small client here, which answers GET_CONSUMER_RUNNING_INFO as a Java consumer does, so the commands
that ask a client (consumerStatus) or list connections have someone to find.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest

from codec import fastjson
from codec.bodies import encode_body
from codec.command import RemotingCommand, encode
from codec.framing import FrameDecoder, FrameReceived
from conformance.cases.messaging import subscription
from reference_broker.embedded import SyncEmbeddedRocketMQ
from spec.bodies import HEARTBEAT_DATA
from spec.codes import RequestCode, ResponseCode
from spec.version import CURRENT_VERSION
from tests.mqadmin_commands import COMMANDS, AdminCommand, Scene, failed, launcher, prepare, run

LAUNCHER = launcher()
pytestmark = pytest.mark.skipif(LAUNCHER is None, reason="RMQ_MQADMIN names no mqadmin launcher")
CLIENT_ID = "127.0.0.1@mqadmin-test"
HEARTBEAT_INTERVAL = 20.0
TIMEOUT_MARKER = "RemotingTimeoutException"


class OnlineClient(threading.Thread):
    """Heartbeats as consumer and producer of the scene's group and answers the broker's calls."""

    def __init__(self, scene: Scene) -> None:
        super().__init__(daemon=True)
        self.scene = scene
        host, port = scene.broker.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)))
        self.stopped = threading.Event()
        self.beat_at = 0.0
        self._beat()

    def _beat(self) -> None:
        """A heartbeat now and then, as a Java client sends one every 30 s: the broker drops a silent
        channel after 120 s."""
        if time.monotonic() - self.beat_at >= HEARTBEAT_INTERVAL:
            self.beat_at = time.monotonic()
            self.sock.sendall(encode(RemotingCommand.request(
                RequestCode.HEART_BEAT, body=self._heartbeat(), opaque=1, version=int(CURRENT_VERSION))))

    def _heartbeat(self) -> bytes:
        return encode_body(HEARTBEAT_DATA, {
            "clientID": CLIENT_ID, "consumerDataSet": [subscription(self.scene.group, self.scene.topic)],
            "producerDataSet": [{"groupName": f"{self.scene.group}_producer"}]})

    def _running_info(self) -> bytes:
        sub = subscription(self.scene.group, self.scene.topic)["subscriptionDataSet"]
        return fastjson.dumps({"mqTable": {}, "properties": {
            "PROP_CLIENT_VERSION": "V4_9_8", "PROP_CONSUME_TYPE": "CONSUME_PASSIVELY",
            "PROP_CONSUMEORDERLY": "false", "PROP_NAMESERVER_ADDR": self.scene.ns,
            "PROP_CONSUMER_START_TIMESTAMP": str(int(time.time() * 1000)), "PROP_THREADPOOL_CORE_SIZE": "1"},
            "statusTable": {}, "subscriptionSet": sub}).encode()

    def run(self) -> None:
        decoder = FrameDecoder()
        self.sock.settimeout(0.5)
        while not self.stopped.is_set():
            try:
                self._beat()
                data = self.sock.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                return
            if not data:
                return
            for event in decoder.receive_data(data):
                if isinstance(event, FrameReceived) and not event.command.is_response \
                        and not event.command.is_oneway:
                    body = self._running_info() \
                        if event.command.code == RequestCode.GET_CONSUMER_RUNNING_INFO else None
                    self.sock.sendall(encode(event.command.response(
                        ResponseCode.SUCCESS, None, None, body, version=int(CURRENT_VERSION))))

    def stop(self) -> None:
        self.stopped.set()
        self.join(2)
        self.sock.close()


@pytest.fixture(scope="module")
def scene() -> Iterator[Scene]:
    with SyncEmbeddedRocketMQ() as mq:
        prepared = prepare(mq.namesrv_addr, mq.broker_addr, mq.embedded.broker_config.broker_name)
        client = OnlineClient(prepared)
        client.start()
        try:
            yield Scene(**{**prepared.__dict__, "client_id": CLIENT_ID})
        finally:
            client.stop()


@pytest.mark.parametrize("command", COMMANDS, ids=[c.name for c in COMMANDS])
def test_mqadmin_command(command: AdminCommand, scene: Scene) -> None:
    assert LAUNCHER is not None
    output = run(LAUNCHER, command.argv(scene))
    if TIMEOUT_MARKER in output:  # mqadmin's own 3 s client timeout, hit when the machine is loaded
        output = run(LAUNCHER, command.argv(scene))
    assert not failed(output), output
