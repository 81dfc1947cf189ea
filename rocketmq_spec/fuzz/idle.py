"""Connections left inside a malformed frame, judged only once the target's idle timeout has passed.

A length-prefixed receiver waits for the rest of a frame (see ``rocketmq_spec.conformance.oracle``); what ends
such a connection is the target's idle timeout (Java: ``serverChannelMaxIdleTimeSeconds``, 120 s). When the
operator names that timeout, the fuzzer keeps those connections open while it goes on fuzzing, and a
connection still open and silent a grace period after the timeout is a finding. Without a named timeout such
connections are owed nothing and are not judged at all. """

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Generic, TypeVar

from rocketmq_spec.fuzz.wire import WireConnection

IDLE_GRACE = 5.0
"""Seconds past the idle timeout before an open connection counts: idle checks run on timers."""
POLL_SECONDS = 0.005
"""How long each parked connection is read per check: long enough to see a close already queued."""
MAX_PARKED = 64
"""Open connections kept at once; further ones are not judged (a target may cap connections per peer)."""


C = TypeVar("C")


@dataclass
class Parked(Generic[C]):
    conn: WireConnection
    deadline: float
    frames: list[bytes]
    batch: C
    """What left the connection open (the fuzzer's batch, for the finding's record)."""


class IdleWatch(Generic[C]):
    def __init__(self, idle_timeout: float) -> None:
        self.idle_timeout = idle_timeout
        self.parked: list[Parked[C]] = []
        self.judged = 0

    def park(self, conn: WireConnection, frames: list[bytes], batch: C, now: float) -> bool:
        """Keep ``conn`` open for judging; False (caller closes it) when the watch is full."""
        if len(self.parked) >= MAX_PARKED:
            return False
        self.parked.append(Parked(conn, now + self.idle_timeout + IDLE_GRACE, frames, batch))
        return True

    def overdue(self, now: float) -> list[Parked[C]]:
        """Connections still open and silent past their deadline (closed by the caller after recording).

        Connections the target closed, or that got an answer, are dropped: the target judged them.
        """
        still: list[Parked[C]] = []
        late: list[Parked[C]] = []
        for parked in self.parked:
            observed = parked.conn.listen(POLL_SECONDS)
            if observed.closed or observed.received_bytes:
                parked.conn.close()
                self.judged += 1
            elif now >= parked.deadline:
                late.append(parked)
                self.judged += 1
            else:
                still.append(parked)
        self.parked = still
        return late

    def drain(self, limit: float) -> list[Parked[C]]:
        """Wait (until ``limit``, a monotonic time) for the parked connections to be judged."""
        late: list[Parked[C]] = []
        while self.parked and time.monotonic() < limit:
            late += self.overdue(time.monotonic())
            if self.parked:
                time.sleep(min(0.5, max(0.0, limit - time.monotonic())))
        for parked in self.parked:
            parked.conn.close()
        self.parked = []
        return late
