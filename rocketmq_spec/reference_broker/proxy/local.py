"""Local mode: remoting requests to the broker of this process, without a socket.

``LocalBroker.call`` builds the request a remote proxy would send, runs the handler the broker's own
dispatch table has for its code with the client's channel, and returns the response, waiting for it when
the handler answers later (a parked request). Routes come from the name server over TCP, as Apache's
local-mode proxy reads them (``TopicRouteService``); topic and group settings are read from the broker.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from typing import Any, Protocol

from rocketmq_spec.codec import fastjson
from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.custom_header import encode_header
from rocketmq_spec.reference_broker.auth.authentication import Authenticator
from rocketmq_spec.reference_broker.auth.authorization import Authorizer
from rocketmq_spec.reference_broker.broker.clients import ClientManager
from rocketmq_spec.reference_broker.broker.subscriptions import SubscriptionGroup, SubscriptionGroupManager
from rocketmq_spec.reference_broker.broker.topics import TopicConfig, TopicConfigManager
from rocketmq_spec.reference_broker.client import RemotingClient, next_opaque
from rocketmq_spec.reference_broker.config import BrokerConfig
from rocketmq_spec.reference_broker.proxy.call import Refusal
from rocketmq_spec.reference_broker.proxy.channel import GrpcClientChannel
from rocketmq_spec.reference_broker.server import (
    RemotingServer,
    Request,
    early_response,
    error_remark,
    not_supported_remark,
)
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.faq import NO_ROUTE_TEXT, client_exception_message
from rocketmq_spec.spec.grpc_codes import Code, code_for_remoting
from rocketmq_spec.spec.headers import header_for
from rocketmq_spec.spec.version import CURRENT_VERSION
from rocketmq_spec.spec.wire_release import WireRelease

log = logging.getLogger(__name__)

CALL_TIMEOUT = 30.0
"""Seconds a request may wait for the response a handler writes later (longer than any long poll the
proxy asks for)."""

CLIENT_VERSION = int(CURRENT_VERSION)


class HostBroker(Protocol):
    """What the proxy reads of the broker whose process it runs in (local mode): its settings, topics,
    groups, registered clients and request handlers. ``Broker`` has them; the proxy names this interface
    rather than that class because the broker is what starts the proxy."""

    @property
    def config(self) -> BrokerConfig: ...

    @property
    def topics(self) -> TopicConfigManager: ...

    @property
    def groups(self) -> SubscriptionGroupManager: ...

    @property
    def clients(self) -> ClientManager: ...

    @property
    def server(self) -> RemotingServer: ...

    @property
    def release(self) -> WireRelease: ...

    @property
    def authenticator(self) -> Authenticator | None:
        """ACL 2.0 authentication, which the proxy applies to every call too (None when off)."""

    @property
    def authorizer(self) -> Authorizer | None:
        """ACL 2.0 authorization, likewise (None when off)."""


class LocalBroker:
    def __init__(self, broker: HostBroker) -> None:
        self._broker = broker
        self._namesrv: RemotingClient | None = None
        self._namesrv_lock = asyncio.Lock()

    @property
    def name(self) -> str:
        return self._broker.config.broker_name

    @property
    def version(self) -> int:
        """The MQVersion ordinal of the release the broker answers as (release rules of the proxy)."""
        return self._broker.release.version

    def topic(self, name: str) -> TopicConfig | None:
        return self._broker.topics.get(name)

    def is_system_topic(self, name: str) -> bool:
        return self._broker.topics.is_system_topic(name)

    def group(self, name: str) -> SubscriptionGroup | None:
        return self._broker.groups.groups.get(name)

    def has_consumer(self, group: str, channel: GrpcClientChannel) -> bool:
        """Whether the client of ``channel`` is registered in consumer group ``group``
        (``ConsumerManager.findChannel``)."""
        members = self._broker.clients.consumer_group(group)
        return members is not None and channel in members.channels

    def request(self, code: RequestCode, header: Mapping[str, Any] | None, body: bytes | None = None, *,
                language: str = "JAVA", oneway: bool = False) -> RemotingCommand:
        spec = header_for(code, is_response=False)
        if header is None:
            fields = None
        elif spec is not None:
            fields = encode_header(spec, header)
        else:  # a 5.x request whose header the spec does not tabulate yet: its values as Java writes them
            fields = {key: str(value) for key, value in header.items()}
        return RemotingCommand.request(code, fields, body, opaque=next_opaque(), oneway=oneway,
                                       language=language, version=CLIENT_VERSION)

    async def call(self, channel: GrpcClientChannel, command: RemotingCommand,
                   timeout: float = CALL_TIMEOUT) -> RemotingCommand:
        """The broker's response to ``command``; a handler's failure is the SYSTEM_ERROR the remoting
        server would have answered."""
        handler = self._broker.server.dispatch.get(command.code)
        if handler is None:
            return early_response(command, ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
                                  not_supported_remark(command.code), command.serialize_type)
        later = channel.expect(command.opaque)
        try:
            response = await handler(Request(command, channel))
            if response is None and not command.is_oneway:
                response = await asyncio.wait_for(later, timeout)
        except asyncio.CancelledError:
            raise
        except TimeoutError:
            raise Refusal(Code.PROXY_TIMEOUT,
                          f"the broker did not answer request {command.code} in time") from None
        except Exception as exc:
            log.debug("local request %d failed: %s", command.code, exc)
            response = early_response(command, ResponseCode.SYSTEM_ERROR, error_remark(exc),
                                      command.serialize_type)
        finally:
            channel.forget(command.opaque)
        if response is None:
            return early_response(command, ResponseCode.SUCCESS, "", command.serialize_type)
        return response

    async def route(self, topic: str) -> dict[str, Any]:
        """The topic's route data from the name server; TOPIC_NOT_FOUND when it has none."""
        response = await self._ask_namesrv(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": topic})
        if response.code == ResponseCode.TOPIC_NOT_EXIST:  # the proxy's own text, not the name server's
            raise Refusal(Code.TOPIC_NOT_FOUND, client_exception_message(
                ResponseCode.TOPIC_NOT_EXIST, NO_ROUTE_TEXT.format(topic=topic), self.version))
        if response.code != ResponseCode.SUCCESS:
            raise Refusal(code_for_remoting(response.code), response.remark or f"no route for {topic}")
        route: dict[str, Any] = fastjson.loads(response.body or b"{}")
        return route

    async def _ask_namesrv(self, code: RequestCode, header: Mapping[str, str]) -> RemotingCommand:
        async with self._namesrv_lock:
            if self._namesrv is None or self._namesrv.closed:
                addr = (self._broker.config.namesrv_addr or "").split(";")[0]
                if not addr:
                    raise Refusal(Code.INTERNAL_SERVER_ERROR, "the broker has no name server")
                self._namesrv = await RemotingClient.connect(addr, tls=self._broker.config.tls.client_tls)
            client = self._namesrv
        return await client.invoke(client.request(code, header))

    async def close(self) -> None:
        if self._namesrv is not None:
            with contextlib.suppress(OSError, ConnectionError):
                await self._namesrv.close()
            self._namesrv = None


def refused_unless_success(response: RemotingCommand) -> None:
    """A broker answer other than SUCCESS as the Refusal the proxy answers with (``ResponseBuilder``)."""
    if response.code != ResponseCode.SUCCESS:
        raise Refusal(code_for_remoting(response.code), response.remark or str(response.code))
