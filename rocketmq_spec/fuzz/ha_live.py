"""The live fuzzer aimed at a master's HA port: what a broken or hostile slave can send it.

Each round opens a connection and writes one generated slave stream: well-formed reports, a report cut
mid-unit, a negative offset, an offset far past any log, random bytes, or nothing at all. For a moment
it then reads what the master sends and decodes it with the codec: whatever it received, a master must
answer with a well-formed, contiguous block stream or close the connection. After each round the target
must still serve: its HA port accepts a connection and its broker answers a request.
"""

from __future__ import annotations

import random
import socket
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from rocketmq_spec.codec.ha import BlockDecoder, StreamRejected, encode_report
from rocketmq_spec.conformance.regression import Listener
from rocketmq_spec.fuzz.target import Health, Target
from rocketmq_spec.fuzz.wire import parse_loopback

READ_WINDOW = 0.2
"""Seconds the fuzzer reads the master's answer to one round."""
CONNECT_TIMEOUT = 2.0

Round = tuple[str, bytes]


def _reports(rng: random.Random) -> Round:
    return "reports", b"".join(encode_report(rng.randrange(0, 1 << 40)) for _ in range(rng.randint(1, 4)))


def _partial(rng: random.Random) -> Round:
    whole = encode_report(rng.randrange(0, 1 << 40))
    return "partial report", whole + encode_report(rng.randrange(0, 1 << 40))[:rng.randint(1, 7)]


def _negative(rng: random.Random) -> Round:
    return "negative offset", rng.randrange(-(1 << 63), 0).to_bytes(8, "big", signed=True)


def _lying(rng: random.Random) -> Round:
    return "offset past the log", encode_report(0) + encode_report(rng.randrange(1 << 50, 1 << 62))


def _garbage(rng: random.Random) -> Round:
    return "random bytes", rng.randbytes(rng.randint(1, 64))


def _silence(rng: random.Random) -> Round:
    return "silence", b""


GENERATORS: tuple[Callable[[random.Random], Round], ...] = (_reports, _partial, _negative, _lying, _garbage,
                                                           _silence)


@dataclass
class HASummary:
    rounds: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    findings: list[dict[str, str]] = field(default_factory=list)
    stopped: str = ""

    def line(self, elapsed: float) -> str:
        return f"[{elapsed:6.1f}s] HA rounds {self.rounds}  findings {len(self.findings)}"


class HAFuzzer:
    def __init__(self, ha_addr: str, target: Target, seconds: float, seed: int = 0,
                 progress: Callable[[HASummary], None] = lambda summary: None) -> None:
        self.host, self.port = parse_loopback(ha_addr)
        self.target = target
        self.seconds = seconds
        self.rng = random.Random(seed)
        self.progress = progress

    def run(self) -> HASummary:
        summary = HASummary()
        deadline = time.monotonic() + self.seconds
        while time.monotonic() < deadline:
            kind, data = self.rng.choice(GENERATORS)(self.rng)
            problem = self._round(data)
            summary.rounds += 1
            summary.kinds[kind] += 1
            if problem is None:
                problem = self._health()
            if problem is not None:
                summary.findings.append({"kind": kind, "sent": data.hex(), "finding": problem})
                if problem.startswith(("crash", "hang")):
                    summary.stopped = problem
                    break
            self.progress(summary)
        summary.stopped = summary.stopped or "time limit"
        return summary

    def _round(self, data: bytes) -> str | None:
        """Send one stream; a finding if the master's answer breaks the block rules."""
        try:
            sock = socket.create_connection((self.host, self.port), CONNECT_TIMEOUT)
        except OSError as exc:
            return f"crash: HA port refuses connections ({exc})"
        decoder = BlockDecoder(None)
        with sock:
            try:
                sock.sendall(data)
                end = time.monotonic() + READ_WINDOW
                while (left := end - time.monotonic()) > 0:
                    sock.settimeout(left)
                    chunk = sock.recv(65536)
                    if not chunk:
                        break
                    for event in decoder.receive_data(chunk):
                        if isinstance(event, StreamRejected):
                            return f"bad stream: {event.error.describe()}"
            except (TimeoutError, ConnectionError):
                pass
        return None

    def _health(self) -> str | None:
        health = self.target.health(Listener.BROKER)
        return None if health is Health.OK else f"{health.value}: broker stopped answering"
