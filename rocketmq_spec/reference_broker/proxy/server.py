"""The gRPC server of the broker process: grpc.aio on the broker's event loop, port 8081 by default.

grpcio is the gRPC library the 5.x SDKs are tested against (Apache's proxy uses grpc-java); its asyncio
server runs on the loop the broker's handlers run on, so an RPC reaches a handler without crossing
threads.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

import grpc

from rocketmq_spec.codec.command import RemotingCommand
from rocketmq_spec.codec.grpc.v2 import service_pb2 as rpc
from rocketmq_spec.codec.grpc.v2 import service_pb2_grpc as rpc_grpc
from rocketmq_spec.reference_broker.proxy.call import address_of
from rocketmq_spec.reference_broker.proxy.channel import ChannelRegistry, GrpcClientChannel
from rocketmq_spec.reference_broker.proxy.clients import Clients
from rocketmq_spec.reference_broker.proxy.consumer import Consumer
from rocketmq_spec.reference_broker.proxy.front import GrpcFront
from rocketmq_spec.reference_broker.proxy.local import HostBroker, LocalBroker
from rocketmq_spec.reference_broker.proxy.producer import Producer
from rocketmq_spec.reference_broker.proxy.relay import relay_command
from rocketmq_spec.reference_broker.proxy.route import Routes
from rocketmq_spec.reference_broker.proxy.service import MessagingService
from rocketmq_spec.reference_broker.proxy.settings import SettingsStore
from rocketmq_spec.reference_broker.tls import TlsSettings, credentials
from rocketmq_spec.spec.tls import TlsMode

log = logging.getLogger(__name__)

MAX_INBOUND_MESSAGE_BYTES = 130 * 1024 * 1024
"""``ProxyConfig.grpcMaxInboundMessageSize``: a batch of bodies up to the 4 MiB limit each fits."""
STOP_GRACE_S = 1.0
"""Seconds in-flight RPCs get to finish when the broker stops."""


def _credentials(settings: TlsSettings) -> grpc.ServerCredentials:
    """grpcio's TLS of ``settings``: the certificate of RMQ-TLS-TEST-MODE, no client certificate asked
    (Apache's gRPC port uses ClientAuth.NONE whatever tls.server.need.client.auth says)."""
    served = credentials(settings)
    return grpc.ssl_server_credentials([(served.key, served.certificate)])


def _bind(server: grpc.aio.Server, address: str, tls: grpc.ServerCredentials | None) -> int:
    """Add a listener; OSError when the address cannot be bound (grpcio raises RuntimeError)."""
    try:
        port = server.add_secure_port(address, tls) if tls is not None else server.add_insecure_port(address)
    except RuntimeError:
        port = 0
    if port == 0:
        raise OSError(f"cannot bind the gRPC port {address}")
    return int(port)


class GrpcProxy:
    def __init__(self, broker: HostBroker) -> None:
        self.local = LocalBroker(broker)
        self._tls = broker.config.tls
        self._authenticator = broker.authenticator
        self._authorizer = broker.authorizer
        self.producer = Producer(self.local)
        self.channels = ChannelRegistry(self._to_client, relay_command)
        settings = SettingsStore(self.local.group)
        self.clients = Clients(self.local, settings, self.channels)
        self.consumer = Consumer(self.local, settings, self.channels)
        self.routes = Routes(self.local, 0)
        self._server: grpc.aio.Server | None = None
        self._front: GrpcFront | None = None
        self._renewing: asyncio.Task[None] | None = None
        self.port = 0

    def _to_client(self, channel: GrpcClientChannel, command: RemotingCommand) -> rpc.TelemetryCommand | None:
        """The Telemetry command a broker request to a gRPC client becomes (only check-backs have one)."""
        return self.producer.recover_command(command)

    async def start(self, host: str, port: int) -> int:
        """Listen on ``host:port`` (0: a free port) and serve; returns the bound port.

        The port serves TLS as ``tls.server.mode`` says (RMQ-TLS-GRPC-PORT): plain text only when
        disabled, TLS only (grpcio's own) when enforcing, and both when permissive, the default, through a
        front that sends each connection to one of two loopback listeners (``proxy.front``)."""
        server = grpc.aio.server(options=[("grpc.so_reuseport", 0),
                                          ("grpc.max_receive_message_length", MAX_INBOUND_MESSAGE_BYTES)])
        rpc_grpc.add_MessagingServiceServicer_to_server(
            MessagingService(self.routes, self.producer, self.consumer, self.clients, self._peer,
                             self._authenticator, self._authorizer), server)
        settings = self._tls
        if settings.mode is TlsMode.PERMISSIVE:
            plain = _bind(server, "127.0.0.1:0", None)
            secure = _bind(server, "127.0.0.1:0", _credentials(settings))
            self._front = GrpcFront(plain, secure)
            self.port = await self._front.start(host, port)
        else:
            tls = _credentials(settings) if settings.mode is TlsMode.ENFORCING else None
            self.port = _bind(server, f"{host}:{port}", tls)
        self.routes.port = self.port
        await server.start()
        self._server = server
        self._renewing = asyncio.ensure_future(self.consumer.renewals.run(lambda: int(time.time() * 1000)))
        log.info("gRPC proxy serving on %s:%d (TLS %s)", host, self.port, settings.mode.value)
        return self.port

    def _peer(self, seen: str) -> str:
        """The caller's address for the one grpc saw (the front's, in permissive mode)."""
        return self._front.peer(address_of(seen)) if self._front is not None else seen

    async def stop(self) -> None:
        if self._front is not None:
            await self._front.stop()
            self._front = None
        if self._server is not None:
            await self._server.stop(STOP_GRACE_S)
            self._server = None
        if self._renewing is not None:
            self._renewing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._renewing
            self._renewing = None
            await self.consumer.renewals.clear_all()
        self.channels.close_all()
        await self.local.close()
