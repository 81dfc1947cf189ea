"""The controller's table on disk, so a restarted controller keeps its broker ids, masters and epochs.

Java's controller replays its DLedger (or JRaft) log of events at start; a lone reference controller has
no log to replicate, so it writes the whole table after every change instead: one JSON file,
``<controllerStorePath>/replicas.json``, through a temporary file with the previous content kept as
``.bak`` (``rocketmq_spec.codec.store.configs``). Heartbeats are not kept, as in Java: after a restart
every broker is dead until it heartbeats again.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from rocketmq_spec.codec.store.configs import load_config, save_config
from rocketmq_spec.spec.errors import StoreError

from .replicas import BrokerSet, Member, ReplicaTable

log = logging.getLogger(__name__)

FILE_NAME = "replicas.json"
SETS = "brokerSets"


def _set_json(known: BrokerSet) -> dict[str, Any]:
    return {"clusterName": known.cluster, "brokerName": known.name, "nextBrokerId": known.next_id,
            "brokers": [{"brokerId": b, "brokerAddress": m.address, "registerCheckCode": m.check_code}
                        for b, m in sorted(known.brokers.items())],
            "masterBrokerId": known.master, "masterEpoch": known.master_epoch,
            "syncStateSet": sorted(known.in_sync), "syncStateSetEpoch": known.in_sync_epoch}


def _set_of(row: dict[str, Any]) -> BrokerSet:
    master = row.get("masterBrokerId")
    return BrokerSet(str(row["clusterName"]), str(row["brokerName"]),
                     {int(b["brokerId"]): Member(str(b["brokerAddress"]), str(b["registerCheckCode"]))
                      for b in row.get("brokers") or []},
                     int(row["nextBrokerId"]), None if master is None else int(master),
                     int(row["masterEpoch"]),
                     frozenset(int(b) for b in row.get("syncStateSet") or []), int(row["syncStateSetEpoch"]))


class TableFile:
    """Where one controller keeps its table; no path keeps it in memory only."""

    def __init__(self, directory: Path | None) -> None:
        self.path = directory / FILE_NAME if directory is not None else None

    def load(self) -> ReplicaTable:
        """The table last saved, or an empty one on a first start (a file that cannot be read is reported
        and not overwritten until the first change)."""
        if self.path is None:
            return ReplicaTable()
        try:
            content = load_config(self.path)
        except StoreError:
            return ReplicaTable()
        try:
            return ReplicaTable([_set_of(row) for row in content[SETS]])
        except (KeyError, TypeError, ValueError) as exc:
            log.error("%s is not a controller table (%s); starting empty", self.path, exc)
            return ReplicaTable()

    def save(self, table: ReplicaTable) -> None:
        if self.path is not None:
            save_config(self.path, {SETS: [_set_json(s) for _, s in sorted(table.sets.items())]})
