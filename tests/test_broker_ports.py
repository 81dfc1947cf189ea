"""The broker's ports: the fast port sits at ``listenPort - 2`` and the HA port at ``listenPort + 1`` even
when free ports are asked for."""

from __future__ import annotations

import socket
from pathlib import Path

from rocketmq_spec.reference_broker.broker.server import Broker
from rocketmq_spec.reference_broker.config import BrokerConfig
from rocketmq_spec.reference_broker.ha.master import HAServer
from rocketmq_spec.reference_broker.server import RemotingServer
from rocketmq_spec.spec.behaviour import FAST_PORT_OFFSET
from rocketmq_spec.spec.ha import HA_PORT_OFFSET
from tests.broker_support import run


def _start_with_a_squatter(tmp_path: Path, neighbour: str) -> tuple[int, int, int, int]:
    """Start a broker on free ports after another socket took the first port offered for ``neighbour``
    (``fast_server`` or ``ha_server``), as a busy machine does by chance; returns the broker's main, fast
    and HA ports and the squatted one."""
    broker = Broker(BrokerConfig(listen_port=0, namesrv_addr=None, store_path_root_dir=str(tmp_path)))
    server = getattr(broker, neighbour)
    real_bind = (HAServer if isinstance(server, HAServer) else RemotingServer).bind
    squatter = socket.socket()
    squatted: list[int] = []

    async def bind_after_squatting(host: str, port: int) -> int:
        if not squatted:
            squatted.append(port)
            squatter.bind((host, port))
            squatter.listen()
        return await real_bind(server, host, port)

    server.bind = bind_after_squatting

    async def scenario() -> tuple[int, int, int]:
        await broker.start()
        try:
            return broker.server.port, broker.fast_server.port, broker.ha_server.port
        finally:
            await broker.stop()

    try:
        main, fast, ha = run(scenario())
    finally:
        squatter.close()
    assert squatted
    assert (broker.config.listen_port, broker.config.fast_listen_port) == (main, fast)
    return main, fast, ha, squatted[0]


def test_free_ports_skip_a_main_port_whose_fast_neighbour_is_taken(tmp_path: Path) -> None:
    """The broker must pick another set instead of failing with EADDRINUSE."""
    main, fast, ha, squatted = _start_with_a_squatter(tmp_path, "fast_server")
    assert fast != squatted and (fast, ha) == (main - FAST_PORT_OFFSET, main + HA_PORT_OFFSET)


def test_free_ports_skip_a_main_port_whose_ha_neighbour_is_taken(tmp_path: Path) -> None:
    """The same for the HA port at ``listenPort + 1``: a slave finds its master's HA port there."""
    main, fast, ha, squatted = _start_with_a_squatter(tmp_path, "ha_server")
    assert ha != squatted and (fast, ha) == (main - FAST_PORT_OFFSET, main + HA_PORT_OFFSET)
