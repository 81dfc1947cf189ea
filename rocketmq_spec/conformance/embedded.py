"""Launching the embedded reference broker when ``rmq-conformance`` is given no target.

This is the only module of the suite that imports ``rocketmq_spec.reference_broker``: the cases reach the
target over TCP alone, so the same cases judge any implementation. Beside the name server and broker it starts
the HA targets: a SYNC_MASTER without a slave, and a slave whose master is an address where the suite listens
(its HA cases feed it). """

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import Iterator, Mapping
from pathlib import Path

from rocketmq_spec.codec.acl import Credentials
from rocketmq_spec.conformance.acl_policy import write_acl_file
from rocketmq_spec.conformance.launcher import Launcher
from rocketmq_spec.conformance.target import Target
from rocketmq_spec.conformance.wire import Endpoint
from rocketmq_spec.reference_broker.config import GRPC_DISABLED, LOOPBACK, BrokerConfig
from rocketmq_spec.reference_broker.embedded import SyncEmbeddedRocketMQ
from rocketmq_spec.reference_broker.wire_release import DEFAULT_RELEASE, wire_release
from rocketmq_spec.spec.auth import LOCAL_AUTHENTICATION_PROVIDER, LOCAL_AUTHORIZATION_PROVIDER
from rocketmq_spec.spec.behaviour import FAST_PORT_OFFSET
from rocketmq_spec.spec.ha import HA_PORT_OFFSET
from rocketmq_spec.targets import EMBEDDED

QUICK_CHECKS = {"transaction_time_out": 1000, "transaction_check_interval": 500, "transaction_check_max": 3}
"""Transactions are checked back within seconds (4.9.8: 6 s timeout, every 60 s, 15 times), so the cases
that wait for a check-back finish quickly against the reference broker."""
RECALL_ON = {"recall_message_enable": True}
"""Recall is allowed, as on the provisioned Apache targets
(``rocketmq_spec.conformance.cli.APACHE_SETTINGS``), so the recall cases judge a recall, not the default
refusal."""
AUTH_TABLES_ON = {"authentication_metadata_provider": LOCAL_AUTHENTICATION_PROVIDER,
                  "authorization_metadata_provider": LOCAL_AUTHORIZATION_PROVIDER}
"""The broker keeps ACL 2.0 users and ACLs, as the provisioned Apache targets do
(``rocketmq_spec.conformance.cli.AUTH_TABLES``), so the auth cases judge the tables, not the refusal without
them."""
AUTHN_USER = Credentials("rmqAuthnRoot", "rmqAuthnPassword")
"""The initAuthenticationUser of the embedded broker started with ``authn``."""


def authentication_on() -> dict[str, object]:
    """BrokerConfig settings of a broker that authenticates every request (RMQ-AUTH-AUTHENTICATE)."""
    return {"authentication_enabled": True, "init_authentication_user": json.dumps(
        {"username": AUTHN_USER.access_key, "password": AUTHN_USER.secret_key})}


WIRE_RELEASE_KEY = "wireRelease"
"""The broker.conf key of the release the reference broker answers as, for the brokers the life-cycle
cases start (``rocketmq_spec.conformance.launcher``)."""
PORT_ATTEMPTS = 20
"""Free ports tried for a main port whose fast port (two below) and HA port (one above) are free too."""

SHORT_HA = {"ha_send_heartbeat_interval": 1000, "ha_reconnect_interval": 500, "slave_timeout": 1000}
"""HA intervals shorter than Java's defaults, so the HA cases wait seconds less; the cases' bounds are
Java's defaults, which these are within."""


def _free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind((LOOPBACK, port))
        except OSError:
            return False
    return True


def _port_set() -> int:
    """A free port P with P - 2 and P + 1 free as well, where a client and a slave expect the broker's
    fast port and HA port."""
    for _ in range(PORT_ATTEMPTS):
        with socket.socket() as main:
            main.bind((LOOPBACK, 0))
            port = main.getsockname()[1]
            fast, ha = port - FAST_PORT_OFFSET, port + HA_PORT_OFFSET
            if fast > 0 and _free(fast) and _free(ha):
                return port
    raise RuntimeError(f"no free ports (P - {FAST_PORT_OFFSET}, P, P + {HA_PORT_OFFSET}) in {PORT_ATTEMPTS} "
                       "attempts")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind((LOOPBACK, 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def launch(workdir: Path, *, acl: bool = False, authn: bool = False, release: str = DEFAULT_RELEASE,
           store_files: Mapping[str, int] | None = None) -> Iterator[Target]:
    """A name server and broker on loopback with their store under ``workdir``, which outlives them, and
    the HA targets.

    The broker listens on a port whose fast port is ``listenPort - 2`` as in Java, so the fast-port case
    is judged rather than reported as not reachable. Leaving the context stops the broker cleanly: the
    store it leaves behind is what the store cases then check. With ``acl`` the broker checks ACL on the
    suite's policy, written under ``workdir/conf``. ``store_files`` sets the main broker's store file
    sizes (BrokerConfig names, say ``mapped_file_size_commit_log``): small files make a run cross their
    boundaries.
    """
    store = workdir / "store"
    acl_file = write_acl_file(workdir / "conf" / "plain_acl.yml") if acl else None
    grpc_port = 0 if wire_release(release).is_5x else GRPC_DISABLED  # 4.x had no gRPC proxy: no grpc area
    config = BrokerConfig(listen_port=_port_set(), grpc_server_port=grpc_port, store_path_root_dir=str(store),
                          acl_enable=acl, wire_release=release, acl_file=str(acl_file) if acl_file else None,
                          **QUICK_CHECKS, **RECALL_ON, **AUTH_TABLES_ON, **SHORT_HA,
                          **(authentication_on() if authn else {}),
                          **(store_files or {}))
    feed = Endpoint(LOOPBACK, _free_port())
    sync_master = BrokerConfig(listen_port=0, broker_name="broker-sync", broker_role="SYNC_MASTER",
                               store_path_root_dir=str(workdir / "sync-master"), **SHORT_HA)
    fed_slave = BrokerConfig(listen_port=0, broker_name="broker-fed", broker_role="SLAVE", broker_id=1,
                             ha_master_address=str(feed), store_path_root_dir=str(workdir / "fed-slave"),
                             **SHORT_HA)
    with SyncEmbeddedRocketMQ(store, broker_config=config, wire_release=release) as running, \
            SyncEmbeddedRocketMQ(broker_config=sync_master) as sync, \
            SyncEmbeddedRocketMQ(broker_config=fed_slave) as slave:
        yield Target(Endpoint.parse(running.namesrv_addr), Endpoint.parse(running.broker_addr),
                     running.store_path, sync_master=Endpoint.parse(sync.broker_addr),
                     ha_slave=Endpoint.parse(slave.broker_addr), ha_feed=feed,
                     commitlog_file_size=config.mapped_file_size_commit_log, acl=acl_file,
                     authn=AUTHN_USER if authn else None,
                     proxy=Endpoint.parse(running.grpc_addr) if running.grpc_addr else None,
                     launcher=Launcher.of(EMBEDDED, {WIRE_RELEASE_KEY: release}))
