"""A store handed from Apache RocketMQ 5.5.0 to the reference broker and back to Apache 5.5.0, with timers
pending and pop checkpoints in flight at each clean stop, judged by a ledger of deliveries: each message is
delivered as often as Apache alone delivers it (once).

The first Apache broker delivers one timer message, leaves three pending (one due while the reference
broker runs, two due after the store is back with Apache) and runs a pop group's checkpoint to its revival
(the revived messages popped and acked); a second group's checkpoint is still a pending timer when it
stops. The reference broker parks one more timer message and stops. The second Apache broker must then
deliver each pending timer message once, never before its time, revive the second group's messages once,
and the first group's not again: RMQ-TIMER-PROPERTIES, RMQ-TIMER-RESTART (the reference broker takes Java's
timer index over from the wheel queue, ``rocketmq_spec.reference_broker.timer.java_index``) and
RMQ-POP-REVIVE-OFFSET. Skipped without a JDK or the provisioned 5.5.0 jars.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from rocketmq_spec.admin.wire import AdminConnection
from rocketmq_spec.apache.cluster import ApacheRocketMQ
from rocketmq_spec.apache.maven import cached_classpath
from rocketmq_spec.apache.releases import release
from rocketmq_spec.reference_broker.embedded import SyncEmbeddedRocketMQ
from rocketmq_spec.spec.codes import ResponseCode
from rocketmq_spec.spec.pop import pop_retry_topic
from rocketmq_spec.spec.properties import PropertyKey
from tests.mqadmin_commands import create_group
from tests.store_takeover import create_topic, pull, send
from tests.store_takeover_5x import ack_message, pop_messages

pytestmark = pytest.mark.interop

RELEASE = "5.5.0"
EARLY_DELAY_MS = 1500
DURING_DELAY_S = 25
"""Due after the first Apache broker stopped, while the reference broker runs (or, on a slow machine, with
either Apache broker: the ledger counts deliveries, not who made them)."""
THROUGH_DELAY_S = 110
"""Due after the second Apache broker started: pending through both hand-overs."""
REVIVED_INVISIBLE_MS = 3000
OPEN_INVISIBLE_MS = 30_000
"""The second group's invisible time: its checkpoint is a pending timer at the first stop."""
HOLD_INVISIBLE_MS = 600_000
"""Invisible time of every later pop: longer than the test, so nothing it pops comes back."""
WAIT_S = 240.0
QUIET_S = 8.0
"""How long the last broker is watched after everything expected came, for anything that should not."""


@dataclass
class Ledger:
    timer_topic: str
    pop_topic: str
    revived_group: str
    open_group: str
    due: dict[str, int] = field(default_factory=dict)
    """Timer message key -> the time asked for (never delivered before it)."""
    pop_keys: list[str] = field(default_factory=list)
    popped: Counter[str] = field(default_factory=Counter)
    """Pop message key -> how often the open group popped it back (through its retry topic)."""


def _provisioned() -> None:
    if cached_classpath(release(RELEASE)) is None:
        pytest.skip(f"Apache RocketMQ {RELEASE} is not provisioned (rmq-apache classpath {RELEASE})")


def _wait_for(what: str, found: Callable[[], object]) -> None:
    deadline = time.monotonic() + WAIT_S
    while not found():
        if time.monotonic() > deadline:
            raise AssertionError(f"never saw {what}")
        time.sleep(0.5)


def _timer_keys(connection: AdminConnection, ledger: Ledger) -> Counter[str]:
    records = pull(connection, "ledger", ledger.timer_topic, 0)
    return Counter(r.properties.get("takeover", "") for r in records)


def _park(connection: AdminConnection, ledger: Ledger, key: str, delay_ms: int) -> None:
    ledger.due[key] = int(time.time() * 1000) + delay_ms
    send(connection, ledger.timer_topic, 0, b"timer", key,
         {PropertyKey.TIMER_DELIVER_MS: str(ledger.due[key])})


def _first_apache(broker: str, suffix: str) -> Ledger:
    ledger = Ledger(f"chain_timer_{suffix}", f"chain_pop_{suffix}", f"chain_revived_{suffix}",
                    f"chain_open_{suffix}")
    with AdminConnection(broker, 10.0) as connection:
        create_topic(connection, ledger.timer_topic, 1)
        create_topic(connection, ledger.pop_topic, 1)
        _park(connection, ledger, f"early_{suffix}", EARLY_DELAY_MS)
        _wait_for("the early timer message", lambda: _timer_keys(connection, ledger)[f"early_{suffix}"])
        _park(connection, ledger, f"during_{suffix}", DURING_DELAY_S * 1000)
        _park(connection, ledger, f"through_{suffix}", THROUGH_DELAY_S * 1000)
        ledger.pop_keys = [f"p{number}_{suffix}" for number in range(2)]
        for key in ledger.pop_keys:
            send(connection, ledger.pop_topic, 0, b"pop", key)
        for group, invisible in ((ledger.revived_group, REVIVED_INVISIBLE_MS),
                                 (ledger.open_group, OPEN_INVISIBLE_MS)):
            create_group(connection, group)
            _pop_all(connection, ledger, group, invisible, ack=False)
        _pop_all(connection, ledger, ledger.revived_group, HOLD_INVISIBLE_MS, ack=True)  # revived, acked
    return ledger


def _pop_all(connection: AdminConnection, ledger: Ledger, group: str, invisible_ms: int, *,
             ack: bool) -> None:
    """Pop until every message of the pop topic came (first pops, or revived ones), acking them if asked."""
    seen: set[str] = set()

    def popped() -> bool:
        for message in pop_messages(connection, group, ledger.pop_topic, 32, invisible_ms)[1]:
            seen.add(message.record.properties.get("takeover", ""))
            if ack:
                assert ack_message(connection, group, ledger.pop_topic, message) == ResponseCode.SUCCESS
        return seen >= set(ledger.pop_keys)
    _wait_for(f"{group} popping {ledger.pop_keys}", popped)


def _reference(broker: str, ledger: Ledger, suffix: str) -> None:
    with AdminConnection(broker, 10.0) as connection:
        _park(connection, ledger, f"reference_{suffix}", THROUGH_DELAY_S * 1000 - 30_000)


def _second_apache(broker: str, ledger: Ledger) -> list[str]:
    retry = pop_retry_topic(ledger.pop_topic, ledger.revived_group)
    with AdminConnection(broker, 10.0) as connection:
        deadline, quiet_until = time.monotonic() + WAIT_S, None
        timers: Counter[str] = Counter()
        while time.monotonic() < deadline and (quiet_until is None or time.monotonic() < quiet_until):
            timers = _timer_keys(connection, ledger)
            for message in pop_messages(connection, ledger.open_group, ledger.pop_topic, 32,
                                        HOLD_INVISIBLE_MS)[1]:
                ledger.popped[message.record.properties.get("takeover", "")] += 1
                ack_message(connection, ledger.open_group, ledger.pop_topic, message)
            if quiet_until is None and set(timers) >= set(ledger.due) and set(ledger.popped) >= set(
                    ledger.pop_keys):
                quiet_until = time.monotonic() + QUIET_S
            time.sleep(0.5)
        stored = {r.properties.get("takeover", ""): r.store_timestamp
                  for r in pull(connection, "ledger", ledger.timer_topic, 0)}
        revived = Counter(r.properties.get("takeover", "") for r in pull(connection, "ledger", retry, 0))
    found = [f"timer {key}: delivered {timers[key]} times" for key in ledger.due if timers[key] != 1]
    found += [f"timer {key}: delivered at {stored[key]}, before {due}" for key, due in ledger.due.items()
              if key in stored and stored[key] < due]
    found += [f"pop {key}: revived {revived[key]} times for {ledger.revived_group}" for key in ledger.pop_keys
              if revived[key] != 1]
    found += [f"pop {key}: popped back {ledger.popped[key]} times for {ledger.open_group}"
              for key in ledger.pop_keys if ledger.popped[key] != 1]
    return found


def test_apache_to_reference_to_apache_delivers_each_message_once(tmp_path: Path) -> None:
    _provisioned()
    store, suffix = tmp_path / "store", uuid.uuid4().hex[:8]
    with ApacheRocketMQ(RELEASE, home=tmp_path / "apache-1", store=store) as first:
        ledger = _first_apache(first.broker_addr, suffix)
    with SyncEmbeddedRocketMQ(store) as reference:
        _reference(reference.broker_addr, ledger, suffix)
    with ApacheRocketMQ(RELEASE, home=tmp_path / "apache-2", store=store) as second:
        found = _second_apache(second.broker_addr, ledger)
    assert not found, found
