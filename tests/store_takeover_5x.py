"""What a 5.x broker leaves in flight must carry over to the broker taking its store over: timer messages
still pending, and pop state (what a group acked, what it popped and did not ack, what it never popped),
for a plain and for an ordered pop.

Used by ``tests/test_store_takeover.py`` for pairs of 5.x implementations, beside ``tests.store_takeover``.
The writer

- sends two timer messages due well after the stop, one with ``TIMER_DELIVER_MS`` and one with
  ``TIMER_DELAY_SEC``, and between them one due in a second, waiting until it is delivered (it must not
  come again, though it lies in the wheel queue past a message still pending);
- per group (one plain, one ordered) fills a queue with six messages, pops four with an invisible time that
  outlasts the stop, and acks two.

The reader must deliver each pending timer message once, to its topic, never before its time
(RMQ-TIMER-PROPERTIES, RMQ-TIMER-RESTART), and never deliver the early one again. For each group it must never
answer the acked messages again and answer the popped-but-unacked ones only once their invisible time has
passed: the plain group's through the retry topic (RMQ-POP-REVIVE), its never-popped ones at once; the
ordered group's queue stays locked until then (config/consumerOrderInfo.json, RMQ-POP-ORDER) and then
answers the four that follow the acked ones, in order. All over the wire, with the spec's tables and the
conformance suite's receipt building.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field

from rocketmq_spec.admin.wire import AdminConnection
from rocketmq_spec.conformance.cases.pop_support import Popped, popped
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.pop import InitMode
from rocketmq_spec.spec.properties import PropertyKey
from tests.mqadmin_commands import create_group
from tests.store_takeover import create_topic, pull, send

BROKER_NAME = "broker-a"
"""brokerName of every implementation the takeover runs (a pop receipt names it)."""
EARLY_DELAY_MS = 1500
PENDING_DELAY_S = 30
"""How long after its send a pending timer message is due: past the writer's stop and, with a fast reader,
past the reader's start too, so "not before its time" is seen on both sides of the takeover."""
INVISIBLE_MS = 30_000
"""Invisible time of the writer's pop: it ends after the takeover."""
READER_INVISIBLE_MS = 300_000
"""Invisible time of the reader's pops: longer than the whole check, so nothing it pops comes back."""
WAIT_S = 150.0
"""Bound on the reader's wait for everything due: the delays above, a JVM's start and a loaded machine."""
QUIET_S = 5.0
"""How long the reader keeps looking after everything expected came, for anything that should not."""
POPPED, ACKED, FILLED = 4, 2, 6


@dataclass(frozen=True)
class Due:
    key: str
    not_before_ms: int


@dataclass(frozen=True)
class PopGroup:
    """A group's pops of one queue before the stop: what it acked, and what must come after the takeover
    (in this order when the pops were ordered)."""
    topic: str
    group: str
    order: bool
    acked: list[str]
    due: list[Due]


@dataclass
class Scene5:
    timer_topic: str
    early: str = ""
    pending: list[Due] = field(default_factory=list)
    pops: list[PopGroup] = field(default_factory=list)


def pop_messages(connection: AdminConnection, group: str, topic: str, max_nums: int, invisible_ms: int,
         order: bool = False) -> tuple[int, list[Popped]]:
    """(popTime, popped records with their receipts); popTime 0 when nothing was there."""
    answer = connection.call(RequestCode.POP_MESSAGE, {
        "consumerGroup": group, "topic": topic, "queueId": -1, "maxMsgNums": max_nums,
        "invisibleTime": invisible_ms, "pollTime": 0, "bornTime": int(time.time() * 1000),
        "initMode": InitMode.MIN, "order": order},
        accept=(ResponseCode.SUCCESS, ResponseCode.PULL_NOT_FOUND, ResponseCode.POLLING_TIMEOUT))
    if answer.command.code != ResponseCode.SUCCESS:
        return 0, []
    return int(answer.header["popTime"]), popped(answer.command, BROKER_NAME)


def ack_message(connection: AdminConnection, group: str, topic: str, message: Popped) -> int:
    answer = connection.call(RequestCode.ACK_MESSAGE, {
        "consumerGroup": group, "topic": topic, "queueId": message.record.queue_id,
        "extraInfo": message.receipt, "offset": message.offset}, accept=tuple(ResponseCode))
    return answer.command.code


def _wait_delivered(connection: AdminConnection, topic: str, key: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not any(r.properties.get("takeover") == key for r in pull(connection, "probe", topic, 0)):
        if time.monotonic() > deadline:
            raise AssertionError(f"the writer never delivered its timer message {key}")
        time.sleep(0.5)


def _pop_before_stop(connection: AdminConnection, suffix: str, order: bool) -> PopGroup:
    """Fill a queue, pop the first messages and ack some. What was popped and not acked comes back once
    its invisible time has passed, through the retry topic (RMQ-POP-REVIVE), and the rest as any pop
    would; an ordered pop locks the queue until then (RMQ-POP-ORDER), so everything after the acked ones
    comes back together, in order, and only then."""
    topic, group = f"takeover_pop_{suffix}", f"takeover_pop_group_{suffix}"
    create_topic(connection, topic, 1)
    keys = [f"p{number}_{suffix}" for number in range(FILLED)]
    for number, key in enumerate(keys):
        send(connection, topic, 0, f"pop message {number}".encode(), key)
    create_group(connection, group)
    pop_time, first = pop_messages(connection, group, topic, POPPED, INVISIBLE_MS, order)
    if (got := [m.record.properties.get("takeover", "") for m in first]) != keys[:POPPED]:
        raise AssertionError(f"the writer popped {got}, expected the first {POPPED} of {keys}")
    for message in first[:ACKED]:
        if (code := ack_message(connection, group, topic, message)) != ResponseCode.SUCCESS:
            raise AssertionError(f"the writer answered ack with {code}")
    visible = pop_time + INVISIBLE_MS
    due = [Due(key, visible) for key in keys[ACKED:POPPED]]
    due += [Due(key, visible if order else 0) for key in keys[POPPED:]]
    return PopGroup(topic, group, order, keys[:ACKED], due)


def write(broker: str) -> Scene5:
    suffix = uuid.uuid4().hex[:8]
    scene = Scene5(f"takeover_timer_{suffix}")
    with AdminConnection(broker, 10.0) as connection:
        create_topic(connection, scene.timer_topic, 1)
        scene.early = f"early_{suffix}"
        for number, name in enumerate(("deliver_ms", "delay_sec")):
            if number == 1:  # parked between the two pending ones: delivered, it lies past the oldest
                send(connection, scene.timer_topic, 0, b"due before the stop", scene.early,
                     {PropertyKey.TIMER_DELAY_MS: str(EARLY_DELAY_MS)})
                _wait_delivered(connection, scene.timer_topic, scene.early)
            due = int(time.time() * 1000) + PENDING_DELAY_S * 1000
            trigger = {PropertyKey.TIMER_DELIVER_MS: str(due)} if name == "deliver_ms" else {
                PropertyKey.TIMER_DELAY_SEC: str(PENDING_DELAY_S)}
            scene.pending.append(Due(f"{name}_{suffix}", due))
            send(connection, scene.timer_topic, 0, b"pending at the stop", scene.pending[-1].key, trigger)
        scene.pops = [_pop_before_stop(connection, f"{suffix}_{order}", order) for order in (False, True)]
    return scene


def problems(broker: str, scene: Scene5) -> list[str]:
    """What the reader does with the writer's timers and pop state that the writer's design says it should
    not (empty: everything carried over)."""
    found: list[str] = []
    timers: dict[str, list[int]] = {}
    popped_at: list[dict[str, list[int]]] = [{} for _ in scene.pops]
    expected_timers = {scene.early, *(d.key for d in scene.pending)}
    with AdminConnection(broker, 10.0) as connection:
        deadline, quiet_until = time.monotonic() + WAIT_S, None
        while time.monotonic() < deadline and (quiet_until is None or time.monotonic() < quiet_until):
            timers = {}
            for record in pull(connection, "probe", scene.timer_topic, 0):
                timers.setdefault(record.properties.get("takeover", ""), []).append(record.store_timestamp)
            for pops, seen in zip(scene.pops, popped_at, strict=True):
                found += _pop_and_ack(connection, pops, seen)
            if quiet_until is None and set(timers) >= expected_timers and all(
                    set(seen) >= {d.key for d in pops.due} for pops, seen in zip(scene.pops, popped_at,
                                                                                  strict=True)):
                quiet_until = time.monotonic() + QUIET_S
            time.sleep(0.5)
    found += _timer_problems(scene, timers)
    for pops, seen in zip(scene.pops, popped_at, strict=True):
        found += _pop_problems(pops, seen)
    return found


def _pop_and_ack(connection: AdminConnection, pops: PopGroup, seen: dict[str, list[int]]) -> list[str]:
    """One pop of the group, each message acked; ``seen``: key -> when it was popped (in pop order)."""
    found = []
    _, batch = pop_messages(connection, pops.group, pops.topic, 32, READER_INVISIBLE_MS, pops.order)
    for message in batch:
        seen.setdefault(message.record.properties.get("takeover", ""), []).append(int(time.time() * 1000))
        if (code := ack_message(connection, pops.group, pops.topic, message)) != ResponseCode.SUCCESS:
            found.append(f"{pops.group}: ack of a popped message answered {code}")
    return found


def _timer_problems(scene: Scene5, timers: dict[str, list[int]]) -> list[str]:
    found = [f"timer {key}: delivered {len(times)} times" for key, times in timers.items() if len(times) > 1]
    found += [f"timer {key}: delivered, never sent" for key in timers
              if key != scene.early and key not in {d.key for d in scene.pending}]
    for due in scene.pending:
        if due.key not in timers:
            found.append(f"timer {due.key}: pending at the stop, never delivered")
        elif (stored := min(timers[due.key])) < due.not_before_ms:
            found.append(f"timer {due.key}: delivered at {stored}, before {due.not_before_ms}")
    return found


def _pop_problems(pops: PopGroup, seen: dict[str, list[int]]) -> list[str]:
    name = f"{'ordered ' if pops.order else ''}pop"
    found = [f"{name} {key}: acked before the stop, popped again" for key in pops.acked if key in seen]
    found += [f"{name} {key}: popped {len(times)} times" for key, times in seen.items() if len(times) > 1]
    for due in pops.due:
        if due.key not in seen:
            found.append(f"{name} {due.key}: never popped after the takeover")
        elif (at := min(seen[due.key])) < due.not_before_ms:
            found.append(f"{name} {due.key}: popped at {at}, before the invisible time of the writer's pop "
                         f"ended ({due.not_before_ms})")
    if pops.order and list(seen) != [due.key for due in pops.due]:
        found.append(f"{name}: popped {list(seen)} in this order, expected {[due.key for due in pops.due]}")
    return found
