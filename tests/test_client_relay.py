"""The judging relay of ``rmq-conformance client``: recording, scripted answers, route rewriting."""

from __future__ import annotations

import socket
import socketserver
import threading
from collections.abc import Iterator

import pytest

from rocketmq_spec.codec.command import RemotingCommand, decode, encode
from rocketmq_spec.codec.framing import FrameDecoder, FrameReceived
from rocketmq_spec.conformance.clients import script as s
from rocketmq_spec.conformance.clients.recording import ConnectionEvent, Recording, Role, answer_to, requests
from rocketmq_spec.conformance.clients.relay import Close, RelayConnection, ToClient, ToServer
from rocketmq_spec.conformance.clients.relay_server import Relay
from rocketmq_spec.spec.codes import RequestCode, ResponseCode

SEND = RequestCode.SEND_MESSAGE_V2
ROUTE = RequestCode.GET_ROUTEINFO_BY_TOPIC


def _connection(*rules: s.Rule, role: Role = Role.BROKER) -> RelayConnection:
    return RelayConnection(role, Recording(), s.Script(rules), {"127.0.0.1:10911": "127.0.0.1:4242"})


def test_a_request_passes_on_as_written_and_is_recorded() -> None:
    relay = _connection()
    frame = encode(RemotingCommand.request(SEND, {"a": "g"}, b"body", opaque=7))
    assert relay.from_client(frame) == [ToServer(frame)]
    (recorded,) = relay.recording.frames
    assert recorded.outbound and recorded.command.code == SEND and recorded.length == len(frame)


def test_a_scripted_answer_replaces_the_servers() -> None:
    relay = _connection(s.answer(SEND, ResponseCode.SYSTEM_ERROR, remark="busy"))
    (action,) = relay.from_client(encode(RemotingCommand.request(SEND, {}, opaque=9)))
    assert isinstance(action, ToClient)
    answer = decode(action.data)
    assert (answer.code, answer.opaque, answer.is_response, answer.remark) == (ResponseCode.SYSTEM_ERROR, 9,
                                                                                True, "busy")
    request = requests(relay.recording.frames, SEND)[0]
    found = answer_to(relay.recording.frames, request)
    assert found is not None and found.scripted
    # the rule acted once: the next send passes on
    assert isinstance(relay.from_client(encode(RemotingCommand.request(SEND, {}, opaque=10)))[0], ToServer)


def test_skip_and_where_select_the_request_a_rule_acts_on() -> None:
    rule = s.answer(SEND, ResponseCode.SYSTEM_BUSY, skip=1, where={"b": "T"})
    script = s.Script((rule,))
    other = RemotingCommand.request(SEND, {"b": "U"})
    mine = RemotingCommand.request(SEND, {"b": "T"})
    assert script.decide(Role.BROKER, other) is None
    assert script.decide(Role.BROKER, mine) is None  # skipped
    assert script.decide(Role.BROKER, mine) is rule
    assert script.decide(Role.BROKER, mine) is None  # used up


def test_drop_closes_and_delay_holds_the_request() -> None:
    relay = _connection(s.drop(SEND, times=1), s.delay(ROUTE, 1.5, role=Role.BROKER))
    assert isinstance(relay.from_client(encode(RemotingCommand.request(SEND, {})))[0], Close)
    (held,) = relay.from_client(encode(RemotingCommand.request(ROUTE, {"topic": "T"})))
    assert isinstance(held, ToServer) and held.delay_s == 1.5
    assert relay.recording.events[-1].kind is ConnectionEvent.CLOSED_BY_RELAY


def test_route_answers_name_the_relays_broker_address() -> None:
    relay = _connection(role=Role.NAMESRV)
    relay.from_client(encode(RemotingCommand.request(ROUTE, {"topic": "T"}, opaque=3)))
    route = b'{"brokerDatas":[{"brokerAddrs":{0:"127.0.0.1:10911"}}]}'
    (action,) = relay.from_server(encode(RemotingCommand(0, opaque=3, flag=1, body=route)))
    assert isinstance(action, ToClient)
    assert decode(action.data).body == b'{"brokerDatas":[{"brokerAddrs":{0:"127.0.0.1:4242"}}]}'
    # an answer to anything else keeps its bytes
    relay.from_client(encode(RemotingCommand.request(SEND, {}, opaque=4)))
    other = encode(RemotingCommand(0, opaque=4, flag=1, body=route))
    assert relay.from_server(other) == [ToClient(other)]


def test_a_broken_frame_closes_the_connection_and_is_recorded() -> None:
    relay = _connection()
    (action,) = relay.from_client(b"\x00\x00\x00\x02\x00\x00")
    assert isinstance(action, Close)
    assert relay.recording.events[-1].kind is ConnectionEvent.REFUSED_FRAME


class _Answering(socketserver.BaseRequestHandler):
    """An upstream that answers every request SUCCESS with its opaque."""

    def handle(self) -> None:
        decoder = FrameDecoder()
        while data := self.request.recv(4096):
            for event in decoder.receive_data(data):
                assert isinstance(event, FrameReceived)
                self.request.sendall(encode(event.command.response(0, ext_fields={"x": "1"})))


@pytest.fixture
def upstream() -> Iterator[str]:
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Answering)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _call(address: str, command: RemotingCommand) -> RemotingCommand | None:
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(encode(command))
        decoder = FrameDecoder()
        while data := sock.recv(4096):
            for event in decoder.receive_data(data):
                assert isinstance(event, FrameReceived)
                return event.command
    return None


def test_the_relay_server_records_both_ways_and_applies_the_script(upstream: str) -> None:
    relay = Relay({Role.BROKER: upstream})
    relay.start()
    try:
        with relay.scenario(s.Script((s.answer(SEND, ResponseCode.TOPIC_NOT_EXIST),))) as recording:
            address = relay.addresses[Role.BROKER]
            refused = _call(address, RemotingCommand.request(SEND, {}, opaque=1))
            passed = _call(address, RemotingCommand.request(SEND, {}, opaque=2))
        assert refused is not None and refused.code == ResponseCode.TOPIC_NOT_EXIST
        assert passed is not None and passed.code == 0 and passed.ext_fields == {"x": "1"}
        frames, events = recording.snapshot()
        seen = [(f.outbound, f.command.opaque) for f in frames]
        assert seen == [(True, 1), (False, 1), (True, 2), (False, 2)]
        assert sum(e.kind is ConnectionEvent.OPENED for e in events) == 2
    finally:
        relay.stop()
