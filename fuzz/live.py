"""The live fuzzer: batches of mutated golden frames against a running name server and broker.

Each batch goes to one listener over one to three connections, its frames cut into pieces and
interleaved across the connections, so a target's per-connection state is exercised while other
connections are mid-frame. After the batch, connections whose bytes the codec rejects must be closed by
the target (RMQ-FRAME-CLOSE-ON-ERROR), and a fresh control connection must still get an answer. What
goes wrong is classified (crash, hang, timeout, memory growth), minimised when the target is still
usable, and saved as a regression case.
"""

from __future__ import annotations

import dataclasses
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from codec.acl import Credentials, sign
from codec.command import decode, encode
from fuzz.corpus import Listener, SeedFrame
from fuzz.minimise import ddmin
from fuzz.mutators import mutate
from fuzz.regression import (
    RESPONSE_TIMEOUT,
    ConnectionCase,
    Expect,
    FindingClass,
    RegressionCase,
    deliver,
    ignored,
)
from fuzz.target import Health, Target
from fuzz.wire import WireConnection
from spec.acl import UNIQUE_KEY_QUERY
from spec.errors import RocketMQSpecError

MAX_CONNECTIONS = 3
"""Connections per batch: two already interleave; a third catches state shared across more than a pair."""

MAX_PIECES = 3
"""Pieces a frame is cut into for interleaving."""

MUTATION_RATE = 0.85
"""Share of frames mutated; the rest are sent intact so that handlers keep being reached."""

DRAIN_SECONDS = 0.05
"""How long to read answers on connections that owe us nothing, so their buffers do not fill up."""


@dataclass(frozen=True)
class FuzzConfig:
    target: Target
    seconds: float
    max_frames: int
    batch_size: int = 16
    seed: int = 0
    rss_growth_bytes: int = 256 * 1024 * 1024
    listeners: tuple[Listener, ...] = (Listener.NAMESRV, Listener.BROKER)
    credentials: Credentials | None = None
    """Sign every broker seed before it is mutated, so intact frames pass an ACL broker's check and reach
    its handlers while mutated ones exercise the check itself."""


@dataclass
class Batch:
    listener: Listener
    connections: list[list[bytes]]
    mutations: list[str]
    pieces: list[tuple[int, bytes]]
    """What is written, in order: (connection index, bytes)."""


@dataclass
class Summary:
    frames_sent: int = 0
    batches: int = 0
    findings: Counter[str] = field(default_factory=Counter)
    cases: list[Path] = field(default_factory=list)
    stopped: str = ""

    def line(self, elapsed: float) -> str:
        found = ", ".join(f"{kind} {n}" for kind, n in sorted(self.findings.items())) or "none"
        return f"[{elapsed:6.1f}s] batches {self.batches}  frames {self.frames_sent}  findings: {found}"


def signed_seeds(seeds: list[SeedFrame], credentials: Credentials) -> list[SeedFrame]:
    """Broker seeds re-signed with ``credentials`` (a seed the codec cannot decode is kept as it is).

    ``_UNIQUE_KEY_QUERY`` is put back after signing, where the broker expects it
    (RMQ-ACL-UNIQUE-KEY-QUERY)."""
    signed = []
    for seed in seeds:
        if seed.listener is Listener.BROKER:
            try:
                command = decode(seed.data)
            except RocketMQSpecError:
                signed.append(seed)
                continue
            late = (command.ext_fields or {}).pop(UNIQUE_KEY_QUERY, None)
            sign(command, credentials)
            if late is not None and command.ext_fields is not None:
                command.ext_fields[UNIQUE_KEY_QUERY] = late
            seed = dataclasses.replace(seed, data=encode(command))
        signed.append(seed)
    return signed


def _by_listener(seeds: list[SeedFrame]) -> dict[Listener, dict[int, list[bytes]]]:
    """Seeds grouped by listener then code, so that rare codes are drawn as often as frequent ones."""
    grouped: dict[Listener, dict[int, list[bytes]]] = {}
    for seed in seeds:
        grouped.setdefault(seed.listener, {}).setdefault(seed.code, []).append(seed.data)
    return grouped


def plan_batch(rng: random.Random, seeds: dict[int, list[bytes]], listener: Listener, size: int) -> Batch:
    count = rng.randint(1, MAX_CONNECTIONS)
    connections: list[list[bytes]] = [[] for _ in range(count)]
    mutations = []
    for _ in range(size):
        frame = rng.choice(seeds[rng.choice(sorted(seeds))])
        if rng.random() < MUTATION_RATE:
            name, frame = mutate(rng, frame)
            mutations.append(name)
        connections[rng.randrange(count)].append(frame)
    queues = [[(index, piece) for frame in frames for piece in _cut(rng, frame)]
              for index, frames in enumerate(connections)]
    pieces = []
    while any(queues):
        queue = rng.choice([q for q in queues if q])
        pieces.append(queue.pop(0))
    return Batch(listener, connections, mutations, pieces)


def _cut(rng: random.Random, frame: bytes) -> list[bytes]:
    if len(frame) < 2:
        return [frame]
    points = sorted(rng.sample(range(1, len(frame)), min(rng.randint(0, MAX_PIECES - 1), len(frame) - 1)))
    return [frame[a:b] for a, b in zip([0, *points], [*points, len(frame)], strict=True)]


class LiveFuzzer:
    def __init__(self, config: FuzzConfig, seeds: list[SeedFrame], out: Path,
                 progress: Callable[[Summary], None] = lambda summary: None) -> None:
        self.config = config
        self.seeds = _by_listener(signed_seeds(seeds, config.credentials) if config.credentials else seeds)
        self.out = out
        self.progress = progress
        self.rng = random.Random(config.seed)
        self.summary = Summary()
        self._rss_baseline = config.target.rss_bytes()

    def run(self) -> Summary:
        deadline = time.monotonic() + self.config.seconds
        listeners = [listener for listener in self.config.listeners if listener in self.seeds]
        while not self.summary.stopped:
            if time.monotonic() >= deadline:
                self.summary.stopped = "time limit"
            elif self.summary.frames_sent >= self.config.max_frames:
                self.summary.stopped = "frame limit"
            else:
                listener = self.rng.choice(listeners)
                self._run_batch(plan_batch(self.rng, self.seeds[listener], listener, self.config.batch_size))
                self.progress(self.summary)
        return self.summary

    def _run_batch(self, batch: Batch) -> None:
        self.summary.batches += 1
        try:
            conns = [WireConnection(self.config.target.addr(batch.listener)) for _ in batch.connections]
        except OSError:
            self._after_batch(batch)
            return
        try:
            for index, piece in batch.pieces:
                conns[index].send(piece, RESPONSE_TIMEOUT)
            self.summary.frames_sent += sum(len(frames) for frames in batch.connections)
            for conn, frames in zip(conns, batch.connections, strict=True):
                owed = ConnectionCase(frames).expect is Expect.CLOSE
                observed = conn.listen(RESPONSE_TIMEOUT if owed else DRAIN_SECONDS)
                if owed and ignored(observed):
                    self._timeout(batch, frames)
        finally:
            for conn in conns:
                conn.close()
        self._after_batch(batch)

    def _after_batch(self, batch: Batch) -> None:
        health = self.config.target.health(batch.listener)
        if health is not Health.OK:
            finding = FindingClass.CRASH if health is Health.CRASH else FindingClass.HANG
            self._record(batch, finding, batch.connections,
                         "whole batch: the target was unusable for minimising")
            self.summary.stopped = f"target {health.value}"
            return
        rss = self.config.target.rss_bytes()
        if rss is not None and self._rss_baseline is not None \
                and rss - self._rss_baseline > self.config.rss_growth_bytes:
            self._record(batch, FindingClass.MEMORY, batch.connections,
                         f"VmRSS grew from {self._rss_baseline} to {rss} bytes")
            self._rss_baseline = rss

    def _timeout(self, batch: Batch, frames: list[bytes]) -> None:
        """A connection the target should have closed stayed silent and open: minimise on fresh ones."""
        target, listener = self.config.target, batch.listener

        def reproduces(candidate: list[bytes]) -> bool:
            case = ConnectionCase(candidate)
            return case.expect is Expect.CLOSE and ignored(deliver(target, listener, case.stream))

        if not reproduces(frames):
            return
        minimal = ddmin(frames, reproduces)
        self._record(batch, FindingClass.TIMEOUT, [minimal],
                     "the codec rejects this stream; the target neither closed the connection nor answered")

    def _record(self, batch: Batch, finding: FindingClass, connections: list[list[bytes]], note: str) -> None:
        case = RegressionCase(finding, batch.listener, [ConnectionCase(frames) for frames in connections],
                              batch.mutations, note, self.config.seed, self.summary.batches)
        self.summary.findings[finding.value] += 1
        self.summary.cases.append(case.save(self.out))
