"""The reference controller's edge: its port, the requests' headers and bodies, the clock, the disk, and
the messages it sends brokers.

Decisions are :mod:`.replicas` and :mod:`.liveness`; this module decodes each request through the spec's
tables (``rocketmq_spec.spec.controller``), hands it the time, persists the table after a change
(:mod:`.persistence`), and runs what Java's ``ControllerManager`` and ``DLedgerController`` run beside the
requests: the scan for brokers whose heartbeat ran out, the scan for sets whose master is gone
(RMQ-CTL-REELECT), an election at once when a master's connection closes, and the NOTIFY_BROKER_ROLE_CHANGED
a new master's set is told of. It runs inside a name server (``enableControllerInNamesrv``) or alone
(``rmq-controller``), on the port of its own entry in ``controllerDLegerPeers`` (RMQ-CTL-PORT).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

from rocketmq_spec.codec import fastjson
from rocketmq_spec.codec.bodies import decode_body, decode_properties_text, encode_properties_text
from rocketmq_spec.codec.command import RemotingCommand, java_hashmap_order
from rocketmq_spec.codec.custom_header import decode_header, encode_header
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.reference_broker.config import NamesrvConfig
from rocketmq_spec.reference_broker.config_view import black_listed, settings_of, update_settings
from rocketmq_spec.reference_broker.java_keys import BY_NAME
from rocketmq_spec.reference_broker.server import Connection, DispatchTable, Handler, RemotingServer, Request
from rocketmq_spec.reference_broker.tasks import cancel_and_wait
from rocketmq_spec.spec.admin import BLACK_LIST_REMARK
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.controller import (
    CONTROLLER_REQUEST_HEADERS,
    CONTROLLER_RESPONSE_HEADERS,
    NOTIFY_BROKER_ROLE_CHANGED_REQUEST,
    SYNC_STATE_SET,
)
from rocketmq_spec.spec.controller_rules import (
    CONFIG_BLACK_LIST,
    FIRST_HEARTBEAT_SCAN_MS,
    HEARTBEAT_REMARK,
    HEARTBEAT_SCAN_INTERVAL_MS,
    NO_BROKER_ID_REMARK,
    NO_ELECTOR,
    NOT_LEADER_REMARK,
)
from rocketmq_spec.spec.json_header import ext_fields_capacity
from rocketmq_spec.spec.remarks import UNSET
from rocketmq_spec.spec.wire_release import wire_release

from .liveness import BrokerKey, Heartbeat, Liveness, elect
from .peers import Peers, peers_of
from .persistence import TableFile
from .replicas import BrokerSet, Outcome

log = logging.getLogger(__name__)

_C, _R = RequestCode, ResponseCode
NOTIFY_TIMEOUT_S = 3.0
"""``invokeOneway(brokerAddr, request, 3000)`` (ControllerManager.doNotifyBrokerRoleChanged:229)."""
CONTROLLER_CLASS = "ControllerConfig"


def _now_ms() -> int:
    return time.monotonic_ns() // 1_000_000


class Controller:
    """A lone controller on its own port; ``config`` holds the ControllerConfig keys."""

    def __init__(self, config: NamesrvConfig) -> None:
        self.config = config
        self.peers: Peers = peers_of(config)
        self.file = TableFile(Path(config.controller_store_path) if config.controller_store_path else None)
        self.table = self.file.load()
        self.liveness = Liveness()
        self.server = RemotingServer("controller", DispatchTable(self._handlers()), on_close=self._closed,
                                     backlog=config.server_socket_backlog,
                                     version=wire_release(config.wire_release).version)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._stopping = False
        """Connections a stop closes say nothing of their brokers (Java shuts the heartbeat manager first)."""

    @property
    def addr(self) -> str:
        return self.peers.address

    async def start(self) -> None:
        await self.server.start(self.config.bind_address, self.peers.port)
        heartbeat_scan = self.config.scan_interval_ms(HEARTBEAT_SCAN_INTERVAL_MS)
        self._spawn(self._every(FIRST_HEARTBEAT_SCAN_MS, heartbeat_scan, self._expire))
        interval = self.config.scan_inactive_master_interval
        self._spawn(self._every(interval, interval, self._reelect_orphans))

    async def stop(self) -> None:
        self._stopping = True
        await cancel_and_wait(list(self._tasks))
        await self.server.stop()

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- requests ------------------------------------------------------------------------------------------

    def _handlers(self) -> dict[RequestCode, Handler]:
        led: dict[RequestCode, Callable[[Request], Awaitable[RemotingCommand]]] = {
            _C.CONTROLLER_GET_NEXT_BROKER_ID: self.next_broker_id, _C.CONTROLLER_APPLY_BROKER_ID: self.apply,
            _C.CONTROLLER_REGISTER_BROKER: self.register, _C.CONTROLLER_ELECT_MASTER: self.elect,
            _C.CONTROLLER_ALTER_SYNC_STATE_SET: self.alter, _C.CONTROLLER_GET_REPLICA_INFO: self.replica_info,
            _C.CONTROLLER_GET_SYNC_STATE_DATA: self.sync_state_data, _C.CLEAN_BROKER_DATA: self.clean}
        return {**{code: self._led(handler) for code, handler in led.items()},
                _C.BROKER_HEARTBEAT: self.heartbeat, _C.CONTROLLER_GET_METADATA_INFO: self.metadata,
                _C.GET_CONTROLLER_CONFIG: self.get_config, _C.UPDATE_CONTROLLER_CONFIG: self.update_config}

    def _led(self, handler: Callable[[Request], Awaitable[RemotingCommand]]) -> Handler:
        """What the event scheduler takes is answered only by a leader (EventScheduler.appendEvent:403)."""
        async def answer(request: Request) -> RemotingCommand:
            if not self.peers.leads:
                return request.command.response(_R.CONTROLLER_NOT_LEADER, NOT_LEADER_REMARK,
                                                version=self.server.version)
            return await handler(request)
        return answer

    @staticmethod
    def _header(request: Request) -> dict[str, Any]:
        return decode_header(CONTROLLER_REQUEST_HEADERS[request.command.code], request.command.ext_fields)

    def _answer(self, request: Request, outcome: Outcome, *, with_header: bool = True) -> RemotingCommand:
        """The response Java's event handler writes (``createResponseCommandWithHeader``), after the table
        is on disk when the request changed it."""
        if outcome.changed:
            self.file.save(self.table)
        if outcome.code != _R.SUCCESS:  # Java's ReplicasInfoManager logs each refusal likewise
            log.info("controller: %s answered %d %s", _C(request.command.code).name, outcome.code,
                     outcome.remark or "")
        ext: dict[str, str] | None = None
        spec = CONTROLLER_RESPONSE_HEADERS.get(request.command.code)
        if with_header:
            ext = encode_header(spec, outcome.header) if spec is not None else {}
            ext = java_hashmap_order(ext, ext_fields_capacity(False, self.server.version)) if ext else ext
        return request.command.response(outcome.code, outcome.remark, ext, outcome.body,
                                        version=self.server.version)

    def _alive(self) -> Callable[[str, str, int], bool]:
        return self.liveness.predicate(_now_ms())

    async def next_broker_id(self, request: Request) -> RemotingCommand:
        header = self._header(request)
        return self._answer(request, self.table.next_broker_id(header.get("clusterName") or "",
                                                               header.get("brokerName") or ""))

    async def apply(self, request: Request) -> RemotingCommand:
        h = self._header(request)
        return self._answer(request, self.table.apply_broker_id(
            h.get("clusterName") or "", h.get("brokerName") or "", h.get("appliedBrokerId") or 0,
            h.get("registerCheckCode") or ""))

    async def register(self, request: Request) -> RemotingCommand:
        h = self._header(request)
        return self._answer(request, self.table.register(
            h.get("clusterName") or "", h.get("brokerName") or "", h.get("brokerId") or 0,
            h.get("brokerAddress") or "", self._alive()))

    async def elect(self, request: Request) -> RemotingCommand:
        h = self._header(request)
        outcome = self._elect(h["brokerName"], h["brokerId"], h["designateElect"])
        return self._answer(request, outcome)

    def _elect(self, name: str, broker_id: int | None, designate: bool) -> Outcome:
        now = _now_ms()
        unclean = self.config.enable_elect_unclean_master

        def policy(known: BrokerSet, preferred: int | None) -> int | None:
            return elect(self.liveness, known.cluster, known.name, known.in_sync,
                         known.brokers if unclean else None, known.master, preferred, now)

        outcome = self.table.elect(name, broker_id, designate, policy)
        if outcome.elected is not None and self.config.notify_broker_role_changed:
            self._notify(outcome.elected)
        return outcome

    async def alter(self, request: Request) -> RemotingCommand:
        h = self._header(request)
        body = decode_body(SYNC_STATE_SET, request.command.body or b"{}")
        name = h.get("brokerName") or ""
        outcome = self.table.alter(name, h.get("masterBrokerId"), h.get("masterEpoch"),
                                   list(body["syncStateSet"] or []), body["syncStateSetEpoch"], self._alive())
        if outcome.changed:
            known = self.table.sets[name]
            log.info("controller: the SyncStateSet of %s is now %s (epoch %d)", name, sorted(known.in_sync),
                     known.in_sync_epoch)
        return self._answer(request, outcome)

    async def replica_info(self, request: Request) -> RemotingCommand:
        return self._answer(request, self.table.replica_info(self._header(request).get("brokerName") or ""))

    async def sync_state_data(self, request: Request) -> RemotingCommand:
        names = fastjson.loads(request.command.body) if request.command.body else None
        if not isinstance(names, list) or not names:
            # Java's createResponseCommand(null): SYSTEM_ERROR "not set any response code"
            return request.command.response(_R.SYSTEM_ERROR, UNSET.template, version=self.server.version)
        outcome = self.table.sync_state_data([str(n) for n in names], self._alive())
        return self._answer(request, outcome, with_header=False)

    async def clean(self, request: Request) -> RemotingCommand:
        h = self._header(request)
        outcome = self.table.clean(h.get("clusterName"), h["brokerName"], h.get("brokerControllerIdsToClean"),
                                   bool(h.get("isCleanLivingBroker")), self._alive())
        return self._answer(request, outcome, with_header=False)

    async def heartbeat(self, request: Request) -> RemotingCommand:
        """handleBrokerHeartbeat:208 (RMQ-CTL-HEARTBEAT); brokers send it oneway."""
        h = self._header(request)
        if h.get("brokerId") is None:
            return request.command.response(_R.CONTROLLER_INVALID_REQUEST, NO_BROKER_ID_REMARK,
                                            version=self.server.version)
        if self.liveness.info(h["clusterName"], h["brokerName"], h["brokerId"]) is None:
            log.info("controller: broker %s %s %d at %s heartbeats", h["clusterName"], h["brokerName"],
                     h["brokerId"], h["brokerAddr"])  # onBrokerHeartbeat:132 logs a new broker likewise
        self.liveness.beat(Heartbeat(h["clusterName"], h["brokerName"], h["brokerAddr"], h["brokerId"],
                                     h.get("heartbeatTimeoutMills"), h.get("epoch"), h.get("maxOffset"),
                                     h.get("confirmOffset"), h.get("electionPriority")),
                           _now_ms(),
                           request.connection if isinstance(request.connection, Connection) else None)
        return request.command.response(_R.SUCCESS, HEARTBEAT_REMARK, version=self.server.version)

    async def metadata(self, request: Request) -> RemotingCommand:
        return self._answer(request, Outcome(header=self.peers.metadata()))

    def settings(self) -> dict[str, str]:
        """The ControllerConfig settings, under their Java names."""
        return {key: value for key, value in settings_of(self.config).items()
                if key in BY_NAME and BY_NAME[key].java_class == CONTROLLER_CLASS}

    async def get_config(self, request: Request) -> RemotingCommand:
        return request.command.response(_R.SUCCESS, None, None, encode_properties_text(self.settings()),
                                        version=self.server.version)

    async def update_config(self, request: Request) -> RemotingCommand:
        """handleUpdateControllerConfig:268 (RMQ-CTL-CONFIG)."""
        if request.command.body:
            properties = decode_properties_text(request.command.body)
            if black_listed(properties, CONFIG_BLACK_LIST):
                return request.command.response(_R.NO_PERMISSION, BLACK_LIST_REMARK,
                                                version=self.server.version)
            update_settings(self.config, properties)
        return request.command.response(_R.SUCCESS, None, version=self.server.version)

    # -- what runs beside the requests ------------------------------------------------------------------

    @staticmethod
    async def _every(first_ms: int, interval_ms: int, work: Callable[[], None]) -> None:
        await asyncio.sleep(first_ms / 1000)
        while True:
            try:
                work()
            except Exception:
                log.exception("controller: a periodic check failed")
            await asyncio.sleep(interval_ms / 1000)

    def _expire(self) -> None:
        for key, channel in self.liveness.expire(_now_ms()):
            log.warning("controller: broker %s stopped heartbeating", key)
            if isinstance(channel, Connection):
                channel.close()
            self._inactive(key)

    def _closed(self, connection: Connection) -> None:
        if self._stopping:
            return
        for key in self.liveness.channel_closed(connection):
            log.info("controller: the connection of broker %s closed", key)
            self._inactive(key)

    def _inactive(self, key: BrokerKey) -> None:
        """onBrokerInactive: an election when the broker that went was its set's master."""
        _, name, broker_id = key
        known = self.table.sets.get(name)
        if self.peers.leads and known is not None and known.master == broker_id:
            self._reelect(name)

    def _reelect_orphans(self) -> None:
        """scanInactiveMasterAndTriggerReelect (RMQ-CTL-REELECT)."""
        if self.peers.leads:
            for name in self.table.need_reelect(self._alive()):
                self._reelect(name)

    def _reelect(self, name: str) -> None:
        """triggerElectMaster: the controller's own election, tried electMasterMaxRetryCount times until
        one succeeds, each failure recorded as Java's is (the master cleared, its epoch one more)."""
        for _ in range(self.config.elect_master_max_retry_count):
            outcome = self._elect(name, NO_ELECTOR, False)
            if outcome.changed:
                self.file.save(self.table)
            log.info("controller: election in %s after its master went: %d %s", name, outcome.code,
                     outcome.remark or "")
            if outcome.code == _R.SUCCESS:
                return

    def _notify(self, known: BrokerSet) -> None:
        """notifyBrokerRoleChanged: every alive broker of the set is told of its new master, oneway."""
        header = encode_header(NOTIFY_BROKER_ROLE_CHANGED_REQUEST, {
            "masterAddress": known.address(known.master), "masterBrokerId": known.master,
            "masterEpoch": known.master_epoch, "syncStateSetEpoch": known.in_sync_epoch})
        body = known.sync_state_body()
        alive = self._alive()
        for broker_id, member in sorted(known.brokers.items()):
            if alive(known.cluster, known.name, broker_id):
                self._spawn(_tell(member.address, header, body))


async def _tell(address: str, header: dict[str, str], body: bytes) -> None:
    with contextlib.suppress(OSError, TimeoutError, ConnectionError):
        client = await RemotingClient.connect(address, timeout=NOTIFY_TIMEOUT_S)
        try:
            await client.send(client.request(_C.NOTIFY_BROKER_ROLE_CHANGED, header, body, oneway=True))
        finally:
            await client.close()
