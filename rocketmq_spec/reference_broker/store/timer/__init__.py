"""Timer messages (5.x): the put path parks them in ``rmq_sys_wheel_timer``, the wheel delivers them."""

from rocketmq_spec.reference_broker.store.timer.transform import (
    TimerIllegal,
    TimerSettings,
    park_timer_message,
)
from rocketmq_spec.reference_broker.store.timer.wheel import TimerWheel

__all__ = ["TimerIllegal", "TimerSettings", "TimerWheel", "park_timer_message"]
