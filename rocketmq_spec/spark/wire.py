"""A blocking remoting client over a plain socket, for Spark drivers and executors.

Spark calls a data source from plain threads and pickles it to Python workers, so the client is a small
synchronous object that is opened where it is used (never pickled) and that speaks only through
``rocketmq_spec.codec.command`` and ``rocketmq_spec.codec.framing``. One request is in flight at a time;
requests the server pushes (NOTIFY_CONSUMER_IDS_CHANGED and the like) are skipped while waiting for the
response. """

from __future__ import annotations

import itertools
import socket
from collections.abc import Mapping
from types import TracebackType

from rocketmq_spec.codec.command import RemotingCommand, encode
from rocketmq_spec.codec.framing import FrameDecoder, FrameRejected
from rocketmq_spec.spec.errors import SpecViolation
from rocketmq_spec.spec.frame import SerializeType

DEFAULT_TIMEOUT = 10.0
"""Seconds a connect or one response may take; above the 5 s long-poll hold the pull path asks for."""

CLIENT_VERSION = 409
"""MQVersion ordinal announced in requests: 4.9.8, so brokers answer with their 4.9.8 behaviour."""

READ_CHUNK = 256 * 1024
"""Bytes read from the socket per call: one pull response of 32 ~1 KiB messages fits in a few reads."""

_opaques = itertools.count(1)


class RemoteError(SpecViolation):
    """The peer answered a request with a response code the caller does not accept."""


class WireClient:
    def __init__(self, addr: str, *, timeout: float = DEFAULT_TIMEOUT,
                 serialize_type: SerializeType = SerializeType.JSON) -> None:
        host, _, port = addr.rpartition(":")
        self.addr = addr
        self.serialize_type = serialize_type
        self._socket = socket.create_connection((host, int(port)), timeout=timeout)
        self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._decoder = FrameDecoder()

    def __enter__(self) -> WireClient:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        self._socket.close()

    def _request(self, code: int, ext_fields: Mapping[str, str], body: bytes | None,
                 oneway: bool) -> RemotingCommand:
        command = RemotingCommand.request(code, ext_fields, body, opaque=next(_opaques) & 0x7FFFFFFF,
                                          oneway=oneway, version=CLIENT_VERSION,
                                          serialize_type=self.serialize_type)
        self._socket.sendall(encode(command))
        return command

    def oneway(self, code: int, ext_fields: Mapping[str, str], body: bytes | None = None) -> None:
        self._request(code, ext_fields, body, oneway=True)

    def invoke(self, code: int, ext_fields: Mapping[str, str], body: bytes | None = None, *,
               accept: tuple[int, ...] = (0,), timeout: float | None = None) -> RemotingCommand:
        """Send a request and return its response; :class:`RemoteError` for codes not in ``accept``."""
        request = self._request(code, ext_fields, body, oneway=False)
        self._socket.settimeout(timeout if timeout is not None else DEFAULT_TIMEOUT)
        response = self._response_to(request.opaque)
        if response.code not in accept:
            raise RemoteError(f"request {code} to {self.addr} refused: {response.remark}",
                              expected=accept, seen=response.code)
        return response

    def _response_to(self, opaque: int) -> RemotingCommand:
        """Only one request is in flight, so anything else received (pushed requests, a late answer to a
        request that timed out) is dropped."""
        while True:
            chunk = self._socket.recv(READ_CHUNK)
            if not chunk:
                raise ConnectionError(f"{self.addr} closed the connection before responding")
            for event in self._decoder.receive_data(chunk):
                if isinstance(event, FrameRejected):
                    raise event.error
                if event.command.is_response and event.command.opaque == opaque:
                    return event.command
