"""``rmq-broker`` and ``rmq-namesrv``: the reference broker and name server, in the roles Apache RocketMQ's
``mqbroker`` and ``mqnamesrv`` have.

``rmq-controller`` is a controller alone, as ``mqcontroller`` (``ControllerStartup``): RocketMQ 5's
automatic failover for brokers in controller mode; ``rmq-namesrv`` runs one too with
``enableControllerInNamesrv=true``.

``rmq-broker`` without ``namesrvAddr`` is the all-in-one: a name server and a broker in one process, the
broker registered with it. With ``namesrvAddr`` (in broker.conf, or ``-n``) the broker joins those name
servers, Apache RocketMQ's or ``rmq-namesrv``'s, and starts none of its own, so it can be a slave of an
Apache master or one broker of a mixed cluster. ``rmq-namesrv`` is the name server alone.

Defaults match Java's (name server 9876, broker 10911 and fast port 10909) except that everything binds to
loopback unless ``--bind`` says otherwise. ``-c`` takes Java property names. A config file that cannot be
read, a setting that cannot be honoured, a port another process listens on or a store the broker would
refuse (``rocketmq_spec.reference_broker.preflight``) ends the command with one line on stderr and exit
status 2, before any port is bound or any file written; a port taken between that check and the bind,
with exit status 1."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Callable, Coroutine
from typing import Any

from rocketmq_spec.reference_broker import event_loop
from rocketmq_spec.reference_broker.acl.plain_file import AclFileError
from rocketmq_spec.reference_broker.config import (
    BrokerConfig,
    ConfigError,
    LoadedConfig,
    NamesrvConfig,
    apply_properties,
    load_config_file,
    load_namesrv_config_file,
    validate,
    with_tls_file,
)
from rocketmq_spec.reference_broker.controller.server import Controller
from rocketmq_spec.reference_broker.embedded import EmbeddedRocketMQ
from rocketmq_spec.reference_broker.namesrv.server import NameServer
from rocketmq_spec.reference_broker.preflight import StoreRefused, broker_ports, check_ports, check_store
from rocketmq_spec.reference_broker.tls import TlsFileError, TlsPolicy
from rocketmq_spec.spec.cli import add_version

USAGE_ERROR = 2


def _common_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bind", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--loop", choices=event_loop.CHOICES, help="event loop (default $RMQ_EVENT_LOOP or "
                        "auto: uvloop where installed)")
    parser.add_argument("-D", dest="properties", action="append", default=[], metavar="KEY=VALUE",
                        help="a setting Java reads as a system property, such as -Dtls.server.mode=enforcing "
                             "(the tls.* keys; any config key is taken, after the config file's)")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    add_version(parser)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rmq-broker", description="the reference broker, as mqbroker, "
                                     "with a name server of its own unless it joins others",
                                     epilog="Without namesrvAddr: a name server and a broker in one process. "
                                            "With it: the broker alone, registered with those name servers.")
    parser.add_argument("-c", "--config", help="broker.conf with Java property names")
    parser.add_argument("-n", "--namesrv-addr", metavar="HOST:PORT[;HOST:PORT]",
                        help="name servers to join (namesrvAddr; overrides the config file's): no name "
                             "server of its own is started")
    parser.add_argument("--store", help="store root directory (storePathRootDir)")
    parser.add_argument("--namesrv-port", type=int, help="port of the broker's own name server, when it "
                        "joins none (default 9876; 0 = free port)")
    parser.add_argument("--broker-port", type=int, help="broker listenPort (default 10911; 0 = free port)")
    parser.add_argument("--grpc-port", type=int,
                        help="gRPC port of the 5.x SDKs (default 8081; 0 = free port, -1 = no gRPC)")
    _common_options(parser)
    return parser


def build_namesrv_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rmq-namesrv", description="the reference name server alone, as "
                                     "mqnamesrv: brokers (reference or Apache RocketMQ) register with it")
    parser.add_argument("-c", "--config", help="namesrv.conf with Java property names (listenPort, "
                        "kvConfigPath, orderMessageEnable, ...)")
    parser.add_argument("-p", "--port", type=int, help="listenPort (default 9876; 0 = free port)")
    _common_options(parser)
    return parser


def build_controller_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rmq-controller", description="the reference controller alone, as "
                                     "mqcontroller: brokers in controller mode (enableControllerMode) take "
                                     "their ids and roles from it")
    parser.add_argument("-c", "--config", required=True, help="controller.conf with Java property names "
                        "(controllerDLegerPeers, controllerDLegerSelfId, controllerStorePath, ...)")
    _common_options(parser)
    return parser


def _system_properties(args: argparse.Namespace, broker: BrokerConfig, namesrv: NamesrvConfig,
                       loaded: LoadedConfig) -> None:
    """``-DKEY=VALUE`` options, applied after the config file; then the TLS settings are completed with
    ``tls.config.file`` and a server context is built once, so a certificate or key that cannot be used
    stops the command before any port is bound (TlsFileError)."""
    properties = {}
    for item in args.properties:
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"-D{item}", "", "KEY=VALUE", source="command line")
        properties[key] = value
    found = apply_properties(properties, broker, namesrv, source="command line")
    loaded.ignored += found.ignored
    loaded.unknown += found.unknown
    broker.tls, namesrv.tls = with_tls_file(broker.tls), with_tls_file(namesrv.tls)
    TlsPolicy.of(namesrv.tls)


def configure(args: argparse.Namespace) -> tuple[BrokerConfig, NamesrvConfig, LoadedConfig]:
    """Defaults, then the config file, then command-line options (the most specific wins).

    Raises OSError for a config file that cannot be read, ConfigError for a setting that cannot be
    honoured and StoreRefused for a store the broker would refuse."""
    broker, namesrv = BrokerConfig(), NamesrvConfig()
    loaded = LoadedConfig()
    if args.config:
        loaded = load_config_file(args.config, broker, namesrv)
    _system_properties(args, broker, namesrv, loaded)
    if args.store:
        broker.store_path_root_dir = args.store
    if args.namesrv_port is not None:
        namesrv.listen_port = args.namesrv_port
    if args.broker_port is not None:
        broker.listen_port = args.broker_port
    if args.grpc_port is not None:
        broker.grpc_server_port = args.grpc_port
    if args.namesrv_addr:
        broker.namesrv_addr = args.namesrv_addr
    if args.bind:
        broker.bind_address = namesrv.bind_address = args.bind
    if broker.namesrv_addr and args.namesrv_port is not None:
        raise ConfigError("--namesrv-port", str(args.namesrv_port), "no name server port: a broker that "
                          f"joins {broker.namesrv_addr} starts no name server", source="command line")
    validate(broker)
    check_ports(broker.bind_address, broker_ports(broker, None if broker.namesrv_addr else namesrv))
    check_store(broker)
    return broker, namesrv, loaded


def configure_namesrv(args: argparse.Namespace) -> tuple[NamesrvConfig, LoadedConfig]:
    """Defaults, then the config file, then ``--port`` and ``--bind``."""
    namesrv = NamesrvConfig()
    loaded = load_namesrv_config_file(args.config, namesrv) if args.config else LoadedConfig()
    _system_properties(args, BrokerConfig(), namesrv, loaded)
    if args.port is not None:
        namesrv.listen_port = args.port
    if args.bind:
        namesrv.bind_address = args.bind
    if namesrv.listen_port > 0:
        check_ports(namesrv.bind_address, [("listenPort", namesrv.listen_port)])
    return namesrv, loaded


def configure_controller(args: argparse.Namespace) -> tuple[NamesrvConfig, LoadedConfig]:
    """The controller's keys are read as a name server with a controller reads them."""
    config = NamesrvConfig()
    loaded = load_namesrv_config_file(args.config, config)
    _system_properties(args, BrokerConfig(), config, loaded)
    if args.bind:
        config.bind_address = args.bind
    return config, loaded


def _stop_on_signal() -> asyncio.Event:
    """An event SIGINT and SIGTERM set, installed before any server starts: a signal that arrives while
    they start (a supervisor stopping a broker it just saw register) stops them cleanly once started,
    where the default action would kill the process mid-start and leave the store's abort file."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    return stop


async def serve(broker: BrokerConfig, namesrv: NamesrvConfig) -> None:
    stop = _stop_on_signal()
    async with EmbeddedRocketMQ(broker_config=broker, namesrv_config=namesrv) as running:
        grpc = f", gRPC {running.grpc_addr}" if running.grpc_addr else ""
        parts = (f"broker {running.broker_addr} (fast {running.broker_fast_addr}){grpc}, "
                 f"store {running.store_path}")
        if running.joins_cluster:
            print(f"{parts}, joined name server(s) {broker.namesrv_addr}", flush=True)
        else:
            print(f"name server {running.namesrv_addr}, {parts}", flush=True)
        await stop.wait()


async def serve_namesrv(config: NamesrvConfig) -> None:
    stop = _stop_on_signal()
    namesrv = NameServer(config)
    await namesrv.start()
    try:
        controller = f", controller {namesrv.controller.addr}" if namesrv.controller else ""
        print(f"name server {namesrv.addr}{controller}", flush=True)
        await stop.wait()
    finally:
        await namesrv.stop()


async def serve_controller(config: NamesrvConfig) -> None:
    stop = _stop_on_signal()
    controller = Controller(config)
    await controller.start()
    try:
        print(f"controller {controller.addr}", flush=True)
        await stop.wait()
    finally:
        await controller.stop()


def _run(prog: str, args: argparse.Namespace, configure_role: Callable[[argparse.Namespace], tuple[Any, ...]],
         serve_role: Callable[..., Coroutine[Any, Any, None]]) -> int:
    """Configure (exit 2 on a config that cannot be read or honoured), then serve until SIGINT/SIGTERM
    (exit 1 when a port cannot be bound or the store cannot be created)."""
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        *configs, loaded = configure_role(args)
    except OSError as exc:
        print(f"{prog}: cannot read config file {args.config}: {exc.strerror or exc}", file=sys.stderr)
        return USAGE_ERROR
    except ConfigError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return USAGE_ERROR
    except (StoreRefused, TlsFileError) as exc:
        print(f"{prog}: not starting: {exc}", file=sys.stderr)
        return USAGE_ERROR
    loaded.warn()
    try:
        event_loop.run(serve_role(*configs), args.loop)
    except AclFileError as exc:
        print(f"{prog}: not starting: {exc}", file=sys.stderr)
        return USAGE_ERROR
    except ConfigError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return USAGE_ERROR
    except OSError as exc:  # a port already taken, a store directory that cannot be created, ...
        print(f"{prog}: cannot start: {exc}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    return _run("rmq-broker", build_parser().parse_args(argv), configure, serve)


def namesrv_main(argv: list[str] | None = None) -> int:
    return _run("rmq-namesrv", build_namesrv_parser().parse_args(argv), configure_namesrv, serve_namesrv)


def controller_main(argv: list[str] | None = None) -> int:
    return _run("rmq-controller", build_controller_parser().parse_args(argv), configure_controller,
                serve_controller)


if __name__ == "__main__":
    raise SystemExit(main())
