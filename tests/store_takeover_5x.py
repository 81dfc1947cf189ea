"""What a 5.x broker leaves in flight must carry over to the broker taking its store over: timer messages
still pending, and a group's pop state (what it acked, what it popped and did not ack, what it never popped).

Used by ``tests/test_store_takeover.py`` for pairs of 5.x implementations, beside ``tests.store_takeover``.
The writer

- sends a timer message due in a second and waits until it is delivered (it must not come again), then two
  timer messages due well after the stop, one with ``TIMER_DELIVER_MS`` and one with ``TIMER_DELAY_SEC``;
- fills a queue with six messages, pops four of them for a group with an invisible time that outlasts the
  stop, and acks two.

The reader must deliver each pending timer message once, to its topic, no earlier than its time less the
timer's precision (RMQ-TIMER-RESTART), and never deliver the early one again; and for the group it must
never answer the two acked messages again, answer the two popped-but-unacked ones once their invisible
time has passed (revived through the group's retry topic, RMQ-POP-REVIVE) and the two never popped as
any pop would. All over the wire, with the spec's tables and the conformance suite's receipt building.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field

from admin.wire import AdminConnection
from conformance.cases.pop_support import Popped, popped
from spec.codes import RequestCode, ResponseCode
from spec.pop import InitMode
from spec.properties import PropertyKey
from spec.timer import TIMER_PRECISION_MS
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
SLACK_MS = 100
"""Clock granularity between the broker's store time and this process's."""
POPPED, ACKED, FILLED = 4, 2, 6


@dataclass(frozen=True)
class Due:
    key: str
    not_before_ms: int


@dataclass
class Scene5:
    timer_topic: str
    pop_topic: str
    group: str
    early: str = ""
    pending: list[Due] = field(default_factory=list)
    acked: list[str] = field(default_factory=list)
    unacked: list[Due] = field(default_factory=list)
    unpopped: list[str] = field(default_factory=list)


def _pop(connection: AdminConnection, group: str, topic: str, max_nums: int,
         invisible_ms: int) -> tuple[int, list[Popped]]:
    """(popTime, popped records with their receipts); popTime 0 when nothing was there."""
    answer = connection.call(RequestCode.POP_MESSAGE, {
        "consumerGroup": group, "topic": topic, "queueId": -1, "maxMsgNums": max_nums,
        "invisibleTime": invisible_ms, "pollTime": 0, "bornTime": int(time.time() * 1000),
        "initMode": InitMode.MIN, "order": False},
        accept=(ResponseCode.SUCCESS, ResponseCode.PULL_NOT_FOUND, ResponseCode.POLLING_TIMEOUT))
    if answer.command.code != ResponseCode.SUCCESS:
        return 0, []
    return int(answer.header["popTime"]), popped(answer.command, BROKER_NAME)


def _ack(connection: AdminConnection, group: str, topic: str, message: Popped) -> int:
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


def write(broker: str) -> Scene5:
    suffix = uuid.uuid4().hex[:8]
    scene = Scene5(f"takeover_timer_{suffix}", f"takeover_pop_{suffix}", f"takeover_pop_group_{suffix}")
    with AdminConnection(broker, 10.0) as connection:
        create_topic(connection, scene.timer_topic, 1)
        scene.early = f"early_{suffix}"
        send(connection, scene.timer_topic, 0, b"due before the stop", scene.early,
             {PropertyKey.TIMER_DELAY_MS: str(EARLY_DELAY_MS)})
        _wait_delivered(connection, scene.timer_topic, scene.early)
        sent_at = int(time.time() * 1000)
        due = sent_at + PENDING_DELAY_S * 1000
        for name, trigger in (("deliver_ms", {PropertyKey.TIMER_DELIVER_MS: str(due)}),
                              ("delay_sec", {PropertyKey.TIMER_DELAY_SEC: str(PENDING_DELAY_S)})):
            scene.pending.append(Due(f"{name}_{suffix}", due - TIMER_PRECISION_MS - SLACK_MS))
            send(connection, scene.timer_topic, 0, b"pending at the stop", scene.pending[-1].key, trigger)
        create_topic(connection, scene.pop_topic, 1)
        for number in range(FILLED):
            send(connection, scene.pop_topic, 0, f"pop message {number}".encode(), f"p{number}_{suffix}")
        create_group(connection, scene.group)
        pop_time, first = _pop(connection, scene.group, scene.pop_topic, POPPED, INVISIBLE_MS)
        keys = [m.record.properties.get("takeover", "") for m in first]
        if keys != [f"p{number}_{suffix}" for number in range(POPPED)]:
            raise AssertionError(f"the writer popped {keys}, expected the first {POPPED} of {FILLED}")
        for message in first[:ACKED]:
            if (code := _ack(connection, scene.group, scene.pop_topic, message)) != ResponseCode.SUCCESS:
                raise AssertionError(f"the writer answered ack with {code}")
        scene.acked = keys[:ACKED]
        scene.unacked = [Due(key, pop_time + INVISIBLE_MS - TIMER_PRECISION_MS) for key in keys[ACKED:]]
        scene.unpopped = [f"p{number}_{suffix}" for number in range(POPPED, FILLED)]
    return scene


def problems(broker: str, scene: Scene5) -> list[str]:
    """What the reader does with the writer's timers and pop state that the writer's design says it should
    not (empty: everything carried over)."""
    found: list[str] = []
    timers: dict[str, list[int]] = {}
    popped_at: dict[str, list[int]] = {}
    expected_timers = {scene.early, *(d.key for d in scene.pending)}
    expected_pops = {*(d.key for d in scene.unacked), *scene.unpopped}
    with AdminConnection(broker, 10.0) as connection:
        deadline, quiet_until = time.monotonic() + WAIT_S, None
        while time.monotonic() < deadline and (quiet_until is None or time.monotonic() < quiet_until):
            timers = {}
            for record in pull(connection, "probe", scene.timer_topic, 0):
                timers.setdefault(record.properties.get("takeover", ""), []).append(record.store_timestamp)
            _, batch = _pop(connection, scene.group, scene.pop_topic, 32, READER_INVISIBLE_MS)
            for message in batch:
                popped_at.setdefault(message.record.properties.get("takeover", ""), []).append(
                    int(time.time() * 1000))
                if (code := _ack(connection, scene.group, scene.pop_topic, message)) != ResponseCode.SUCCESS:
                    found.append(f"ack of a popped message answered {code}")
            if quiet_until is None and set(timers) >= expected_timers and set(popped_at) >= expected_pops:
                quiet_until = time.monotonic() + QUIET_S
            time.sleep(0.5)
    found += _timer_problems(scene, timers) + _pop_problems(scene, popped_at)
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


def _pop_problems(scene: Scene5, popped_at: dict[str, list[int]]) -> list[str]:
    found = [f"pop {key}: acked before the stop, popped again" for key in scene.acked if key in popped_at]
    found += [f"pop {key}: popped {len(times)} times" for key, times in popped_at.items() if len(times) > 1]
    found += [f"pop {key}: never popped" for key in scene.unpopped if key not in popped_at]
    for due in scene.unacked:
        if due.key not in popped_at:
            found.append(f"pop {due.key}: popped and not acked before the stop, never came back")
        elif (seen := min(popped_at[due.key])) < due.not_before_ms:
            found.append(f"pop {due.key}: came back at {seen}, before its invisible time ended "
                         f"({due.not_before_ms})")
    return found
