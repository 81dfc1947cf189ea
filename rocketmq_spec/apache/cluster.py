"""A real Apache RocketMQ name server and broker on loopback, started from provisioned jars.

:class:`ApacheRocketMQ` is to a release what ``rocketmq_spec.reference_broker.embedded.SyncEmbeddedRocketMQ``
is to the reference broker: a context manager that starts a name server and a broker on free ports, returns
once the broker has registered with the name server, and stops both (SIGTERM, then SIGKILL after a grace
period) on exit (:mod:`rocketmq_spec.apache.servers`). Each instance runs in a ``ROCKETMQ_HOME`` of its own
(:mod:`rocketmq_spec.apache.home`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from rocketmq_spec.admin.wire import AdminConnection, AdminError
from rocketmq_spec.apache.home import read_properties, write_home, write_properties
from rocketmq_spec.apache.jdk import Jdk, find_jdk
from rocketmq_spec.apache.maven import ProvisionError, resolve
from rocketmq_spec.apache.releases import Release, release
from rocketmq_spec.apache.servers import (
    LOOPBACK,
    START_TIMEOUT,
    LoopbackServers,
    free_port,
)
from rocketmq_spec.codec.custom_header import decode_header
from rocketmq_spec.spec.auth import (
    PROXY_AUTH_KEYS,
    PROXY_AUTHENTICATION_PROVIDER,
    PROXY_AUTHORIZATION_PROVIDER,
)
from rocketmq_spec.spec.codes import RequestCode
from rocketmq_spec.spec.controller import CONTROLLER_RELEASES, GET_METADATA_RESPONSE
from rocketmq_spec.spec.tls import TLS_MODE_KEY, TlsMode

NAMESRV_MAIN = "org.apache.rocketmq.namesrv.NamesrvStartup"
BROKER_MAIN = "org.apache.rocketmq.broker.BrokerStartup"
MQADMIN_MAIN = "org.apache.rocketmq.tools.command.MQAdminStartup"
PROXY_MAIN = "org.apache.rocketmq.proxy.ProxyStartup"
CONTROLLER_MAIN = "org.apache.rocketmq.controller.ControllerStartup"
CONTROLLER_GROUP = "rmq-spec"
CONTROLLER_PEER = "n0"
CONTROLLER_SETTINGS = {"enableControllerInNamesrv": "true", "controllerDLegerGroup": CONTROLLER_GROUP,
                       "controllerDLegerSelfId": CONTROLLER_PEER, "notifyBrokerRoleChanged": "false"}
"""A lone DLedger controller inside the name server (it leads as soon as it has elected itself). Role
changes are not pushed to brokers: the suite registers brokers that do not exist, and a push to each
would only wait for a connection refused."""
"""Run with ``-pm local`` it creates the broker from broker.conf in its own JVM and serves gRPC beside it
(``ProxyStartup.createBrokerController``)."""


class ApacheRocketMQ(LoopbackServers):
    """A name server and a broker of one release; ``namesrv=`` joins an existing name server instead."""

    def __init__(self, version: str | Release, *, home: Path | None = None, store: Path | None = None,
                 namesrv_port: int = 0, broker_port: int = 0, namesrv: str | None = None,
                 broker_config: Mapping[str, object] | None = None, config_file: Path | None = None,
                 heap_mb: int = 512, start_timeout: float = START_TIMEOUT, progress: bool = False,
                 grpc: bool = False, controller: bool = False,
                 system_properties: Mapping[str, str] | None = None,
                 proxy_config: Mapping[str, object] | None = None) -> None:
        """``system_properties``: ``-D`` options of every JVM of the release (``tls.server.mode``, ...);
        ``proxy_config``: more keys of the gRPC proxy's rmq-proxy.json (its certificate, ...)."""
        self.release = version if isinstance(version, Release) else release(version)
        self._system_properties = dict(system_properties or {})
        if grpc and not self.release.has_proxy:
            raise ProvisionError(f"Apache RocketMQ {self.release.version} has no rocketmq-proxy to serve "
                                 "gRPC", expected="a 5.x release", seen=self.release.version)
        super().__init__(f"Apache RocketMQ {self.release.version}", home, store=store,
                         namesrv_port=namesrv_port, broker_port=broker_port, namesrv=namesrv,
                         start_timeout=start_timeout)
        self._grpc = grpc
        """Start the broker inside the release's rocketmq-proxy (local mode), which serves ``grpc_addr``."""
        self._proxy_settings = dict(proxy_config or {})
        if controller and not CONTROLLER_RELEASES.holds_for_version(self.release.mq_version):
            raise ProvisionError(f"Apache RocketMQ {self.release.version} has no controller",
                                 expected="5.0.0 or later", seen=self.release.version)
        self._controller = controller
        """Start the name server with a controller inside (``enableControllerInNamesrv``) and the broker in
        controller mode (``enableControllerMode``): it registers there and becomes its set's master."""
        self.controller_addr = ""
        self.quorumless_controller_addr = ""
        """A second controller, alone in a group of two peers: it never leads (``--controller`` runs)."""
        self._overrides = dict(read_properties(config_file)) if config_file else {}
        self._overrides.update({key: str(value) for key, value in (broker_config or {}).items()})
        self._heap_mb = heap_mb
        self._progress = progress
        self.tls_only = self._system_properties.get(TLS_MODE_KEY) == TlsMode.ENFORCING.value
        self.jdk: Jdk | None = None
        self.classpath: list[Path] = []

    def _prepare(self) -> None:
        self.jdk = find_jdk(self.release.min_java)
        self.classpath = resolve(self.release, progress=self._progress)
        write_home(self.home, self.release)

    def java_command(self, main_class: str, *args: str, heap_mb: int | None = None) -> list[str]:
        """The command line running ``main_class`` of this release (also mqadmin and the clients)."""
        assert self.jdk is not None, "start() or provision() first"
        return [str(self.jdk.java), *java_options(self.release, self.home, heap_mb or 256),
                *(f"-D{key}={value}" for key, value in self._system_properties.items()),
                "-cp", os.pathsep.join(map(str, self.classpath)), main_class, *args]

    def _start_namesrv(self) -> None:
        port = self._namesrv_port or free_port()
        settings: dict[str, object] = {"listenPort": port}
        if self._controller:
            self.controller_addr = f"{LOOPBACK}:{free_port()}"
            settings.update(CONTROLLER_SETTINGS, controllerStorePath=self.home / "controller",
                            controllerDLegerPeers=f"{CONTROLLER_PEER}-{self.controller_addr}")
            # the broker takes its role from that controller (it elects itself, the set's first broker)
            self._overrides = {"enableControllerMode": "true", "controllerAddr": self.controller_addr,
                               **self._overrides}
        config = write_properties(self.home / "conf" / "namesrv.conf", settings)
        self.namesrv_addr = f"{LOOPBACK}:{port}"
        self._spawn("namesrv", self.java_command(NAMESRV_MAIN, "-c", str(config), heap_mb=256))
        self._wait("namesrv", self._namesrv_ready)
        if self._controller:
            self._wait("namesrv", self._controller_leads)
            self._start_quorumless_controller()

    def _start_quorumless_controller(self) -> None:
        """A stand-alone controller whose group names a second peer that never starts: without a majority
        it never leads, so it shows what a follower answers."""
        self.quorumless_controller_addr = f"{LOOPBACK}:{free_port()}"
        absent = f"{LOOPBACK}:{free_port()}"
        config = write_properties(self.home / "conf" / "controller-quorumless.conf", {
            "controllerDLegerGroup": f"{CONTROLLER_GROUP}-quorumless",
            "controllerDLegerSelfId": CONTROLLER_PEER,
            "controllerDLegerPeers": f"{CONTROLLER_PEER}-{self.quorumless_controller_addr};n1-{absent}",
            "controllerStorePath": self.home / "controller-quorumless"})
        self._spawn("controller", self.java_command(CONTROLLER_MAIN, "-c", str(config), heap_mb=128))
        addr = self.quorumless_controller_addr
        self._wait("controller", lambda: controller_answers(addr) is not None)

    def _controller_leads(self) -> bool:
        """The controller answers CONTROLLER_GET_METADATA_INFO and leads its (one-peer) group."""
        return controller_answers(self.controller_addr) is True

    def _start_broker(self) -> None:
        self._broker_settings()
        config = write_properties(self.home / "conf" / "broker.conf", self.broker_config)
        if self._grpc:
            self._spawn("broker", self.java_command(PROXY_MAIN, "-pm", "local", "-bc", str(config), "-pc",
                                                    str(self._proxy_config()), heap_mb=self._heap_mb))
        else:
            self._spawn("broker", self.java_command(BROKER_MAIN, "-c", str(config), heap_mb=self._heap_mb))
        self.broker_addr = f"{LOOPBACK}:{self.broker_port}"
        self._wait("broker", self._broker_registered)

    def _proxy_config(self) -> Path:
        """rmq-proxy.json of a local-mode proxy: free gRPC and remoting ports (8081 and 8080 by default)."""
        grpc_port = int(self.grpc_addr.rsplit(":", 1)[1]) if self.grpc_addr else free_port()
        self.grpc_addr = f"{LOOPBACK}:{grpc_port}"
        path = self.home / "conf" / "rmq-proxy.json"
        path.write_text(json.dumps({"rocketMQClusterName": self.broker_config["brokerClusterName"],
                                    "grpcServerPort": grpc_port, "remotingListenPort": free_port(),
                                    "namesrvAddr": self.namesrv_addr, **self._proxy_auth(),
                                    **self._proxy_settings}),
                        encoding="utf-8")
        return path

    def _proxy_auth(self) -> dict[str, str]:
        """The proxy authenticates and authorizes gRPC calls as broker.conf says its broker does remoting
        requests, reading the same users and ACLs (a proxy takes AuthConfig from its own file)."""
        found = {key: str(self.broker_config[key]) for key in PROXY_AUTH_KEYS if key in self.broker_config}
        if found:
            found.update(authenticationMetadataProvider=PROXY_AUTHENTICATION_PROVIDER,
                         authorizationMetadataProvider=PROXY_AUTHORIZATION_PROVIDER)
        return found


def controller_answers(addr: str) -> bool | None:
    """Whether the controller at ``addr`` leads; None while it does not answer its metadata."""
    try:
        with AdminConnection(addr, 2.0) as connection:
            answer = connection.call(RequestCode.CONTROLLER_GET_METADATA_INFO)
    except AdminError:
        return None
    return decode_header(GET_METADATA_RESPONSE, answer.command.ext_fields).get("isLeader") is True


def java_options(row: Release, home: Path, heap_mb: int) -> list[str]:
    """What every JVM of a release runs with: a modest heap, ``home`` as its home directory (so the logs
    and files it writes by default stay there) and the options the release needs on this Java."""
    return [f"-Xmx{heap_mb}m", f"-Duser.home={home}", f"-Drocketmq.home.dir={home}",
            f"-Drocketmq.client.logRoot={home / 'logs'}", "-Djava.net.preferIPv4Stack=true",
            *row.java_options]


def provision(version: str, *, progress: bool = False) -> tuple[Release, Jdk, list[Path]]:
    """Resolve a release without starting anything: its row, the JDK chosen for it and its class path."""
    row = release(version)
    jdk = find_jdk(row.min_java)
    return row, jdk, resolve(row, progress=progress)
