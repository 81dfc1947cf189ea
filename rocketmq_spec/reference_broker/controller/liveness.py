"""Which brokers are alive at the controller, and who an election picks among them.

A broker is alive while its last BROKER_HEARTBEAT is younger than the ``heartbeatTimeoutMills`` that
heartbeat named (RMQ-CTL-HEARTBEAT); the table also keeps what each heartbeat says about the broker's log
(epoch, max offset) and its election priority, which is what the election policy ranks candidates by
(RMQ-CTL-ELECT-WHO). Like Java's ``DefaultBrokerHeartbeatManager`` and ``DefaultElectPolicy`` it keeps no
clock of its own: every call is given the time, so the table is a plain value the tests drive.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass

from rocketmq_spec.spec.controller_rules import DEFAULT_HEARTBEAT_TIMEOUT_MS

NO_PRIORITY = 2**31 - 1
"""``Integer.MAX_VALUE``: the electionPriority of a heartbeat that names none (the least preferred)."""
UNKNOWN = -1
"""What an absent epoch, max offset or confirm offset of a heartbeat is recorded as."""

BrokerKey = tuple[str, str, int]
"""(cluster, broker-set, broker id): ``BrokerIdentityInfo``."""
Alive = Callable[[str, str, int], bool]
"""``BrokerValidPredicate``: whether (cluster, broker-set, id) is alive now."""


@dataclass
class LiveInfo:
    """``BrokerLiveInfo``: the last heartbeat of one broker."""

    address: str
    last_ms: int
    timeout_ms: int
    channel: Hashable | None
    """The connection the first heartbeat came on: its close makes the broker inactive."""
    epoch: int
    max_offset: int
    confirm_offset: int
    priority: int


@dataclass(frozen=True)
class Heartbeat:
    """What a BROKER_HEARTBEAT says (absent optional fields as None)."""

    cluster: str
    name: str
    address: str
    broker_id: int
    timeout_ms: int | None = None
    epoch: int | None = None
    max_offset: int | None = None
    confirm_offset: int | None = None
    priority: int | None = None


class Liveness:
    """The heartbeat table (``DefaultBrokerHeartbeatManager``)."""

    def __init__(self) -> None:
        self.table: dict[BrokerKey, LiveInfo] = {}

    def beat(self, beat: Heartbeat, now_ms: int, channel: Hashable | None = None) -> None:
        """Record a heartbeat (onBrokerHeartbeat:110): a newer (epoch, max offset) replaces the log
        position, never an older one; the connection is the first heartbeat's."""
        key = (beat.cluster, beat.name, beat.broker_id)
        epoch = UNKNOWN if beat.epoch is None else beat.epoch
        max_offset = UNKNOWN if beat.max_offset is None else beat.max_offset
        timeout = DEFAULT_HEARTBEAT_TIMEOUT_MS if beat.timeout_ms is None else beat.timeout_ms
        priority = NO_PRIORITY if beat.priority is None else beat.priority
        confirm = UNKNOWN if beat.confirm_offset is None else beat.confirm_offset
        previous = self.table.get(key)
        if previous is None:
            self.table[key] = LiveInfo(beat.address, now_ms, timeout, channel, epoch, max_offset, confirm,
                                       priority)
            return
        previous.last_ms, previous.timeout_ms, previous.priority = now_ms, timeout, priority
        if (epoch, max_offset) > (previous.epoch, previous.max_offset):
            previous.epoch, previous.max_offset, previous.confirm_offset = epoch, max_offset, confirm

    def alive(self, cluster: str, name: str, broker_id: int, now_ms: int) -> bool:
        """isBrokerActive:169: the last heartbeat plus its timeout is not past."""
        info = self.table.get((cluster, name, broker_id))
        return info is not None and info.last_ms + info.timeout_ms >= now_ms

    def predicate(self, now_ms: int) -> Alive:
        return lambda cluster, name, broker_id: self.alive(cluster, name, broker_id, now_ms)

    def info(self, cluster: str, name: str, broker_id: int) -> LiveInfo | None:
        return self.table.get((cluster, name, broker_id))

    def expire(self, now_ms: int) -> list[tuple[BrokerKey, Hashable | None]]:
        """scanNotActiveBroker: forget the brokers whose heartbeat ran out; they are inactive, and the
        connection each first heartbeated on is to be closed (RMQ-CTL-HEARTBEAT), as Java closes it."""
        gone = [(key, info.channel) for key, info in self.table.items()
                if now_ms - info.last_ms > info.timeout_ms]
        for key, _ in gone:
            del self.table[key]
        return gone

    def channel_closed(self, channel: Hashable) -> list[BrokerKey]:
        """onBrokerChannelClose: the brokers that heartbeated on a connection that closed are inactive.
        Java forgets the first such broker it finds; a broker has a connection of its own, so that is every
        one of them, which this forgets."""
        gone = [key for key, info in self.table.items()
                if info.channel is not None and info.channel == channel]
        for key in gone:
            del self.table[key]
        return gone


def elect(liveness: Liveness, cluster: str, name: str, in_sync: Iterable[int], others: Iterable[int] | None,
          old_master: int | None, preferred: int | None, now_ms: int) -> int | None:
    """``DefaultElectPolicy.elect``: a candidate among the alive members of the SyncStateSet, else (only
    when unclean election gives ``others``) among every alive broker of the set; None when there is none.

    In a group: the old master if alive and nobody else is preferred; the preferred broker if alive, else
    nobody; else the best (epoch, max offset) of their heartbeats, then the lowest electionPriority. Java
    keeps the first of equals in a TreeSet fed from a HashSet; here the lowest id wins a tie."""
    for group in (in_sync, others):
        if group is None:
            continue
        candidates = sorted(b for b in group if liveness.alive(cluster, name, b, now_ms))
        if not candidates:
            continue
        if old_master in candidates and (preferred is None or preferred == old_master):
            return old_master
        if preferred is not None:
            return preferred if preferred in candidates else None
        return min(candidates, key=lambda b: _rank(liveness.info(cluster, name, b)))
    return None


def _rank(info: LiveInfo | None) -> tuple[int, int, int]:
    """DefaultElectPolicy's comparator: higher epoch, then higher max offset, then lower priority first."""
    if info is None:
        return (0, 0, NO_PRIORITY)
    return (-info.epoch, -info.max_offset, info.priority)
