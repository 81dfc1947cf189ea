"""A store handed from Apache RocketMQ 5.5.0 to the reference broker and back to Apache 5.5.0, and from the
reference broker to Apache 5.5.0 and back to the reference broker, with timers pending and pop checkpoints
in flight at each clean stop, judged by a ledger of deliveries: each message is delivered as often as
Apache alone delivers it (once).

The first broker delivers one timer message, leaves three pending (one due while the middle broker runs,
two due after the store is back with the first implementation) and runs a pop group's checkpoint to its
revival (the revived messages popped and acked); a second group's checkpoint is still a pending timer when
it stops. The middle broker parks one more timer message and stops. The last broker must then deliver each
pending timer message once, never before its time, revive the second group's messages once, and the first
group's not again: RMQ-TIMER-PROPERTIES, RMQ-TIMER-RESTART (the reference broker takes Java's timer index
over from the wheel queue, ``rocketmq_spec.reference_broker.store.timer.java_index``, and leaves its own
pending timers in the wheel queue for Java to read) and RMQ-POP-REVIVE-OFFSET. Skipped without a JDK or
the provisioned 5.5.0 jars.

The default run hands a store from Apache to the reference broker and back; the other way round
(reference, Apache, reference: the same legs in the other order) runs under ``-m slow``, with the long
form. The long form kills each broker but the last with SIGKILL instead, over five legs (Apache,
reference, Apache, reference, Apache, and the other way round), each parking one more timer message. A
killed broker's last checkpoints lag, so Apache alone delivers again after a crash what it delivered since
them: there each message must come at least once, never early, and at most once more per kill it lived
through.
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
from rocketmq_spec.spec.codes import ResponseCode
from rocketmq_spec.spec.pop import pop_retry_topic
from rocketmq_spec.spec.properties import PropertyKey
from tests.broker_process import BrokerProcess, write_broker_conf
from tests.java_programs import require_release
from tests.mqadmin_commands import create_group
from tests.store_takeover import create_topic, pull, send
from tests.store_takeover_5x import ack_message, pop_messages

pytestmark = pytest.mark.interop

RELEASE = "5.5.0"
EARLY_DELAY_MS = 1500
DURING_DELAY_S = 25
"""Due after the first broker stopped, while the middle one runs (or, on a slow machine, with the first or
the last: the ledger counts deliveries, not who made them)."""
THROUGH_DELAY_S = 110
"""Due after the last broker started: pending through both hand-overs (the long form's legs
stretch it, see :func:`_through_delay_s`)."""
LEG_S = 45
"""What one more leg of the long form adds to the time the chain takes (a JVM's start included)."""
REVIVED_INVISIBLE_MS = 3000
OPEN_INVISIBLE_MS = 30_000
"""The second group's invisible time: its checkpoint is a pending timer at the first stop."""
HOLD_INVISIBLE_MS = 600_000
"""Invisible time of every later pop: longer than the test, so nothing it pops comes back."""
WAIT_S = 240.0
SETTLE_S = 5.0
"""How long a middle leg runs on once what was due came: several rounds of the revive service."""
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
    require_release(RELEASE)


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


def _first(broker: str, suffix: str, through_s: int) -> Ledger:
    ledger = Ledger(f"chain_timer_{suffix}", f"chain_pop_{suffix}", f"chain_revived_{suffix}",
                    f"chain_open_{suffix}")
    with AdminConnection(broker, 10.0) as connection:
        create_topic(connection, ledger.timer_topic, 1)
        create_topic(connection, ledger.pop_topic, 1)
        _park(connection, ledger, f"early_{suffix}", EARLY_DELAY_MS)
        _wait_for("the early timer message", lambda: _timer_keys(connection, ledger)[f"early_{suffix}"])
        _park(connection, ledger, f"during_{suffix}", DURING_DELAY_S * 1000)
        _park(connection, ledger, f"through_{suffix}", through_s * 1000)
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


def _through_delay_s(legs: int) -> int:
    return THROUGH_DELAY_S + (legs - 3) * LEG_S


def _middle(broker: str, ledger: Ledger, key: str, delay_s: int) -> None:
    """Park one more timer message, then run until every timer message already due was delivered (the
    first middle leg delivers the one due while it runs) and some seconds more, so that the broker's revive
    service reads the revive log the previous broker left (RMQ-POP-REVIVE-OFFSET)."""
    with AdminConnection(broker, 10.0) as connection:
        _park(connection, ledger, key, delay_s * 1000)
        _wait_for("the timer messages due", lambda: set(_timer_keys(connection, ledger)) >= {
            k for k, due in ledger.due.items() if due <= int(time.time() * 1000)})
        time.sleep(SETTLE_S)


def _last(broker: str, ledger: Ledger, kills: int) -> list[str]:
    """The ledger's problems: each message delivered once, or with ``kills``, at least once and at most
    once more per kill."""
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
    allowed = range(1, 2 + kills)
    found = [f"timer {key}: delivered {timers[key]} times" for key in ledger.due
             if timers[key] not in allowed]
    found += [f"timer {key}: delivered at {stored[key]}, before {due}" for key, due in ledger.due.items()
              if key in stored and stored[key] < due]
    found += [f"pop {key}: revived {revived[key]} times for {ledger.revived_group}" for key in ledger.pop_keys
              if revived[key] not in allowed]
    found += [f"pop {key}: popped back {ledger.popped[key]} times for {ledger.open_group}"
              for key in ledger.pop_keys if ledger.popped[key] not in allowed]
    return found


def _apache_leg(tmp_path: Path, store: Path, leg: int, kill: bool, work: Callable[[str], None]) -> None:
    with ApacheRocketMQ(RELEASE, home=tmp_path / f"apache-{leg}", store=store) as apache:
        work(apache.broker_addr)
        if kill:
            apache.kill_broker()


def _reference_leg(tmp_path: Path, store: Path, leg: int, kill: bool, work: Callable[[str], None]) -> None:
    conf = write_broker_conf(tmp_path / f"reference-{leg}.conf", {"storePathRootDir": str(store)})
    with BrokerProcess(conf, tmp_path / f"reference-{leg}.log") as reference:
        work(reference.broker_addr)
        if kill:
            reference.kill()
        else:
            assert reference.stop() == 0, reference.log_tail()


Leg = Callable[[Path, Path, int, bool, Callable[[str], None]], None]


def _chain(tmp_path: Path, legs: int, kill: bool, first: Leg, other: Leg) -> list[str]:
    """``first`` and ``other`` in turn on one store, ``first`` first and last (``legs`` is odd); every leg
    but the last ends by ``kill`` (SIGKILL) or a clean stop."""
    _provisioned()
    store, suffix = tmp_path / "store", uuid.uuid4().hex[:8]
    holder: list[Ledger] = []
    through_s = _through_delay_s(legs)
    first(tmp_path, store, 1, kill, lambda broker: holder.append(_first(broker, suffix, through_s)))
    ledger = holder[0]
    for leg in range(2, legs):
        key, delay_s = f"leg{leg}_{suffix}", through_s - (leg - 1) * LEG_S
        launch = other if leg % 2 == 0 else first
        launch(tmp_path, store, leg, kill, lambda broker, k=key, d=delay_s: _middle(  # type: ignore[misc]
            broker, ledger, k, d))
    found: list[str] = []
    first(tmp_path, store, legs, False, lambda broker: found.extend(_last(
        broker, ledger, legs - 2 if kill else 0)))
    return found


def test_apache_to_reference_to_apache_delivers_each_message_once(tmp_path: Path) -> None:
    found = _chain(tmp_path, 3, False, _apache_leg, _reference_leg)
    assert not found, found


@pytest.mark.slow
def test_reference_to_apache_to_reference_delivers_each_message_once(tmp_path: Path) -> None:
    found = _chain(tmp_path, 3, False, _reference_leg, _apache_leg)
    assert not found, found


@pytest.mark.slow
def test_kill_9_cycles_between_apache_and_the_reference_lose_nothing(tmp_path: Path) -> None:
    found = _chain(tmp_path, 5, True, _apache_leg, _reference_leg)
    assert not found, found


@pytest.mark.slow
def test_kill_9_cycles_between_the_reference_and_apache_lose_nothing(tmp_path: Path) -> None:
    found = _chain(tmp_path, 5, True, _reference_leg, _apache_leg)
    assert not found, found
