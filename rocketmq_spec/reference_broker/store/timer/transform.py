"""The put path's part of timer messages (``HookUtils.handleScheduleMessage``): which message is parked
in the wheel topic, under which properties, and which is refused.

Pure functions over the properties map, so the store's put path calls one function and stays ignorant of
the rules (RMQ-TIMER-PROPERTIES, RMQ-TIMER-DELAY-LEVEL-WINS, RMQ-TIMER-PAST, RMQ-TIMER-MAX-DELAY).
"""

from __future__ import annotations

from dataclasses import dataclass

from rocketmq_spec.spec.properties import PropertyKey
from rocketmq_spec.spec.system_topics import TIMER_TOPIC
from rocketmq_spec.spec.timer import (
    ILLEGAL_REMARK,
    TIMER_MAX_DELAY_SEC,
    TIMER_PRECISION_MS,
    TIMER_QUEUE_ID,
    rounded_deliver_ms,
)

TRIGGERS = (PropertyKey.TIMER_DELIVER_MS, PropertyKey.TIMER_DELAY_SEC, PropertyKey.TIMER_DELAY_MS)


@dataclass(frozen=True)
class TimerSettings:
    enabled: bool = False
    """``timerWheelEnable`` of a 5.x broker; a 4.x store reads no timer property at all (RMQ-TIMER-4X)."""
    precision_ms: int = TIMER_PRECISION_MS
    max_delay_sec: int = TIMER_MAX_DELAY_SEC


class TimerIllegal(ValueError):
    """WHEEL_TIMER_MSG_ILLEGAL: a timer property that is not a number or asks for too late a time."""

    def __init__(self, settings: TimerSettings, seen: str) -> None:
        super().__init__(ILLEGAL_REMARK.format(max_ms=settings.max_delay_sec * 1000))
        self.expected = f"a delivery time within {settings.max_delay_sec} s"
        self.seen = seen


def park_timer_message(properties: dict[str, str], topic: str, queue_id: int, delay_level: int, now_ms: int,
                       settings: TimerSettings) -> tuple[str, int] | None:
    """Where a message goes when it carries timer properties: ``(rmq_sys_wheel_timer, 0)`` after adding
    TIMER_OUT_MS, REAL_TOPIC and REAL_QID to ``properties``, or None to store it as it is (no trigger, a
    time not in the future, a delay level, which also drops the triggers). Raises TimerIllegal."""
    if not settings.enabled or topic == TIMER_TOPIC:
        return None
    if delay_level > 0:
        for key in TRIGGERS:
            properties.pop(key, None)
        return None
    if PropertyKey.TIMER_OUT_MS in properties or not any(key in properties for key in TRIGGERS):
        return None
    deliver_ms = _deliver_ms(properties, now_ms, settings)
    if deliver_ms <= now_ms:
        if PropertyKey.TIMER_DEL_UNIQKEY in properties:  # a recall of a message already delivered
            raise TimerIllegal(settings, str(deliver_ms))
        return None
    if deliver_ms - now_ms > settings.max_delay_sec * 1000:
        raise TimerIllegal(settings, str(deliver_ms))
    properties[PropertyKey.TIMER_OUT_MS] = str(rounded_deliver_ms(deliver_ms, settings.precision_ms))
    properties[PropertyKey.REAL_TOPIC] = topic
    properties[PropertyKey.REAL_QUEUE_ID] = str(queue_id)
    return TIMER_TOPIC, TIMER_QUEUE_ID


def _deliver_ms(properties: dict[str, str], now_ms: int, settings: TimerSettings) -> int:
    """TIMER_DELAY_SEC wins over TIMER_DELAY_MS, which wins over TIMER_DELIVER_MS (Java's order)."""
    try:
        if PropertyKey.TIMER_DELAY_SEC in properties:
            return now_ms + int(properties[PropertyKey.TIMER_DELAY_SEC]) * 1000
        if PropertyKey.TIMER_DELAY_MS in properties:
            return now_ms + int(properties[PropertyKey.TIMER_DELAY_MS])
        return int(properties[PropertyKey.TIMER_DELIVER_MS])
    except ValueError:
        raise TimerIllegal(settings, repr({k: properties.get(k) for k in TRIGGERS})) from None
