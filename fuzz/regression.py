"""Regression cases: what the live fuzzer found, as frames (hex) plus the behaviour expected of a target.

A case file is JSON, one per finding, replayable against any target by ``rmq-fuzz --replay`` and by the
conformance suite:

```
{"format": "rmq-fuzz-regression/1", "id": "timeout-3fa1c2d4e5b6", "finding": "timeout",
 "listener": "broker", "clauses": ["RMQ-FRAME-CLOSE-ON-ERROR"], "mutations": ["bit_flip"],
 "note": "...", "seed": 7, "batch": 12,
 "connections": [{"frames": ["0000001a...", ...], "expect": "close"}],
 "expect_alive": true}
```

Each connection's frames are sent back to back on a fresh connection to the listener; ``expect`` is
``close`` (the stream holds a complete malformed frame, so the target must close the connection without
an answer, RMQ-FRAME-CLOSE-ON-ERROR), ``wait`` (it ends inside a frame that will be malformed: judged only
against a named idle timeout) or ``any`` (answers are allowed); see ``fuzz.oracle``. After all
connections, the target must still answer a control request (``expect_alive``). The raw bytes of each
connection are also kept beside the JSON as ``<id>.c<N>.bin`` so a reproducer can be sent with ``nc``.
"""

from __future__ import annotations

import enum
import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fuzz.corpus import Listener
from fuzz.oracle import Expect, expectation
from fuzz.target import Health, Target
from fuzz.wire import Observed, WireConnection
from spec.frame import FRAME_CLOSE_ON_ERROR

FORMAT = "rmq-fuzz-regression/1"
REGRESSIONS_DIR = Path(__file__).resolve().parent / "regressions"
"""Cases kept in the repository, replayed by the test suite and the conformance suite."""

RESPONSE_TIMEOUT = 2.0
"""Seconds a target gets to close a connection after a malformed frame; loopback closes take
microseconds, so a target still holding the connection after this has decided not to close it."""


class FindingClass(enum.Enum):
    CRASH = "crash"
    HANG = "hang"
    TIMEOUT = "timeout"
    """A complete malformed frame left open and unanswered for the whole slow-close limit."""
    SLOW_CLOSE = "slow-close"
    """A complete malformed frame closed only after the response timeout: the target spent seconds on it."""
    IDLE = "idle"
    """A connection inside a frame still open past the target's named idle timeout."""
    MEMORY = "memory"


@dataclass
class ConnectionCase:
    frames: list[bytes]

    @property
    def stream(self) -> bytes:
        return b"".join(self.frames)

    @property
    def expect(self) -> Expect:
        return expectation(self.stream)


@dataclass
class RegressionCase:
    finding: FindingClass
    listener: Listener
    connections: list[ConnectionCase]
    mutations: list[str] = field(default_factory=list)
    note: str = ""
    seed: int | None = None
    batch: int | None = None
    expect_alive: bool = True

    @property
    def id(self) -> str:
        streams = [self.listener.value.encode(), *(c.stream for c in self.connections)]
        digest = hashlib.sha1(b"|".join(streams)).hexdigest()[:12]
        return f"{self.finding.value}-{digest}"

    @property
    def clauses(self) -> list[str]:
        closing = any(c.expect is Expect.CLOSE for c in self.connections)
        return [FRAME_CLOSE_ON_ERROR.id] if closing else []

    def to_json(self) -> dict[str, object]:
        return {
            "format": FORMAT, "id": self.id, "finding": self.finding.value, "listener": self.listener.value,
            "clauses": self.clauses, "mutations": self.mutations, "note": self.note, "seed": self.seed,
            "batch": self.batch, "expect_alive": self.expect_alive,
            "connections": [{"frames": [f.hex() for f in c.frames], "expect": c.expect.value}
                            for c in self.connections],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RegressionCase:
        if data.get("format") != FORMAT:
            raise ValueError(f"not a {FORMAT} case: format {data.get('format')!r}")
        connections = [ConnectionCase([bytes.fromhex(f) for f in c["frames"]]) for c in data["connections"]]
        return cls(FindingClass(data["finding"]), Listener(data["listener"]), connections,
                   list(data.get("mutations") or []), str(data.get("note") or ""), data.get("seed"),
                   data.get("batch"), bool(data.get("expect_alive", True)))

    def save(self, directory: Path) -> Path:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{self.id}.json"
        path.write_text(json.dumps(self.to_json(), indent=1) + "\n")
        for index, connection in enumerate(self.connections):
            (directory / f"{self.id}.c{index}.bin").write_bytes(connection.stream)
        return path


def load_case(path: Path) -> RegressionCase:
    return RegressionCase.from_json(json.loads(path.read_text()))


def load_cases(path: Path = REGRESSIONS_DIR) -> list[RegressionCase]:
    """One case file, or every case file of a directory."""
    return [load_case(p) for p in sorted(path.glob("*.json"))] if path.is_dir() else [load_case(path)]


def deliver(target: Target, listener: Listener, stream: bytes, seconds: float = RESPONSE_TIMEOUT) -> Observed:
    """Send ``stream`` on a fresh connection and watch it for ``seconds`` (or until it is closed)."""
    with WireConnection(target.addr(listener)) as conn:
        conn.send(stream, RESPONSE_TIMEOUT)
        return conn.listen(seconds)


def close_delay(target: Target, listener: Listener, stream: bytes, limit: float) -> float | None:
    """Seconds from sending ``stream`` until the target closed the connection; None if it did not close
    (or answered instead) within ``limit``."""
    with WireConnection(target.addr(listener)) as conn:
        conn.send(stream, RESPONSE_TIMEOUT)
        sent = time.monotonic()
        observed = conn.listen(limit)
    if not observed.closed or observed.received_bytes or observed.closed_at is None:
        return None
    return observed.closed_at - sent


def ignored(observed: Observed) -> bool:
    """The target neither closed the connection nor sent anything: how a timeout finding looks."""
    return not observed.closed and observed.received_bytes == 0


def replay(case: RegressionCase, target: Target) -> list[str]:
    """Violations of the case's expected behaviour by ``target`` (empty when it behaves)."""
    violations = []
    for index, connection in enumerate(case.connections):
        observed = deliver(target, case.listener, connection.stream)
        if connection.expect is Expect.CLOSE and not observed.closed:
            violations.append(f"connection {index}: malformed stream left open [{FRAME_CLOSE_ON_ERROR.id}]")
    if case.expect_alive:
        health = target.health(case.listener)
        if health is not Health.OK:
            violations.append(f"{case.listener.value} {health.value} after the case")
    return violations
