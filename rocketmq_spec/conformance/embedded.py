"""The targets the suite starts: the settings they run with, and the embedded one's launch when
``rmq-conformance`` is given no target.

The embedded reference broker runs as processes of its own, started through :mod:`rocketmq_spec.targets`
as a release of Apache RocketMQ is: the cases reach a target over TCP alone, so the same cases judge any
implementation, and no module of the suite imports ``rocketmq_spec.reference_broker``
(``tests/test_layers.py`` holds that). Beside the name server and broker it starts the HA targets: a
SYNC_MASTER without a slave, and a slave whose master is an address where the suite listens (its HA cases
feed it). Every setting is a broker.conf key, as Java names it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Protocol

from rocketmq_spec.apache.servers import LOOPBACK, free_port
from rocketmq_spec.codec.acl import Credentials
from rocketmq_spec.conformance.acl_policy import write_acl_file
from rocketmq_spec.conformance.launcher import Launcher
from rocketmq_spec.conformance.target import Target
from rocketmq_spec.conformance.wire import Endpoint
from rocketmq_spec.spec.auth import LOCAL_AUTHENTICATION_PROVIDER, LOCAL_AUTHORIZATION_PROVIDER
from rocketmq_spec.spec.commitlog import COMMITLOG_FILE_SIZE
from rocketmq_spec.spec.ha import HA_DEFAULTS
from rocketmq_spec.spec.tls import TLS_MODE_KEY, TlsMode
from rocketmq_spec.spec.wire_release import DEFAULT_RELEASE, wire_release
from rocketmq_spec.targets import EMBEDDED
from rocketmq_spec.targets.reference import ReferenceAllInOne

QUICK_CHECKS = {"transactionTimeOut": "1000", "transactionCheckInterval": "500", "transactionCheckMax": "3"}
"""Transactions are checked back within seconds (4.9.8: 6 s timeout, every 60 s, 15 times), so the cases
that wait for a check-back finish quickly; every target the suite starts runs with them."""
RECALL_ON = {"recallMessageEnable": "true"}
"""Recall is allowed (off by default in 5.x), so the recall cases judge a recall, not the default refusal;
releases without the key ignore it."""
AUTH_TABLES = {"authenticationMetadataProvider": LOCAL_AUTHENTICATION_PROVIDER,
               "authorizationMetadataProvider": LOCAL_AUTHORIZATION_PROVIDER}
"""The broker keeps ACL 2.0 users and ACLs (Apache 5.3.0+; older releases ignore the keys), so the auth
cases judge the tables, not the refusal without them. rocketmq-rust does not start with Java class names
here: its launcher writes its own names for them (``rocketmq_spec.rocketmq_rust.cluster.PROVIDER_NAMES``)."""
SHORT_HA = {"haSendHeartbeatInterval": "1000", "haReconnectInterval": "500", "slaveTimeout": "1000"}
"""HA intervals shorter than Java's defaults, so the HA cases wait seconds less; the cases' bounds are
Java's defaults, which these are within."""
HA_BATCH = {"haTransferBatchSize": str(HA_DEFAULTS["haTransferBatchSize"])}
"""The HA block bound stated, not left to each implementation's default (Java's 32 KiB; rocketmq-rust's
0, which it reads as its own 256 KiB), so ``ha::blocks_are_at_most_a_batch`` judges every target the suite
starts against a value the run gave it."""
AUTHN_USER = Credentials("rmqAuthnRoot", "rmqAuthnPassword")
"""The initAuthenticationUser of the embedded broker started with ``authn``."""
AUTHENTICATION_ON = {"authenticationEnabled": "true", "initAuthenticationUser": json.dumps(
    {"username": AUTHN_USER.access_key, "password": AUTHN_USER.secret_key})}
"""A broker that authenticates every request (RMQ-AUTH-AUTHENTICATE)."""
AUTHORIZATION_ON = {"authorizationEnabled": "true"}
"""...and authorizes it against the signed user's ACL (RMQ-AUTHZ-DECIDE): the initial user is Super, so
only the authorization cases' own Normal users meet it."""
PROVISIONED_SETTINGS: dict[str, object] = {**QUICK_CHECKS, **RECALL_ON, **HA_BATCH, **AUTH_TABLES}
"""The broker settings every provisioned target runs with, in Java's names: the embedded broker's quick
check-backs, recall and HA block bound (above) and the ACL 2.0 tables (each
implementation's launcher writes them with its own names:
``rocketmq_spec.rocketmq_rust.cluster.PROVIDER_NAMES``; older Apache releases ignore them). Flow control is
off in every provisioned release (``rocketmq_spec.apache.servers.DEFAULT_BROKER_CONFIG``)."""

WIRE_RELEASE_KEY = "wireRelease"
"""The broker.conf key of the release the reference broker answers as, for the brokers the life-cycle
cases start (``rocketmq_spec.conformance.launcher``)."""
SYNC_MASTER = {"brokerName": "broker-sync", "brokerRole": "SYNC_MASTER", **SHORT_HA}
"""A SYNC_MASTER without a slave: its sends wait for a slave that never comes."""


def fed_slave(feed: Endpoint) -> dict[str, str]:
    """A slave whose master is ``feed``, where the suite listens and plays its master."""
    return {"brokerName": "broker-fed", "brokerRole": "SLAVE", "brokerId": "1", "haMasterAddress": str(feed),
            **SHORT_HA}


class Servers(Protocol):
    """A name server and broker as the launch needs them: not started until :meth:`start`."""

    namesrv_addr: str
    broker_addr: str
    store_path: Path

    @property
    def grpc_addr(self) -> str:
        """Where the 5.x SDKs connect; empty when the broker serves no gRPC."""

    def start(self) -> object: ...

    def stop(self) -> None: ...


ServersFactory = Callable[[Path, Mapping[str, str], bool], Servers]
"""(home, broker.conf settings, serve gRPC) -> servers: the reference broker's processes, or the broker in
the caller's process that mutation testing measures (``rocketmq_spec.mutation``)."""


def reference_processes(home: Path, settings: Mapping[str, str], grpc: bool) -> Servers:
    """One process per broker, with the name server inside it (``rmq-broker`` without ``namesrvAddr``)."""
    return ReferenceAllInOne(home=home, broker_config=settings, grpc=grpc)


@contextlib.contextmanager
def _all_started(parts: Sequence[Servers]) -> Iterator[None]:
    """Start ``parts`` side by side (a start is mostly an interpreter importing the broker, then waiting
    for it to register) and stop every one, side by side too, when the block ends or any fails to start."""
    with ThreadPoolExecutor(len(parts)) as pool:
        try:
            for started in [pool.submit(part.start) for part in parts]:
                started.result()
            yield
        finally:
            for stopped in [pool.submit(part.stop) for part in parts]:
                stopped.result()


@contextlib.contextmanager
def launch(workdir: Path, *, acl: bool = False, authn: bool = False, release: str = DEFAULT_RELEASE,
           store_files: Mapping[str, str] | None = None,
           servers: ServersFactory = reference_processes, tls_mode: TlsMode | None = None
           ) -> Iterator[Target]:
    """A name server and broker on loopback with their store under ``workdir``, which outlives them, and
    the HA targets.

    The broker listens on a port whose fast port is ``listenPort - 2`` and HA port ``listenPort + 1`` as in
    Java, so the fast-port case is judged rather than reported as not reachable. Leaving the context stops
    the broker cleanly: the store it leaves behind is what the store cases then check. With ``acl`` the
    broker checks ACL on the suite's policy, written under ``workdir/conf``. ``store_files`` sets the main
    broker's store file sizes (``mappedFileSizeCommitLog`` ...): small files make a run cross their
    boundaries.
    """
    acl_file = write_acl_file(workdir / "conf" / "plain_acl.yml") if acl else None
    settings = {WIRE_RELEASE_KEY: release, **QUICK_CHECKS, **RECALL_ON, **AUTH_TABLES, **SHORT_HA, **HA_BATCH,
                **({"aclEnable": "true", "aclFile": str(acl_file)} if acl_file else {}),
                **({**AUTHENTICATION_ON, **AUTHORIZATION_ON} if authn else {}), **(store_files or {}),
                # a system property in Java: the name server's and the broker's ports alike
                **({TLS_MODE_KEY: tls_mode.value} if tls_mode else {})}
    feed = Endpoint(LOOPBACK, free_port())
    # 4.x had no gRPC proxy: no grpc area
    main = servers(workdir, settings, wire_release(release).is_5x)
    sync = servers(workdir / "sync-master", SYNC_MASTER, False)
    slave = servers(workdir / "fed-slave", fed_slave(feed), False)
    with _all_started((main, sync, slave)):
        yield Target(Endpoint.parse(main.namesrv_addr), Endpoint.parse(main.broker_addr), main.store_path,
                     sync_master=Endpoint.parse(sync.broker_addr), ha_slave=Endpoint.parse(slave.broker_addr),
                     ha_feed=feed,
                     commitlog_file_size=int(settings.get("mappedFileSizeCommitLog", COMMITLOG_FILE_SIZE)),
                     acl=acl_file, authn=AUTHN_USER if authn else None,
                     proxy=Endpoint.parse(main.grpc_addr) if main.grpc_addr else None,
                     launcher=Launcher.of(EMBEDDED, {WIRE_RELEASE_KEY: release}))
