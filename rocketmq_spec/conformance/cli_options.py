"""The options of ``rmq-conformance``'s wire and store runs: what a user can ask for, in one place, so that
the commands' help, the README's table of forms (tests/test_readme.py) and the run itself read the same
parsers."""

from __future__ import annotations

import argparse
from pathlib import Path

from rocketmq_spec.codec.acl import Credentials
from rocketmq_spec.conformance import cli_help
from rocketmq_spec.conformance.acl_policy import ACL_RELEASE
from rocketmq_spec.conformance.target import auth_user_of
from rocketmq_spec.conformance.wire import Endpoint
from rocketmq_spec.spec.cli import Parser, add_version
from rocketmq_spec.spec.tls import TlsMode
from rocketmq_spec.spec.wire_release import DEFAULT_RELEASE, SUPPORTED_RELEASES
from rocketmq_spec.targets import EMBEDDED, target_names

PROG = "rmq-conformance"


def _endpoint(text: str) -> Endpoint:
    try:
        return Endpoint.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _credentials(text: str) -> Credentials:
    try:
        return auth_user_of(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--report", type=Path, metavar="DIR", help="write index.json, junit.xml, index.html")
    parser.add_argument("--strict", action="store_true", help="NON-STRICT verdicts fail the run")
    parser.add_argument("-k", dest="selection", metavar="SELECTION", help="pytest -k expression")
    parser.add_argument("--profile", metavar="FILE|NAME", help="target profile of known deviations")
    parser.add_argument("-n", dest="workers", default=None, metavar="N", help="pytest-xdist workers")
    parser.add_argument("-v", dest="verbose", action="store_true", help="one line per case")


def wire_parser() -> argparse.ArgumentParser:
    parser = Parser(prog=PROG, description=cli_help.DESCRIPTION, epilog=cli_help.epilog(),
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    add_version(parser)
    parser.add_argument("--target", default=EMBEDDED, metavar="NAME",
                        help=f"a target the suite starts and stops: {', '.join(target_names())} "
                             f"(default {EMBEDDED})")
    parser.add_argument("--namesrv", type=_endpoint, metavar="HOST:PORT",
                        help="a running name server to check")
    parser.add_argument("--broker", type=_endpoint, metavar="HOST:PORT", help="a running broker to check")
    parser.add_argument("--proxy", type=_endpoint, metavar="HOST:PORT",
                        help="a running gRPC proxy (RocketMQ 5's SDK endpoint): run the grpc area against it")
    parser.add_argument("--grpc", action="store_true",
                        help="with --target apache-5.x: start the broker inside the release's rocketmq-proxy "
                             "(local mode), so the grpc area runs against Apache's proxy too")
    parser.add_argument("--slow", action="store_true", help="include slow cases (expiry, long timeouts)")
    parser.add_argument("--acl-file", type=Path, metavar="PATH",
                        help="the target broker runs with aclEnable=true on this file: run the acl cases")
    parser.add_argument("--acl", action="store_true",
                        help=f"embedded broker with ACL 1.0: run the acl cases (it answers as {ACL_RELEASE} "
                             "unless --wire-release names another release that has ACL 1.0)")
    parser.add_argument("--auth-user", type=_credentials, metavar="NAME:PASSWORD",
                        help="the target broker runs with authenticationEnabled=true and this "
                             "initAuthenticationUser: run the authentication cases")
    parser.add_argument("--authn", action="store_true",
                        help="embedded broker (or --target apache-5.x) with authenticationEnabled and "
                             "authorizationEnabled: run the authentication and authorization cases")
    parser.add_argument("--wire-release", choices=SUPPORTED_RELEASES,
                        help=f"release the embedded broker answers as (default {DEFAULT_RELEASE})")
    ctl = parser.add_argument_group("controller (RocketMQ 5's automatic failover): its two areas alone")
    ctl.add_argument("--controller", action="store_true",
                     help="with --target apache-5.x or embedded: start its name server with a controller "
                          "inside (enableControllerInNamesrv=true) and its broker in controller mode, and "
                          "judge both (the reference controller and broker, for embedded)")
    ctl.add_argument("--controller-addr", type=_endpoint, metavar="HOST:PORT",
                     help="a running controller to judge (its controllerDLegerPeers port)")
    ctl.add_argument("--controller-broker", type=_endpoint, metavar="HOST:PORT",
                     help="with --controller-addr: a broker in controller mode, master of its set there, "
                          "whose HA port the ha_autoswitch area connects to as a slave")
    tls = parser.add_argument_group("TLS")
    tls.add_argument("--tls", action="store_true",
                     help="reach the target over TLS (remoting and gRPC) and run the tls area; with the "
                          "embedded broker, start it in --tls-mode")
    tls.add_argument("--tls-mode", choices=[m.value for m in TlsMode], default=TlsMode.PERMISSIVE.value,
                     help="the target's tls.server.mode (default permissive, as Apache's)")
    tls.add_argument("--tls-ca", type=Path, metavar="PEM", help="CA the target's certificate is checked with")
    tls.add_argument("--tls-cert", type=Path, metavar="PEM", help="client certificate (mutual TLS)")
    tls.add_argument("--tls-key", type=Path, metavar="PEM", help="client key (mutual TLS)")
    tls.add_argument("--tls-insecure", action="store_true",
                     help="accept any server certificate: for a self-signed target (Apache's test mode, the "
                          "embedded broker)")
    ha = parser.add_argument_group("HA replication targets")
    ha.add_argument("--ha-master", type=Endpoint.parse, metavar="HOST:PORT",
                    help="a master's HA port (default: the broker's port + 1)")
    ha.add_argument("--commitlog-file-size", type=int, metavar="BYTES",
                    help="mappedFileSizeCommitLog of that master (default 1 GiB)")
    ha.add_argument("--sync-master", type=Endpoint.parse, metavar="HOST:PORT",
                    help="a SYNC_MASTER broker without a slave of its own")
    ha.add_argument("--ha-slave", type=Endpoint.parse, metavar="HOST:PORT",
                    help="a slave broker whose haMasterAddress is --ha-feed")
    ha.add_argument("--ha-feed", type=Endpoint.parse, metavar="HOST:PORT",
                    help="where the suite listens as the slave's master")
    _common(parser)
    return parser


def store_parser() -> argparse.ArgumentParser:
    parser = Parser(prog=f"{PROG} store", description="check a store directory")
    parser.add_argument("directory", type=Path, help="the store root (the directory holding commitlog/)")
    parser.add_argument("--index-sizes", metavar="SLOTS,ENTRIES",
                        help="maxHashSlotNum,maxIndexNum of the index files, when not in Java's 1:4 ratio")
    parser.add_argument("--replica", type=Path, metavar="DIR",
                        help="a slave's store: its CommitLog and queues must agree with DIR's (its master's)")
    _common(parser)
    return parser
