"""The suite's pytest options (``--rmq-*``) and the target they describe.

Options are prefixed ``--rmq-`` because pytest already owns ``--strict``; ``rmq-conformance`` maps its own
shorter options onto them (``rocketmq_spec.conformance.cli.pytest_args``). An option that cannot be read is a
usage error before any case runs. """

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rocketmq_spec.codec.acl import Credentials
from rocketmq_spec.conformance.launcher import Launcher, LauncherError
from rocketmq_spec.conformance.report.html_page import CLAUSE_PAGE
from rocketmq_spec.conformance.target import Target, auth_user_of
from rocketmq_spec.conformance.tls import ClientTls
from rocketmq_spec.conformance.wire import Endpoint
from rocketmq_spec.spec.ha import HA_PORT_OFFSET
from rocketmq_spec.spec.tls import TlsMode
from rocketmq_spec.targets import UnknownTarget


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("rmq-conformance", "RocketMQ conformance suite")
    group.addoption("--rmq-namesrv", metavar="HOST:PORT", help="name server to check")
    group.addoption("--rmq-broker", metavar="HOST:PORT", help="broker to check")
    group.addoption("--rmq-controller", metavar="HOST:PORT",
                    help="controller to check (RocketMQ 5's automatic failover: the controller area)")
    group.addoption("--rmq-controller-broker", metavar="HOST:PORT",
                    help="a broker in controller mode, master of its set at --rmq-controller (the "
                         "ha_autoswitch area)")
    group.addoption("--rmq-follower-controller", metavar="HOST:PORT",
                    help="a controller that does not lead its group (RMQ-CTL-NOT-LEADER)")
    group.addoption("--rmq-proxy", metavar="HOST:PORT", help="gRPC proxy (RocketMQ 5 SDK endpoint) to check")
    group.addoption("--rmq-store", metavar="DIR", help="store directory to check offline")
    group.addoption("--rmq-replica", metavar="DIR", help="a slave's store, compared with --rmq-store")
    group.addoption("--rmq-report", metavar="DIR", help="write index.json, JUnit XML and HTML here")
    group.addoption("--rmq-strict", action="store_true", help="NON-STRICT verdicts fail the run")
    group.addoption("--rmq-profile", metavar="FILE|NAME",
                    help="target profile of known deviations (default: the one covering the version the "
                         "target announces; 'none' for none)")
    group.addoption("--rmq-target-name", metavar="NAME", help="the target's name, for the reports")
    group.addoption("--rmq-acl-file", metavar="PATH",
                    help="the target broker runs with aclEnable=true on this plain_acl.yml (rmq-conformance "
                         "acl-file): run the acl cases only")
    group.addoption("--rmq-auth-user", metavar="NAME:PASSWORD",
                    help="the target broker runs with authenticationEnabled=true and this "
                         "initAuthenticationUser: run the authentication cases only")
    group.addoption("--rmq-index-sizes", metavar="SLOTS,ENTRIES",
                    help="maxHashSlotNum,maxIndexNum of the store's index files (default: from their size)")
    group.addoption("--rmq-ha-master", metavar="HOST:PORT", help="a master's HA port (default: broker + 1)")
    group.addoption("--rmq-commitlog-file-size", type=int, default=Target.commitlog_file_size,
                    metavar="BYTES", help="mappedFileSizeCommitLog of the HA master")
    group.addoption("--rmq-sync-master", metavar="HOST:PORT", help="a SYNC_MASTER broker without a slave")
    group.addoption("--rmq-ha-slave", metavar="HOST:PORT", help="a slave whose master is --rmq-ha-feed")
    group.addoption("--rmq-ha-feed", metavar="HOST:PORT", help="where the suite listens as its master")
    group.addoption("--rmq-launch", metavar="NAME[,KEY=VALUE...]",
                    help="the target's implementation and broker settings, for the cases that start, stop "
                         "and kill a broker of their own (a target the suite started)")
    group.addoption("--rmq-tls", action="store_true",
                    help="reach the target over TLS and run the tls area (rmq-conformance --tls)")
    group.addoption("--rmq-tls-ca", metavar="PEM",
                    help="CA certificates the target's certificate is checked with")
    group.addoption("--rmq-tls-cert", metavar="PEM", help="client certificate, for mutual TLS")
    group.addoption("--rmq-tls-key", metavar="PEM", help="client key, for mutual TLS")
    group.addoption("--rmq-tls-insecure", action="store_true",
                    help="accept any server certificate (a self-signed target, as Apache's test mode)")
    group.addoption("--rmq-tls-mode", choices=[m.value for m in TlsMode], default=TlsMode.PERMISSIVE.value,
                    help="the target's tls.server.mode (default permissive)")
    group.addoption("--rmq-related", action="append", default=[], metavar="HREF=TEXT",
                    help="a link from the HTML report to another page of the run (its store report, say)")
    group.addoption("--rmq-clause-page", default=CLAUSE_PAGE, metavar="HREF",
                    help="where the HTML report links clauses to; only the default writes the page (a store "
                         "report under a wire report links to the wire report's)")


def parse_index_sizes(text: str) -> tuple[int, int]:
    """``SLOTS,ENTRIES``: an index file's size fixes only 4 * slots + 20 * entries, so a store whose
    counts are not in Java's default 1:4 ratio needs them stated to be read."""
    try:
        slots, entries = (int(part) for part in text.split(","))
    except ValueError:
        raise pytest.UsageError(f"index sizes are SLOTS,ENTRIES, not {text!r}") from None
    if slots <= 0 or entries <= 0:
        raise pytest.UsageError(f"index sizes are two positive numbers, not {text!r}")
    return slots, entries


def target_of(config: pytest.Config) -> Target:
    """The target the run's options describe."""
    option = config.getoption
    endpoints = {name: Endpoint.parse(option(f"--rmq-{name}")) if option(f"--rmq-{name}") else None
                 for name in ("namesrv", "broker", "controller", "controller-broker", "follower-controller")}
    store, acl = option("--rmq-store"), option("--rmq-acl-file")
    return Target(endpoints["namesrv"], endpoints["broker"], Path(store) if store else None,
                  acl=Path(acl) if acl else None, authn=_auth_user(option("--rmq-auth-user")),
                  **_ha_parts(config, endpoints["broker"]),
                  proxy=Endpoint.parse(option("--rmq-proxy")) if option("--rmq-proxy") else None,
                  launcher=_launcher(option("--rmq-launch")),
                  controller=endpoints["controller"], controller_broker=endpoints["controller-broker"],
                  follower_controller=endpoints["follower-controller"], tls=_client_tls(config))


def _client_tls(config: pytest.Config) -> ClientTls | None:
    option = config.getoption
    if not option("--rmq-tls"):
        return None
    paths = {name: Path(option(f"--rmq-tls-{name}")) if option(f"--rmq-tls-{name}") else None
             for name in ("ca", "cert", "key")}
    for name, path in paths.items():
        if path is not None and not path.is_file():
            raise pytest.UsageError(f"--tls-{name} {path} is not a file")
    try:
        return ClientTls(**paths, insecure=option("--rmq-tls-insecure"),
                         mode=TlsMode(option("--rmq-tls-mode")))
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None


def _launcher(text: str | None) -> Launcher | None:
    if text is None:
        return None
    try:
        return Launcher.parse(text)
    except (LauncherError, UnknownTarget) as exc:
        raise pytest.UsageError(str(exc)) from None


def _auth_user(text: str | None) -> Credentials | None:
    return auth_user_of(text) if text else None


def _ha_parts(config: pytest.Config, broker: Endpoint | None) -> dict[str, Any]:
    """The HA parts of the target: a master's HA port (derived from the broker's), a SYNC_MASTER, and a
    slave the suite feeds (it needs both its broker port and the feed address it follows)."""
    option = config.getoption
    endpoints = {name: Endpoint.parse(option(f"--rmq-{name}")) if option(f"--rmq-{name}") else None
                 for name in ("ha-master", "sync-master", "ha-slave", "ha-feed")}
    derived = Endpoint(broker.host, broker.port + HA_PORT_OFFSET) if broker else None
    ha_master = endpoints["ha-master"] or derived
    if (endpoints["ha-slave"] is None) != (endpoints["ha-feed"] is None):
        raise pytest.UsageError("--rmq-ha-slave and --rmq-ha-feed go together")
    replica = option("--rmq-replica")
    return {"ha_master": ha_master, "sync_master": endpoints["sync-master"],
            "replica": Path(replica) if replica else None,
            "ha_slave": endpoints["ha-slave"], "ha_feed": endpoints["ha-feed"],
            "commitlog_file_size": option("--rmq-commitlog-file-size")}
