"""The reference broker and its name server as two processes on loopback, like a release's pair.

``rmq-namesrv`` and ``rmq-broker`` (joined to it through ``namesrvAddr``) run as children of their own, so
whoever drives them can stop the broker cleanly, kill it (no shutdown code runs, the store keeps its
``abort`` file) and start it again on the same store and ports while the name server keeps running:
everything :class:`rocketmq_spec.apache.servers.LoopbackServers` offers for a release of Apache RocketMQ or
rocketmq-rust, for the project's own broker.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from rocketmq_spec.apache.home import write_properties
from rocketmq_spec.apache.servers import (
    LOOPBACK,
    LoopbackServers,
    free_port,
)

NAMESRV_COMMAND = ("-c", "import sys; from rocketmq_spec.reference_broker.cli import namesrv_main; "
                           "sys.exit(namesrv_main())")
"""``rmq-namesrv`` through the running interpreter: the console script need not be on PATH."""
BROKER_COMMAND = ("-m", "rocketmq_spec.reference_broker.cli")
NO_GRPC = "-1"


class ReferenceServers(LoopbackServers):
    """``rmq-namesrv`` and ``rmq-broker`` with a broker.conf of Java keys; ``grpc`` serves the 5.x SDKs'
    endpoint (``grpc_addr``) beside the broker."""

    def __init__(self, *, home: Path | None = None, store: Path | None = None, namesrv: str | None = None,
                 broker_config: Mapping[str, object] | None = None, grpc: bool = False) -> None:
        super().__init__("the reference broker", home, store=store, namesrv=namesrv)
        self._overrides = {key: str(value) for key, value in (broker_config or {}).items()}
        self._grpc = grpc

    def _prepare(self) -> None:
        for directory in ("logs", "conf"):
            (self.home / directory).mkdir(parents=True, exist_ok=True)

    def _start_namesrv(self) -> None:
        port = self._namesrv_port or free_port()
        self.namesrv_addr = f"{LOOPBACK}:{port}"
        self._spawn("namesrv", [sys.executable, *NAMESRV_COMMAND, "--port", str(port)])
        self._wait("namesrv", self._namesrv_ready)

    def _start_broker(self) -> None:
        port = self._broker_settings()
        config = write_properties(self.home / "conf" / "broker.conf", self.broker_config)
        if self._grpc and not self.grpc_addr:
            self.grpc_addr = f"{LOOPBACK}:{free_port()}"
        grpc_port = self.grpc_addr.rsplit(":", 1)[1] if self.grpc_addr else NO_GRPC
        self._spawn("broker", [sys.executable, *BROKER_COMMAND, "-c", str(config), "--broker-port", str(port),
                               "--grpc-port", grpc_port])
        self.broker_addr = f"{LOOPBACK}:{port}"
        self._wait("broker", self._broker_registered)
