"""The embedded target's brokers inside the runner's own process.

Coverage can tie a line the broker runs to the case that was running (one context per case) only when the
broker runs in the process the cases run in; ``rmq-conformance`` starts the same brokers as processes of
their own (``rocketmq_spec.conformance.embedded``). Both read the same broker.conf settings, here through the
broker's own key table, so a mutant is judged against the target the suite is run against.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from rocketmq_spec.apache.servers import BROKER_PORT_OFFSETS, free_port
from rocketmq_spec.reference_broker.config import GRPC_DISABLED, BrokerConfig, NamesrvConfig, apply_properties
from rocketmq_spec.reference_broker.embedded import SyncEmbeddedRocketMQ

SOURCE = "the embedded target's settings"
"""Where a setting the broker cannot honour came from, in its error."""


class InProcessServers:
    """A name server and broker on an event loop of this process, shaped as
    :class:`rocketmq_spec.conformance.embedded.Servers`."""

    def __init__(self, home: Path, settings: Mapping[str, str], grpc: bool) -> None:
        broker, namesrv = BrokerConfig(), NamesrvConfig(listen_port=0, kv_config_path=None)
        apply_properties(dict(settings), broker, namesrv, source=SOURCE)
        broker.listen_port = free_port(BROKER_PORT_OFFSETS)
        broker.store_path_root_dir = str(home / "store")
        broker.grpc_server_port = 0 if grpc else GRPC_DISABLED
        self._running = SyncEmbeddedRocketMQ(broker_config=broker, namesrv_config=namesrv)
        self.store_path = home / "store"
        self.namesrv_addr = self.broker_addr = self.grpc_addr = ""

    def start(self) -> InProcessServers:
        self._running.start()
        self.namesrv_addr, self.broker_addr = self._running.namesrv_addr, self._running.broker_addr
        self.grpc_addr = self._running.grpc_addr or ""
        return self

    def stop(self) -> None:
        if self.broker_addr:  # a part whose start failed, or never ran, has nothing to stop
            self._running.stop()
            self.broker_addr = ""
