"""A rocketmq-rust name server and broker on loopback, started from installed binaries.

:class:`RocketMQRust` is to a rocketmq-rust release what :class:`rocketmq_spec.apache.ApacheRocketMQ` is to an
Apache one, with the same attributes (``namesrv_addr``, ``broker_addr``, ``store_path``, ``broker_pid``,
``kill_broker()``), so a test or a run is pointed at either the same way. The broker reads a Java-style
``broker.properties`` (its README's migration path) written into a ``ROCKETMQ_HOME`` of the instance's
own. ``HOME`` is pointed there too, so what the binaries write by default (the name server's
``~/rocketmq-namesrv``) never lands in the user's home directory and two instances share no file.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from rocketmq_spec.apache.home import write_properties
from rocketmq_spec.apache.servers import LOOPBACK, START_TIMEOUT, LoopbackServers, free_port
from rocketmq_spec.rocketmq_rust.cargo import binary_path, require_installed
from rocketmq_spec.rocketmq_rust.releases import Release, release
from rocketmq_spec.spec.auth import LOCAL_AUTHENTICATION_PROVIDER, LOCAL_AUTHORIZATION_PROVIDER
from rocketmq_spec.spec.ha import HA_PORT_OFFSET

RENAMED_KEYS = {"transactionTimeOut": "transactionTimeout",
                "osPageCacheBusyTimeOutMills": "osPageCacheBusyTimeoutMills"}
"""Java broker.conf keys rocketmq-rust spells otherwise. Its Java-properties reader refuses a key it does
not map and the broker does not start (rocketmq-broker-1.0.0/src/config/java_properties.rs,
resolve_mapping: UnsupportedKeys), so settings given with Java's names are written with its own."""
PROVIDER_NAMES = {LOCAL_AUTHENTICATION_PROVIDER: "LocalAuthenticationMetadataProvider",
                  LOCAL_AUTHORIZATION_PROVIDER: "LocalAuthorizationMetadataProvider"}
"""Values rocketmq-rust names otherwise: the ACL 2.0 metadata providers. Apache's broker.conf names a
provider by its Java class; rocketmq-rust accepts its own names only (``LocalAuthenticationMetadataProvider``,
``local`` or ``file``; ``LocalAuthorizationMetadataProvider`` likewise) and does not start with a Java class
name (rocketmq-auth/src/runtime.rs, ``ProviderRegistry::local``: ``validate_metadata_provider_name``), so
the Java names a run gives are written as its simple names and its broker keeps user and ACL tables."""



def own_settings(settings: Mapping[str, str]) -> dict[str, str]:
    """Broker settings given in Java's names and values, written as rocketmq-rust reads them."""
    return {RENAMED_KEYS.get(key, key): PROVIDER_NAMES.get(value, value) for key, value in settings.items()}


class RocketMQRust(LoopbackServers):
    """A name server and a broker of one release; ``namesrv=`` joins an existing name server instead."""

    def __init__(self, version: str | Release, *, home: Path | None = None, store: Path | None = None,
                 namesrv: str | None = None, broker_port: int = 0,
                 broker_config: Mapping[str, object] | None = None,
                 start_timeout: float = START_TIMEOUT) -> None:
        self.release = version if isinstance(version, Release) else release(version)
        super().__init__(f"rocketmq-rust {self.release.version}", home, store=store, broker_port=broker_port,
                         namesrv=namesrv, start_timeout=start_timeout)
        self._overrides = {key: str(value) for key, value in (broker_config or {}).items()}

    def _prepare(self) -> None:
        require_installed(self.release)
        for directory in ("conf", "logs"):
            (self.home / directory).mkdir(parents=True, exist_ok=True)

    def environment(self) -> dict[str, str]:
        return {**super().environment(), "HOME": str(self.home)}

    def _binary(self, name: str) -> str:
        return str(binary_path(self.release, name))

    def _start_namesrv(self) -> None:
        port = self._namesrv_port or free_port()
        self.namesrv_addr = f"{LOOPBACK}:{port}"
        self._spawn("namesrv", [self._binary(self.release.namesrv.name), "--listenPort", str(port),
                                "--bindAddress", LOOPBACK, "--rocketmqHome", str(self.home),
                                "--kvConfigPath", str(self.home / "namesrv" / "kvConfig.json")])
        self._wait("namesrv", self._namesrv_ready)

    def _start_broker(self) -> None:
        port = self._broker_settings()
        # The broker takes its HA port from haListenPort, not from listenPort + 1 as Java does.
        self.broker_config.setdefault("haListenPort", str(port + HA_PORT_OFFSET))
        config = write_properties(self.home / "conf" / "broker.properties", own_settings(self.broker_config))
        self._spawn("broker", [self._binary(self.release.broker.name), "-c", str(config),
                               "-n", self.namesrv_addr])
        self.broker_addr = f"{LOOPBACK}:{self.broker_port}"
        self._wait("broker", self._broker_registered)
