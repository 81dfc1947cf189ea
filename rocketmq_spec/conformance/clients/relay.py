"""The sans-IO core of the judging relay: one client connection and its upstream, bytes in, actions out.

The relay decodes every frame both ways with :class:`~rocketmq_spec.codec.framing.FrameDecoder`, records
it, lets the case's :class:`~.script.Script` answer, delay or drop a request, and rewrites the broker's
address in route answers to the relay's own, so that a client which follows routes reaches the broker
through the relay too. It forwards the original bytes of every frame it does not change, so a client's
exact encoding reaches the server. The socket side is :mod:`.relay_server`.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping
from dataclasses import dataclass, replace

from rocketmq_spec.codec.command import RemotingCommand, encode
from rocketmq_spec.codec.framing import FrameDecoder, FrameReceived, FrameRejected
from rocketmq_spec.conformance.clients.recording import ConnectionEvent, Recording, Role
from rocketmq_spec.conformance.clients.script import Action, Script
from rocketmq_spec.spec.codes import RequestCode
from rocketmq_spec.spec.frame import HEADER_LENGTH_MASK, LENGTH_FIELD_SIZE, TYPE_WORD_SIZE, SerializeType
from rocketmq_spec.spec.json_header import SERIALIZE_TYPE_KEY


def _declared_type(frame: bytes, command: RemotingCommand) -> str | None:
    """``serializeTypeCurrentRPC`` of a JSON header (the decoder does not keep it)."""
    if command.serialize_type is not SerializeType.JSON:
        return None
    (header_length,) = struct.unpack_from(">i", frame, LENGTH_FIELD_SIZE)
    try:
        header = json.loads(frame[LENGTH_FIELD_SIZE + TYPE_WORD_SIZE :][: header_length & HEADER_LENGTH_MASK])
    except ValueError:
        return None
    value = header.get(SERIALIZE_TYPE_KEY) if isinstance(header, dict) else None
    return None if value is None else str(value)


@dataclass(frozen=True)
class ToServer:
    data: bytes
    delay_s: float = 0.0


@dataclass(frozen=True)
class ToClient:
    data: bytes


@dataclass(frozen=True)
class Close:
    """Close both sides: the client broke the framing, or a rule dropped the connection."""

    reason: str


Action_ = ToServer | ToClient | Close


class RelayConnection:
    """``addresses`` maps upstream broker addresses to the relay's (applied to route answers)."""

    def __init__(
        self, role: Role, recording: Recording, script: Script, addresses: Mapping[str, str] | None = None
    ) -> None:
        self.role = role
        self.recording = recording
        self.script = script
        self.addresses = dict(addresses or {})
        self.number = recording.new_connection(role)
        self._from_client = FrameDecoder()
        self._from_server = FrameDecoder()
        self._pending: dict[int, int] = {}
        """opaque -> request code of the client's requests passed on, to know what an answer answers."""

    def from_client(self, data: bytes) -> list[Action_]:
        actions: list[Action_] = []
        for event in self._from_client.receive_data(data):
            if isinstance(event, FrameRejected):
                self.recording.event(self.role, self.number, ConnectionEvent.REFUSED_FRAME, str(event.error))
                return [*actions, Close(f"the client broke the framing: {event.error}")]
            actions += self._client_frame(event)
        return actions

    def _client_frame(self, event: FrameReceived) -> list[Action_]:
        command = event.command
        self.recording.frame(
            self.role,
            self.number,
            True,
            command,
            len(event.frame),
            declared_type=_declared_type(event.frame, command),
        )
        if command.is_response:
            return [ToServer(event.frame)]  # the client answering a server's request (a check-back)
        rule = self.script.decide(self.role, command)
        if rule is not None and rule.action is Action.DROP:
            self.recording.event(
                self.role,
                self.number,
                ConnectionEvent.CLOSED_BY_RELAY,
                f"dropped on request code {command.code}",
            )
            return [Close(f"script dropped the connection on code {command.code}")]
        if rule is not None and rule.action is Action.ANSWER:
            if command.is_oneway:
                return []
            answer = command.response(rule.answer_code, rule.remark, ext_fields=rule.ext_fields or None)
            self.recording.frame(self.role, self.number, False, answer, 0, scripted=True)
            return [ToClient(encode(answer))]
        if not command.is_oneway:
            self._pending[command.opaque] = command.code
        return [ToServer(event.frame, rule.delay_s if rule is not None else 0.0)]

    def from_server(self, data: bytes) -> list[Action_]:
        actions: list[Action_] = []
        for event in self._from_server.receive_data(data):
            if isinstance(event, FrameRejected):
                return [*actions, Close(f"the server broke the framing: {event.error}")]
            command = event.command
            frame = event.frame
            answered = self._pending.pop(command.opaque, None) if command.is_response else None
            if answered == RequestCode.GET_ROUTEINFO_BY_TOPIC:
                command, frame = self._rewritten(command, frame)
            self.recording.frame(self.role, self.number, False, command, len(frame))
            actions.append(ToClient(frame))
        return actions

    def _rewritten(self, command: RemotingCommand, frame: bytes) -> tuple[RemotingCommand, bytes]:
        """A route answer with the relay's addresses for the broker's: the text of an address appears in
        a route body only as a brokerAddrs value, so a byte replacement is exact."""
        body = command.body or b""
        new_body = body
        for upstream, relay in self.addresses.items():
            new_body = new_body.replace(upstream.encode(), relay.encode())
        if new_body == body:
            return command, frame
        changed = replace(command, body=new_body)
        return changed, encode(changed)

    def client_closed(self) -> None:
        self.recording.event(self.role, self.number, ConnectionEvent.CLOSED_BY_CLIENT)
