"""A client that stays online for admin tests: heartbeats as consumer and producer of a group and
answers the broker's calls (GET_CONSUMER_RUNNING_INFO with a ConsumerRunningInfo) as a Java client does."""

from __future__ import annotations

import socket
import threading
import time

from rocketmq_spec.codec import fastjson
from rocketmq_spec.codec.bodies import encode_body
from rocketmq_spec.codec.command import RemotingCommand, encode
from rocketmq_spec.codec.framing import FrameDecoder, FrameReceived
from rocketmq_spec.conformance.cases.messaging import subscription
from rocketmq_spec.spec.bodies import HEARTBEAT_DATA
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.version import CURRENT_VERSION

HEARTBEAT_INTERVAL = 20.0


class OnlineClient(threading.Thread):
    """Heartbeats as consumer and producer of a group and answers the broker's calls (or, with
    ``answering`` off, takes them without a word, as a hung client would)."""

    def __init__(self, broker: str, namesrv: str, group: str, topic: str, client_id: str, *,
                 answering: bool = True) -> None:
        super().__init__(daemon=True)
        self.namesrv, self.group, self.topic, self.client_id = namesrv, group, topic, client_id
        self.answering = answering
        self.calls: list[RemotingCommand] = []
        host, port = broker.rsplit(":", 1)
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
            "clientID": self.client_id, "consumerDataSet": [subscription(self.group, self.topic)],
            "producerDataSet": [{"groupName": f"{self.group}_producer"}]})

    def _running_info(self) -> bytes:
        sub = subscription(self.group, self.topic)["subscriptionDataSet"]
        return fastjson.dumps({"mqTable": {}, "properties": {
            "PROP_CLIENT_VERSION": "V4_9_8", "PROP_CONSUME_TYPE": "CONSUME_PASSIVELY",
            "PROP_CONSUMEORDERLY": "false", "PROP_NAMESERVER_ADDR": self.namesrv,
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
                if not isinstance(event, FrameReceived) or event.command.is_response:
                    continue
                self.calls.append(event.command)
                if self.answering and not event.command.is_oneway:
                    body = self._running_info() \
                        if event.command.code == RequestCode.GET_CONSUMER_RUNNING_INFO else None
                    self.sock.sendall(encode(event.command.response(
                        ResponseCode.SUCCESS, None, None, body, version=int(CURRENT_VERSION))))

    def stop(self) -> None:
        self.stopped.set()
        self.join(2)
        self.sock.close()
