"""Regression cases: what the live fuzzer (``rmq-fuzz``) found, as frames (hex) plus the behaviour owed.

The cases kept in the repository (``rocketmq_spec/conformance/regressions``) are part of the suite: every
conformance run replays them against its target (``rocketmq_spec/conformance/cases/test_regressions.py``), and
``rmq-fuzz --replay`` sends them again outside the suite; ``rmq-fuzz`` writes new ones in this format. A case
file is JSON, one per finding:

```
{"format": "rmq-fuzz-regression/1", "id": "timeout-3fa1c2d4e5b6", "finding": "timeout",
 "listener": "broker", "clauses": ["RMQ-FRAME-CLOSE-ON-ERROR"], "mutations": ["bit_flip"],
 "note": "...", "seed": 7, "batch": 12,
 "connections": [{"frames": ["0000001a...", ...], "expect": "close"}],
 "expect_alive": true}
```

Each connection's frames are sent back to back on a fresh connection to the listener; ``expect`` is ``close``
(the stream holds a complete malformed frame, so the target must close the connection without an answer,
RMQ-FRAME-CLOSE-ON-ERROR), ``wait`` (it ends inside a frame that will be malformed: judged only against a
named idle timeout) or ``any`` (answers are allowed); see ``rocketmq_spec.conformance.oracle``. After all
connections, the target must still answer a control request (``expect_alive``). The raw bytes of each
connection are also kept beside the JSON as ``<id>.c<N>.bin`` so a reproducer can be sent with ``nc``. """

from __future__ import annotations

import enum
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rocketmq_spec.conformance.oracle import Expect, expectation
from rocketmq_spec.spec.frame import FRAME_CLOSE_ON_ERROR

FORMAT = "rmq-fuzz-regression/1"
REGRESSIONS_DIR = Path(__file__).resolve().parent / "regressions"
"""Cases kept in the repository, replayed by the test suite and the conformance suite."""

SLOW_CLOSE_LIMIT = 120.0
"""Seconds an unanswered malformed stream is watched for a late close, Java's idle timeout
(``serverChannelMaxIdleTimeSeconds``): a close within it is a slow close (the target spent that long on a
few bytes), none at all a timeout. Java's slowest seen: 3 s on an idle machine, over 30 s on a loaded one,
for the same frame."""


class Listener(enum.Enum):
    """The listener of a target a stream goes to."""

    NAMESRV = "namesrv"
    BROKER = "broker"


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
