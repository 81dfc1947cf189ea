"""The live fuzzer: batches of mutated golden frames against a running name server and broker.

Each batch goes to one listener over one to three connections, its frames cut into pieces and interleaved
across the connections, so a target's per-connection state is exercised while other connections are mid-frame.
After the batch, connections holding a complete malformed frame must be closed by the target
(RMQ-FRAME-CLOSE-ON-ERROR), and a fresh control connection must still get an answer. Connections that end
inside a frame are judged only against the target's idle timeout, when one is named
(``rocketmq_spec.conformance.oracle``, ``rocketmq_spec.fuzz.idle``); memory only past a warm-up baseline and a
JVM's heap (``rocketmq_spec.fuzz.memory``). What goes wrong is classified (crash, hang, timeout, slow close,
idle, memory growth), minimised when the target is still usable, and saved as a regression case — once per
cause: later findings with the same signature are only counted. """

from __future__ import annotations

import dataclasses
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rocketmq_spec.codec.acl import Credentials, sign
from rocketmq_spec.codec.command import decode, encode
from rocketmq_spec.conformance.oracle import Expect, judge
from rocketmq_spec.conformance.profile import KnownDefect
from rocketmq_spec.conformance.regression import (
    SLOW_CLOSE_LIMIT,
    ConnectionCase,
    FindingClass,
    Listener,
    RegressionCase,
)
from rocketmq_spec.fuzz.corpus import SeedFrame
from rocketmq_spec.fuzz.idle import IDLE_GRACE, IdleWatch, Parked
from rocketmq_spec.fuzz.memory import MemoryRule, MemoryWatch
from rocketmq_spec.fuzz.minimise import ddmin
from rocketmq_spec.fuzz.mutators import mutate
from rocketmq_spec.fuzz.replay import RESPONSE_TIMEOUT, close_delay, deliver, ignored
from rocketmq_spec.fuzz.target import Health, Target
from rocketmq_spec.fuzz.wire import WireConnection
from rocketmq_spec.spec.acl import UNIQUE_KEY_QUERY
from rocketmq_spec.spec.errors import RocketMQSpecError

MAX_CONNECTIONS = 3
"""Connections per batch: two already interleave; a third catches state shared across more than a pair."""

MAX_PIECES = 3
"""Pieces a frame is cut into for interleaving."""

MUTATION_RATE = 0.85
"""Share of frames mutated; the rest are sent intact so that handlers keep being reached."""

DRAIN_SECONDS = 0.05
"""How long to read answers on connections that owe us nothing, so their buffers do not fill up."""

KNOWN_DIR = "known"
"""Subdirectory of the findings directory for findings the target's profile cites as known defects."""

@dataclass(frozen=True)
class FuzzConfig:
    target: Target
    seconds: float
    max_frames: int
    batch_size: int = 16
    seed: int = 0
    memory: MemoryRule = field(default_factory=MemoryRule)
    idle_timeout: float | None = None
    """The target's idle timeout, when known: connections left inside a frame are judged against it."""
    listeners: tuple[Listener, ...] = (Listener.NAMESRV, Listener.BROKER)
    credentials: Credentials | None = None
    """Sign every broker seed before it is mutated, so intact frames pass an ACL broker's check and reach
    its handlers while mutated ones exercise the check itself."""
    known: Callable[[FindingClass, Sequence[bytes]], KnownDefect | None] = lambda finding, streams: None
    """The target's known defects (``rocketmq_spec.fuzz.known.matcher`` of its profile): matching findings are
    known."""


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
    duplicates: Counter[str] = field(default_factory=Counter)
    """Findings whose cause (class, listener, signature) was already recorded this run."""
    cases: list[Path] = field(default_factory=list)
    waiting: int = 0
    """Connections left inside a malformed frame (owed nothing unless an idle timeout is named)."""
    idle_judged: int = 0
    stalls: list[float] = field(default_factory=list)
    """Seconds the target took to answer again after a probe went unanswered (busy, not hung)."""
    memory: dict[str, int | float | None] = field(default_factory=dict)
    stopped: str = ""
    known: Counter[str] = field(default_factory=Counter)
    """Findings that are a known defect of the target (its profile cites them), by class."""
    known_cases: list[tuple[Path, str]] = field(default_factory=list)
    """Each known defect's saved case and the profile's citation."""

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
        self.memory = MemoryWatch(config.memory, time.monotonic())
        self.idle: IdleWatch[Batch] | None = None
        if config.idle_timeout is not None:
            self.idle = IdleWatch(config.idle_timeout)
        self._seen: set[tuple[str, str, str]] = set()
        self._sample_memory()

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
                self.run_batch(plan_batch(self.rng, self.seeds[listener], listener, self.config.batch_size))
                self._judge_idle(self.idle.overdue(time.monotonic()) if self.idle else [])
                self.progress(self.summary)
        return self.finish()

    def finish(self) -> Summary:
        """Judge the connections still waiting for the idle timeout; the summary of everything run."""
        if self.idle is not None and not self.summary.stopped.startswith("target"):
            self._judge_idle(self.idle.drain(time.monotonic() + self.idle.idle_timeout + IDLE_GRACE + 5))
        self.summary.memory = self.memory.report()
        return self.summary

    def run_batch(self, batch: Batch) -> None:
        """Send one planned batch and judge what the target did with it."""
        self.summary.batches += 1
        try:
            conns = [WireConnection(self.config.target.addr(batch.listener)) for _ in batch.connections]
        except OSError:
            self._after_batch(batch)
            return
        parked: set[int] = set()
        try:
            for index, piece in batch.pieces:
                conns[index].send(piece, RESPONSE_TIMEOUT)
            self.summary.frames_sent += sum(len(frames) for frames in batch.connections)
            for index, (conn, frames) in enumerate(zip(conns, batch.connections, strict=True)):
                expect = judge(b"".join(frames)).expect
                observed = conn.listen(RESPONSE_TIMEOUT if expect is Expect.CLOSE else DRAIN_SECONDS)
                if expect is Expect.CLOSE and ignored(observed):
                    self._unanswered(batch, frames)
                elif expect is Expect.WAIT:
                    self.summary.waiting += 1
                    if self.idle is not None and not observed.closed \
                            and self.idle.park(conn, frames, batch, time.monotonic()):
                        parked.add(index)
        finally:
            for index, conn in enumerate(conns):
                if index not in parked:
                    conn.close()
        self._after_batch(batch)

    def _after_batch(self, batch: Batch) -> None:
        health, stalled = self.config.target.settled_health(batch.listener)
        if stalled and health is Health.OK:
            self.summary.stalls.append(round(stalled, 1))
        if health is not Health.OK:
            finding = FindingClass.CRASH if health is Health.CRASH else FindingClass.HANG
            self._record(batch, finding, batch.connections,
                         "whole batch: the target was unusable for minimising")
            self.summary.stopped = f"target {health.value}"
            return
        note = self._sample_memory()
        if note is not None:
            self._record(batch, FindingClass.MEMORY, batch.connections, note)

    def _sample_memory(self) -> str | None:
        rss = self.config.target.rss_bytes()
        return None if rss is None else self.memory.sample(time.monotonic(), rss)

    def _judge_idle(self, overdue: list[Parked[Batch]]) -> None:
        for parked in overdue:
            parked.conn.close()
            self._record(parked.batch, FindingClass.IDLE, [parked.frames],
                         f"the stream ends inside a malformed frame; the connection was still open "
                         f"{self.config.idle_timeout} s + grace later, past the target's idle timeout",
                         judge(b"".join(parked.frames)).signature)
        if self.idle is not None:
            self.summary.idle_judged = self.idle.judged

    def _unanswered(self, batch: Batch, frames: list[bytes]) -> None:
        """A connection the target should have closed stayed silent and open: minimise on fresh ones,
        then watch the minimal stream long enough to tell a slow close from none."""
        target, listener = self.config.target, batch.listener
        signature = judge(b"".join(frames)).signature
        if self._known(FindingClass.TIMEOUT, listener, signature) \
                or self._known(FindingClass.SLOW_CLOSE, listener, signature):
            self.summary.duplicates["unanswered"] += 1
            return

        def reproduces(candidate: list[bytes]) -> bool:
            stream = b"".join(candidate)
            return judge(stream).expect is Expect.CLOSE and ignored(deliver(target, listener, stream))

        if not reproduces(frames):
            return
        minimal = ddmin(frames, reproduces)
        signature = judge(b"".join(minimal)).signature
        if self._known(FindingClass.TIMEOUT, listener, signature) \
                or self._known(FindingClass.SLOW_CLOSE, listener, signature):
            self.summary.duplicates["unanswered"] += 1
            return
        delay = close_delay(target, listener, b"".join(minimal), SLOW_CLOSE_LIMIT)
        if delay is not None and delay <= RESPONSE_TIMEOUT:
            return  # closed in time when replayed alone: the target was only slow under the batch's load
        if delay is None:
            self._record(batch, FindingClass.TIMEOUT, [minimal],
                         f"a complete malformed frame: the target neither closed the connection nor answered "
                         f"in {SLOW_CLOSE_LIMIT} s", signature)
        else:
            self._record(batch, FindingClass.SLOW_CLOSE, [minimal],
                         f"a complete malformed frame: the target closed the connection only after "
                         f"{delay:.1f} s (allowed {RESPONSE_TIMEOUT} s)", signature)

    def _known(self, finding: FindingClass, listener: Listener, signature: str) -> bool:
        return (finding.value, listener.value, signature) in self._seen

    def _record(self, batch: Batch, finding: FindingClass, connections: list[list[bytes]], note: str,
                signature: str = "") -> None:
        key = (finding.value, batch.listener.value, signature)
        if signature and key in self._seen:
            self.summary.duplicates[finding.value] += 1
            return
        self._seen.add(key)
        case = RegressionCase(finding, batch.listener, [ConnectionCase(frames) for frames in connections],
                              batch.mutations, note, self.config.seed, self.summary.batches)
        defect = self.config.known(finding, [b"".join(frames) for frames in connections])
        if defect is not None:
            case.note = f"{note}; a known defect of the target: {defect.citation()}"
            self.summary.known[finding.value] += 1
            self.summary.known_cases.append((case.save(self.out / KNOWN_DIR), defect.citation()))
            return
        self.summary.findings[finding.value] += 1
        self.summary.cases.append(case.save(self.out))
