"""The HA settings both sides read, in seconds and bytes, taken once from the broker's config."""

from __future__ import annotations

from dataclasses import dataclass

from rocketmq_spec.reference_broker.config import BrokerConfig
from rocketmq_spec.spec.release_rules import Rule, holds
from rocketmq_spec.spec.wire_release import wire_release


@dataclass(frozen=True)
class HASettings:
    heartbeat_interval: float
    housekeeping_interval: float
    transfer_batch_size: int
    reconnect_interval: float
    report_ahead_closes: bool = True
    """RMQ-HA-REPORT-AHEAD: up to 4.9.8 a report past the master's end closes the connection."""

    @classmethod
    def from_broker(cls, config: BrokerConfig) -> HASettings:
        return cls(config.ha_send_heartbeat_interval / 1000, config.ha_housekeeping_interval / 1000,
                   config.ha_transfer_batch_size, config.ha_reconnect_interval / 1000,
                   holds(Rule.HA_REPORT_AHEAD_CLOSES, wire_release(config.wire_release).version))
