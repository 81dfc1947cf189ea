"""The broker id a controller granted, kept in ``brokerIdentity`` (and ``brokerIdentity-temp`` while it is
applied for) under the store root, in Java's ``BrokerMetadata`` format (RMQ-BROKER-IDENTITY)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rocketmq_spec.spec.broker_identity import (
    BROKER_IDENTITY_FILE,
    IDENTITY_SEPARATOR,
    RMQ_BROKER_IDENTITY,
    TEMP_SUFFIX,
)
from rocketmq_spec.spec.errors import StoreError


@dataclass(frozen=True)
class Identity:
    cluster: str
    broker_name: str
    broker_id: int
    check_code: str | None = None
    """Only in the temp file: the ``ip:port;timestamp`` the id is applied for with."""

    def line(self) -> str:
        fields = [self.cluster, self.broker_name, str(self.broker_id)]
        return IDENTITY_SEPARATOR.join(fields + ([self.check_code] if self.check_code is not None else []))


class IdentityFiles:
    def __init__(self, store_root: Path) -> None:
        self.path = store_root / BROKER_IDENTITY_FILE
        self.temp_path = store_root / (BROKER_IDENTITY_FILE + TEMP_SUFFIX)

    def granted(self, cluster: str, broker_name: str) -> Identity | None:
        return self._read(self.path, cluster, broker_name)

    def applying(self, cluster: str, broker_name: str) -> Identity | None:
        return self._read(self.temp_path, cluster, broker_name)

    def apply(self, identity: Identity) -> None:
        self.temp_path.parent.mkdir(parents=True, exist_ok=True)
        self.temp_path.write_text(identity.line(), encoding="utf-8")

    def grant(self, identity: Identity) -> None:
        """The controller granted the id: it moves to ``brokerIdentity``, the temp file goes."""
        self.path.write_text(Identity(identity.cluster, identity.broker_name, identity.broker_id).line(),
                             encoding="utf-8")
        self.temp_path.unlink(missing_ok=True)

    def forget_application(self) -> None:
        self.temp_path.unlink(missing_ok=True)

    @staticmethod
    def _read(path: Path, cluster: str, broker_name: str) -> Identity | None:
        if not path.is_file():
            return None
        parts = path.read_text(encoding="utf-8").strip().split(IDENTITY_SEPARATOR)
        if len(parts) < 3 or not parts[2].lstrip("-").isdigit():
            raise StoreError(f"{path.name} is not clusterName#brokerName#brokerId",
                             expected="three fields", seen=IDENTITY_SEPARATOR.join(parts),
                             clause=RMQ_BROKER_IDENTITY.id)
        if (parts[0], parts[1]) != (cluster, broker_name):
            raise StoreError(f"{path.name} names another broker-set than the configuration",
                             expected=f"{cluster}#{broker_name}", seen=f"{parts[0]}#{parts[1]}",
                             clause=RMQ_BROKER_IDENTITY.id)
        return Identity(parts[0], parts[1], int(parts[2]), parts[3] if len(parts) > 3 else None)
