"""Java's own timer index in a store this broker takes over: ``timerlog/`` and ``timerwheel``.

Apache RocketMQ 5.x keeps its pending timers twice: as records of ``rmq_sys_wheel_timer`` queue 0 and as
52-byte units of ``timerlog`` chained from the slots of ``timerwheel``; ``config/timercheck`` says how far
both were read (``lastReadTimeMs``: every slot before it was delivered; ``lastTimerQueueOffset``: every
queue entry before it is in ``timerlog`` or was delivered at once). At a clean stop Java flushes
``timercheck`` and ``timerlog`` (not ``timerwheel``, which ``recover`` rebuilds from ``timerlog``);
``config/timermetrics`` only counts pending timers per topic for metrics.

This broker keeps the queue alone. Starting on a store Java left, it takes every pending timer in from the
queue (those due at or after ``lastReadTimeMs``, and every entry from ``lastTimerQueueOffset`` on, which
Java had not read yet), and from then on the queue and its own checkpoint are the only record: Java's
index is removed once that checkpoint is written. Left in place, Java restarted later would deliver each
message its ``timerlog`` still holds from there, and again from the queue where this broker parked it anew
at its stop (``TimerMessageStore.recover`` resumes the queue after the message of the last ``timerlog``
unit, whatever the checkpoint says). Without ``timerlog`` Java resumes the queue at the checkpoint's
``lastTimerQueueOffset``, as on a store only this broker wrote, so each pending timer comes once.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from rocketmq_spec.spec.timer import TIMER_LOG_DIR, TIMER_WHEEL_DIR

log = logging.getLogger(__name__)


def java_timer_index(root: Path) -> list[Path]:
    """The files of Java's timer index under a store root: ``timerlog/`` and ``timerwheel`` (with the
    ``timerwheel.<flushed position>`` snapshots of ``timerWheelSnapshotFlush``)."""
    return sorted(p for p in root.glob(f"{TIMER_WHEEL_DIR}*") if p.is_file()) + [
        p for p in (root / TIMER_LOG_DIR,) if p.is_dir()]


def drop_java_timer_index(found: list[Path]) -> None:
    """Remove Java's timer index once this broker's checkpoint holds what it said (see the module)."""
    for path in found:
        log.info("taking Java's timer index over from the wheel queue: removing %s", path)
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
