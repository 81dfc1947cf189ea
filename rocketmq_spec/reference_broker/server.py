"""The asyncio remoting server shared by the name server and the broker.

Dispatch is built from the spec's RequestCode table: every code either has a handler or gets Java's
REQUEST_CODE_NOT_SUPPORTED answer, so the reference broker cannot silently drop a request it does not
understand. The outcomes of ``NettyRemotingAbstract.processRequestCommand`` are reproduced here once,
for every handler: the request's opaque and serialization on normal responses, the server's default
serialization on early rejects and errors, no answer to oneway requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from rocketmq_spec.codec.bodies import decode_body
from rocketmq_spec.codec.command import RemotingCommand, java_hashmap_order
from rocketmq_spec.codec.custom_header import decode_header, encode_header
from rocketmq_spec.reference_broker.config import SOCKET_BACKLOG
from rocketmq_spec.reference_broker.sender import AnswerSender
from rocketmq_spec.reference_broker.stream import FramedConnection
from rocketmq_spec.reference_broker.tasks import cancel_and_wait
from rocketmq_spec.reference_broker.tls import TlsPolicy
from rocketmq_spec.spec import remarks
from rocketmq_spec.spec.bodies import BodySpec
from rocketmq_spec.spec.codes import RequestCode, ResponseCode
from rocketmq_spec.spec.errors import RocketMQSpecError
from rocketmq_spec.spec.frame import Flag, SerializeType
from rocketmq_spec.spec.headers import HeaderSpec, header_for
from rocketmq_spec.spec.json_header import ext_fields_capacity
from rocketmq_spec.spec.release_rules import Rule, holds
from rocketmq_spec.spec.releases import LEGACY, ordinal
from rocketmq_spec.spec.shutdown import GO_AWAY_REMARK, go_away_newer_than

log = logging.getLogger(__name__)

LEGACY_VERSION = ordinal(LEGACY)
"""MQVersion ordinal of a server made without a release (4.9.8); processes pass their wire release's."""

SERVER_CHANNEL_MAX_IDLE = 120.0
"""Seconds of silence after which a connection is closed (``serverChannelMaxIdleTimeSeconds``)."""

MAX_PENDING_REQUESTS_PER_CONNECTION = 4096
"""Requests of one connection being processed or parked at once (long polls included). Beyond it the
server answers SYSTEM_BUSY like Java's full executor queue, so one peer cannot make it hold unbounded
tasks."""

CLOSE_FLUSH_TIMEOUT = 0.5
"""Seconds a stopping server lets its connections flush their last responses before aborting them: a
moment for answers already written, not long enough for a peer that stopped reading to delay a stop."""

OVERLOAD_REMARK = "[OVERLOAD]system busy, start flow control for a while"


class Channel:
    """A client as the broker's managers see it: the key of its producer and consumer registrations and the
    way to reach it back. A remoting connection is one; a gRPC client of the in-process proxy is another
    (``rocketmq_spec.reference_broker.proxy.channel``), whose requests reach the handlers without a socket.

    Each has ``peer`` (``host:port``), ``closed`` (an asyncio.Event), ``paused`` and ``send``."""

    peer: str
    closed: asyncio.Event

    @property
    def paused(self) -> bool:
        return False

    async def send(self, command: RemotingCommand) -> bool:
        raise NotImplementedError

    async def invoke(self, command: RemotingCommand, timeout: float) -> RemotingCommand:
        """The client's answer to a request the broker sends it (TimeoutError after ``timeout`` s,
        ConnectionError when it cannot be asked)."""
        raise ConnectionError("this client cannot be called back")

    def close(self) -> None:
        raise NotImplementedError


class Connection(FramedConnection, Channel):
    """An accepted connection; handlers use it as the identity of a client or broker channel.

    ``pending`` counts its requests being processed or parked, which MAX_PENDING_REQUESTS_PER_CONNECTION
    bounds. ``invoke`` is the broker calling the client back over the client's own connection
    (GET_CONSUMER_RUNNING_INFO, CONSUME_MESSAGE_DIRECTLY), as Java's ``invokeSync(channel, ...)`` does."""

    def __init__(self, server: RemotingServer) -> None:
        lane = server.lane
        super().__init__(lambda command: server.received(self, command), lambda: server.lost(self),
                         SERVER_CHANNEL_MAX_IDLE,
                         (lambda frame: server.going_away_above is None and lane.take(self, frame))
                         if lane else None,
                         preamble=server.proxy_protocol, tls=server.tls, sender=server.sender)
        self.pending = 0
        self.awaiting: dict[int, asyncio.Future[RemotingCommand]] = {}

    async def invoke(self, command: RemotingCommand, timeout: float) -> RemotingCommand:
        """Send a request to the peer and wait for its response (TimeoutError after ``timeout`` s,
        ConnectionError when the connection ends first)."""
        future: asyncio.Future[RemotingCommand] = asyncio.get_running_loop().create_future()
        self.awaiting[command.opaque] = future
        try:
            if not await self.send(command):
                raise ConnectionError("the connection closed before the request was sent")
            return await asyncio.wait_for(future, timeout)
        finally:
            self.awaiting.pop(command.opaque, None)

    def answered(self, response: RemotingCommand) -> bool:
        """Hand a response to the ``invoke`` waiting for it; False when nothing waits for it."""
        future = self.awaiting.pop(response.opaque, None)
        if future is None or future.done():
            return False
        future.set_result(response)
        return True

    def fail_awaiting(self) -> None:
        for future in self.awaiting.values():
            if not future.done():
                future.set_exception(ConnectionError("the connection closed"))
        self.awaiting.clear()

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other


@dataclass
class Request:
    command: RemotingCommand
    connection: Connection | Channel
    server_serialize_type: SerializeType = SerializeType.JSON
    """The serving process's own serialization, used by responses a processor writes itself."""
    server_version: int = LEGACY_VERSION
    """The MQVersion ordinal the serving process writes (its wire release's)."""

    def header(self) -> dict[str, Any]:
        """The request's custom header, typed through the spec's table for its code.

        Raises HeaderError when a required field is missing or malformed; the server turns that into
        a SYSTEM_ERROR response carrying the request's opaque.
        """
        spec = header_for(self.command.code, is_response=False)
        if spec is None:
            raise LookupError(f"the spec has no request header for code {self.command.code}")
        return decode_header(spec, self.command.ext_fields)

    def body(self, spec: BodySpec) -> dict[str, Any]:
        """The request's JSON body, typed through the spec's bean table for it.

        Raises BodyError when it is not JSON, a field has the wrong type or a field the receiver needs
        is missing (absent primitives take their Java defaults), so a handler never meets a missing key;
        an absent body reads as ``{}``. The server answers SYSTEM_ERROR with the request's opaque.
        """
        return decode_body(spec, self.command.body or b"{}")

    def reply(self, code: int = ResponseCode.SUCCESS, remark: str | None = None,
              header: Mapping[str, Any] | None = None, body: bytes | None = None,
              extra_fields: Mapping[str, str] | None = None, *, direct: bool = False) -> RemotingCommand:
        """A normal-path response: the request's opaque and serialization, our version.

        ``header`` (typed values, encoded through the spec's response table for the request's code)
        gives the response an extFields map even when empty, as Java does whenever a processor creates
        its response with a header class; without it extFields is absent. ``extra_fields`` adds keys
        that are not header fields (MSG_REGION, TRACE_ON). ``direct`` marks a response Java's processor
        writes to the channel itself (a woken long poll, a QUERY_MESSAGE or VIEW_MESSAGE_BY_ID body):
        those skip the step that copies the request's serialization, so they go out in the server's own.
        """
        ext_fields: dict[str, str] | None = None
        if header is not None:
            spec = header_for(self.command.code, is_response=True)
            ext_fields = encode_header(_require(spec), header) if header else {}
        if extra_fields:  # Java adds these to the response before the header's fields are copied in
            ext_fields = {**extra_fields, **(ext_fields or {})}
        if ext_fields:  # RMQ-HDR-JSON-EXT-ORDER: Java iterates the response's extFields HashMap
            ext_fields = java_hashmap_order(ext_fields, ext_fields_capacity(bool(extra_fields),
                                                                            self.server_version))
        response = self.command.response(int(code), remark, ext_fields, body, version=self.server_version)
        if direct:
            response.serialize_type = self.server_serialize_type
        return response


class Refused(Exception):
    """A processor's check failed before any work: the response code and remark Java answers with."""

    def __init__(self, code: int, remark: str) -> None:
        super().__init__(remark)
        self.code = code
        self.remark = remark


def _require(spec: HeaderSpec | None) -> HeaderSpec:
    if spec is None:
        raise LookupError("the spec has no response header for this request code")
    return spec


Handler = Callable[[Request], Awaitable[RemotingCommand | None]]
"""Returns the response, or None when there is none to send (oneway work, a parked long poll)."""

class Lane(Protocol):
    """A shortcut for the commonest requests (the broker's ``SendLane``): ``take`` sees each frame of a
    connection before it is decoded and either answers it at once and returns True, or returns False
    having done nothing, and the frame takes the general path."""

    def take(self, connection: Connection, frame: bytes) -> bool: ...


class GracefulShutdown(Protocol):
    """The two NettyServerConfig keys of a graceful stop, which the name server and broker both read."""

    enable_shutdown_gracefully: bool
    shutdown_wait_time_seconds: int


Guard = Callable[[RemotingCommand, str], None]
"""Java's server RPC hook: sees every request (and the peer's ``host:port``) before dispatch, even one whose
code has no handler, and raises ``Refused`` to answer it instead of the handler (not answered if oneway)."""


def early_response(request: RemotingCommand, code: int, remark: str,
                   serialize_type: SerializeType, version: int = LEGACY_VERSION) -> RemotingCommand:
    """A response built outside the handler: Java writes these in its own default serialization."""
    return RemotingCommand(int(code), opaque=request.opaque, flag=Flag.RESPONSE, remark=remark,
                           version=version, serialize_type=serialize_type)


def not_supported_remark(code: int) -> str:
    return remarks.NOT_SUPPORTED.format(code=code)


def _not_supported(request: RemotingCommand, version: int) -> RemotingCommand | None:
    """Java's servers hand unknown codes to a default processor (the broker's AdminBrokerProcessor answers
    3), so the answer is an ordinary one: in the request's serialization, none if it is oneway."""
    if request.is_oneway:
        return None
    return early_response(request, ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
                          not_supported_remark(request.code), request.serialize_type, version)


def error_remark(exc: BaseException) -> str:
    """What Java's ``RemotingHelper.exceptionSimpleDesc`` puts in a SYSTEM_ERROR remark: the exception
    (Java's own where the spec knows it, as for a missing header field)."""
    if isinstance(exc, RocketMQSpecError) and exc.java_remark is not None:
        return exc.java_remark
    detail = exc.describe() if isinstance(exc, RocketMQSpecError) else str(exc)
    return f"{type(exc).__name__}: {detail}"


class DispatchTable:
    """Request code -> handler for every code of the spec's RequestCode table.

    ``served`` limits it to the codes a release declares (``WireRelease.request_codes``): a handler for
    another code is left out, so the code is answered as that release answers it, not supported."""

    def __init__(self, handlers: Mapping[RequestCode, Handler], served: frozenset[int] | None = None) -> None:
        unknown = [code for code in handlers if not isinstance(code, RequestCode)]
        if unknown:
            raise ValueError(f"handlers registered for codes outside the spec's table: {unknown}")
        self._served = served
        self._table: dict[int, Handler | None] = {
            int(code): handlers.get(code) if served is None or code in served else None
            for code in RequestCode}

    def get(self, code: int) -> Handler | None:
        return self._table.get(code)

    def without(self, *codes: RequestCode) -> DispatchTable:
        """The same table with some codes unsupported (the broker's fast port has no PULL_MESSAGE)."""
        return DispatchTable({RequestCode(c): h for c, h in self._table.items()
                              if h is not None and c not in codes}, self._served)

    @property
    def supported(self) -> list[int]:
        return [code for code, handler in self._table.items() if handler is not None]


class RemotingServer:
    def __init__(self, name: str, dispatch: DispatchTable, *,
                 default_serialize_type: SerializeType = SerializeType.JSON,
                 on_close: Callable[[Connection], Any] | None = None, guard: Guard | None = None,
                 backlog: int = SOCKET_BACKLOG, version: int = LEGACY_VERSION,
                 tls: TlsPolicy | None = None) -> None:
        """``tls``: the TLS mode and context each accepted connection is judged by (RMQ-TLS-SNIFF);
        None serves plain text only, as a server made without TLS settings does."""
        self.name = name
        self.version = version
        self.tls = tls
        self.proxy_protocol = holds(Rule.PROXY_PROTOCOL, version)
        """Whether connections start with an optional PROXY protocol preamble (5.1.4+)."""
        self.backlog = backlog
        self.dispatch = dispatch
        self.guard = guard
        self.default_serialize_type = default_serialize_type
        self._on_close = on_close
        self._server: asyncio.Server | None = None
        self._connections: set[Connection] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self.lane: Lane | None = None
        self.sender: AnswerSender | None = None
        """The thread writing answers of this server's connections (``sender``), from ``bind`` to ``stop``."""
        self.port = 0
        self.going_away_above: int | None = None
        """While shutting down gracefully: the version word above which requests are answered GO_AWAY."""

    def use_lane(self, lane: Lane) -> None:
        """Let ``lane`` take the frames it can from connections accepted from now on; never with a guard,
        which must see every request first."""
        if self.guard is not None:
            raise ValueError("a guarded server has no lane: the guard sees every request first")
        self.lane = lane

    async def start(self, host: str, port: int) -> int:
        """Listen on ``host:port`` (0 = a free port) and serve; returns the bound port."""
        await self.bind(host, port)
        await self.serve()
        return self.port

    async def bind(self, host: str, port: int) -> int:
        """Take the port without accepting yet: the broker's store needs the port (its store host)
        before the first request may reach a handler."""
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(self._accepted, host, port, backlog=self.backlog,
                                                start_serving=False)
        self.port = self._server.sockets[0].getsockname()[1]
        if self.sender is None:
            self.sender = AnswerSender.start(loop)
        log.info("%s bound to %s:%d", self.name, host, self.port)
        return self.port

    async def serve(self, dispatch: DispatchTable | None = None) -> None:
        """Start accepting on the bound port, optionally with the complete dispatch table."""
        if self._server is None:
            raise RuntimeError(f"{self.name} is not bound")
        if dispatch is not None:
            self.dispatch = dispatch
        await self._server.start_serving()

    async def stop(self) -> None:
        """Stop accepting, end every connection and request; returns once each connection's close
        has been reported, so nothing of this server runs after it."""
        if self._server is not None:
            self._server.close()
        connections = list(self._connections)
        for connection in connections:
            connection.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
            self._tasks.clear()  # a task cancelled before its first step never ran its own discard
        await self._ended(connections)
        if self._server is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._server.wait_closed(), 5)
            self._server = None
        if self.sender is not None:
            self.sender.close()
            self.sender = None

    def go_away(self) -> bool:
        """Start a graceful shutdown: from now on requests of clients new enough to know GO_AWAY are told
        to go elsewhere; False (and nothing changes) when this server's release has no such answer."""
        self.going_away_above = go_away_newer_than(self.version)
        return self.going_away_above is not None

    @staticmethod
    async def _ended(connections: list[Connection]) -> None:
        """Wait for closed connections to end; those whose peer does not take their last bytes in time
        are aborted, which ends them at once."""
        for last_resort in (False, True):
            if last_resort:
                for connection in connections:
                    connection.abort()
            waits = [asyncio.ensure_future(c.ended.wait()) for c in connections if not c.ended.is_set()]
            if not waits:
                return
            _, late = await asyncio.wait(waits, timeout=CLOSE_FLUSH_TIMEOUT)
            await cancel_and_wait(late)

    @property
    def connections(self) -> frozenset[Connection]:
        return frozenset(self._connections)

    def _accepted(self) -> Connection:
        connection = Connection(self)
        self._connections.add(connection)
        return connection

    def received(self, connection: Connection, command: RemotingCommand) -> None:
        """Each decoded command of a connection: requests run as tasks of their own (a long poll must
        not hold up the requests behind it), responses to nothing we asked are dropped."""
        handler = self.dispatch.get(command.code)
        if not connection.peer:
            # The peer reset the connection before its address was known: no answer can reach it, and
            # what a handler records of its sender (a send's born host, a client channel) has no sender.
            log.debug("%s: dropping request %d of a connection gone before it was known", self.name,
                      command.code)
        elif command.is_response:
            if not connection.answered(command):
                log.debug("%s: ignoring response %d from %s", self.name, command.code, connection.peer)
        elif self.going_away_above is not None and command.version > self.going_away_above:
            if not command.is_oneway:  # RMQ-SRV-GO-AWAY: before the guard, a handler or flow control
                connection.write(early_response(command, ResponseCode.GO_AWAY, GO_AWAY_REMARK,
                                                self.default_serialize_type, self.version))
        elif handler is None and self.guard is None:
            # answered at once, without a task: a peer sending codes nobody serves costs one write a frame
            unsupported = _not_supported(command, self.version)
            if unsupported is not None:
                connection.write(unsupported)
        elif connection.pending >= MAX_PENDING_REQUESTS_PER_CONNECTION:
            if not command.is_oneway:
                connection.write(early_response(command, ResponseCode.SYSTEM_BUSY, OVERLOAD_REMARK,
                                                self.default_serialize_type, self.version))
        else:
            connection.pending += 1
            self._tasks.add(asyncio.ensure_future(self._process(connection, command, handler)))

    def lost(self, connection: Connection) -> None:
        connection.fail_awaiting()
        self._connections.discard(connection)
        if self._on_close is not None:
            self._on_close(connection)

    async def _process(self, connection: Connection, command: RemotingCommand,
                       handler: Handler | None) -> None:
        """One request's task. It leaves the books itself rather than through a done callback, which
        would cost every request one more turn of the event loop."""
        try:
            await self._answer(connection, command, handler)
        finally:
            connection.pending -= 1
            task = asyncio.current_task()
            if task is not None:
                self._tasks.discard(task)

    async def _answer(self, connection: Connection, command: RemotingCommand,
                      handler: Handler | None) -> None:
        if self.guard is not None:
            try:
                self.guard(command, connection.peer)
            except Refused as refusal:
                if not command.is_oneway:
                    await connection.send(early_response(command, refusal.code, refusal.remark,
                                                         self.default_serialize_type, self.version))
                return
        if handler is None:
            unsupported = _not_supported(command, self.version)
            if unsupported is not None:
                await connection.send(unsupported)
            return
        try:
            response = await handler(Request(command, connection, self.default_serialize_type, self.version))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if isinstance(exc, RocketMQSpecError):
                # the remark tells the peer; a line per rejected frame would let a hostile peer spend
                # our time and disk on logging
                log.debug("%s: request %d rejected: %s", self.name, command.code, exc)
            else:
                log.exception("%s: handler for %d failed", self.name, command.code)
            response = early_response(command, ResponseCode.SYSTEM_ERROR, error_remark(exc),
                                      self.default_serialize_type, self.version)
        if response is not None and not command.is_oneway:
            await connection.send(response)


async def shut_down_gracefully(servers: Iterable[RemotingServer], settings: GracefulShutdown) -> None:
    """Java's ``enableShutdownGracefully``: before the servers stop, ``shutdownWaitTimeSeconds`` more of
    serving in which new clients are told to go away (RMQ-SRV-GO-AWAY); no wait for a release that never
    does so."""
    if not settings.enable_shutdown_gracefully:
        return
    going = [server.go_away() for server in servers]
    if any(going):
        await asyncio.sleep(settings.shutdown_wait_time_seconds)
