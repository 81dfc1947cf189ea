"""The broker's conversation with its controller (``ReplicasManager``), the asyncio edge.

At start: find the leading controller (CONTROLLER_GET_METADATA_INFO), get a broker id (the one kept in
``brokerIdentity``, else GET_NEXT_BROKER_ID and APPLY_BROKER_ID through ``brokerIdentity-temp``), register
(CONTROLLER_REGISTER_BROKER), heartbeat, and take the role the answer names, asking for an election when
it names no master. Then heartbeats every brokerHeartbeatInterval and GET_REPLICA_INFO every
syncBrokerMetadataPeriod, each newer master epoch changing the role again. Role decisions are
:class:`~.roles.RoleKeeper`'s; the broker is told them through ``on_role``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocketmq_spec.codec.bodies import decode_body, encode_body
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.custom_header import decode_header, encode_header
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.config import BrokerConfig
from rocketmq_spec.reference_broker.controller.identity import Identity, IdentityFiles
from rocketmq_spec.reference_broker.controller.roles import MasterAnswer, Role, RoleKeeper
from rocketmq_spec.reference_broker.tasks import cancel_and_wait
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.controller import (
    CONTROLLER_REQUEST_HEADERS,
    CONTROLLER_RESPONSE_HEADERS,
    ELECT_MASTER_BODY,
    GET_METADATA_RESPONSE,
    SYNC_STATE_SET,
)
from rocketmq_spec.spec.controller_rules import CHECK_CODE_SEPARATOR

log = logging.getLogger(__name__)

RETRY_S = 1.0
"""Pause between attempts while the controller cannot be reached or refuses (Java: about 1 s)."""
FIRST_SYNC_DELAY_S = 3.0
"""GET_REPLICA_INFO starts 3 s after registration (``schedulingSyncBrokerMetadata``)."""


class ControllerRefused(Exception):
    def __init__(self, code: int, remark: str | None) -> None:
        super().__init__(f"controller answered {code}: {remark}")
        self.code = code


@dataclass(frozen=True)
class BrokerStatus:
    """What each heartbeat tells the controller of the broker's log."""

    last_epoch: int
    max_offset: int
    confirm_offset: int


class ControllerAgent:
    def __init__(self, config: BrokerConfig, store_root: Path, on_role: Callable[[Role], Awaitable[None]],
                 status: Callable[[], BrokerStatus],
                 on_set: Callable[[frozenset[int], int], None] = lambda members, epoch: None) -> None:
        self.config = config
        self.files = IdentityFiles(store_root)
        self._on_role = on_role
        self._on_set = on_set
        """Told the SyncStateSet (and its epoch) the controller holds while the broker is master."""
        self._status = status
        self.leader: str | None = None
        self.keeper: RoleKeeper | None = None
        self._clients: dict[str, RemotingClient] = {}
        self._tasks: list[asyncio.Task[None]] = []

    @property
    def controllers(self) -> list[str]:
        return [addr for addr in (self.config.controller_addr or "").split(";") if addr]

    def start(self) -> None:
        self._tasks = [asyncio.ensure_future(self._run())]

    async def stop(self) -> None:
        await cancel_and_wait(self._tasks)
        for client in self._clients.values():
            with contextlib.suppress(OSError, TimeoutError):
                await client.close()

    # -- the life cycle ------------------------------------------------------------------------------------

    async def _run(self) -> None:
        while True:
            try:
                await self._start_basic()
                break
            except (OSError, TimeoutError, ControllerRefused) as exc:
                log.info("controller registration not done yet: %s", exc)
                await asyncio.sleep(RETRY_S)
        self._tasks.append(asyncio.ensure_future(self._heartbeats()))
        await asyncio.sleep(FIRST_SYNC_DELAY_S)
        while True:
            try:
                await self._sync_replica_info()
            except (OSError, TimeoutError, ControllerRefused) as exc:
                log.info("GET_REPLICA_INFO failed: %s", exc)
            await asyncio.sleep(self.config.sync_broker_metadata_period / 1000)

    async def _start_basic(self) -> None:
        """``ReplicasManager.startBasicService``: leader, id, registration, first heartbeat, role."""
        self.leader = await self._find_leader()
        broker_id = await self._broker_id()
        if self.keeper is None or self.keeper.broker_id != broker_id:
            self.keeper = RoleKeeper(broker_id)
        answer = await self._call(RequestCode.CONTROLLER_REGISTER_BROKER, {
            "clusterName": self.config.broker_cluster_name, "brokerName": self.config.broker_name,
            "brokerId": broker_id, "brokerAddress": self.config.broker_addr,
            "invokeTime": _now_ms()})
        await self._heartbeat()
        if not await self._take(self._master_answer(answer)):
            await self._elect()

    async def _find_leader(self) -> str:
        for addr in self.controllers:
            with contextlib.suppress(OSError, TimeoutError, ControllerRefused):
                command = await self._raw_call(addr, RequestCode.CONTROLLER_GET_METADATA_INFO, None)
                header = decode_header(GET_METADATA_RESPONSE, command.ext_fields)
                leader = header.get("controllerLeaderAddress")
                if leader:
                    return str(leader)
        raise ConnectionError(f"no controller of {self.controllers} names a leader")

    async def _broker_id(self) -> int:
        """RMQ-BROKER-IDENTITY: the kept id, else one applied for (``ReplicasManager.register``)."""
        cluster, name = self.config.broker_cluster_name, self.config.broker_name
        granted = self.files.granted(cluster, name)
        if granted is not None:
            return granted.broker_id
        applying = self.files.applying(cluster, name)
        if applying is None:
            answer = await self._call(RequestCode.CONTROLLER_GET_NEXT_BROKER_ID,
                                      {"clusterName": cluster, "brokerName": name})
            check_code = f"{self.config.broker_addr}{CHECK_CODE_SEPARATOR}{_now_ms()}"
            applying = Identity(cluster, name, int(answer.header["nextBrokerId"]), check_code)
            self.files.apply(applying)
        try:
            await self._call(RequestCode.CONTROLLER_APPLY_BROKER_ID, {
                "clusterName": cluster, "brokerName": name, "appliedBrokerId": applying.broker_id,
                "registerCheckCode": applying.check_code})
        except ControllerRefused:
            self.files.forget_application()  # the id went to another broker: start again
            raise
        self.files.grant(applying)
        return applying.broker_id

    async def _elect(self) -> None:
        assert self.keeper is not None
        answer = await self._call(RequestCode.CONTROLLER_ELECT_MASTER, {
            "clusterName": self.config.broker_cluster_name, "brokerName": self.config.broker_name,
            "brokerId": self.keeper.broker_id, "designateElect": False, "invokeTime": _now_ms()})
        body = decode_body(ELECT_MASTER_BODY, answer.command.body) if answer.command.body else {}
        members = frozenset(int(member) for member in body.get("syncStateSet") or ())
        header = answer.header
        await self._take(MasterAnswer(header.get("masterBrokerId"), header.get("masterAddress"),
                                      int(header.get("masterEpoch") or 0),
                                      int(header.get("syncStateSetEpoch") or 0), members))

    async def _sync_replica_info(self) -> None:
        assert self.keeper is not None
        answer = await self._call(RequestCode.CONTROLLER_GET_REPLICA_INFO,
                                  {"brokerName": self.config.broker_name})
        info = self._master_answer(answer)
        if self.keeper.wants_election(info):
            await self._elect()
        else:
            await self._take(info)

    async def _take(self, answer: MasterAnswer) -> bool:
        """Act on an answer; whether it named a master."""
        assert self.keeper is not None
        role = self.keeper.take(answer)
        if role is not None:
            log.info("controller says: %s", role)
            await self._on_role(role)
        if self.keeper.is_master:
            self._on_set(self.keeper.sync_state_set, self.keeper.sync_state_set_epoch)
        return answer.master_id is not None and bool(answer.master_addr)

    async def alter_sync_state_set(self, members: frozenset[int]) -> None:
        """RMQ-HA2-EXPAND / RMQ-HA2-SHRINK: a master reports its new SyncStateSet
        (``doReportSyncStateSetChanged``); the controller's answer is the set now in force."""
        assert self.keeper is not None
        body = encode_body(SYNC_STATE_SET, {"syncStateSet": sorted(members),
                                            "syncStateSetEpoch": self.keeper.sync_state_set_epoch})
        answer = await self._call(RequestCode.CONTROLLER_ALTER_SYNC_STATE_SET, {
            "brokerName": self.config.broker_name, "masterBrokerId": self.keeper.broker_id,
            "masterEpoch": self.keeper.master_epoch, "invokeTime": _now_ms()}, body)
        accepted = decode_body(SYNC_STATE_SET, answer.command.body or b"{}")
        keeper = self.keeper
        await self._take(MasterAnswer(keeper.broker_id, self.config.broker_addr, keeper.master_epoch,
                                      int(accepted.get("syncStateSetEpoch") or 0),
                                      frozenset(int(m) for m in accepted.get("syncStateSet") or ())))

    async def _heartbeats(self) -> None:
        while True:
            await asyncio.sleep(self.config.broker_heartbeat_interval / 1000)
            try:
                await self._heartbeat()
            except (OSError, TimeoutError, ControllerRefused) as exc:
                log.info("controller heartbeat failed: %s", exc)

    async def _heartbeat(self) -> None:
        assert self.keeper is not None
        status = self._status()
        await self._call(RequestCode.BROKER_HEARTBEAT, {
            "clusterName": self.config.broker_cluster_name, "brokerAddr": self.config.broker_addr,
            "brokerName": self.config.broker_name, "brokerId": self.keeper.broker_id,
            "epoch": status.last_epoch, "maxOffset": status.max_offset,
            "confirmOffset": status.confirm_offset,
            "heartbeatTimeoutMills": self.config.controller_heart_beat_timeout_mills})

    # -- the wire ------------------------------------------------------------------------------------------

    @staticmethod
    def _master_answer(answer: _Answer) -> MasterAnswer:
        body = decode_body(SYNC_STATE_SET, answer.command.body) if answer.command.body else {}
        header = answer.header
        return MasterAnswer(header.get("masterBrokerId"), header.get("masterAddress"),
                            int(header.get("masterEpoch") or 0),
                            int(body.get("syncStateSetEpoch") or header.get("syncStateSetEpoch") or 0),
                            frozenset(int(member) for member in body.get("syncStateSet") or ()))

    async def _call(self, code: RequestCode, values: dict[str, Any], body: bytes | None = None) -> _Answer:
        if self.leader is None:  # a controller said it no longer leads
            self.leader = await self._find_leader()
        spec = CONTROLLER_REQUEST_HEADERS[code]
        command = await self._raw_call(self.leader, code, encode_header(spec, values), body)
        answer_spec = CONTROLLER_RESPONSE_HEADERS.get(code)
        header = decode_header(answer_spec, command.ext_fields) if answer_spec is not None else {}
        return _Answer(command, header)

    async def _raw_call(self, addr: str, code: RequestCode, ext: dict[str, str] | None,
                        body: bytes | None = None) -> RemotingCommand:
        client = self._clients.get(addr)
        if client is None or client.closed:
            client = self._clients[addr] = await RemotingClient.connect(addr)
        command = await client.invoke(client.request(int(code), ext, body))
        if command.code != ResponseCode.SUCCESS:
            if command.code == ResponseCode.CONTROLLER_NOT_LEADER:
                self.leader = None
            raise ControllerRefused(command.code, command.remark)
        return command


@dataclass(frozen=True)
class _Answer:
    command: RemotingCommand
    header: dict[str, Any]


def _now_ms() -> int:
    return int(time.time() * 1000)
