"""``rmq-rust``: install and run a release of rocketmq-rust (github.com/mxsm/rocketmq-rust) from crates.io.

    rmq-rust run VERSION [--broker-port N] [--store DIR] [--home DIR] [--set KEY=VALUE ...]
    rmq-rust install VERSION
    rmq-rust versions

``install`` builds the release's name server and broker with ``cargo install`` into a per-version cache
(``RMQ_RUST_CACHE`` moves it; about an hour on two cores, once). ``run`` installs if needed, starts a name
server and a broker on loopback (free ports unless given), prints one ready line with both addresses and
the broker's process id once the broker has registered, and stops both on SIGTERM or Ctrl-C. ``versions``
lists the releases the project knows, the commit their crates were published from, and whether each is
installed.

No cargo, an unknown version or a build that fails: one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from rocketmq_spec.apache.maven import ProvisionError
from rocketmq_spec.apache.servers import add_run_options, serve_until_signalled
from rocketmq_spec.rocketmq_rust.cargo import install, installed, release_dir
from rocketmq_spec.rocketmq_rust.cluster import RocketMQRust
from rocketmq_spec.rocketmq_rust.releases import RELEASES, UnknownRelease, release
from rocketmq_spec.spec.cli import BadInput, Parser, add_version, fail

PROG = "rmq-rust"


def _setting(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"a broker setting is KEY=VALUE, not {text!r}")
    return key, value


def _parser() -> argparse.ArgumentParser:
    parser = Parser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_version(parser)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = commands.add_parser("run", help="start a name server and a broker of VERSION on loopback")
    run.add_argument("version", metavar="VERSION", help=f"one of {', '.join(RELEASES)}")
    add_run_options(run)
    run.add_argument("--set", dest="settings", type=_setting, action="append", default=[],
                     metavar="KEY=VALUE", help="a broker.properties setting (repeatable)")
    install_command = commands.add_parser("install", help="build VERSION's binaries into the cache")
    install_command.add_argument("version", metavar="VERSION")
    commands.add_parser("versions", help="list the known releases and whether each is installed")
    return parser


def _run(args: argparse.Namespace) -> int:
    install(release(args.version), progress=True)
    servers = RocketMQRust(args.version, home=args.home, store=args.store, broker_port=args.broker_port,
                           broker_config=dict(args.settings))
    return serve_until_signalled(servers)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "run":
            return _run(args)
        if args.command == "install":
            print(install(release(args.version), progress=True))
            return 0
        for version, row in RELEASES.items():
            state = "installed" if installed(row) else "not installed"
            print(f"{version:8} MQVersion {row.mq_version}  commit {row.commit[:12]}  {state} "
                  f"({release_dir(row)})")
        return 0
    except (BadInput, ProvisionError, UnknownRelease) as exc:
        return fail(PROG, exc)


if __name__ == "__main__":
    sys.exit(main())
