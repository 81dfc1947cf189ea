"""The hex log of a case: every byte sent and received, per connection, with its time.

The log is what makes a FAIL against another implementation debuggable without rerunning it, so it
records raw bytes as they crossed the socket (not re-encoded commands) and connection events such as
a close by the peer.
"""

from __future__ import annotations

import enum
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

HEX_BYTES_KEPT = 2048
"""Bytes of each chunk kept in the log: one case may send a 16 MiB frame, and a report of hundreds of
cases must stay small enough to open in a browser. The full length is always recorded."""


class Direction(enum.Enum):
    SENT = ">"
    RECEIVED = "<"
    EVENT = "*"


@dataclass(frozen=True)
class Record:
    at: float
    """Seconds since the case started."""
    connection: int
    direction: Direction
    length: int
    hex: str
    """Hex of the first HEX_BYTES_KEPT bytes, or the text of an event."""

    def to_json(self) -> dict[str, object]:
        return {"t": round(self.at, 6), "conn": self.connection, "dir": self.direction.value,
                "len": self.length, "hex": self.hex}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Record:
        return cls(float(data["t"]), int(data["conn"]), Direction(data["dir"]), int(data["len"]),
                   str(data["hex"]))

    def line(self) -> str:
        cut = "" if self.direction is Direction.EVENT or self.length * 2 == len(self.hex) else " ..."
        return f"+{self.at:9.4f} c{self.connection} {self.direction.value} {self.hex}{cut}"


class Exchange:
    """The log of one case; connections of the case share it, possibly from helper threads."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._start = clock()
        self._lock = threading.Lock()
        self._next_connection = 1
        self.records: list[Record] = []

    def new_connection(self) -> int:
        with self._lock:
            number = self._next_connection
            self._next_connection += 1
            return number

    def bytes(self, connection: int, direction: Direction, data: bytes) -> None:
        self._append(Record(self._clock() - self._start, connection, direction, len(data),
                            data[:HEX_BYTES_KEPT].hex()))

    def event(self, connection: int, text: str) -> None:
        self._append(Record(self._clock() - self._start, connection, Direction.EVENT, 0, text))

    def take_over(self, earlier: Exchange) -> dict[int, int]:
        """Put the log of ``earlier`` (a connection opened before its case) at the head of this one, on this
        log's clock (its times then are negative) and under this log's connection numbers; returns the
        numbers it gave (old -> new)."""
        numbers = {old: self.new_connection() for old in range(1, earlier._next_connection)}
        shift = earlier._start - self._start
        moved = [replace(r, at=r.at + shift, connection=numbers[r.connection]) for r in earlier.records]
        with self._lock:
            self.records[:0] = moved
        return numbers

    def _append(self, record: Record) -> None:
        with self._lock:
            self.records.append(record)

    def text(self) -> str:
        return "\n".join(r.line() for r in self.records)
