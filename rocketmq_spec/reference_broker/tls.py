"""TLS on the reference broker's ports, as Apache RocketMQ's ``TlsSystemConfig`` sets it up.

The settings are the ``tls.*`` keys of ``rocketmq_spec.spec.tls`` (Java's system properties, read here
from broker.conf, namesrv.conf or ``-D``), then the properties file ``tls.config.file`` names, which may
override every key but the mode, as ``TlsHelper.extractTlsConfigFromFile`` does. A server context is
built once at start: in test mode (the default) from a self-signed certificate made for the process, as
Netty's ``SelfSignedCertificate`` does for Java; otherwise from ``tls.server.certPath`` and
``tls.server.keyPath``. A file that cannot be used is :class:`TlsFileError`, found before any port is
bound.

The remoting ports decide per connection from its first byte (RMQ-TLS-SNIFF), after the connection was
accepted and read from, so asyncio's own TLS (which starts on a fresh transport) cannot take over: a
:class:`TlsSession` runs Python's ``ssl`` over memory buffers instead, fed with the bytes already read.
"""

from __future__ import annotations

import contextlib
import datetime
import enum
import functools
import ipaddress
import ssl
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from rocketmq_spec.spec.tls import HANDSHAKE_RECORD_TYPE, TLS_KEYS_BY_NAME, ClientAuth, TlsMode

SELF_SIGNED_NAME = "localhost"
"""The subject and DNS name of the test-mode certificate (Netty's ``SelfSignedCertificate`` default FQDN)."""
SELF_SIGNED_DAYS = 365
LOOPBACK_IP = ipaddress.IPv4Address("127.0.0.1")
"""Also named by the certificate: SDKs that check it against the address they dialled (Python's resolves
``localhost`` first) accept it on loopback, where the reference broker listens by default."""


class TlsFileError(ValueError):
    """A certificate, key or trust file the server cannot use: the setting, the path and why."""

    def __init__(self, key: str, path: str | None, reason: str) -> None:
        super().__init__(f"{key}={path!r}: {reason}")
        self.key, self.path, self.reason = key, path, reason


def _bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered not in ("true", "false"):
        raise ValueError("true or false")
    return lowered == "true"


def _mode(text: str) -> TlsMode:
    try:
        return TlsMode(text.strip())
    except ValueError:
        # Java's TlsMode.parse reads a typo as permissive; refusing it keeps an "enforcing" that was
        # mistyped from serving plain text unnoticed
        raise ValueError("one of " + ", ".join(m.value for m in TlsMode)) from None


def _client_auth(text: str) -> ClientAuth:
    try:
        return ClientAuth(text.strip())
    except ValueError:
        raise ValueError("one of " + ", ".join(c.value for c in ClientAuth)) from None


def _text(text: str) -> str | None:
    return text.strip() or None


_READERS = {"mode": _mode, "enable": _bool, "test_mode": _bool, "auth_client": _bool,
            "need_client_auth": _client_auth}


@dataclass
class TlsSettings:
    """The server side of ``TlsSystemConfig``, at Java's defaults."""

    mode: TlsMode = TlsMode.PERMISSIVE
    enable: bool = False
    """``tls.enable``: whether this process's own outgoing connections (the broker's to its name
    servers) use TLS; Java defaults it to true in enforcing mode (``NettyClientConfig.useTLS``)."""
    config_file: str = "/etc/rocketmq/tls.properties"
    test_mode: bool = True
    need_client_auth: ClientAuth = ClientAuth.NONE
    key_path: str | None = None
    key_password: str | None = None
    cert_path: str | None = None
    auth_client: bool = False
    trust_cert_path: str | None = None
    ciphers: str | None = None
    protocols: str | None = None
    explicit: set[str] = field(default_factory=set, repr=False, compare=False)
    """Keys given explicitly (``tls.enable`` falls back on the mode only when it was not)."""

    def set(self, name: str, value: str) -> None:
        """Apply one ``tls.*`` key; ValueError (its text: what was expected) for a value it cannot take."""
        key = TLS_KEYS_BY_NAME[name]
        setattr(self, key.field, _READERS.get(key.field, _text)(value))
        self.explicit.add(name)

    def overridden_by(self, properties: Mapping[str, str]) -> TlsSettings:
        """These settings with the keys of a ``tls.config.file`` applied, except those the file may not
        set (the mode, ``tls.enable``, the file's own name), as ``extractTlsConfigFromFile`` does."""
        merged = TlsSettings(**{f.name: getattr(self, f.name) for f in fields(self) if f.name != "explicit"})
        merged.explicit = set(self.explicit)
        for name, value in properties.items():
            key = TLS_KEYS_BY_NAME.get(name)
            if key is not None and key.file_may_override:
                merged.set(name, value)
        return merged

    @property
    def client_tls(self) -> bool:
        """Whether this process's own connections to name servers use TLS."""
        return self.enable if "tls.enable" in self.explicit else self.mode is TlsMode.ENFORCING


@functools.cache
def self_signed() -> tuple[bytes, bytes]:
    """A certificate and key (PEM) made once per process, as Java's test mode makes one per start."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, SELF_SIGNED_NAME)])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(days=1))
                   .not_valid_after(now + datetime.timedelta(days=SELF_SIGNED_DAYS))
                   .add_extension(x509.SubjectAlternativeName([x509.DNSName(SELF_SIGNED_NAME),
                                                               x509.IPAddress(LOOPBACK_IP)]),
                                  critical=False)
                   .sign(key, hashes.SHA256()))
    return (certificate.public_bytes(serialization.Encoding.PEM),
            key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()))


def _readable(key: str, path: str | None) -> str:
    if path is None:
        raise TlsFileError(key, path, "not set (needed with tls.test.mode.enable=false)")
    if not Path(path).is_file():
        raise TlsFileError(key, path, "no such file")
    return path


@dataclass(frozen=True)
class ServerCredentials:
    """The PEM the server presents and, when it checks client certificates, the PEM it trusts."""

    certificate: bytes
    key: bytes
    trusted: bytes | None
    client_auth: ClientAuth


def credentials(settings: TlsSettings) -> ServerCredentials:
    """What ``TlsHelper.buildSslContext(false)`` serves (RMQ-TLS-TEST-MODE); TlsFileError when a file
    is missing, unreadable or not PEM of the right kind."""
    if settings.test_mode:
        certificate, key = self_signed()
        return ServerCredentials(certificate, key, None, ClientAuth.OPTIONAL)
    cert_path = _readable("tls.server.certPath", settings.cert_path)
    key_path = _readable("tls.server.keyPath", settings.key_path)
    certificate = Path(cert_path).read_bytes()
    try:
        x509.load_pem_x509_certificate(certificate)
    except ValueError:
        raise TlsFileError("tls.server.certPath", cert_path, "not a PEM certificate") from None
    password = settings.key_password.encode() if settings.key_password else None
    try:
        private_key = serialization.load_pem_private_key(Path(key_path).read_bytes(), password)
    except (ValueError, TypeError) as exc:
        raise TlsFileError("tls.server.keyPath", key_path, f"not a usable PEM private key ({exc})") from None
    key_pem = private_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    trusted = None
    if settings.auth_client:
        trust_path = _readable("tls.server.trustCertPath", settings.trust_cert_path)
        trusted = Path(trust_path).read_bytes()
        try:
            x509.load_pem_x509_certificates(trusted)
        except ValueError:
            raise TlsFileError("tls.server.trustCertPath", trust_path, "not PEM certificates") from None
    return ServerCredentials(certificate, key_pem, trusted, settings.need_client_auth)


def server_context(settings: TlsSettings, *, alpn: str | None = None) -> ssl.SSLContext:
    """The Python ``ssl`` server context of ``settings`` (``alpn``: the one protocol it agrees on)."""
    served = credentials(settings)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    # ssl loads a chain only from files: the PEM goes through a private temporary directory
    with tempfile.TemporaryDirectory(prefix="rmq-tls-") as directory:
        cert_file, key_file = Path(directory) / "cert.pem", Path(directory) / "key.pem"
        cert_file.write_bytes(served.certificate)
        key_file.write_bytes(served.key)
        context.load_cert_chain(cert_file, key_file)
    if served.trusted is not None:
        context.load_verify_locations(cadata=served.trusted.decode("ascii"))
        context.verify_mode = {ClientAuth.NONE: ssl.CERT_NONE, ClientAuth.OPTIONAL: ssl.CERT_OPTIONAL,
                               ClientAuth.REQUIRE: ssl.CERT_REQUIRED}[served.client_auth]
    if settings.ciphers:
        try:
            context.set_ciphers(settings.ciphers.replace(",", ":"))
        except ssl.SSLError:
            raise TlsFileError("tls.ciphers", settings.ciphers, "no cipher OpenSSL knows") from None
    if alpn is not None:
        context.set_alpn_protocols([alpn])
    return context


def client_context() -> ssl.SSLContext:
    """A test-mode client's context: it trusts any server (``InsecureTrustManagerFactory``), as Java's
    remoting client does unless ``tls.client.authServer`` is set."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


class Opening(enum.Enum):
    """What the first byte of a connection makes of it."""

    TLS = "TLS"
    PLAIN = "plain text"
    CLOSE = "closed"


@dataclass(frozen=True)
class TlsPolicy:
    """A remoting server's mode and, unless disabled, the context it serves TLS with."""

    mode: TlsMode
    context: ssl.SSLContext | None

    @classmethod
    def of(cls, settings: TlsSettings) -> TlsPolicy:
        return cls(settings.mode, None if settings.mode is TlsMode.DISABLED else server_context(settings))

    def decide(self, first_byte: int) -> Opening:
        """What a connection starting with ``first_byte`` becomes (RMQ-TLS-SNIFF): TLS, plain text, or
        closed (TLS in disabled mode, plain text in enforcing mode)."""
        if first_byte == HANDSHAKE_RECORD_TYPE:
            return Opening.TLS if self.context is not None else Opening.CLOSE
        return Opening.CLOSE if self.mode is TlsMode.ENFORCING else Opening.PLAIN

    def session(self) -> TlsSession:
        if self.context is None:
            raise ValueError("no TLS in disabled mode")
        return TlsSession(self.context)


class TlsSession:
    """The server end of one TLS connection over memory buffers: bytes from the peer go in, the
    plain text they carried and the bytes to send back come out (sans I/O)."""

    def __init__(self, context: ssl.SSLContext) -> None:
        self._incoming, self._outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        self._ssl = context.wrap_bio(self._incoming, self._outgoing, server_side=True)
        self._handshaken = False
        self._held: list[bytes] = []
        self.closed_by_peer = False

    def receive(self, data: bytes) -> tuple[bytes, bytes]:
        """The plain text ``data`` completes and the bytes to send the peer; ssl.SSLError when the peer
        breaks the protocol (the caller closes)."""
        self._incoming.write(data)
        plain = bytearray()
        if not self._handshaken:
            try:
                self._ssl.do_handshake()
            except ssl.SSLWantReadError:
                return b"", self._outgoing.read()
            self._handshaken = True
            for held in self._held:
                self._ssl.write(held)
            self._held.clear()
        while True:
            try:
                chunk = self._ssl.read(65536)
            except ssl.SSLWantReadError:
                break
            if not chunk:  # the peer's close_notify: answer it, as a client closing cleanly waits for ours
                self.closed_by_peer = True
                with contextlib.suppress(ssl.SSLError):
                    self._ssl.unwrap()
                break
            plain += chunk
        return bytes(plain), self._outgoing.read()

    def send(self, plain: bytes) -> bytes:
        """The bytes that carry ``plain`` to the peer (held until the handshake is done)."""
        if not self._handshaken:
            self._held.append(plain)
            return b""
        self._ssl.write(plain)
        return self._outgoing.read()
