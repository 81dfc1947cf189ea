"""kill -9 cycles under SYNC_FLUSH load, with a ledger of every acknowledged send checked after restarts.

Each cycle starts the target, runs producers that send with WAIT=true and record every SUCCESS (queue,
offset, msgId), kills the process with SIGKILL in the middle of the load, starts it again and reads every
queue back over the wire. An acknowledged send is *lost* if no stored message carries its key,
*misplaced* if the one that does sits elsewhere than the acknowledgement said, *corrupted* if its body or
key properties differ, *duplicated* if its key is stored twice; the ledger spans all cycles, so a later
recovery cannot lose what an earlier one kept. Then the target is stopped cleanly and its store directory
checked offline (``rmq-conformance store``), when the harness knows where it is.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field

from benchmarks.soak import wire
from benchmarks.soak.report import Row
from benchmarks.soak.target import ROOT, Launcher, Target
from rocketmq_spec.codec.store import MessageRecord, decode_records
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.spec.codes import ResponseCode
from rocketmq_spec.spec.properties import PropertyKey

PRODUCERS = 4
PULL_BATCH = 32
VERIFY_GROUP = "SoakVerifyGroup"
OFFLINE_CHECK_TIMEOUT_S = 600.0
SEND_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Ack:
    queue_id: int
    queue_offset: int
    msg_id: str
    digest: bytes


@dataclass
class Ledger:
    acks: dict[str, Ack] = field(default_factory=dict)
    attempts: int = 0

    @staticmethod
    def body(key: str) -> bytes:
        seed = hashlib.sha256(key.encode()).digest()
        return seed * (1 + int.from_bytes(seed[:1], "big") % 24)


@dataclass
class Tally:
    """Keys of acknowledged sends found wrong after any restart (a key wrong twice counts once)."""

    lost: set[str] = field(default_factory=set)
    misplaced: set[str] = field(default_factory=set)
    corrupted: set[str] = field(default_factory=set)
    duplicated: set[str] = field(default_factory=set)
    offline_failures: list[int] = field(default_factory=list)
    cycles: int = 0

    @property
    def clean(self) -> bool:
        return not (self.lost or self.misplaced or self.corrupted or self.duplicated or self.offline_failures)

    def summary(self) -> str:
        return (f"lost {len(self.lost)}, duplicated {len(self.duplicated)}, corrupted {len(self.corrupted)}, "
                f"misplaced {len(self.misplaced)}")


async def _produce(addr: str, topic: str, queues: int, cycle: int, producer: int, ledger: Ledger,
                   stop: asyncio.Event) -> None:
    try:
        client = await RemotingClient.connect(addr)
    except OSError:
        return
    try:
        for seq in itertools.count():
            if stop.is_set():
                return
            key = f"soak-{cycle}-{producer}-{seq}"
            queue_id = (producer + seq) % queues
            body = Ledger.body(key)
            ledger.attempts += 1
            try:
                answer = await client.invoke(wire.send_request(topic, queue_id, body, {
                    PropertyKey.KEYS: key, PropertyKey.WAIT: "true", "soakKey": key}), SEND_TIMEOUT_S)
            except (ConnectionError, TimeoutError):
                return
            if answer.code == ResponseCode.SUCCESS and answer.ext_fields:
                fields = answer.ext_fields
                ledger.acks[key] = Ack(int(fields["queueId"]), int(fields["queueOffset"]), fields["msgId"],
                                       hashlib.sha256(body).digest())
    finally:
        await client.close()


async def _load_then_kill(target: Target, launcher: Launcher, topic: str, queues: int, cycle: int,
                          ledger: Ledger, seconds: float) -> None:
    stop = asyncio.Event()
    producers = [asyncio.ensure_future(_produce(target.broker, topic, queues, cycle, p, ledger, stop))
                 for p in range(PRODUCERS)]
    await asyncio.sleep(seconds)
    await asyncio.to_thread(launcher.kill, target)
    stop.set()
    await asyncio.wait(producers, timeout=SEND_TIMEOUT_S + 5)


async def _read_back(addr: str, topic: str, queues: int) -> list[MessageRecord]:
    client = await RemotingClient.connect(addr)
    stored: list[MessageRecord] = []
    try:
        for queue_id in range(queues):
            end = await wire.max_offset(client, topic, queue_id)
            offset = 0
            while offset < end:
                answer = await client.invoke(wire.pull_request(topic, queue_id, offset, group=VERIFY_GROUP,
                                                                max_nums=PULL_BATCH), 30)
                if answer.code != ResponseCode.SUCCESS:
                    raise RuntimeError(f"pull {topic}/{queue_id}@{offset}: {answer.code} {answer.remark}")
                records = decode_records(answer.body)
                stored += records
                offset = (records[-1].queue_offset + 1 if records
                          else int((answer.ext_fields or {})["nextBeginOffset"]))
    finally:
        await client.close()
    return stored


def _judge(stored: list[MessageRecord], ledger: Ledger, tally: Tally) -> None:
    seen = Counter(r.properties.get("soakKey") for r in stored)
    by_key = {r.properties.get("soakKey"): r for r in stored}
    for key, ack in ledger.acks.items():
        record = by_key.get(key)
        if record is None:
            tally.lost.add(key)
            continue
        if seen[key] > 1:
            tally.duplicated.add(key)
        if (record.queue_id, record.queue_offset) != (ack.queue_id, ack.queue_offset):
            tally.misplaced.add(key)
        intact = hashlib.sha256(record.body).digest() == ack.digest
        if not intact or record.properties.get(PropertyKey.KEYS) != key:
            tally.corrupted.add(key)


def _offline_check(target: Target) -> list[str]:
    """``rmq-conformance store`` over the stopped target's store: the cases that failed (none when clean)."""
    assert target.store is not None
    done = subprocess.run([sys.executable, "-m", "rocketmq_spec.conformance.cli",
                           "store", str(target.store)], cwd=ROOT,
                          capture_output=True, text=True, timeout=OFFLINE_CHECK_TIMEOUT_S, check=False)
    if done.returncode == 0:
        return []
    failed = [line.split(" ", 1)[1].split(" - ", 1)[0] for line in done.stdout.splitlines()
              if line.startswith(("FAILED ", "ERROR "))]
    return failed or [f"exit code {done.returncode}"]


async def kill_cycles(launcher: Launcher, cycles: int, topic: str, queues: int, load_seconds: float,
                      progress: bool = True) -> list[Row]:
    ledger, tally = Ledger(), Tally()
    started = time.perf_counter()
    target = await asyncio.to_thread(launcher.start)
    await wire.create_topic(target.broker, topic, queues)
    for cycle in range(cycles):
        await _load_then_kill(target, launcher, topic, queues, cycle, ledger, load_seconds)
        target = await asyncio.to_thread(launcher.start)
        _judge(await _read_back(target.broker, topic, queues), ledger, tally)
        tally.cycles += 1
        if target.store is not None:
            await asyncio.to_thread(launcher.stop, target)
            failed = await asyncio.to_thread(_offline_check, target)
            if failed:
                tally.offline_failures.append(cycle + 1)
                print(f"  offline check after cycle {cycle + 1} failed: {', '.join(failed)}", file=sys.stderr,
                      flush=True)
            if cycle + 1 < cycles:
                target = await asyncio.to_thread(launcher.start)
        if progress:
            print(f"  kill -9 cycle {cycle + 1}/{cycles}: {len(ledger.acks):,} acknowledged, "
                  f"{tally.summary()}, offline failures {len(tally.offline_failures)}",
                  file=sys.stderr, flush=True)
    if target.store is None:
        await asyncio.to_thread(launcher.stop, target)
    elapsed = time.perf_counter() - started
    offline = ("not checked (store unknown)" if target.store is None else
               f"offline check failed after cycles {tally.offline_failures}" if tally.offline_failures else
               "offline check clean each time")
    figure = (f"{tally.cycles} cycles, {len(ledger.acks):,} acknowledged of {ledger.attempts:,} sent: "
              f"{tally.summary()}; {offline}")
    return [Row("kill -9 cycles", figure, tally.clean, "0 lost/duplicated/corrupted, store clean",
                note=f"{elapsed / 60:,.1f} min, SYNC_FLUSH, {PRODUCERS} producers")]
