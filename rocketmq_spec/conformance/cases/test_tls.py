"""TLS on the target's ports (``rmq-conformance --tls``): handshakes, the modes, certificates.

The run says which ``tls.server.mode`` the target runs in (``--tls-mode``, permissive unless told); each
case judges what that mode promises on the name server's port, the broker's and its fast port, and the
gRPC port. A case about another mode than the target's is UNSUPPORTED with the reason, so one target in
one mode judges its own clauses and a run per mode covers them all.
"""

from __future__ import annotations

import socket
import ssl

import grpc
from cryptography import x509

from rocketmq_spec.codec.grpc.v2 import definition_pb2 as v2
from rocketmq_spec.codec.grpc.v2 import service_pb2 as rpc
from rocketmq_spec.codec.grpc.v2 import service_pb2_grpc as rpc_grpc
from rocketmq_spec.conformance.case import case
from rocketmq_spec.conformance.checks import Check
from rocketmq_spec.conformance.target import Server
from rocketmq_spec.conformance.tls import ClientTls
from rocketmq_spec.conformance.verdict import Unsupported
from rocketmq_spec.conformance.wire import CONNECT_TIMEOUT, ConnectionLost, Endpoint, Wire, WireError
from rocketmq_spec.spec.behaviour import FAST_PORT_OFFSET
from rocketmq_spec.spec.tls import TlsMode

CALL_TIMEOUT_S = 10.0
"""Seconds a gRPC call of these cases may take (a refused channel fails at once)."""


def _ports(namesrv: Server, broker: Server) -> list[Server]:
    """The three remoting servers of RMQ-TLS-EVERY-PORT: name server, broker, fast port."""
    fast = Endpoint(broker.endpoint.host, broker.endpoint.port - FAST_PORT_OFFSET)
    return [namesrv, broker, Server("broker", fast)]


def _needs(tls: ClientTls, *modes: TlsMode) -> None:
    if tls.mode not in modes:
        raise Unsupported(f"the clause is about {' or '.join(m.value for m in modes)} mode; the run says the "
                          f"target is in {tls.mode.value} mode (--tls-mode)")


def _ping(server: Server, wire: Wire, tls: ClientTls | bool) -> int | str:
    """The answer code of a ping over TLS (a ClientTls) or in plain text (False), or why there is none."""
    try:
        connection = wire.connect(server.endpoint, tls=tls)
        return server.ping(connection).code
    except (WireError, OSError) as exc:
        return f"no answer: {exc}"


@case("RMQ-TLS-EVERY-PORT", "A TLS handshake completes on the name server's, the broker's and the fast port, "
      "and a request over it is answered as in plain text.")
def test_tls_on_every_port(namesrv: Server, broker: Server, wire: Wire, client_tls: ClientTls,
                           check: Check) -> None:
    _needs(client_tls, TlsMode.PERMISSIVE, TlsMode.ENFORCING)
    for server in _ports(namesrv, broker):
        answer = _ping(server, wire, client_tls)
        check.that(f"{server.role} at {server.endpoint} over TLS", isinstance(answer, int),
                   expected="an answer", actual=answer)


@case("RMQ-TLS-SNIFF", "On one port, a connection starting with a TLS handshake is served over TLS and one "
      "starting with a RemotingCommand frame in plain text: both get the same answer.")
def test_first_byte_decides(broker: Server, wire: Wire, client_tls: ClientTls, check: Check) -> None:
    _needs(client_tls, TlsMode.PERMISSIVE)
    plain = _ping(broker, wire, False)
    check.equal("answer over TLS and in plain text", plain, _ping(broker, wire, client_tls))


@case("RMQ-TLS-PERMISSIVE", "In permissive mode every remoting port answers plain-text requests beside TLS "
      "ones.")
def test_permissive_serves_both(namesrv: Server, broker: Server, wire: Wire, client_tls: ClientTls,
                                check: Check) -> None:
    _needs(client_tls, TlsMode.PERMISSIVE)
    for server in _ports(namesrv, broker):
        for how, tls in (("plain text", False), ("TLS", client_tls)):
            answer = _ping(server, wire, tls)
            check.that(f"{server.role} at {server.endpoint} in {how}", isinstance(answer, int),
                       expected="an answer", actual=answer)


@case("RMQ-TLS-ENFORCING", "In enforcing mode a plain-text request is not answered: the connection is "
      "closed.")
def test_enforcing_closes_plain_text(namesrv: Server, broker: Server, wire: Wire, client_tls: ClientTls,
                                     check: Check) -> None:
    _needs(client_tls, TlsMode.ENFORCING)
    for server in _ports(namesrv, broker):
        connection = wire.connect(server.endpoint, tls=False)
        connection.send(server.ping_command(connection))
        closed = connection.wait_closed()
        check.that(f"{server.role} at {server.endpoint} closes", closed, expected="closed", actual=closed)
        check.equal(f"{server.role} at {server.endpoint}: bytes answered", b"", bytes(connection.raw))


@case("RMQ-TLS-DISABLED", "In disabled mode a TLS handshake fails (the connection is closed); plain text is "
      "served.")
def test_disabled_refuses_tls(namesrv: Server, broker: Server, wire: Wire, client_tls: ClientTls,
                              check: Check) -> None:
    _needs(client_tls, TlsMode.DISABLED)
    for server in _ports(namesrv, broker):
        try:
            wire.connect(server.endpoint, tls=client_tls)
            refused: object = False
        except ConnectionLost as exc:
            refused = str(exc)
        check.that(f"{server.role} at {server.endpoint} refuses TLS", refused is not False,
                   expected="the handshake fails", actual=refused or "a TLS session")
        answer = _ping(server, wire, False)
        check.that(f"{server.role} in plain text", isinstance(answer, int), expected="an answer",
                   actual=answer)


@case("RMQ-TLS-TEST-MODE", "The certificate served verifies against the CA given (--tls-ca, with the "
      "client's own for mutual TLS); a target reached with --tls-insecure serves a self-signed one, as test "
      "mode does.")
def test_certificate(broker: Server, client_tls: ClientTls, check: Check) -> None:
    _needs(client_tls, TlsMode.PERMISSIVE, TlsMode.ENFORCING)
    host, port = broker.endpoint.host, broker.endpoint.port
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT) as sock, \
                client_tls.wrap(sock, host) as tls:
            der = tls.getpeercert(binary_form=True)
    except (ssl.SSLError, OSError) as exc:
        check.that("handshake", False, expected="a certificate that verifies" if not client_tls.insecure
                   else "a certificate", actual=str(exc))
        return
    certificate = x509.load_der_x509_certificate(der or b"")
    if client_tls.insecure:
        check.equal("issuer (self-signed: the subject)", certificate.subject.rfc4514_string(),
                    certificate.issuer.rfc4514_string())
    else:
        check.note("verified certificate", certificate.subject.rfc4514_string())


def _query_route(channel: grpc.Channel) -> str:
    """The status of a QueryRoute over ``channel``, or the gRPC error when the channel fails."""
    stub = rpc_grpc.MessagingServiceStub(channel)
    try:
        answer = stub.QueryRoute(rpc.QueryRouteRequest(topic=v2.Resource(name="rmq_spec_tls_probe")),
                                 metadata=[("x-mq-client-id", "rmq-spec-tls")], timeout=CALL_TIMEOUT_S)
    except grpc.RpcError as exc:
        return f"failed: {exc.code().name}"
    finally:
        channel.close()
    return f"answered {v2.Code.Name(answer.status.code)}"


@case("RMQ-TLS-GRPC-PORT", "The gRPC port serves TLS in permissive and enforcing mode and plain text in "
      "permissive and disabled mode, on the one port.")
def test_grpc_port(proxy: Endpoint, client_tls: ClientTls, check: Check) -> None:
    over_tls = _query_route(client_tls.grpc_channel(str(proxy))) if client_tls.mode is not TlsMode.DISABLED \
        else _query_route(grpc.secure_channel(str(proxy), grpc.ssl_channel_credentials()))
    in_plain = _query_route(grpc.insecure_channel(str(proxy)))
    tls_served = client_tls.mode is not TlsMode.DISABLED
    plain_served = client_tls.mode is not TlsMode.ENFORCING
    check.that("over TLS", over_tls.startswith("answered") == tls_served,
               expected="answered" if tls_served else "failed", actual=over_tls)
    check.that("in plain text", in_plain.startswith("answered") == plain_served,
               expected="answered" if plain_served else "failed", actual=in_plain)

