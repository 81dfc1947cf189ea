"""The reference broker and its name server as two processes on loopback, like a release's pair.

``rmq-namesrv`` and ``rmq-broker`` (joined to it through ``namesrvAddr``) run as children of their own, so
whoever drives them can stop the broker cleanly, kill it (no shutdown code runs, the store keeps its
``abort`` file) and start it again on the same store and ports while the name server keeps running:
everything :class:`rocketmq_spec.apache.servers.LoopbackServers` offers for a release of Apache RocketMQ or
rocketmq-rust, for the project's own broker. :class:`ReferenceAllInOne` runs the name server inside the
broker's process instead (``rmq-broker`` without ``namesrvAddr``): one interpreter to start rather than two,
and a name server that answers as the broker's ``wireRelease``; ``rmq-conformance`` starts its embedded
target so (``rocketmq_spec.conformance.embedded``).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from rocketmq_spec.apache.cluster import CONTROLLER_GROUP, CONTROLLER_PEER, controller_answers
from rocketmq_spec.apache.home import write_properties
from rocketmq_spec.apache.servers import (
    LOOPBACK,
    LoopbackServers,
    free_port,
)
from rocketmq_spec.spec.tls import TLS_MODE_KEY, TlsMode

NAMESRV_COMMAND = ("-c", "import sys; from rocketmq_spec.reference_broker.cli import namesrv_main; "
                           "sys.exit(namesrv_main())")
"""``rmq-namesrv`` through the running interpreter: the console script need not be on PATH."""
CONTROLLER_COMMAND = ("-c", "import sys; from rocketmq_spec.reference_broker.cli import controller_main; "
                            "sys.exit(controller_main())")
"""``rmq-controller`` likewise."""
BROKER_COMMAND = ("-m", "rocketmq_spec.reference_broker.cli")
NO_GRPC = "-1"
NAMESRV_ADDR = "namesrvAddr"
"""The broker.conf key an all-in-one broker is started without: given it, the broker joins instead."""
KV_CONFIG_PATH = "kvConfigPath"


class ReferenceServers(LoopbackServers):
    """``rmq-namesrv`` and ``rmq-broker`` with a broker.conf of Java keys; ``grpc`` serves the 5.x SDKs'
    endpoint (``grpc_addr``) beside the broker."""

    def __init__(self, *, home: Path | None = None, store: Path | None = None, namesrv: str | None = None,
                 broker_config: Mapping[str, object] | None = None, grpc: bool = False,
                 controller: bool = False) -> None:
        """``controller``: the name server runs the reference controller (``enableControllerInNamesrv``),
        a second controller runs beside it that never leads (its group names a peer that is not there), as
        :class:`rocketmq_spec.apache.ApacheRocketMQ` does for a release, and the broker joins the first in
        controller mode (``enableControllerMode``)."""
        super().__init__("the reference broker", home, store=store, namesrv=namesrv)
        self._overrides = {key: str(value) for key, value in (broker_config or {}).items()}
        self.tls_only = self._overrides.get(TLS_MODE_KEY) == TlsMode.ENFORCING.value
        self._grpc = grpc
        self._controller = controller
        self.controller_addr = ""
        self.quorumless_controller_addr = ""

    def _prepare(self) -> None:
        for directory in ("logs", "conf"):
            (self.home / directory).mkdir(parents=True, exist_ok=True)

    def _start_namesrv(self) -> None:
        port = self._namesrv_port or free_port()
        self.namesrv_addr = f"{LOOPBACK}:{port}"
        options = ["--port", str(port)]
        if self._controller:
            self.controller_addr = f"{LOOPBACK}:{free_port()}"
            options += ["-c", str(self._controller_config("namesrv", self.controller_addr,
                                                          enableControllerInNamesrv="true"))]
        self._spawn("namesrv", [sys.executable, *NAMESRV_COMMAND, *options])
        self._wait("namesrv", self._namesrv_ready)
        if self._controller:
            self._wait("namesrv", lambda: controller_answers(self.controller_addr) is True)
            self.quorumless_controller_addr = f"{LOOPBACK}:{free_port()}"
            absent = f"{LOOPBACK}:{free_port()}"
            config = self._controller_config("controller-quorumless", self.quorumless_controller_addr,
                                             peers=f";n1-{absent}")
            self._spawn("controller", [sys.executable, *CONTROLLER_COMMAND, "-c", str(config)])
            self._wait("controller", lambda: controller_answers(self.quorumless_controller_addr) is not None)
            # the broker joins the controller in controller mode: the broker the ha_autoswitch area judges
            self._overrides.update(enableControllerMode="true", controllerAddr=self.controller_addr)

    def _controller_config(self, name: str, addr: str, peers: str = "", **settings: str) -> Path:
        """A config file of one controller: a group of its own, its peers, its table in the home."""
        return write_properties(self.home / "conf" / f"{name}.conf", {
            "controllerDLegerGroup": f"{CONTROLLER_GROUP}-{name}", "controllerDLegerSelfId": CONTROLLER_PEER,
            "controllerDLegerPeers": f"{CONTROLLER_PEER}-{addr}{peers}",
            "controllerStorePath": self.home / name / "controller", **settings})

    def _start_broker(self) -> None:
        port = self._broker_settings()
        config = write_properties(self.home / "conf" / "broker.conf", self._written_config())
        if self._grpc and not self.grpc_addr:
            self.grpc_addr = f"{LOOPBACK}:{free_port()}"
        grpc_port = self.grpc_addr.rsplit(":", 1)[1] if self.grpc_addr else NO_GRPC
        self._spawn("broker", [sys.executable, *BROKER_COMMAND, "-c", str(config), "--broker-port", str(port),
                               "--grpc-port", grpc_port, *self._namesrv_options()])
        self.broker_addr = f"{LOOPBACK}:{port}"
        self._wait("broker", self._broker_registered)

    def _written_config(self) -> dict[str, str]:
        """The broker.conf the broker is started with."""
        return self.broker_config

    def _namesrv_options(self) -> list[str]:
        """``rmq-broker`` options about the name server beyond broker.conf's."""
        return []


class ReferenceAllInOne(ReferenceServers):
    """``rmq-broker`` without ``namesrvAddr``: the broker and a name server of its own in one process, which
    keeps its KV configuration in the home (as the broker keeps its store there) rather than in
    ``~/namesrv``."""

    def _start_namesrv(self) -> None:
        """Nothing to start: the broker's process serves it, on a port chosen with the broker's."""

    def _start_broker(self) -> None:
        # picked again with the broker's port when another process took it before the bind
        self.namesrv_addr = f"{LOOPBACK}:{self._namesrv_port or free_port()}"
        super()._start_broker()
        self._namesrv_port = int(self.namesrv_addr.rsplit(":", 1)[1])  # a restart serves it where it was

    def _written_config(self) -> dict[str, str]:
        written = {key: value for key, value in self.broker_config.items() if key != NAMESRV_ADDR}
        written.setdefault(KV_CONFIG_PATH, str(self.home / "namesrv" / "kvConfig.json"))
        return written

    def _namesrv_options(self) -> list[str]:
        return ["--namesrv-port", self.namesrv_addr.rsplit(":", 1)[1]]
