"""``rmq-apache``: provision and run a release of Apache RocketMQ from Maven Central.

    rmq-apache run VERSION [--namesrv-port N] [--broker-port N] [--store DIR] [-c broker.conf] [--home DIR]
    rmq-apache classpath VERSION
    rmq-apache versions

``run`` resolves the release's jars (cached per version; ``RMQ_APACHE_CACHE`` moves the cache), starts a
name server and a broker on loopback (free ports unless given), prints one ready line with both addresses
once the broker has registered, and stops both on SIGTERM or Ctrl-C. ``classpath`` prints the class path
of the release's servers, clients and tools (mqadmin is ``org.apache.rocketmq.tools.command.MQAdminStartup``).
``versions`` lists the releases the project knows and whether each is already cached.

No Java, no Maven, an unknown version or a repository that does not serve the release: one line on
stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from rocketmq_spec.apache.cluster import ApacheRocketMQ, provision
from rocketmq_spec.apache.maven import ProvisionError, cached_classpath, release_dir
from rocketmq_spec.apache.releases import RELEASES, UnknownRelease
from rocketmq_spec.apache.servers import add_run_options, serve_until_signalled
from rocketmq_spec.spec.cli import BadInput, Parser, add_version, fail, require_file

PROG = "rmq-apache"


def _parser() -> argparse.ArgumentParser:
    parser = Parser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_version(parser)
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = commands.add_parser("run", help="start a name server and a broker of VERSION on loopback")
    run.add_argument("version", metavar="VERSION", help=f"one of {', '.join(RELEASES)}")
    run.add_argument("--namesrv-port", type=int, default=0, metavar="N", help="default: a free port")
    add_run_options(run)
    run.add_argument("-c", dest="config", type=Path, metavar="broker.conf", help="broker settings to apply")
    classpath = commands.add_parser("classpath", help="print the class path of VERSION's jars")
    classpath.add_argument("version", metavar="VERSION")
    commands.add_parser("versions", help="list the known releases and whether each is cached")
    return parser


def _run(args: argparse.Namespace) -> int:
    if args.config is not None:
        require_file(args.config, "broker.conf")
    cluster = ApacheRocketMQ(args.version, home=args.home, store=args.store, namesrv_port=args.namesrv_port,
                             broker_port=args.broker_port, config_file=args.config, progress=True)
    return serve_until_signalled(cluster)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "run":
            return _run(args)
        if args.command == "classpath":
            _, _, jars = provision(args.version, progress=True)
            print(os.pathsep.join(map(str, jars)))
            return 0
        for version, row in RELEASES.items():
            state = "cached" if cached_classpath(row) else "not cached"
            print(f"{version:8} {row.line}  MQVersion {row.mq_version}  {state} ({release_dir(row)})")
        return 0
    except (BadInput, ProvisionError, UnknownRelease) as exc:
        return fail(PROG, exc)


if __name__ == "__main__":
    sys.exit(main())
