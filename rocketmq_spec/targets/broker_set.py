"""One broker-set in controller mode, its members started and killed by id: the life cycle of a failover.

The members are :class:`~rocketmq_spec.apache.servers.LoopbackServers` (Apache RocketMQ brokers, reference
brokers, or both), started one after the other against one controller, so the controller gives them the
ids 1, 2, ... in start order and elects the first. :class:`BrokerSet` then asks the controller who leads and
who is in the SyncStateSet (CONTROLLER_GET_REPLICA_INFO), kills a member with SIGKILL and starts it again on
the same store (it comes back a slave and truncates to its new master), and sends with WAIT=true,
recording what each send was answered: a SUCCESS is an acknowledged message, which no failover may lose
when the brokers run with ``allAckInSyncStateSet=true``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from rocketmq_spec.admin.wire import AdminConnection, AdminError
from rocketmq_spec.apache.cluster import ApacheRocketMQ
from rocketmq_spec.apache.servers import LoopbackServers
from rocketmq_spec.codec.bodies import decode_body
from rocketmq_spec.codec.custom_header import decode_header
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.client_requests import send_fields
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.controller import GET_REPLICA_INFO_REQUEST, GET_REPLICA_INFO_RESPONSE, SYNC_STATE_SET

T = TypeVar("T")
POLL_S = 0.05
FINE_POLL_S = 0.005
"""The failover benchmark's poll of an election (``BrokerSet.wait_elected`` with a :class:`ReplicaWatch`),
over one kept connection: an election takes tens of milliseconds, so a 50 ms poll with a connect each time
is coarser than the differences between controllers it measures."""
ANSWER_TIMEOUT_S = 2.0
SEND_TIMEOUT_S = 10.0
QUEUES = 4


def in_controller_mode(controller: str, broker_set: str, cluster: str, **settings: str) -> dict[str, str]:
    """The broker.conf keys of a member: the set, its cluster and the controller it registers with."""
    return {"enableControllerMode": "true", "controllerAddr": controller, "brokerName": broker_set,
            "brokerClusterName": cluster, **settings}


def until(what: str, probe: Callable[[], T | None], limit_s: float, poll_s: float = POLL_S) -> T:
    """Poll ``probe`` every ``poll_s`` until it says something (not None); TimeoutError naming ``what``
    after ``limit_s``."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        found = probe()
        if found is not None:
            return found
        time.sleep(poll_s)
    raise TimeoutError(f"{what}: not within {limit_s:.0f} s")


@dataclass(frozen=True)
class ReplicaInfo:
    master_id: int | None
    master_epoch: int
    sync_state_set: frozenset[int]


def replica_info(controller: str, broker_set: str) -> ReplicaInfo | None:
    """The controller's GET_REPLICA_INFO of the set, on a connection of its own; None while it cannot say."""
    with ReplicaWatch(controller, broker_set) as watch:
        return watch.info()


class ReplicaWatch:
    """GET_REPLICA_INFO of one set over one kept connection (opened again after a failure): a poll costs a
    round trip, not a connect as well."""

    def __init__(self, controller: str, broker_set: str) -> None:
        self.controller = controller
        self.broker_set = broker_set
        self._connection: AdminConnection | None = None

    def info(self) -> ReplicaInfo | None:
        """None while the controller cannot say (the connection is dropped then)."""
        try:
            if self._connection is None:
                self._connection = AdminConnection(self.controller, ANSWER_TIMEOUT_S)
            answer = self._connection.call(RequestCode.CONTROLLER_GET_REPLICA_INFO,
                                           {"brokerName": self.broker_set}, spec=GET_REPLICA_INFO_REQUEST)
        except (AdminError, OSError):
            self.close()
            return None
        return _replica_info_of(answer.command.ext_fields, answer.command.body)

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def __enter__(self) -> ReplicaWatch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _replica_info_of(ext_fields: dict[str, str] | None, body: bytes | None) -> ReplicaInfo:
    header = decode_header(GET_REPLICA_INFO_RESPONSE, ext_fields)
    members = decode_body(SYNC_STATE_SET, body or b"{}").get("syncStateSet") or []
    master = header.get("masterBrokerId")
    return ReplicaInfo(master if isinstance(master, int) else None, int(header.get("masterEpoch") or 0),
                       frozenset(int(member) for member in members))


@dataclass
class Sent:
    """Every send's answer code, and the bodies of those acknowledged (SUCCESS)."""

    acknowledged: list[bytes] = field(default_factory=list)
    refused: dict[int, int] = field(default_factory=dict)
    """Answer code -> how many sends got it."""


class BrokerSet:
    def __init__(self, controller: str, broker_set: str, members: Mapping[int, LoopbackServers]) -> None:
        self.controller = controller
        self.name = broker_set
        self.members = dict(members)
        """Broker id -> the member started with it (the controller's ids, in start order)."""
        self.sent = Sent()

    def info(self) -> ReplicaInfo | None:
        return replica_info(self.controller, self.name)

    def wait_master(self, broker_id: int, limit_s: float) -> ReplicaInfo:
        """Until the controller names member ``broker_id`` master."""
        def named() -> ReplicaInfo | None:
            info = self.info()
            return info if info is not None and info.master_id == broker_id else None
        return until(f"{broker_id} named master", named, limit_s)

    def wait_formed(self, members: frozenset[int], limit_s: float) -> ReplicaInfo:
        """Until the SyncStateSet is ``members`` (each slave caught up and accepted)."""
        def formed() -> ReplicaInfo | None:
            info = self.info()
            return info if info is not None and info.sync_state_set == members else None
        return until(f"the SyncStateSet {sorted(members)}", formed, limit_s)

    def wait_elected(self, other_than: int, after_epoch: int, limit_s: float,
                     watch: ReplicaWatch | None = None) -> ReplicaInfo:
        """Until the controller names a master other than ``other_than`` at a newer epoch; with ``watch``
        (opened before the kill) asked over its connection every :data:`FINE_POLL_S`, for a benchmark
        timing the election."""
        ask = self.info if watch is None else watch.info

        def elected() -> ReplicaInfo | None:
            info = ask()
            if info is None or info.master_epoch <= after_epoch:
                return None
            return info if info.master_id not in (None, other_than) else None
        return until("a new master", elected, limit_s, POLL_S if watch is None else FINE_POLL_S)

    def send(self, broker_id: int, topic: str, count: int, tag: str) -> int:
        """``count`` sends with WAIT=true to member ``broker_id``, bodies ``tag-i``; how many were
        acknowledged."""
        return asyncio.run(self._send(self.members[broker_id].broker_addr, topic, count, tag))

    def first_acknowledged(self, broker_id: int, topic: str, tag: str, limit_s: float) -> float:
        """Send one message at a time until one is acknowledged; when (``time.monotonic``) it was."""
        attempt = 0

        def acknowledged() -> float | None:
            nonlocal attempt
            attempt += 1
            try:
                done = self.send(broker_id, topic, 1, f"{tag}-{attempt}")
            except (OSError, TimeoutError):
                return None
            return time.monotonic() if done else None
        return until(f"a send acknowledged by {broker_id}", acknowledged, limit_s)

    async def _send(self, addr: str, topic: str, count: int, tag: str) -> int:
        client = await RemotingClient.connect(addr)
        done = 0
        try:
            for i in range(count):
                body = f"{tag}-{i}".encode()
                fields = send_fields(topic, {"WAIT": "true", "KEYS": body.decode()}, queue_id=i % QUEUES)
                answer = await client.invoke(client.request(RequestCode.SEND_MESSAGE_V2, fields, body),
                                             SEND_TIMEOUT_S)
                if answer.code == ResponseCode.SUCCESS:
                    self.sent.acknowledged.append(body)
                    done += 1
                else:
                    self.sent.refused[answer.code] = self.sent.refused.get(answer.code, 0) + 1
        finally:
            await client.close()
        return done

    def start_apache(self, stack: contextlib.ExitStack, release: str, work: Path, namesrv: str, count: int,
                     cluster: str, heap_mb: int, elect_s: float, **settings: str) -> None:
        """Start ``count`` Apache brokers of ``release`` into this set, ids 1..count under ``work``, each
        stopped when ``stack`` closes; the first registers without an id, as a master does, and is named
        master before the others start as its slaves."""
        for broker_id in range(1, count + 1):
            config = in_controller_mode(self.controller, self.name, cluster, **settings)
            if broker_id > 1:
                config["brokerId"] = str(broker_id)
            member = ApacheRocketMQ(release, home=work / f"broker-{broker_id}", namesrv=namesrv,
                                    heap_mb=heap_mb, broker_config=config)
            self.members[broker_id] = stack.enter_context(member)
            if broker_id == 1:
                self.wait_master(1, elect_s)

    def kill(self, broker_id: int) -> None:
        """SIGKILL: no shutdown hook, the store keeps its abort file, connections reset."""
        self.members[broker_id].kill_broker()

    def restart(self, broker_id: int) -> None:
        """Start a killed member again on its store and ports; it keeps its id (``brokerIdentity``)."""
        self.members[broker_id].restart_broker(broker_id=broker_id)
