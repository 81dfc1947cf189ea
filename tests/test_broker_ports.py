"""The broker's ports: the fast port sits at ``listenPort - 2`` and the HA port at ``listenPort + 1`` even
when free ports are asked for."""

from __future__ import annotations

import socket
from pathlib import Path

from reference_broker.broker.server import Broker
from reference_broker.config import FAST_PORT_OFFSET, BrokerConfig
from reference_broker.ha.master import HAServer
from reference_broker.server import RemotingServer
from spec.ha import HA_PORT_OFFSET
from tests.broker_support import run


def test_free_ports_skip_a_main_port_whose_fast_neighbour_is_taken(tmp_path: Path) -> None:
    """The first free main port the kernel offers gets its ``port - 2`` occupied by another socket
    before the broker binds it, as a busy machine does by chance: the broker must pick another pair
    instead of failing with EADDRINUSE."""
    broker = Broker(BrokerConfig(listen_port=0, namesrv_addr=None, store_path_root_dir=str(tmp_path)))
    squatter = socket.socket()
    squatted: list[int] = []
    real_bind = RemotingServer.bind

    async def bind_after_squatting(host: str, port: int) -> int:
        if not squatted:
            squatted.append(port)
            squatter.bind((host, port))
            squatter.listen()
        return await real_bind(broker.fast_server, host, port)

    broker.fast_server.bind = bind_after_squatting  # type: ignore[method-assign]

    async def scenario() -> tuple[int, int]:
        await broker.start()
        try:
            return broker.server.port, broker.fast_server.port
        finally:
            await broker.stop()

    try:
        main, fast = run(scenario())
    finally:
        squatter.close()
    assert squatted and fast != squatted[0]
    assert fast == main - FAST_PORT_OFFSET
    assert (broker.config.listen_port, broker.config.fast_listen_port) == (main, fast)


def test_free_ports_skip_a_main_port_whose_ha_neighbour_is_taken(tmp_path: Path) -> None:
    """The same for the HA port at ``listenPort + 1``: a slave finds its master's HA port there."""
    broker = Broker(BrokerConfig(listen_port=0, namesrv_addr=None, store_path_root_dir=str(tmp_path)))
    squatter = socket.socket()
    squatted: list[int] = []
    real_bind = HAServer.bind

    async def bind_after_squatting(host: str, port: int) -> int:
        if not squatted:
            squatted.append(port)
            squatter.bind((host, port))
            squatter.listen()
        return await real_bind(broker.ha_server, host, port)

    broker.ha_server.bind = bind_after_squatting  # type: ignore[method-assign]

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
    assert squatted and ha != squatted[0]
    assert (fast, ha) == (main - FAST_PORT_OFFSET, main + HA_PORT_OFFSET)
