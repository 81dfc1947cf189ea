"""A blocking connection to a name server or broker, for an admin tool that asks one thing at a time.

Requests are built from the spec's header tables and answers decoded with the codec, so ``rmq-admin``
speaks exactly what the spec says; failures surface as :class:`AdminError` carrying one readable line
(unreachable address, timeout, an answer other than SUCCESS).
"""

from __future__ import annotations

import itertools
import socket
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rocketmq_spec.codec.acl import Credentials, sign
from rocketmq_spec.codec.command import RemotingCommand, encode
from rocketmq_spec.codec.custom_header import decode_header, encode_header
from rocketmq_spec.codec.framing import FrameDecoder, FrameRejected
from rocketmq_spec.spec.codes import RequestCode, ResponseCode, code_name
from rocketmq_spec.spec.headers import HeaderSpec, header_for
from rocketmq_spec.spec.version import CURRENT_VERSION

DEFAULT_TIMEOUT = 5.0
_opaques = itertools.count(1)


class AdminError(Exception):
    """Something the admin tool reports in one line and a non-zero exit status."""


@dataclass(frozen=True)
class Answer:
    command: RemotingCommand
    header: dict[str, Any]
    """The response's custom header, typed through the spec's table (empty when it has none)."""


def parse_addr(addr: str) -> tuple[str, int]:
    host, sep, port = addr.strip().rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise AdminError(f"not an address: {addr!r} (expected host:port)")
    return host, int(port)


def _code_name(code: int) -> str:
    return code_name(code, is_response=True) or str(code)


def _trust_any() -> ssl.SSLContext:
    """mqadmin's TLS client in test mode (``tls.enable=true``): any server certificate is accepted."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


class AdminConnection:
    def __init__(self, addr: str, timeout: float = DEFAULT_TIMEOUT, *, tls: bool = False,
                 credentials: Credentials | None = None) -> None:
        """``tls``: over TLS, as mqadmin connects to servers in enforcing mode; ``credentials``: every
        request signed with them, as mqadmin's ``AclClientRPCHook`` signs (brokers with ACL or
        authentication on refuse unsigned requests)."""
        self.addr = addr
        self.timeout = timeout
        self.credentials = credentials
        host, port = parse_addr(addr)
        try:
            sock = socket.create_connection((host, port), timeout=timeout)
        except OSError as exc:
            raise AdminError(f"cannot connect to {addr}: {exc.strerror or exc}") from None
        try:
            self._socket = _trust_any().wrap_socket(sock) if tls else sock
        except OSError as exc:  # ssl.SSLError included
            sock.close()
            raise AdminError(f"TLS handshake with {addr} failed: {exc}") from None
        self._decoder = FrameDecoder()

    def close(self) -> None:
        self._socket.close()

    def __enter__(self) -> AdminConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def call(self, code: RequestCode, values: Mapping[str, Any] | None = None, body: bytes | None = None, *,
             accept: tuple[int, ...] = (ResponseCode.SUCCESS,), spec: HeaderSpec | None = None) -> Answer:
        """Send one request; the answer must carry one of the ``accept`` codes. ``spec``: the request's
        header table where the code's own is not the one to use (a controller's requests, whose tables are
        ``rocketmq_spec.spec.controller``'s); the answer's header is then left to the caller."""
        spec = spec or header_for(code, is_response=False)
        fields = encode_header(spec, values or {}) if spec is not None and spec.fields else None
        request = RemotingCommand.request(int(code), fields, body, opaque=next(_opaques),
                                          version=int(CURRENT_VERSION))
        if self.credentials is not None:
            sign(request, self.credentials)
        response = self._exchange(request)
        if response.code not in accept:
            remark = " ".join((response.remark or "no remark").split())
            raise AdminError(f"{self.addr} answered {code.name} with {_code_name(response.code)} "
                             f"({response.code}): {remark}")
        answer_spec = header_for(code, is_response=True)
        header = decode_header(answer_spec, response.ext_fields) if answer_spec and response.ext_fields \
            and response.code == ResponseCode.SUCCESS else {}
        return Answer(response, header)

    def _exchange(self, request: RemotingCommand) -> RemotingCommand:
        try:
            self._socket.sendall(encode(request))
            while True:
                data = self._socket.recv(65536)
                if not data:
                    raise AdminError(f"{self.addr} closed the connection without answering")
                for event in self._decoder.receive_data(data):
                    if isinstance(event, FrameRejected):
                        raise AdminError(f"{self.addr} sent a malformed frame: {event.error}")
                    if event.command.is_response and event.command.opaque == request.opaque:
                        return event.command
        except TimeoutError:
            raise AdminError(f"{self.addr} did not answer within {self.timeout} s") from None
        except OSError as exc:
            raise AdminError(f"connection to {self.addr} failed: {exc.strerror or exc}") from None
