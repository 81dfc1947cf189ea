"""Targets by name: ``embedded`` (the project's reference broker), ``apache-VERSION`` (a release of Apache
RocketMQ) or ``rocketmq-rust-VERSION`` (a release of rocketmq-rust, :mod:`rocketmq_spec.rocketmq_rust`).

Every command that drives a broker takes ``--target NAME`` (``rmq-conformance``, ``rmq-fuzz``, the soak
harness, ``benchmarks/``): :func:`parse_target` reads the name, one line and exit status 2 for a name that
is neither, and :func:`started` runs the target as processes of its own on free loopback ports for the
length of a ``with`` block:

    with started("apache-5.5.0", workdir) as running:
        drive(running.namesrv_addr, running.broker_addr, pid=running.broker_pid)

:data:`PROJECT_TARGETS` are the targets the project checks on every change (``.ci/run``): the newest
releases of each line that the project's Maven repository serves. Every row of the release table works as
a target wherever a repository serves its jars; a rocketmq-rust release is one once it is installed
(``rmq-rust install VERSION``, an hour of building that no run starts by itself).

It is a package of its own, above :mod:`rocketmq_spec.apache` and :mod:`rocketmq_spec.rocketmq_rust`, because
it knows every kind of target while each of those knows only its own.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from rocketmq_spec.apache.cluster import ApacheRocketMQ
from rocketmq_spec.apache.maven import ProvisionError
from rocketmq_spec.apache.releases import RELEASES, Release, UnknownRelease, release
from rocketmq_spec.apache.servers import LoopbackServers
from rocketmq_spec.rocketmq_rust.cluster import RocketMQRust
from rocketmq_spec.rocketmq_rust.releases import RELEASES as RUST_RELEASES
from rocketmq_spec.rocketmq_rust.releases import Release as RustRelease
from rocketmq_spec.rocketmq_rust.releases import UnknownRelease as UnknownRustRelease
from rocketmq_spec.rocketmq_rust.releases import release as rust_release
from rocketmq_spec.targets.reference import ReferenceServers
from rocketmq_spec.targets.reference_controller import ReferenceUnderController

EMBEDDED = "embedded"
APACHE_PREFIX = "apache-"
RUST_PREFIX = "rocketmq-rust-"

PROJECT_TARGETS = (EMBEDDED, "apache-4.9.7", "apache-5.3.3", "apache-5.5.0")
"""4.9.7 stands for the 4.x line (4.9.8's broker and name server jars are not on the project's Maven
repository), 5.3.3 for the long-lived 5.3 branch, 5.5.0 for the newest 5.x the repository serves whole."""


class UnknownTarget(ValueError):
    """A target name that is neither ``embedded`` nor a prefix and a known release."""

    def __init__(self, name: str) -> None:
        super().__init__(f"unknown target {name!r} (known: {', '.join(target_names())})")
        self.expected = tuple(target_names())
        self.seen = name


def target_names() -> list[str]:
    return [EMBEDDED, *(row.target_name for row in RELEASES.values()),
            *(row.target_name for row in RUST_RELEASES.values())]


def parse_target(name: str) -> Release | RustRelease | None:
    """The release a target name names; None for the embedded reference broker."""
    if name == EMBEDDED:
        return None
    try:
        if name.startswith(APACHE_PREFIX):
            return release(name)
        if name.startswith(RUST_PREFIX):
            return rust_release(name)
    except (UnknownRelease, UnknownRustRelease):
        pass
    raise UnknownTarget(name)


def servers(name: str, home: Path, *, broker_config: Mapping[str, object] | None = None, heap_mb: int = 512,
            grpc: bool = False, controller: bool = False,
            system_properties: Mapping[str, str] | None = None) -> LoopbackServers:
    """The name server and broker of the target ``name`` names, not started yet (``heap_mb``: a JVM's;
    ``grpc``: a 5.x release's broker inside its proxy, which rocketmq-rust's broker does not have; the
    reference broker always serves gRPC itself; ``controller``: a 5.x release's name server runs a
    controller too, which rocketmq-rust has not, and the reference broker joins a release's one in controller
    mode (:mod:`rocketmq_spec.targets.reference_controller`); ``system_properties``: Java's
    ``-D`` settings such as ``tls.server.mode``, which the reference broker reads as config keys)."""
    found = parse_target(name)
    if controller and found is None:
        settings = {**(broker_config or {}), **(system_properties or {})}
        return ReferenceUnderController(home=home, broker_config=settings, grpc=True)
    if controller and not isinstance(found, Release):
        raise ProvisionError(f"{name}: no controller (RocketMQ 5's automatic failover) to start",
                             expected="an apache-5.x target", seen=name)
    if found is None:
        settings = {**(broker_config or {}), **(system_properties or {})}
        return ReferenceServers(home=home, broker_config=settings, grpc=True)
    if isinstance(found, RustRelease):
        if grpc or system_properties:
            raise ProvisionError(f"{name}: its broker serves no gRPC and reads no Java system properties",
                                 expected="gRPC / -D settings", seen="none")
        return RocketMQRust(found, home=home, broker_config=broker_config)
    return ApacheRocketMQ(found, home=home, broker_config=broker_config, heap_mb=heap_mb, grpc=grpc,
                          controller=controller, system_properties=system_properties)


@dataclass(frozen=True)
class Running:
    """A started target as a client and a process watcher see it."""

    name: str
    namesrv_addr: str
    broker_addr: str
    broker_pid: int
    store_path: Path
    proxy_addr: str | None = None
    """Where RocketMQ 5's SDKs connect (gRPC), when the target serves it."""
    controller_addr: str | None = None
    """Where the controller inside the name server answers, when one was asked for."""
    quorumless_controller_addr: str | None = None
    """A controller without a majority (it never leads), started beside that one."""


@contextlib.contextmanager
def started(name: str, workdir: Path, *, broker_config: Mapping[str, object] | None = None,
            heap_mb: int = 512, grpc: bool = False, controller: bool = False,
            system_properties: Mapping[str, str] | None = None) -> Iterator[Running]:
    """Run the target ``name`` in ``workdir`` (its store and logs) until the block ends.

    ``broker_config`` takes Java's broker.conf keys for every kind of target. Releases that cannot be
    provisioned here raise :class:`rocketmq_spec.apache.ProvisionError` (its subclasses tell a missing Java,
    Maven or cargo and a release the repository does not serve). ``grpc`` starts a 5.x release's broker
    inside its rocketmq-proxy in local mode, which serves gRPC as well; the embedded broker always does.
    ``controller`` starts a 5.x release's name server with a controller inside.
    """
    with servers(name, workdir, broker_config=broker_config, heap_mb=heap_mb, grpc=grpc,
                 controller=controller, system_properties=system_properties) as pair:
        yield Running(name, pair.namesrv_addr, pair.broker_addr, pair.broker_pid, pair.store_path,
                      pair.grpc_addr or None, getattr(pair, "controller_addr", None) or None,
                      getattr(pair, "quorumless_controller_addr", None) or None)
