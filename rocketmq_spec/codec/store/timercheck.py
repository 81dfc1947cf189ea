"""``config/timercheck``: how far the timer took the wheel queue in
(``rocketmq_spec.spec.timer.TimerCheckpoint``)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

from rocketmq_spec.spec.timer import TIMER_CHECKPOINT_SIZE, TimerCheckpoint


@dataclass(frozen=True)
class TimerCheckpointData:
    last_read_time_ms: int = 0
    last_timer_log_flush_pos: int = 0
    last_timer_queue_offset: int = 0
    master_timer_queue_offset: int = 0
    state_version: int = 0
    timestamp: int = 0
    counter: int = 0


def encode_timer_checkpoint(data: TimerCheckpointData) -> bytes:
    return TimerCheckpoint.build({f.name: getattr(data, f.name) for f in fields(data)})


def decode_timer_checkpoint(raw: bytes) -> TimerCheckpointData:
    """A page of zeros (a new file) reads as all zeros, as Java reads it; a short file is padded."""
    parsed = TimerCheckpoint.parse(raw[:TIMER_CHECKPOINT_SIZE].ljust(TIMER_CHECKPOINT_SIZE, b"\0"))
    return TimerCheckpointData(**{f.name: parsed[f.name] for f in fields(TimerCheckpointData)})


def read_timer_checkpoint(path: Path) -> TimerCheckpointData | None:
    try:
        return decode_timer_checkpoint(path.read_bytes())
    except FileNotFoundError:
        return None
