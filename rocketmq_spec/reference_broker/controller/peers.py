"""Who the controller is among its peers, and whether it leads (``controllerDLegerPeers``).

Apache's controllers replicate their events through DLedger (or JRaft) and only the elected leader
answers; a lone controller elects itself at once. The reference controller has no replication between
controllers, so it leads exactly when it is its group's only peer: with other peers named it could never
gather a majority, and it answers as a DLedger follower without a leader does (RMQ-CTL-NOT-LEADER).
"""

from __future__ import annotations

from dataclasses import dataclass

from rocketmq_spec.reference_broker.config import ConfigError, NamesrvConfig

PEER_SEPARATOR = ";"
ID_SEPARATOR = "-"
"""``n0-127.0.0.1:9878;n1-127.0.0.1:9868``: DLedgerConfig's peers."""
DEFAULT_GROUP = "DefaultControllerGroup"


@dataclass(frozen=True)
class Peers:
    group: str
    self_id: str
    addresses: dict[str, str]
    """Peer id -> ``ip:port``, in the configured order."""

    @property
    def address(self) -> str:
        return self.addresses[self.self_id]

    @property
    def port(self) -> int:
        return int(self.address.rsplit(":", 1)[1])

    @property
    def leads(self) -> bool:
        return list(self.addresses) == [self.self_id]

    def metadata(self) -> dict[str, object]:
        """GetMetaDataResponseHeader's values (DLedgerController.getControllerMetadata:248)."""
        leader = {"controllerLeaderId": self.self_id, "controllerLeaderAddress": self.address} \
            if self.leads else {}
        return {"group": self.group, **leader, "isLeader": self.leads,
                "peers": "".join(f"{i}:{a}{PEER_SEPARATOR}" for i, a in self.addresses.items())}


def peers_of(config: NamesrvConfig) -> Peers:
    """The peers a config names; ConfigError when they do not name this controller (Java refuses to start:
    ``ControllerManager.initialize``)."""
    text, self_id = config.controller_d_leger_peers or "", config.controller_d_leger_self_id or ""
    if not text.strip():
        raise ConfigError("controllerDLegerPeers", text, "id-ip:port[;id-ip:port...]")
    addresses: dict[str, str] = {}
    for entry in filter(None, (part.strip() for part in text.split(PEER_SEPARATOR))):
        peer_id, separator, address = entry.partition(ID_SEPARATOR)
        host, colon, port = address.rpartition(":")
        if not separator or not colon or not host or not port.isdigit():
            raise ConfigError("controllerDLegerPeers", text, "id-ip:port[;id-ip:port...]")
        addresses[peer_id] = address
    if self_id not in addresses:
        raise ConfigError("controllerDLegerSelfId", self_id,
                          f"one of the peers' ids ({', '.join(addresses)})")
    return Peers(config.controller_d_leger_group or DEFAULT_GROUP, self_id, addresses)
