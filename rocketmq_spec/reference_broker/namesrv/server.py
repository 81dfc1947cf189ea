"""The name server: route registration from brokers, route lookups from clients, KV configuration.

Handlers are thin: they decode the request through the spec's header tables, call the route table or
KV store, and encode the answer with the codec. The periodic expiry scan is the only background task.
"""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

from rocketmq_spec.codec import fastjson
from rocketmq_spec.codec.bodies import decode_register_broker_body
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.reference_broker.config import NamesrvConfig
from rocketmq_spec.reference_broker.controller.server import Controller
from rocketmq_spec.reference_broker.namesrv.admin import NamesrvAdminHandlers
from rocketmq_spec.reference_broker.namesrv.kv import ORDER_TOPIC_CONFIG, KVConfig
from rocketmq_spec.reference_broker.namesrv.routes import RouteTable, route_data_json
from rocketmq_spec.reference_broker.server import (
    Connection,
    DispatchTable,
    Handler,
    RemotingServer,
    Request,
    shut_down_gracefully,
)
from rocketmq_spec.reference_broker.tasks import cancel_and_wait
from rocketmq_spec.reference_broker.tls import TlsPolicy
from rocketmq_spec.spec import remarks
from rocketmq_spec.spec.behaviour import BROKER_SCAN_INTERVAL_MS
from rocketmq_spec.spec.bodies import DATA_VERSION
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.hashing import masked_crc32
from rocketmq_spec.spec.release_rules import REGISTER_FAILED_REMARK, Rule, holds
from rocketmq_spec.spec.version import MQVersion
from rocketmq_spec.spec.wire_release import wire_release

log = logging.getLogger(__name__)

FIRST_SCAN_DELAY = 5.0
"""Seconds before the first expiry scan (4.9.8 schedules it 5 s after start)."""


class NameServer:
    def __init__(self, config: NamesrvConfig | None = None) -> None:
        self.config = config or NamesrvConfig()
        self.routes = RouteTable()
        path = self.config.kv_config_path
        self.kv = KVConfig.load(Path(path)) if path else KVConfig()
        release = wire_release(self.config.wire_release)
        self._single_topic_first_refused = holds(Rule.FIRST_REGISTRATION_NOT_SINGLE_TOPIC, release.version)
        self.server = RemotingServer("namesrv", DispatchTable(self._handlers()), on_close=self._closed,
                                     backlog=self.config.server_socket_backlog, version=release.version,
                                     tls=TlsPolicy.of(self.config.tls))
        self._scanner: asyncio.Task[None] | None = None
        self.controller = Controller(self.config) if self.config.enable_controller_in_namesrv else None
        """Java's ``enableControllerInNamesrv``: a controller on its own port in the same process."""

    @property
    def addr(self) -> str:
        return f"{self.config.bind_address}:{self.server.port}"

    async def start(self) -> None:
        await self.server.start(self.config.bind_address, self.config.listen_port)
        if self.controller is not None:
            try:
                await self.controller.start()
            except BaseException:
                await self.server.stop()
                raise
        self._scanner = asyncio.ensure_future(self._scan())

    async def stop(self) -> None:
        await shut_down_gracefully([self.server], self.config)
        if self._scanner is not None:
            await cancel_and_wait([self._scanner])
        if self.controller is not None:
            await self.controller.stop()
        await self.server.stop()

    async def _scan(self) -> None:
        period = self.config.scan_interval_ms(BROKER_SCAN_INTERVAL_MS) / 1000
        await asyncio.sleep(min(FIRST_SCAN_DELAY, period))
        while True:
            for addr in self.routes.expire(time.monotonic(), self.config.broker_channel_expired_time):
                log.warning("broker %s expired: no registration for %s s", addr,
                            self.config.broker_channel_expired_time)
            await asyncio.sleep(period)

    def _closed(self, connection: Connection) -> None:
        for addr in self.routes.channel_closed(connection):
            log.info("broker %s removed: its connection closed", addr)

    def _handlers(self) -> dict[RequestCode, Handler]:
        return {
            RequestCode.REGISTER_BROKER: self.register_broker,
            RequestCode.UNREGISTER_BROKER: self.unregister_broker,
            RequestCode.GET_ROUTEINFO_BY_TOPIC: self.get_route,
            RequestCode.GET_BROKER_CLUSTER_INFO: self.get_cluster_info,
            RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER: self.get_all_topics,
            RequestCode.DELETE_TOPIC_IN_NAMESRV: self.delete_topic,
            RequestCode.WIPE_WRITE_PERM_OF_BROKER: self.wipe_write_perm,
            RequestCode.QUERY_DATA_VERSION: self.query_data_version,
            RequestCode.PUT_KV_CONFIG: self.put_kv,
            RequestCode.GET_KV_CONFIG: self.get_kv,
            RequestCode.DELETE_KV_CONFIG: self.delete_kv,
            RequestCode.GET_KVLIST_BY_NAMESPACE: self.get_kv_list,
            **NamesrvAdminHandlers(self.config, self.routes).table(),
        }

    async def register_broker(self, request: Request) -> RemotingCommand:
        header = request.header()
        body = request.command.body or b""
        expected_crc = header.get("bodyCrc32") or 0
        if expected_crc and masked_crc32(body) != expected_crc:
            return request.reply(ResponseCode.SYSTEM_ERROR, remarks.REGISTER_CRC_MISMATCH.template)
        # An absent body registers nothing, as Java's empty wrapper (data version 0) does.
        compressed = bool(header.get("compressed"))
        registration = decode_register_broker_body(body, compressed=compressed) if body else {}
        wrapper = registration.get("topicConfigSerializeWrapper") or {}
        result = self.routes.register(
            cluster=header["clusterName"], broker_addr=header["brokerAddr"], broker_name=header["brokerName"],
            broker_id=header["brokerId"], ha_server_addr=header["haServerAddr"],
            data_version=wrapper.get("dataVersion") or {},
            topic_configs=wrapper.get("topicConfigTable") or {},
            filter_servers=list(registration.get("filterServerList") or []), channel=request.connection,
            now=time.monotonic(), single_topic_first_refused=self._single_topic_first_refused)
        if result is None:
            return request.reply(ResponseCode.SYSTEM_ERROR, REGISTER_FAILED_REMARK, header={})
        order_topics = self.kv.namespace(ORDER_TOPIC_CONFIG)
        return request.reply(
            header={"haServerAddr": result.ha_server_addr, "masterAddr": result.master_addr},
            body=None if order_topics is None else fastjson.dumps_bytes({"table": order_topics}))

    async def unregister_broker(self, request: Request) -> RemotingCommand:
        header = request.header()
        self.routes.unregister(cluster=header["clusterName"], broker_addr=header["brokerAddr"],
                               broker_name=header["brokerName"], broker_id=header["brokerId"])
        return request.reply()

    async def get_route(self, request: Request) -> RemotingCommand:
        header = request.header()
        topic = header["topic"]
        route = self.routes.route(topic)
        if route is None:
            return request.reply(ResponseCode.TOPIC_NOT_EXIST,
                                 remarks.NO_ROUTE.format(topic=topic, version=request.server_version))
        if self.config.order_message_enable:
            order_conf = self.kv.get(ORDER_TOPIC_CONFIG, topic)
            if order_conf is not None:
                route["orderTopicConf"] = order_conf
        standard = header.get("acceptStandardJsonOnly") or request.command.version >= MQVersion.V4_9_4
        return request.reply(body=route_data_json(route, standard=standard))

    async def get_cluster_info(self, request: Request) -> RemotingCommand:
        return request.reply(body=fastjson.dumps_bytes(self.routes.cluster_info()))

    async def get_all_topics(self, request: Request) -> RemotingCommand:
        return request.reply(body=fastjson.dumps_bytes({"topicList": self.routes.topic_names()}))

    async def delete_topic(self, request: Request) -> RemotingCommand:
        header = request.header()
        self.routes.delete_topic(header["topic"], header.get("clusterName"))
        return request.reply()

    async def wipe_write_perm(self, request: Request) -> RemotingCommand:
        count = self.routes.wipe_write_perm(request.header()["brokerName"])
        return request.reply(header={"wipeTopicCount": count})

    async def query_data_version(self, request: Request) -> RemotingCommand:
        header = request.header()
        addr = header["brokerAddr"]
        theirs = request.body(DATA_VERSION) if request.command.body else {}
        changed = self.routes.version_changed(addr, theirs)
        if not changed:
            self.routes.touch(addr, time.monotonic())
        ours = self.routes.data_version_of(addr)
        return request.reply(header={"changed": changed},
                             body=None if ours is None else fastjson.dumps_bytes(ours))

    async def put_kv(self, request: Request) -> RemotingCommand:
        header = request.header()
        self.kv.put(header["namespace"], header["key"], header["value"])
        return request.reply()

    async def get_kv(self, request: Request) -> RemotingCommand:
        header = request.header()
        value = self.kv.get(header["namespace"], header["key"])
        if value is None:
            return request.reply(ResponseCode.QUERY_NOT_FOUND,
                                 remarks.KV_NOT_FOUND.format(namespace=header["namespace"],
                                                             key=header["key"]))
        return request.reply(header={"value": value})

    async def delete_kv(self, request: Request) -> RemotingCommand:
        header = request.header()
        self.kv.delete(header["namespace"], header["key"])
        return request.reply()

    async def get_kv_list(self, request: Request) -> RemotingCommand:
        namespace = request.header()["namespace"]
        entries = self.kv.namespace(namespace)
        if entries is None:
            return request.reply(ResponseCode.QUERY_NOT_FOUND,
                                 remarks.KV_NAMESPACE_NOT_FOUND.format(namespace=namespace))
        return request.reply(body=fastjson.dumps_bytes({"table": entries}))

