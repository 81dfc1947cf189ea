"""What a judging relay saw: every command both ways, per connection, with its time.

Cases judge a client from this log, so it keeps decoded commands (not re-encoded ones) with the role of
the server they went to, plus connection openings and closings and frames the decoder refused.
"""

from __future__ import annotations

import enum
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from rocketmq_spec.codec.command import RemotingCommand


class Role(enum.Enum):
    """Which server of the judging pair a connection reached."""

    NAMESRV = "namesrv"
    BROKER = "broker"


@dataclass(frozen=True)
class Frame:
    at: float
    """Seconds since the recording started."""
    role: Role
    connection: int
    outbound: bool
    """True for what the client wrote, False for what the relay or the server answered."""
    command: RemotingCommand
    length: int
    """Bytes of the frame as it crossed the socket, length word included."""
    scripted: bool = False
    """An answer the relay made up (a case's script), not the server's."""
    declared_type: str | None = None
    """A JSON header's ``serializeTypeCurrentRPC`` as written, when it has the key."""

    @property
    def is_request(self) -> bool:
        return not self.command.is_response

    def to_json(self) -> dict[str, object]:
        """The report's frame record (the broker suite's ``frames`` entries carry hex; a client case's
        carry the decoded command, which is what a reader of a client failure wants)."""
        cmd = self.command
        return {
            "t": round(self.at, 6),
            "conn": self.connection,
            "dir": ">" if self.outbound else "<",
            "len": self.length,
            "hex": f"{self.role.value} code={cmd.code} opaque={cmd.opaque} flag={cmd.flag} "
            f"lang={cmd.language} v={cmd.version} ext={cmd.ext_fields or {}} "
            f"body={len(cmd.body or b'')}B" + (" (scripted)" if self.scripted else ""),
        }


class ConnectionEvent(enum.Enum):
    OPENED = "opened"
    CLOSED_BY_CLIENT = "closed by the client"
    CLOSED_BY_RELAY = "closed by the relay"
    REFUSED_FRAME = "frame refused"


@dataclass(frozen=True)
class Event:
    at: float
    role: Role
    connection: int
    kind: ConnectionEvent
    detail: str = ""


class Recording:
    """The log of one scenario; the relay's connections append to it from the relay's thread."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._start = clock()
        self.wall_start = time.time()
        """The wall clock at the start, to compare a frame's time with times a client wrote."""
        self._lock = threading.Lock()
        self._next = 1
        self.frames: list[Frame] = []
        self.events: list[Event] = []

    def now(self) -> float:
        return self._clock() - self._start

    def new_connection(self, role: Role) -> int:
        with self._lock:
            number = self._next
            self._next += 1
        self.event(role, number, ConnectionEvent.OPENED)
        return number

    def frame(
        self,
        role: Role,
        connection: int,
        outbound: bool,
        command: RemotingCommand,
        length: int,
        *,
        scripted: bool = False,
        declared_type: str | None = None,
    ) -> None:
        with self._lock:
            self.frames.append(
                Frame(self.now(), role, connection, outbound, command, length, scripted, declared_type)
            )

    def event(self, role: Role, connection: int, kind: ConnectionEvent, detail: str = "") -> None:
        with self._lock:
            self.events.append(Event(self.now(), role, connection, kind, detail))

    def snapshot(self) -> tuple[list[Frame], list[Event]]:
        with self._lock:
            return list(self.frames), list(self.events)


def requests(frames: Iterable[Frame], *codes: int, role: Role | None = None) -> list[Frame]:
    """The client's requests among ``frames`` (of ``codes`` when given, to ``role`` when given)."""
    return [
        f
        for f in frames
        if f.outbound
        and f.is_request
        and (not codes or f.command.code in codes)
        and (role is None or f.role is role)
    ]


def answer_to(frames: Iterable[Frame], request: Frame) -> Frame | None:
    """The response on the request's connection with its opaque, if one came."""
    for f in frames:
        if (
            not f.outbound
            and f.command.is_response
            and f.connection == request.connection
            and f.command.opaque == request.command.opaque
            and f.at >= request.at
        ):
            return f
    return None
