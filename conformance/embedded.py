"""Launching the embedded reference broker when ``rmq-conformance`` is given no target.

This is the only module of the suite that imports ``reference_broker``: the cases reach the target over
TCP alone, so the same cases judge any implementation.
"""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from pathlib import Path

from conformance.acl_policy import write_acl_file
from conformance.target import Target
from conformance.wire import Endpoint
from reference_broker.config import LOOPBACK, BrokerConfig
from reference_broker.embedded import SyncEmbeddedRocketMQ
from spec.behaviour import FAST_PORT_OFFSET

QUICK_CHECKS = {"transaction_time_out": 1000, "transaction_check_interval": 500, "transaction_check_max": 3}
"""Transactions are checked back within seconds (4.9.8: 6 s timeout, every 60 s, 15 times), so the cases
that wait for a check-back finish quickly against the reference broker."""
PORT_ATTEMPTS = 20
"""Free ports tried for a main port whose fast port (two below) is free too; loopback rarely needs two."""


def _port_pair() -> int:
    """A free port P with P - 2 free as well, so the broker's fast port sits where a client expects it."""
    for _ in range(PORT_ATTEMPTS):
        with socket.socket() as main:
            main.bind((LOOPBACK, 0))
            port = main.getsockname()[1]
            if port - FAST_PORT_OFFSET <= 0:
                continue
            with socket.socket() as fast:
                try:
                    fast.bind((LOOPBACK, port - FAST_PORT_OFFSET))
                except OSError:
                    continue
            return port
    raise RuntimeError(f"no free port pair (P, P - {FAST_PORT_OFFSET}) in {PORT_ATTEMPTS} attempts")


@contextlib.contextmanager
def launch(workdir: Path, *, acl: bool = False) -> Iterator[Target]:
    """A name server and broker on loopback with their store under ``workdir``, which outlives them.

    The broker listens on a port whose fast port is ``listenPort - 2`` as in Java, so the fast-port case
    is judged rather than reported as not reachable. Leaving the context stops the broker cleanly: the
    store it leaves behind is what the store cases then check. With ``acl`` the broker checks ACL on the
    suite's policy, written under ``workdir/conf``.
    """
    store = workdir / "store"
    acl_file = write_acl_file(workdir / "conf" / "plain_acl.yml") if acl else None
    config = BrokerConfig(listen_port=_port_pair(), store_path_root_dir=str(store), acl_enable=acl,
                          acl_file=str(acl_file) if acl_file else None, **QUICK_CHECKS)
    with SyncEmbeddedRocketMQ(store, broker_config=config) as running:
        yield Target(Endpoint.parse(running.namesrv_addr), Endpoint.parse(running.broker_addr),
                     running.store_path, acl_file)
