"""The reference broker in controller mode, under the controller of an Apache RocketMQ release.

The reference broker has no controller of its own: the name server of :data:`CONTROLLER_RELEASE` runs one
inside (``enableControllerInNamesrv``), with the quorumless follower beside it, and the reference broker
(``rmq-broker``) joins that name server with ``enableControllerMode=true`` and ``controllerAddr`` naming
the controller. First of its broker-set, it is elected master: the broker the ``ha_autoswitch`` and
``controller`` areas judge (``rmq-conformance --target embedded --controller``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from rocketmq_spec.apache.cluster import ApacheRocketMQ
from rocketmq_spec.targets.reference import ReferenceServers

CONTROLLER_RELEASE = "5.5.0"
"""The newest 5.x release the project's Maven repository serves whole."""


class ReferenceUnderController(ReferenceServers):
    def __init__(self, *, home: Path, broker_config: Mapping[str, object] | None = None,
                 grpc: bool = False) -> None:
        super().__init__(home=home / "reference", broker_config=broker_config, grpc=grpc)
        self.controller_servers = ApacheRocketMQ(CONTROLLER_RELEASE, home=home / "controller",
                                                 controller=True)
        self.controller_addr = ""
        self.quorumless_controller_addr = ""

    def _start_namesrv(self) -> None:
        """The release's name server with its controller, which the broker's settings then name."""
        servers = self.controller_servers.start_namesrv()
        self.namesrv_addr = servers.namesrv_addr
        self.controller_addr = servers.controller_addr
        self.quorumless_controller_addr = servers.quorumless_controller_addr
        self._overrides.update(enableControllerMode="true", controllerAddr=self.controller_addr)

    def stop(self) -> None:
        super().stop()
        self.controller_servers.stop()
