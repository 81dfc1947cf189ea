"""The HA settings both sides read, in seconds and bytes, taken once from the broker's config."""

from __future__ import annotations

from dataclasses import dataclass

from reference_broker.config import BrokerConfig


@dataclass(frozen=True)
class HASettings:
    heartbeat_interval: float
    housekeeping_interval: float
    transfer_batch_size: int
    reconnect_interval: float

    @classmethod
    def from_broker(cls, config: BrokerConfig) -> HASettings:
        return cls(config.ha_send_heartbeat_interval / 1000, config.ha_housekeeping_interval / 1000,
                   config.ha_transfer_batch_size, config.ha_reconnect_interval / 1000)
