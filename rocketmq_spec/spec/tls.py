"""TLS on Apache RocketMQ's ports: the server modes, the ``tls.*`` settings and how one port serves both.

Every remoting server (name server 9876, broker 10911 and its fast port 10909, the proxy's remoting port)
is a ``NettyRemotingServer`` whose first handler peeks at the first byte of a connection: 0x16, the TLS
record type of a handshake, switches the connection to TLS; anything else stays plain remoting. What it
does with each is the server's ``tls.server.mode``: ``permissive`` (the default) takes both on the same
port, ``enforcing`` closes a plain-text connection, ``disabled`` closes a TLS one. The proxy's gRPC port
(8081) reads the same mode and decides per connection the same way. The settings are JVM system
properties (``-Dtls.server.mode=enforcing``), read once by ``TlsSystemConfig``; the file named by
``tls.config.file`` may override every one but the mode and ``tls.enable``.

In test mode (``tls.test.mode.enable``, on by default) a server makes itself a self-signed certificate
at start and asks for no client certificate it would check; clients of test mode trust any server.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from rocketmq_spec.spec.clauses import Level, clause

_REMOTING = "remoting/src/main/java/org/apache/rocketmq/remoting"
_CONFIG = f"{_REMOTING}/netty/TlsSystemConfig.java"
_HELPER = f"{_REMOTING}/netty/TlsHelper.java"
_SERVER = f"{_REMOTING}/netty/NettyRemotingServer.java"
_MODE = f"{_REMOTING}/common/TlsMode.java"
_NEGOTIATOR = "proxy/src/main/java/org/apache/rocketmq/proxy/grpc/ProxyAndTlsProtocolNegotiator.java"
_BROKER = "broker/src/main/java/org/apache/rocketmq/broker/BrokerController.java"

HANDSHAKE_RECORD_TYPE = 0x16
"""``TlsModeHandler.HANDSHAKE_MAGIC_CODE``: the first byte of a TLS ClientHello record."""
TLS_RECORD_HEADER_LENGTH = 5
"""``SSL_RECORD_HEADER_LENGTH``: bytes the gRPC port waits for before it decides
(``SslHandler.isEncrypted``)."""
GRPC_ALPN = "h2"
"""The application protocol a gRPC client over TLS asks for; gRPC refuses a server that does not agree."""


class TlsMode(enum.Enum):
    """``TlsMode``: what a server does with TLS and plain-text connections."""

    DISABLED = "disabled"
    PERMISSIVE = "permissive"
    ENFORCING = "enforcing"

    @classmethod
    def parse(cls, text: str) -> TlsMode:
        """``TlsMode.parse``: an unknown name reads as permissive, as Java's does."""
        for mode in cls:
            if mode.value == text:
                return mode
        return cls.PERMISSIVE


class ClientAuth(enum.Enum):
    """``tls.server.need.client.auth``: whether a server asks its clients for a certificate."""

    NONE = "none"
    OPTIONAL = "optional"
    REQUIRE = "require"


@dataclass(frozen=True)
class TlsKey:
    """One ``TlsSystemConfig`` setting: its system property and Java's default (None: unset)."""

    name: str
    default: str | None
    field: str
    """The snake_case field of the reference broker's settings that holds it."""
    file_may_override: bool = True
    """Whether the ``tls.config.file`` properties file may set it (all but the mode and tls.enable)."""


TLS_KEYS: tuple[TlsKey, ...] = (
    TlsKey("tls.server.mode", TlsMode.PERMISSIVE.value, "mode", file_may_override=False),
    TlsKey("tls.enable", "false", "enable", file_may_override=False),
    TlsKey("tls.config.file", "/etc/rocketmq/tls.properties", "config_file", file_may_override=False),
    TlsKey("tls.test.mode.enable", "true", "test_mode"),
    TlsKey("tls.server.need.client.auth", ClientAuth.NONE.value, "need_client_auth"),
    TlsKey("tls.server.keyPath", None, "key_path"),
    TlsKey("tls.server.keyPassword", None, "key_password"),
    TlsKey("tls.server.certPath", None, "cert_path"),
    TlsKey("tls.server.authClient", "false", "auth_client"),
    TlsKey("tls.server.trustCertPath", None, "trust_cert_path"),
    TlsKey("tls.ciphers", None, "ciphers"),
    TlsKey("tls.protocols", None, "protocols"),
)
"""The server side of ``TlsSystemConfig`` (l.24-43, 49-145), with its defaults. The client keys
(``tls.client.*``) are the peers' business."""

TLS_KEYS_BY_NAME: dict[str, TlsKey] = {key.name: key for key in TLS_KEYS}
TLS_MODE_KEY = TLS_KEYS[0].name

PROXY_TLS_TEST_MODE = "tlsTestModeEnable"
PROXY_TLS_CERT_PATH = "tlsCertPath"
PROXY_TLS_KEY_PATH = "tlsKeyPath"
"""Keys of rmq-proxy.json (``ProxyConfig`` l.82-85) that choose the certificate of the proxy's gRPC port,
which does not read the ``tls.server.*`` properties: test mode on by default, else these PEM files
(``ProxyAndTlsProtocolNegotiator.loadSslContext``)."""

RMQ_TLS_DEFAULT_MODE = clause(
    "RMQ-TLS-DEFAULT-MODE", Level.MUST,
    "A server's TLS mode is the system property tls.server.mode: disabled, permissive or enforcing; a "
    "missing or unknown value is permissive. The tls.config.file properties file may set every other tls.* "
    "key, not the mode.",
    source=f"{_CONFIG} (tlsMode); {_MODE} (parse); {_HELPER} (extractTlsConfigFromFile)",
)

RMQ_TLS_SNIFF = clause(
    "RMQ-TLS-SNIFF", Level.MUST,
    "A remoting server decides per connection from its first byte, read without consuming it: 0x16 (a TLS "
    "handshake record) makes the connection TLS, any other byte leaves it plain remoting, on the same port. "
    "A PROXY protocol preamble, where the release reads one, comes first and is not looked at.",
    source=f"{_SERVER} (HandshakeHandler.decode, TlsModeHandler.channelRead0)",
)

RMQ_TLS_PERMISSIVE = clause(
    "RMQ-TLS-PERMISSIVE", Level.MUST,
    "In permissive mode a server serves TLS and plain-text connections on the same port, each as it began.",
    source=f"{_SERVER} (TlsModeHandler.channelRead0)",
)

RMQ_TLS_ENFORCING = clause(
    "RMQ-TLS-ENFORCING", Level.MUST,
    "In enforcing mode a server closes a connection whose first byte is not 0x16, without an answer: a "
    "plain-text request gets no RemotingCommand back, only the closed connection.",
    source=f"{_SERVER} (TlsModeHandler.channelRead0: \"doesn't support plain client\")",
)

RMQ_TLS_DISABLED = clause(
    "RMQ-TLS-DISABLED", Level.MUST,
    "In disabled mode a server closes a connection that starts a TLS handshake; plain text is served.",
    source=f"{_SERVER} (TlsModeHandler.channelRead0: \"doesn't support ssl client\"; loadSslContext)",
)

RMQ_TLS_EVERY_PORT = clause(
    "RMQ-TLS-EVERY-PORT", Level.MUST,
    "The name server's port, the broker's port and its fast port (listenPort - 2, a NettyRemotingServer of "
    "its own) all apply the same TLS mode.",
    source=f"{_BROKER} (initializeRemotingServer); "
           "namesrv/src/main/java/org/apache/rocketmq/namesrv/NamesrvController.java (initialize)",
)

RMQ_TLS_TEST_MODE = clause(
    "RMQ-TLS-TEST-MODE", Level.MUST,
    "With tls.test.mode.enable (default true) a server serves a self-signed certificate it makes at start "
    "and does not require a client certificate; otherwise it serves tls.server.certPath with "
    "tls.server.keyPath (decrypted with tls.server.keyPassword) and asks for a client certificate as "
    "tls.server.need.client.auth says, checked against tls.server.trustCertPath when tls.server.authClient "
    "is true.",
    source=f"{_HELPER} (buildSslContext)",
)

RMQ_TLS_GRPC_PORT = clause(
    "RMQ-TLS-GRPC-PORT", Level.MUST,
    "The proxy's gRPC port reads the same tls.server.mode: permissive (the default) serves TLS and "
    "plain-text HTTP/2 on one port, chosen per connection from its first 5 bytes; enforcing serves TLS only; "
    "disabled plain text only. Its TLS agrees on ALPN h2 and asks for no client certificate.",
    source=f"{_NEGOTIATOR} (TlsModeHandler.decode, loadSslContext)",
)
