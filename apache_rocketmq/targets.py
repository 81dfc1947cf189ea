"""Targets by name: ``embedded`` (the project's reference broker) or ``apache-VERSION`` (a release).

Every command that drives a broker takes ``--target NAME`` (``rmq-conformance``, ``rmq-fuzz``, the soak
harness, ``benchmarks/``): :func:`parse_target` reads the name, one line and exit status 2 for a name that
is neither, and :func:`started` runs the target as processes of its own on free loopback ports for the
length of a ``with`` block:

    with started("apache-5.5.0", workdir) as running:
        drive(running.namesrv_addr, running.broker_addr, pid=running.broker_pid)

:data:`PROJECT_TARGETS` are the targets the project checks on every change (``.ci/run``): the newest
releases of each line that the project's Maven repository serves. Every row of the release table works as
a target wherever a repository serves its jars.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from admin.operations import Admin
from admin.wire import AdminError
from apache_rocketmq.cluster import LOOPBACK, ApacheRocketMQ, StartFailed, free_port, terminate
from apache_rocketmq.home import write_properties
from apache_rocketmq.releases import RELEASES, Release, UnknownRelease, release

EMBEDDED = "embedded"
APACHE_PREFIX = "apache-"

PROJECT_TARGETS = (EMBEDDED, "apache-4.9.7", "apache-5.3.3", "apache-5.5.0")
"""4.9.7 stands for the 4.x line (4.9.8's broker and name server jars are not on the project's Maven
repository), 5.3.3 for the long-lived 5.3 branch, 5.5.0 for the newest 5.x the repository serves whole."""

EMBEDDED_START_TIMEOUT = 60.0


class UnknownTarget(ValueError):
    """A target name that is neither ``embedded`` nor ``apache-`` and a known release."""

    def __init__(self, name: str) -> None:
        super().__init__(f"unknown target {name!r} (known: {', '.join(target_names())})")
        self.expected = tuple(target_names())
        self.seen = name


def target_names() -> list[str]:
    return [EMBEDDED, *(row.target_name for row in RELEASES.values())]


def parse_target(name: str) -> Release | None:
    """The release a target name names; None for the embedded reference broker."""
    if name == EMBEDDED:
        return None
    if not name.startswith(APACHE_PREFIX):
        raise UnknownTarget(name)
    try:
        return release(name)
    except UnknownRelease:
        raise UnknownTarget(name) from None


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


@contextlib.contextmanager
def started(name: str, workdir: Path, *, broker_config: Mapping[str, object] | None = None,
            heap_mb: int = 512, grpc: bool = False) -> Iterator[Running]:
    """Run the target ``name`` in ``workdir`` (its store and logs) until the block ends.

    ``broker_config`` takes Java's broker.conf keys for either kind of target. Apache releases that cannot
    be provisioned here raise :class:`apache_rocketmq.ProvisionError` (its subclasses tell a missing Java
    or Maven and a release the repository does not serve). ``grpc`` starts a 5.x release's broker inside
    its rocketmq-proxy in local mode, which serves gRPC as well; the embedded broker always does.
    """
    found = parse_target(name)
    if found is None:
        with _embedded(workdir, broker_config or {}) as running:
            yield running
        return
    with ApacheRocketMQ(found, home=workdir, broker_config=broker_config, heap_mb=heap_mb,
                        grpc=grpc) as cluster:
        yield Running(name, cluster.namesrv_addr, cluster.broker_addr, cluster.broker_pid, cluster.store_path,
                      cluster.grpc_addr or None)


@contextlib.contextmanager
def _embedded(workdir: Path, broker_config: Mapping[str, object]) -> Iterator[Running]:
    """``rmq-broker`` in a process of its own, so a fuzzer or load generator can watch its pid."""
    workdir.mkdir(parents=True, exist_ok=True)
    store = workdir / "store"
    conf = write_properties(workdir / "broker.conf", {"storePathRootDir": store, **broker_config})
    namesrv_port, broker_port, grpc_port = free_port(), free_port((-2, 0, 1)), free_port()
    command = [sys.executable, "-m", "reference_broker.cli", "-c", str(conf), "--namesrv-port",
               str(namesrv_port), "--broker-port", str(broker_port), "--grpc-port", str(grpc_port)]
    with (workdir / "broker.out").open("ab") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True)
    namesrv, broker = f"{LOOPBACK}:{namesrv_port}", f"{LOOPBACK}:{broker_port}"
    try:
        _wait_registered(process, namesrv, broker, workdir / "broker.out")
        yield Running(EMBEDDED, namesrv, broker, process.pid, store, f"{LOOPBACK}:{grpc_port}")
    finally:
        terminate(process)


def _wait_registered(process: subprocess.Popen[bytes], namesrv: str, broker: str, log: Path) -> None:
    deadline = time.monotonic() + EMBEDDED_START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = " | ".join(log.read_text(errors="replace").splitlines()[-3:])
            raise StartFailed(f"the reference broker exited with status {process.returncode}: {tail}",
                              expected="a running broker", seen=f"exit {process.returncode}")
        try:
            if broker in str(Admin(namesrv, 2.0).cluster_info()):
                return
        except AdminError:
            pass
        time.sleep(0.2)
    raise StartFailed(f"the reference broker did not register within {EMBEDDED_START_TIMEOUT:.0f} s",
                      expected="a registered broker", seen="none")
