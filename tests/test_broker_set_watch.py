"""``ReplicaWatch``: the failover benchmark's election poll asks over one kept connection, reopened after a
failure (a controller played by a socket server that counts connections and answers GET_REPLICA_INFO)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from rocketmq_spec.codec.command import encode
from rocketmq_spec.codec.custom_header import encode_header
from rocketmq_spec.codec.framing import FrameDecoder, FrameReceived
from rocketmq_spec.spec.codes import ResponseCode
from rocketmq_spec.spec.controller import GET_REPLICA_INFO_RESPONSE
from rocketmq_spec.targets.broker_set import ReplicaInfo, ReplicaWatch

ANSWER = {"masterBrokerId": 2, "masterAddress": "127.0.0.1:102", "masterEpoch": 3}
BODY = b'{"syncStateSet":[2],"syncStateSetEpoch":4}'


class Controller:
    """Answers every request on a connection until it has answered ``per_connection`` of them, then closes
    it; counts the connections it accepted."""

    def __init__(self, per_connection: int) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.addr = f"127.0.0.1:{self.listener.getsockname()[1]}"
        self.per_connection = per_connection
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.accepted += 1
            with conn:
                decoder, answered = FrameDecoder(), 0
                while answered < self.per_connection and (data := conn.recv(65536)):
                    for event in decoder.receive_data(data):
                        assert isinstance(event, FrameReceived)
                        header = encode_header(GET_REPLICA_INFO_RESPONSE, ANSWER)
                        conn.sendall(encode(event.command.response(ResponseCode.SUCCESS, None, header, BODY)))
                        answered += 1


@pytest.fixture
def controller() -> Iterator[Controller]:
    served = Controller(per_connection=3)
    yield served
    served.listener.close()


def test_polls_share_one_connection_and_a_lost_one_is_reopened(controller: Controller) -> None:
    expected = ReplicaInfo(2, 3, frozenset({2}))
    with ReplicaWatch(controller.addr, "set") as watch:
        assert [watch.info() for _ in range(3)] == [expected] * 3
        assert controller.accepted == 1
        assert watch.info() is None  # the controller closed the connection after three answers
        assert watch.info() == expected
        assert controller.accepted == 2
