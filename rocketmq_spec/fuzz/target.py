"""The target under fuzzing: is it still answering, is its process alive, how much memory does it hold.

A crash is a target that no longer accepts connections (or whose process is gone); a hang is one that
accepts but does not answer a plain request on a fresh control connection. Memory is read from
``/proc/<pid>/status`` (VmRSS) when the caller names the target's process, because a slow leak is only
visible from outside.
"""

from __future__ import annotations

import enum
import time
from dataclasses import dataclass
from pathlib import Path

from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.conformance.regression import Listener
from rocketmq_spec.fuzz.memory import process_rss
from rocketmq_spec.fuzz.wire import WireConnection, next_opaque
from rocketmq_spec.spec.codes import RequestCode

PROBE_TIMEOUT = 5.0
"""Seconds a fresh control connection waits for an answer; Java clients time out after 3 s by default,
so a target slower than this is unusable for them."""

PROBE_CODES = {
    # Every name server answers this; a 4.9.8 name server ignores codes it does not know.
    Listener.NAMESRV: RequestCode.GET_BROKER_CLUSTER_INFO,
    # Any broker answers every code, if only with REQUEST_CODE_NOT_SUPPORTED.
    Listener.BROKER: RequestCode.GET_BROKER_RUNTIME_INFO,
}

HANG_PATIENCE = 60.0
"""Seconds a target that stopped answering gets to answer again before it counts as hung. A target busy
with earlier input (Java spends seconds of a decoder thread on some malformed frames, many more on a
loaded machine) stalls the connections that share that thread and then recovers: a stall, not a hang."""
PROBE_INTERVAL = 1.0



class Health(enum.Enum):
    OK = "ok"
    CRASH = "crash"
    HANG = "hang"


@dataclass(frozen=True)
class Target:
    namesrv: str
    broker: str
    pid: int | None = None

    def addr(self, listener: Listener) -> str:
        return self.namesrv if listener is Listener.NAMESRV else self.broker

    def announced_version(self) -> int | None:
        """The ``version`` word of the broker's answer to a probe (None when it does not answer)."""
        try:
            conn = WireConnection(self.broker)
        except OSError:
            return None
        with conn:
            answer = conn.request(RemotingCommand.request(PROBE_CODES[Listener.BROKER], opaque=next_opaque()),
                                  PROBE_TIMEOUT)
        return None if answer is None else answer.version

    def health(self, listener: Listener) -> Health:
        if self.pid is not None and not Path(f"/proc/{self.pid}").exists():
            return Health.CRASH
        try:
            conn = WireConnection(self.addr(listener))
        except OSError:
            return Health.CRASH
        with conn:
            probe = RemotingCommand.request(PROBE_CODES[listener], opaque=next_opaque())
            return Health.OK if conn.request(probe, PROBE_TIMEOUT) is not None else Health.HANG

    def settled_health(self, listener: Listener) -> tuple[Health, float]:
        """Health after giving a silent target HANG_PATIENCE seconds to answer again, and how long it was
        silent (0 when the first probe was answered). A crash is final at once."""
        started = time.monotonic()
        health = self.health(listener)
        while health is Health.HANG and time.monotonic() - started < HANG_PATIENCE:
            time.sleep(PROBE_INTERVAL)
            health = self.health(listener)
        stalled = 0.0 if time.monotonic() - started < PROBE_TIMEOUT else time.monotonic() - started
        return health, stalled

    def rss_bytes(self) -> int | None:
        """Resident memory of the target's process, or None when no pid was given or it is gone."""
        return process_rss(self.pid)

