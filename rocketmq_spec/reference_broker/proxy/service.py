"""``MessagingService`` on grpc.aio: each RPC's metadata, refusals and answer (``GrpcMessagingApplication``).

Every unary RPC answers gRPC OK with the outcome in its response's status (RMQ-GRPC-STATUS-IN-BODY); an
unexpected failure is INTERNAL_SERVER_ERROR there too. RPCs the proxy does not serve are left to the
generated base class, which answers gRPC UNIMPLEMENTED, as Apache's proxy does for PullMessage and the
offset RPCs (RMQ-GRPC-UNIMPLEMENTED). Telemetry is a stream each way: settings in, the merged settings and
the broker's commands out; a refused command ends the stream with INVALID_ARGUMENT.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import grpc
from google.protobuf.message import Message

from rocketmq_spec.codec.grpc.v2 import service_pb2 as rpc
from rocketmq_spec.codec.grpc.v2 import service_pb2_grpc as rpc_grpc
from rocketmq_spec.reference_broker.auth.authentication import Authenticator
from rocketmq_spec.reference_broker.auth.authorization import Authorizer, ContextFailure
from rocketmq_spec.reference_broker.proxy.call import CallContext, Refusal, status
from rocketmq_spec.reference_broker.proxy.clients import Clients
from rocketmq_spec.reference_broker.proxy.consumer import Consumer
from rocketmq_spec.reference_broker.proxy.producer import Producer
from rocketmq_spec.reference_broker.proxy.route import Routes
from rocketmq_spec.reference_broker.server import Refused
from rocketmq_spec.spec.authorization import grpc_subject
from rocketmq_spec.spec.grpc_auth import AUTHORIZATION_AK
from rocketmq_spec.spec.grpc_codes import Code

log = logging.getLogger(__name__)

Response = TypeVar("Response")


class MessagingService(rpc_grpc.MessagingServiceServicer):
    def __init__(self, routes: Routes, producer: Producer, consumer: Consumer, clients: Clients,
                 peer_of: Callable[[str], str] = str, authenticator: Authenticator | None = None,
                 authorizer: Authorizer | None = None) -> None:
        """``peer_of``: the caller's address for the one grpc reports (a front's, in permissive mode).
        ``authenticator``: ACL 2.0 authentication of every call (RMQ-GRPC-AUTHENTICATE), None when off;
        ``authorizer``: ACL 2.0 authorization after it (RMQ-AUTHZ-GRPC), None when off."""
        self._routes = routes
        self._producer = producer
        self._consumer = consumer
        self._clients = clients
        self._peer_of = peer_of
        self._authenticator = authenticator
        self._authorizer = authorizer

    def _context(self, context: grpc.aio.ServicerContext[Any, Any]) -> CallContext:
        return CallContext.of(context.invocation_metadata(), self._peer_of(context.peer()))

    def _authenticate(self, context: grpc.aio.ServicerContext[Any, Any], request: Message) -> None:
        """Refusal UNAUTHORIZED with the remoting side's remark when the call is not signed by a known,
        enabled user, or that user may not do what it asks (``ResponseBuilder`` turns every
        AuthenticationException and AuthorizationException into 40100)."""
        if self._authenticator is None and self._authorizer is None:
            return
        metadata = {key: value if isinstance(value, str) else value.decode("latin-1")
                    for key, value in context.invocation_metadata() or ()}
        try:
            username = None
            if self._authenticator is not None:
                username = self._authenticator.check_call(metadata, request.DESCRIPTOR.full_name)
            if self._authorizer is not None:
                subject = grpc_subject(metadata.get(AUTHORIZATION_AK), username)
                self._authorizer.check_call(request, subject, self._peer_of(context.peer()))
        except Refused as refused:
            raise Refusal(Code.UNAUTHORIZED, refused.remark) from None
        except ContextFailure as failure:
            raise Refusal(Code.INTERNAL_SERVER_ERROR, failure.detail) from None

    async def _answer(self, request: Message, context: grpc.aio.ServicerContext[Any, Any],
                      response_type: Callable[..., Response],
                      activity: Callable[[CallContext], Awaitable[Response]]) -> Response:
        ctx = self._context(context)
        try:
            self._authenticate(context, request)
            ctx.require_client_id()
            return await activity(ctx)
        except Refusal as refusal:
            return response_type(status=refusal.status())
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("gRPC call failed")
            return response_type(status=status(Code.INTERNAL_SERVER_ERROR, f"{type(exc).__name__}: {exc}"))

    async def QueryRoute(self, request: rpc.QueryRouteRequest,
                         context: grpc.aio.ServicerContext[Any, Any]) -> rpc.QueryRouteResponse:
        return await self._answer(request, context, rpc.QueryRouteResponse,
                                  lambda ctx: self._routes.query_route(ctx, request))

    async def QueryAssignment(self, request: rpc.QueryAssignmentRequest,
                              context: grpc.aio.ServicerContext[Any, Any]) -> rpc.QueryAssignmentResponse:
        return await self._answer(request, context, rpc.QueryAssignmentResponse,
                                  lambda ctx: self._routes.query_assignment(ctx, request))

    async def Heartbeat(self, request: rpc.HeartbeatRequest,
                        context: grpc.aio.ServicerContext[Any, Any]) -> rpc.HeartbeatResponse:
        return await self._answer(request, context, rpc.HeartbeatResponse,
                                  lambda ctx: self._clients.heartbeat(ctx, request))

    async def SendMessage(self, request: rpc.SendMessageRequest,
                          context: grpc.aio.ServicerContext[Any, Any]) -> rpc.SendMessageResponse:
        return await self._answer(request, context, rpc.SendMessageResponse, lambda ctx: self._producer.send(
            ctx, self._clients.channel(ctx), request))

    async def EndTransaction(self, request: rpc.EndTransactionRequest,
                             context: grpc.aio.ServicerContext[Any, Any]) -> rpc.EndTransactionResponse:
        return await self._answer(request, context, rpc.EndTransactionResponse,
                                  lambda ctx: self._producer.end_transaction(
                                      ctx, self._clients.channel(ctx), request))

    async def ReceiveMessage(self, request: rpc.ReceiveMessageRequest,
                             context: grpc.aio.ServicerContext[Any, Any]
                             ) -> AsyncIterator[rpc.ReceiveMessageResponse]:
        ctx = self._context(context)
        remaining = context.time_remaining()
        try:
            self._authenticate(context, request)
            ctx.require_client_id()
            items = await self._consumer.receive(ctx, self._clients.channel(ctx), request,
                                                 None if remaining is None else int(remaining * 1000))
        except Refusal as refusal:
            items = [rpc.ReceiveMessageResponse(status=refusal.status())]
        except Exception as exc:
            log.exception("gRPC receive failed")
            items = [rpc.ReceiveMessageResponse(status=status(Code.INTERNAL_SERVER_ERROR,
                                                              f"{type(exc).__name__}: {exc}"))]
        for item in items:
            yield item
        closing = rpc.ReceiveMessageResponse()
        closing.delivery_timestamp.GetCurrentTime()
        yield closing

    async def AckMessage(self, request: rpc.AckMessageRequest,
                         context: grpc.aio.ServicerContext[Any, Any]) -> rpc.AckMessageResponse:
        return await self._answer(request, context, rpc.AckMessageResponse, lambda ctx: self._consumer.ack(
            ctx, self._clients.channel(ctx), request))

    async def ChangeInvisibleDuration(
            self, request: rpc.ChangeInvisibleDurationRequest,
            context: grpc.aio.ServicerContext[Any, Any]) -> rpc.ChangeInvisibleDurationResponse:
        return await self._answer(request, context, rpc.ChangeInvisibleDurationResponse,
                                  lambda ctx: self._consumer.change_invisible(
                                      ctx, self._clients.channel(ctx), request))

    async def ForwardMessageToDeadLetterQueue(
            self, request: rpc.ForwardMessageToDeadLetterQueueRequest,
            context: grpc.aio.ServicerContext[Any, Any]) -> rpc.ForwardMessageToDeadLetterQueueResponse:
        return await self._answer(request, context, rpc.ForwardMessageToDeadLetterQueueResponse,
                                  lambda ctx: self._consumer.forward_to_dlq(
                                      ctx, self._clients.channel(ctx), request))

    async def RecallMessage(self, request: rpc.RecallMessageRequest,
                            context: grpc.aio.ServicerContext[Any, Any]) -> rpc.RecallMessageResponse:
        return await self._answer(request, context, rpc.RecallMessageResponse,
                                  lambda ctx: self._producer.recall(ctx, self._clients.channel(ctx), request))

    async def NotifyClientTermination(
            self, request: rpc.NotifyClientTerminationRequest,
            context: grpc.aio.ServicerContext[Any, Any]) -> rpc.NotifyClientTerminationResponse:
        async def terminate(ctx: CallContext) -> rpc.NotifyClientTerminationResponse:
            answer = await self._clients.terminate(ctx, request)
            await self._consumer.renewals.clear(ctx.client_id)
            return answer

        return await self._answer(request, context, rpc.NotifyClientTerminationResponse, terminate)

    async def Telemetry(self, request_iterator: AsyncIterator[rpc.TelemetryCommand],
                        context: grpc.aio.ServicerContext[Any, Any]) -> AsyncIterator[rpc.TelemetryCommand]:
        ctx = self._context(context)
        outgoing: asyncio.Queue[rpc.TelemetryCommand | None] = asyncio.Queue()
        refusal: list[Refusal] = []

        async def read() -> None:
            try:
                ctx.require_client_id()
                async for command in request_iterator:
                    try:
                        self._authenticate(context, command)
                    except Refusal as unauthorized:  # answered as a command, then the stream ends
                        outgoing.put_nowait(rpc.TelemetryCommand(status=unauthorized.status()))
                        return
                    kind = command.WhichOneof("command")
                    if kind == "settings":
                        answer = await self._clients.settings_received(ctx, command)
                        self._clients.channel(ctx).attach(outgoing)
                        outgoing.put_nowait(answer)
                    elif kind in ("thread_stack_trace", "verify_message_result"):
                        channel = self._clients.channels.find(ctx.client_id)
                        if channel is not None:
                            channel.relayed(getattr(command, kind).nonce, command)
            except Refusal as exc:
                refusal.append(exc)
            finally:
                outgoing.put_nowait(None)

        reader = asyncio.ensure_future(read())
        try:
            while (item := await outgoing.get()) is not None:
                yield item
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
            channel = self._clients.channels.find(ctx.client_id)
            if channel is not None:
                channel.detach(outgoing)
        if refusal:
            code = grpc.StatusCode.INVALID_ARGUMENT if refusal[0].code < Code.INTERNAL_ERROR else \
                grpc.StatusCode.INTERNAL
            await context.abort(code, f"process client telemetryCommand failed. {refusal[0].message}")
