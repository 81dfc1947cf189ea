"""What a run is pointed at: a name server and a broker over TCP, and/or a store directory."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from conformance.wire import Endpoint, alive
from spec.codes import RequestCode

NEEDS_FIXTURE = {"namesrv": "namesrv", "broker": "broker", "store_dir": "store"}
"""Fixture a case asks for -> the part of the target it needs; cases whose part is absent are deselected."""


@dataclass(frozen=True)
class Target:
    namesrv: Endpoint | None = None
    broker: Endpoint | None = None
    store: Path | None = None

    def has(self, part: str) -> bool:
        return getattr(self, part) is not None

    def alive(self, endpoint: Endpoint) -> bool:
        """Probe with a code each role always answers (a 4.9.8 name server ignores unknown codes)."""
        code = RequestCode.GET_BROKER_CLUSTER_INFO if endpoint == self.namesrv else RequestCode.HEART_BEAT
        return alive(endpoint, code)
