"""How the suite reaches a target over TLS (``rmq-conformance --tls``), and what it expects of its ports.

A run with ``--tls`` connects every remoting connection and gRPC channel of its cases over TLS, and the
``tls`` area judges the modes of ``rocketmq_spec.spec.tls``. The server's certificate is checked against
``--tls-ca`` (mutual TLS with ``--tls-cert``/``--tls-key``); a target serving a self-signed certificate,
as Apache's test mode does by default, is reached only with an explicit ``--tls-insecure``, never by
default. ``--tls-mode`` says which ``tls.server.mode`` the target runs in (permissive unless told).
"""

from __future__ import annotations

import socket
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rocketmq_spec.spec.tls import TlsMode

SELF_SIGNED_NAME = "localhost"
"""The host name a certificate is checked for when the target is addressed by IP (test-mode certificates
of Netty and of the reference broker name ``localhost``)."""


@dataclass(frozen=True)
class ClientTls:
    """The client side of a TLS run: whom to trust, what to present, which mode the target runs in."""

    ca: Path | None = None
    cert: Path | None = None
    key: Path | None = None
    insecure: bool = False
    """Accept any certificate: only for self-signed targets, and only when asked."""
    mode: TlsMode = TlsMode.PERMISSIVE

    def __post_init__(self) -> None:
        if (self.cert is None) != (self.key is None):
            raise ValueError("--tls-cert and --tls-key go together")
        if self.insecure and self.ca is not None:
            raise ValueError("--tls-insecure and --tls-ca contradict each other")

    @property
    def connects(self) -> bool:
        """Whether the cases connect over TLS: not to a target in disabled mode, which refuses it (the
        tls area judges that refusal with connections of its own)."""
        return self.mode is not TlsMode.DISABLED

    def context(self) -> ssl.SSLContext:
        """The ``ssl`` client context: verifying against the CA (or the system's roots), or not at all
        with ``insecure``."""
        context = ssl.create_default_context(cafile=str(self.ca) if self.ca else None)
        if self.insecure:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        if self.cert is not None and self.key is not None:
            context.load_cert_chain(self.cert, self.key)
        return context

    def wrap(self, sock: socket.socket, host: str) -> ssl.SSLSocket:
        """``sock`` after a TLS handshake (ssl.SSLError or OSError when it fails)."""
        name = host if not _is_ip(host) or self.insecure else SELF_SIGNED_NAME
        return self.context().wrap_socket(sock, server_hostname=name)

    def grpc_channel(self, address: str) -> Any:
        """A grpc channel over TLS. grpc always checks the certificate; ``insecure`` trusts the one the
        target presents, fetched first (grpc has no switch to turn the check off)."""
        import grpc

        host, _, port = address.rpartition(":")
        roots: bytes | None
        if self.insecure:
            roots = ssl.get_server_certificate((host, int(port))).encode()
        else:
            roots = self.ca.read_bytes() if self.ca else None
        chain = self.cert.read_bytes() if self.cert else None
        key = self.key.read_bytes() if self.key else None
        credentials = grpc.ssl_channel_credentials(roots, key, chain)
        options = [("grpc.ssl_target_name_override", SELF_SIGNED_NAME)] if _is_ip(host) else []
        return grpc.secure_channel(address, credentials, options=options)



def _is_ip(host: str) -> bool:
    try:
        socket.inet_pton(socket.AF_INET6 if ":" in host else socket.AF_INET, host)
    except OSError:
        return False
    return True
