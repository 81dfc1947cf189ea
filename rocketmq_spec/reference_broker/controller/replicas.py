"""The controller's decisions: broker ids, registration, elections, SyncStateSet changes, cleaning.

One :class:`BrokerSet` per broker-set holds what Java's ``ReplicasInfoManager`` keeps in its two tables
(``BrokerReplicaInfo`` and ``SyncStateInfo``): the brokers granted an id (address and check code), the
next id to hand out, the master, the master epoch and the SyncStateSet with its epoch. Each request is a
method that reads the table, decides, changes it when the request is a write that succeeds, and returns
an :class:`Outcome`: the response code, remark, header values and body Java answers with, and whether
the table changed (the caller persists it then). Nothing here does I/O or reads a clock: liveness comes
in as a predicate, as ``BrokerValidPredicate`` does in Java (rules: ``rocketmq_spec.spec.controller_rules``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from rocketmq_spec.codec.bodies import encode_body
from rocketmq_spec.spec.codes import ResponseCode
from rocketmq_spec.spec.controller import BROKER_REPLICAS_INFO, ELECT_MASTER_BODY, SYNC_STATE_SET
from rocketmq_spec.spec.controller_rules import (
    CHECK_CODE_SEPARATOR,
    FIRST_BROKER_ID,
    METADATA_NOT_EXIST_REMARK,
    NO_ELECTOR,
)

from .liveness import Alive

_R = ResponseCode

Policy = Callable[["BrokerSet", int | None], int | None]
"""The election policy for a set: given the broker to prefer (a designated election), the new master or
None (``DefaultElectPolicy`` over the set's SyncStateSet, and its brokers when unclean election is on)."""


@dataclass
class Member:
    address: str
    check_code: str


@dataclass
class BrokerSet:
    cluster: str
    name: str
    brokers: dict[int, Member] = field(default_factory=dict)
    next_id: int = FIRST_BROKER_ID
    """``nextAssignBrokerId``: one more for every id granted, whichever id it was
    (BrokerReplicaInfo.addBroker)."""
    master: int | None = None
    master_epoch: int = 0
    in_sync: frozenset[int] = frozenset()
    in_sync_epoch: int = 0

    def address(self, broker_id: int | None) -> str | None:
        member = self.brokers.get(broker_id) if broker_id is not None else None
        return member.address if member else None

    def add(self, broker_id: int, address: str, check_code: str) -> None:
        self.brokers[broker_id] = Member(address, check_code)
        self.next_id += 1

    def sync_state_body(self) -> bytes:
        return encode_body(SYNC_STATE_SET, {"syncStateSet": sorted(self.in_sync),
                                            "syncStateSetEpoch": self.in_sync_epoch})


@dataclass(frozen=True)
class Outcome:
    """One answer: Java's ``ControllerResult`` turned into a response, and whether the table changed."""

    code: int = _R.SUCCESS
    remark: str | None = None
    header: dict[str, Any] = field(default_factory=dict)
    body: bytes | None = None
    changed: bool = False
    elected: BrokerSet | None = None
    """The set whose new master this outcome made (its brokers are told when notifyBrokerRoleChanged)."""


class ReplicaTable:
    """Every broker-set the controller knows (``ReplicasInfoManager``)."""

    def __init__(self, sets: Sequence[BrokerSet] = ()) -> None:
        self.sets: dict[str, BrokerSet] = {s.name: s for s in sets}

    # -- broker ids and registration ------------------------------------------------------------------

    def next_broker_id(self, cluster: str, name: str) -> Outcome:
        """getNextBrokerId:290 (RMQ-CTL-NEXT-ID)."""
        known = self.sets.get(name)
        return Outcome(header={"clusterName": cluster, "brokerName": name,
                               "nextBrokerId": known.next_id if known else FIRST_BROKER_ID})

    def apply_broker_id(self, cluster: str, name: str, broker_id: int, check_code: str) -> Outcome:
        """applyBrokerId:305 and handleApplyBrokerId:522 (RMQ-CTL-APPLY-ID)."""
        echo = {"clusterName": cluster, "brokerName": name}
        address = check_code.split(CHECK_CODE_SEPARATOR)[0]
        known = self.sets.get(name)
        if known is None:
            if broker_id != FIRST_BROKER_ID:
                return Outcome(_R.CONTROLLER_BROKER_ID_INVALID, f"Broker-set: {name} hasn't been registered "
                               f"in controller, but broker try to apply brokerId: {broker_id}", echo)
            created = BrokerSet(cluster, name)
            created.add(broker_id, address, check_code)
            self.sets[name] = created
            return Outcome(header=echo, changed=True)
        holder = known.brokers.get(broker_id)
        if holder is None:
            known.add(broker_id, address, check_code)
            return Outcome(header=echo, changed=True)
        if holder.check_code == check_code:
            return Outcome(header=echo)
        return Outcome(_R.CONTROLLER_BROKER_ID_INVALID,
                       f"Fail to apply brokerId: {broker_id} in broker-set: {name}", echo)

    def register(self, cluster: str, name: str, broker_id: int, address: str, alive: Alive) -> Outcome:
        """registerBroker:334 (RMQ-CTL-REGISTER): the master is named only while alive."""
        echo: dict[str, Any] = {"clusterName": cluster, "brokerName": name}
        known = self.sets.get(name)
        if known is None:
            return Outcome(_R.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED,
                           f"Broker-set: {name} hasn't been registered in controller", echo)
        member = known.brokers.get(broker_id)
        if member is None:
            return Outcome(_R.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED,
                           f"BrokerId: {broker_id} hasn't been registered in broker-set: {name}", echo)
        if known.master is not None and alive(cluster, name, known.master):
            echo.update(masterBrokerId=known.master, masterAddress=known.address(known.master),
                        masterEpoch=known.master_epoch, syncStateSetEpoch=known.in_sync_epoch)
        moved = member.address != address
        member.address = address
        return Outcome(header=echo, body=known.sync_state_body(), changed=moved)

    # -- elections and the SyncStateSet ---------------------------------------------------------------

    def elect(self, name: str, broker_id: int | None, designate: bool, policy: Policy) -> Outcome:
        """electMaster:193 (RMQ-CTL-ELECT-FIRST, -WHO, -STILL, -NONE); ``broker_id`` -1 or None is the
        controller's own election after its master died."""
        known = self.sets.get(name)
        if known is None:
            return Outcome(_R.CONTROLLER_BROKER_NEED_TO_BE_REGISTERED, "Broker hasn't been registered")
        new_master = broker_id if known.master_epoch == 0 else None
        if new_master is None or new_master == NO_ELECTOR:
            new_master = policy(known, broker_id if designate else None)
        old = known.master
        if new_master is not None and new_master == old:
            return Outcome(_R.CONTROLLER_MASTER_STILL_EXIST,
                           f"The old master {old} is still alive, not need to elect new master for broker "
                           f"{name}",
                           {"masterEpoch": known.master_epoch, "syncStateSetEpoch": known.in_sync_epoch,
                            "masterBrokerId": old, "masterAddress": known.address(old)},
                           encode_body(ELECT_MASTER_BODY, {"syncStateSet": sorted(known.in_sync)}))
        if new_master is not None:
            known.master, known.master_epoch = new_master, known.master_epoch + 1
            known.in_sync, known.in_sync_epoch = frozenset({new_master}), known.in_sync_epoch + 1
            group = {"cluster": known.cluster, "brokerName": name,
                     "brokerAddrs": {b: m.address for b, m in sorted(known.brokers.items())}}
            return Outcome(header=self._master_header(known),
                           body=encode_body(ELECT_MASTER_BODY, {"brokerMemberGroup": group,
                                                                "syncStateSet": [new_master]}),
                           changed=True, elected=known)
        if broker_id is None or broker_id == NO_ELECTOR:
            known.master, known.master_epoch = None, known.master_epoch + 1
            return Outcome(_R.CONTROLLER_MASTER_NOT_AVAILABLE,
                           "Old master has down and failed to elect a new broker master", changed=True)
        return Outcome(_R.CONTROLLER_ELECT_MASTER_FAILED, "Failed to elect a new master")

    @staticmethod
    def _master_header(known: BrokerSet) -> dict[str, Any]:
        return {"masterBrokerId": known.master, "masterAddress": known.address(known.master),
                "masterEpoch": known.master_epoch, "syncStateSetEpoch": known.in_sync_epoch}

    def alter(self, name: str, master: int | None, master_epoch: int | None, members: Sequence[int],
              set_epoch: int, alive: Alive) -> Outcome:
        """alterSyncStateSet:110 (RMQ-CTL-ALTER, -FENCED, -ALTER-REFUSED), its checks in Java's order."""
        refused = {"newSyncStateSetEpoch": 0}  # a Java int: present, 0, on every refusal
        known = self.sets.get(name)
        if known is None:
            return Outcome(_R.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED, METADATA_NOT_EXIST_REMARK, refused)
        wanted = frozenset(members)
        if wanted == known.in_sync:
            return Outcome(_R.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED, "The newSyncStateSet is equal with "
                           "oldSyncStateSet, no needed to update syncStateSet", refused)
        if known.master is None or known.master != master:
            return Outcome(_R.CONTROLLER_INVALID_MASTER, "Rejecting alter syncStateSet request because the "
                           f"current leader is:{{{known.master}}}, not {{{master}}}", refused)
        if master_epoch != known.master_epoch:
            return Outcome(_R.CONTROLLER_FENCED_MASTER_EPOCH, "Rejecting alter syncStateSet request because "
                           f"the current master epoch is:{{{known.master_epoch}}}, not {{{master_epoch}}}",
                           refused)
        if set_epoch != known.in_sync_epoch:
            return Outcome(_R.CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH, "Rejecting alter syncStateSet request "
                           f"because the current syncStateSet epoch is:{{{known.in_sync_epoch}}}, "
                           f"not {{{set_epoch}}}", refused)
        for replica in members:
            if replica not in known.brokers:
                return Outcome(_R.CONTROLLER_INVALID_REPLICAS, "Rejecting alter syncStateSet request because "
                               f"the replicas {{{replica}}} don't exist", refused)
            if not alive(known.cluster, name, replica):
                return Outcome(_R.CONTROLLER_BROKER_NOT_ALIVE, "Rejecting alter syncStateSet request because "
                               f"the replicas {{{replica}}} don't alive", refused)
        if known.master not in wanted:
            return Outcome(_R.CONTROLLER_ALTER_SYNC_STATE_SET_FAILED, "Rejecting alter syncStateSet request "
                           f"because the newSyncStateSet don't contains origin leader {{{known.master}}}",
                           refused)
        known.in_sync, known.in_sync_epoch = wanted, known.in_sync_epoch + 1
        return Outcome(header={"newSyncStateSetEpoch": known.in_sync_epoch}, body=known.sync_state_body(),
                       changed=True)

    # -- reads -------------------------------------------------------------------------------------------

    def replica_info(self, name: str) -> Outcome:
        """getReplicaInfo:368 (RMQ-CTL-REPLICA-INFO)."""
        known = self.sets.get(name)
        if known is None:
            return Outcome(_R.CONTROLLER_BROKER_METADATA_NOT_EXIST, METADATA_NOT_EXIST_REMARK)
        return Outcome(header={"masterBrokerId": known.master, "masterAddress": known.address(known.master),
                               "masterEpoch": known.master_epoch}, body=known.sync_state_body())

    def sync_state_data(self, names: Sequence[str], alive: Alive) -> Outcome:
        """getSyncStateData:387 (RMQ-CTL-SYNC-STATE-DATA): unknown names are left out."""
        table: dict[str, Any] = {}
        for name in names:
            known = self.sets.get(name)
            if known is None:
                continue
            replicas: dict[bool, list[dict[str, Any]]] = {True: [], False: []}
            for broker_id, member in sorted(known.brokers.items()):
                replicas[broker_id in known.in_sync].append({
                    "brokerName": name, "brokerId": broker_id, "brokerAddress": member.address,
                    "alive": alive(known.cluster, name, broker_id)})
            table[name] = {"masterBrokerId": known.master, "masterAddress": known.address(known.master),
                           "masterEpoch": known.master_epoch, "syncStateSetEpoch": known.in_sync_epoch,
                           "inSyncReplicas": replicas[True], "notInSyncReplicas": replicas[False]}
        return Outcome(body=encode_body(BROKER_REPLICAS_INFO, {"replicasInfoTable": table}))

    # -- cleaning and re-election ----------------------------------------------------------------------

    def clean(self, cluster: str | None, name: str, ids_text: str | None, living: bool,
              alive: Alive) -> Outcome:
        """cleanBrokerData:425 and handleCleanBrokerDataEvent:574 (RMQ-CTL-CLEAN). As in Java, the id list
        is read only when living brokers are spared: with ``isCleanLivingBroker`` the whole set goes."""
        known = self.sets.get(name)
        ids: set[int] | None = None
        if not living:
            if not (ids_text or "").strip() and known is not None and known.master is not None:
                return Outcome(_R.CONTROLLER_INVALID_CLEAN_BROKER_METADATA,
                               f"Broker {name} is still alive, clean up failure")
            if (ids_text or "").strip():
                try:
                    ids = {int(text) for text in (ids_text or "").split(CHECK_CODE_SEPARATOR)}
                except ValueError as exc:
                    return Outcome(_R.CONTROLLER_INVALID_CLEAN_BROKER_METADATA, "Please set the option "
                                   f"<brokerControllerIdsToClean> according to the format, exception: {exc}")
                for broker_id in sorted(ids):
                    if alive(cluster or "", name, broker_id):
                        return Outcome(_R.CONTROLLER_INVALID_CLEAN_BROKER_METADATA,
                                       f"Broker [{name},  {broker_id}] is still alive, clean up failure")
        if known is None:
            return Outcome(_R.CONTROLLER_INVALID_CLEAN_BROKER_METADATA,
                           f"Broker {name} is not existed,clean broker data failure.")
        if not ids:
            del self.sets[name]
            return Outcome(changed=True)
        for broker_id in ids:
            known.brokers.pop(broker_id, None)
        known.in_sync = known.in_sync - ids
        if not known.brokers or not known.in_sync:
            del self.sets[name]
        return Outcome(changed=True)

    def need_reelect(self, alive: Alive) -> list[str]:
        """scanNeedReelectBrokerSets:468 (RMQ-CTL-REELECT): sets whose master is not alive while another
        of their brokers is."""
        return [name for name, known in self.sets.items()
                if known.master is not None and not alive(known.cluster, name, known.master)
                and any(alive(known.cluster, name, broker_id) for broker_id in known.brokers)]
