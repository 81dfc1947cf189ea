"""``rmq-broker``: a name server and a broker in one process, configured like Apache RocketMQ's.

Defaults match Java's (name server 9876, broker 10911 and fast port 10909) except that everything binds to
loopback unless ``--bind`` says otherwise. ``-c broker.conf`` takes Java property names. A config file that
cannot be read, a setting that cannot be honoured or a store the broker would refuse
(``reference_broker.preflight``) ends the command with one line on stderr and exit status 2, before any
port is bound or any file written.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys

from reference_broker import event_loop
from reference_broker.acl.plain_file import AclFileError
from reference_broker.config import (
    BrokerConfig,
    ConfigError,
    LoadedConfig,
    NamesrvConfig,
    load_config_file,
    validate,
)
from reference_broker.embedded import EmbeddedRocketMQ
from reference_broker.preflight import StoreRefused, check_store
from spec.cli import add_version

USAGE_ERROR = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rmq-broker", description=__doc__.splitlines()[0])
    parser.add_argument("-c", "--config", help="broker.conf with Java property names")
    parser.add_argument("--store", help="store root directory (storePathRootDir)")
    parser.add_argument("--namesrv-port", type=int, help="name server port (default 9876; 0 = free port)")
    parser.add_argument("--broker-port", type=int, help="broker listenPort (default 10911; 0 = free port)")
    parser.add_argument("--bind", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--loop", choices=event_loop.CHOICES, help="event loop (default $RMQ_EVENT_LOOP or "
                        "auto: uvloop where installed)")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    add_version(parser)
    return parser


def configure(args: argparse.Namespace) -> tuple[BrokerConfig, NamesrvConfig, LoadedConfig]:
    """Defaults, then the config file, then command-line options (the most specific wins).

    Raises OSError for a config file that cannot be read and ConfigError for a setting that cannot be
    honoured."""
    broker, namesrv = BrokerConfig(), NamesrvConfig()
    loaded = LoadedConfig()
    if args.config:
        loaded = load_config_file(args.config, broker, namesrv)
    if args.store:
        broker.store_path_root_dir = args.store
    if args.namesrv_port is not None:
        namesrv.listen_port = args.namesrv_port
    if args.broker_port is not None:
        broker.listen_port = args.broker_port
    if args.bind:
        broker.bind_address = namesrv.bind_address = args.bind
    validate(broker)
    return broker, namesrv, loaded


async def serve(broker: BrokerConfig, namesrv: NamesrvConfig) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    async with EmbeddedRocketMQ(broker_config=broker, namesrv_config=namesrv) as running:
        print(f"name server {running.namesrv_addr}, broker {running.broker_addr} "
              f"(fast {running.broker_fast_addr}), store {running.store_path}", flush=True)
        await stop.wait()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        broker, namesrv, loaded = configure(args)
    except OSError as exc:
        print(f"rmq-broker: cannot read config file {args.config}: {exc.strerror or exc}", file=sys.stderr)
        return USAGE_ERROR
    except ConfigError as exc:
        print(f"rmq-broker: {exc}", file=sys.stderr)
        return USAGE_ERROR
    try:
        check_store(broker)
    except StoreRefused as exc:
        print(f"rmq-broker: not starting: {exc}", file=sys.stderr)
        return USAGE_ERROR
    loaded.warn()
    try:
        event_loop.run(serve(broker, namesrv), args.loop)
    except AclFileError as exc:
        print(f"rmq-broker: not starting: {exc}", file=sys.stderr)
        return USAGE_ERROR
    except ConfigError as exc:
        print(f"rmq-broker: {exc}", file=sys.stderr)
        return USAGE_ERROR
    except OSError as exc:  # a port already taken, a store directory that cannot be created, ...
        print(f"rmq-broker: cannot start: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
