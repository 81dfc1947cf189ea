"""Election timing side by side: Apache RocketMQ 5.5.0's controller and the reference controller fail over the
same Apache 5.5.0 broker-set, in one run.

``python -m benchmarks.failover [--cycles N] [--controllers reference apache] [--publish]``

For each controller: its name server with the controller inside (``enableControllerInNamesrv``), then three
Apache RocketMQ 5.5.0 brokers of one set in controller mode (a master and two slaves). Each cycle waits
until all three are in the SyncStateSet, has the master acknowledge a send, kills it with SIGKILL and takes
two times from the kill (once the set's processes are idle: a broker restarted by the previous cycle is
still compiling its start-up code for seconds after it rejoins, and a kill in that time measures how the
controller competes with it for the two cores, not the election): until the controller names a new master
(CONTROLLER_GET_REPLICA_INFO every 5 ms, ``rocketmq_spec.targets.broker_set.FINE_POLL_S``, over a
connection opened before the kill, from a thread that polls from before the kill while this one waits for
the killed JVM to be reaped) and until the new master acknowledges a send (WAIT=true, tried every 50 ms);
the killed broker is then started again and rejoins as a slave. A figure is the median of the cycles, with
the 1-minute load average at each kill and the cores other processes used during the cycle beside it
(:mod:`benchmarks.machine`).

The brokers run with ``allAckInSyncStateSet=true``, so the send acknowledged before each kill is on every
member: a kill then leaves no tail that only the dead master holds. Without it that tail decides whether the
killed broker can rejoin. When the elected slave has nothing beyond the start of its last epoch, Apache
5.5.0's ``AutoSwitchHAService.changeToMaster`` (AutoSwitchHAService.java:137-141) cannot record the new
epoch (``EpochFileCache.appendEntry`` refuses a start offset not beyond the last entry's,
EpochFileCache.java:106), so the new master writes on under the old epoch; the restarted broker finds its
own unreplicated tail "consistent" up to the new master's max offset
(``EpochFileCache.findConsistentPoint``) and truncates there, which fails for good when that offset is not a
record boundary (DefaultMessageStore.truncateFiles:782) and leaves different records at the same offsets
when it is. Whether it is depends on the lengths of the two messages, not on the controller.

Both controllers run as the project starts them: Apache's with ``notifyBrokerRoleChanged=false``
(``rocketmq_spec.apache.cluster.CONTROLLER_SETTINGS``), so its new master learns its role from its own
poll of the controller (``syncBrokerMetadataPeriod``, 5 s); the reference controller tells it at once.

Figures are published only from a quiet machine (the definition of :mod:`benchmarks.machine`): otherwise the
table is printed between warnings and ``--publish`` exits with status 3, writing nothing. ``--publish``
rewrites the section of ``docs/benchmarks.md`` between :data:`BEGIN` and :data:`END`. This benchmark has
its own runner, so ``benchmarks/run.py`` leaves it out.
"""

from __future__ import annotations

import argparse
import contextlib
import shlex
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from benchmarks.machine import (
    QUIET_LOAD_PER_CORE,
    QUIET_OTHERS_PER_CORE,
    MachineWatch,
    cores,
    load_1min,
    settle,
)
from benchmarks.matrix import DOC, NOT_QUIET, SETTLE_SECONDS, commit, write_section
from rocketmq_spec.apache import ApacheRocketMQ, ProvisionError
from rocketmq_spec.targets.broker_set import BrokerSet, ReplicaInfo, ReplicaWatch
from rocketmq_spec.targets.reference import ReferenceServers

RELEASE = "5.5.0"
CONTROLLERS = ("apache", "reference")
MEMBERS = 3
CYCLES = 7
BROKER_SET, CLUSTER, TOPIC = "bench-failover", "BenchFailover", "BenchFailover"
HEAP_MB = 384
SETTINGS = {"allAckInSyncStateSet": "true"}
"""Every acknowledged message is on every SyncStateSet member (RMQ-HA2-ALL-ACK): see the module's doc."""
FORM_S = 240.0
"""A restarted JVM rejoining, catching up and taken into the SyncStateSet (checked every 5 s)."""
FAILOVER_S = 120.0
IDLE_CORES = 0.3
"""The benchmark's own processes (the brokers, the name server, this one sampling ``/proc``) count as idle
below this many cores over :data:`IDLE_WINDOW_S`: four idle JVMs and the sampler use 0.15-0.25, a JVM
compiling its start-up code most of a core."""
IDLE_WINDOW_S = 1.0
IDLE_LIMIT_S = 90.0
BEGIN = "<!-- failover timing: written by python -m benchmarks.failover --publish -->"
END = "<!-- end of the failover timing -->"


@dataclass(frozen=True)
class Cycle:
    elected_s: float
    """From the kill until the controller names a new master."""
    closed_s: float
    """From the kill until a connection to the killed master ends: the JVM's death (a SIGKILLed process
    unmaps its heap before the kernel closes its sockets), the same for either controller, and the moment
    a controller can first know."""
    serving_s: float
    """From the kill until the new master acknowledges a send."""
    load: float
    """The 1-minute load average at the kill."""
    others_cores: float
    """Cores other processes used from the kill until the new master served."""


@dataclass
class ControllerRun:
    controller: str
    cycles: list[Cycle] = field(default_factory=list)

    def median(self, attribute: str) -> float:
        return statistics.median(getattr(cycle, attribute) for cycle in self.cycles)


@contextlib.contextmanager
def _names(controller: str, work: Path) -> Iterator[ReferenceServers | ApacheRocketMQ]:
    """The name server with ``controller``'s controller inside, its ``controller_addr`` set."""
    names: ReferenceServers | ApacheRocketMQ
    if controller == "reference":
        names = ReferenceServers(home=work / "names", controller=True)
    else:
        names = ApacheRocketMQ(RELEASE, home=work / "names", controller=True)
    try:
        names.start_namesrv()
        yield names
    finally:
        names.stop()


def measure(controller: str, work: Path, cycles: int, watch: MachineWatch) -> ControllerRun:
    """Start the set under ``controller`` and fail its master over ``cycles`` times."""
    run = ControllerRun(controller)
    with contextlib.ExitStack() as stack:
        names = stack.enter_context(_names(controller, work))
        addr = names.controller_addr
        brokers = BrokerSet(addr, BROKER_SET, {})
        brokers.start_apache(stack, RELEASE, work, names.namesrv_addr, MEMBERS, CLUSTER, HEAP_MB, FAILOVER_S,
                             **SETTINGS)
        everyone = frozenset(brokers.members)
        for cycle in range(cycles):
            formed = brokers.wait_formed(everyone, FORM_S)
            assert formed.master_id is not None
            brokers.first_acknowledged(formed.master_id, TOPIC, f"c{cycle}-before", FAILOVER_S)
            _until_idle(watch)
            before, load = watch.read(), load_1min()
            with ReplicaWatch(addr, BROKER_SET) as replicas, \
                    _ConnectionEnd(brokers.members[formed.master_id].broker_addr) as master_end, \
                    ThreadPoolExecutor(1, thread_name_prefix="election-poll") as poller:
                replicas.info()  # connected before the kill: each poll after it is one round trip
                election = poller.submit(_elected_at, brokers, formed, replicas)
                killed = time.monotonic()
                brokers.kill(formed.master_id)
                elected, elected_at = election.result()
                elected_s = elected_at - killed
                closed_s = master_end.at(FAILOVER_S) - killed
            assert elected.master_id is not None
            served = brokers.first_acknowledged(elected.master_id, TOPIC, f"c{cycle}-after", FAILOVER_S)
            others = watch.read().others_cores(before)
            run.cycles.append(Cycle(elected_s, closed_s, served - killed, load, others))
            print(f"{controller} cycle {cycle + 1}: master's connections closed {closed_s:.3f} s, elected "
                  f"{elected_s:.3f} s, serving "
                  f"{served - killed:.2f} s (load {load:.2f}, others {others:.2f} cores)", file=sys.stderr,
                  flush=True)
            brokers.restart(formed.master_id)
    return run


def _elected_at(brokers: BrokerSet, formed: ReplicaInfo, replicas: ReplicaWatch) -> tuple[ReplicaInfo, float]:
    """The controller's new master and when (``time.monotonic``) a poll first named it. The poll runs on
    its own thread from before the kill: :meth:`BrokerSet.kill` returns only once the killed JVM is reaped,
    which can be tens of milliseconds after its connections closed and the controller elected."""
    assert formed.master_id is not None
    elected = brokers.wait_elected(formed.master_id, formed.master_epoch, FAILOVER_S, replicas)
    return elected, time.monotonic()


class _ConnectionEnd:
    """A connection to a broker, opened before its kill, and the moment (``time.monotonic``) it ends."""

    def __init__(self, address: str) -> None:
        host, _, port = address.rpartition(":")
        self._socket = socket.create_connection((host, int(port)), timeout=FAILOVER_S)
        self._ended: float | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._wait, daemon=True)

    def _wait(self) -> None:
        with contextlib.suppress(OSError):
            self._socket.recv(1)
        self._ended = time.monotonic()
        self._done.set()

    def __enter__(self) -> _ConnectionEnd:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._socket.close()
        self._thread.join()

    def at(self, limit_s: float) -> float:
        if not self._done.wait(limit_s) or self._ended is None:
            raise TimeoutError(f"the killed master's connection still open after {limit_s:.0f} s")
        return self._ended


def _until_idle(watch: MachineWatch) -> None:
    """Wait (at most :data:`IDLE_LIMIT_S`) until the benchmark's own processes use under
    :data:`IDLE_CORES`."""
    deadline = time.monotonic() + IDLE_LIMIT_S
    while time.monotonic() < deadline:
        start = watch.read()
        time.sleep(IDLE_WINDOW_S)
        end = watch.read()
        if (end.own_s - start.own_s) / (end.at - start.at) < IDLE_CORES:
            return
    print(f"failover: the set did not settle under {IDLE_CORES} cores within {IDLE_LIMIT_S:.0f} s",
          file=sys.stderr, flush=True)


def problems(runs: Sequence[ControllerRun], load_before: float, cycles: int) -> list[str]:
    """Why the figures may not be published (none: they may)."""
    found = []
    if cycles < CYCLES:
        found.append(f"{cycles} cycles (a publishable run has >= {CYCLES})")
    limit, busy = QUIET_LOAD_PER_CORE * cores(), QUIET_OTHERS_PER_CORE * cores()
    if load_before >= limit:
        found.append(f"load average {load_before:.2f} before the run (quiet: < {limit:.2f})")
    found += [f"{run.controller} cycle {i + 1}: other processes used {c.others_cores:.2f} cores (quiet: < "
              f"{busy:.2f})" for run in runs for i, c in enumerate(run.cycles) if c.others_cores >= busy]
    return found


def report(runs: Sequence[ControllerRun], command: str, started: str, load_before: float) -> str:
    rows = ["| controller | cycles | new master elected (median) | of it, after the master's connections "
            "closed (median) | first acknowledged send (median) | each cycle: closed / elected / serving s "
            "(load at the kill, others' cores) |",
            "|---|---:|---:|---:|---:|---|"]
    for run in runs:
        each = "; ".join(f"{c.closed_s:.3f} / {c.elected_s:.3f} / {c.serving_s:.2f} ({c.load:.2f}, "
                         f"{c.others_cores:.2f})" for c in run.cycles)
        load = f"(load {run.median('load'):.2f}, others' cores {run.median('others_cores'):.2f})"
        after_close = statistics.median(c.elected_s - c.closed_s for c in run.cycles)
        rows.append(f"| {run.controller} | {len(run.cycles)} | {run.median('elected_s'):.3f} s {load} | "
                    f"{after_close:.3f} s | {run.median('serving_s'):.2f} s {load} | {each} |")
    head = (f"`{command}`, {started} (UTC), commit `{commit()}`, {cores()} cores, load average (1 min) "
            f"{load_before:.2f} before the run. One Apache RocketMQ {RELEASE} broker-set (a master and two "
            "slaves) per controller; each cycle kills the master with SIGKILL.")
    return head + "\n\n" + "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--cycles", type=int, default=CYCLES, help=f"kills per controller (default {CYCLES})")
    parser.add_argument("--controllers", nargs="+", choices=CONTROLLERS, default=list(CONTROLLERS))
    parser.add_argument("--publish", action="store_true", help="write the table into docs/benchmarks.md "
                        "(refused unless quiet)")
    args = parser.parse_args(argv)
    arguments = argv if argv is not None else sys.argv[1:]
    command = shlex.join(["python", "-m", "benchmarks.failover", *arguments])
    started = datetime.now(UTC).strftime("%Y-%m-%d %H:%M")
    load_before = settle(QUIET_LOAD_PER_CORE * cores(), SETTLE_SECONDS) if args.publish else load_1min()
    runs = []
    with MachineWatch() as watch:
        for controller in args.controllers:
            with tempfile.TemporaryDirectory(prefix=f"rmq-failover-{controller}-") as work:
                try:
                    runs.append(measure(controller, Path(work), args.cycles, watch))
                except ProvisionError as exc:
                    print(f"failover: {controller} not measured: {exc}", file=sys.stderr)
                    return 1
    found = problems(runs, load_before, args.cycles)
    warning = "WARNING: NOT FOR PUBLICATION: " + "; ".join(found)
    text = report(runs, command, started, load_before)
    print("\n".join([warning, text, warning] if found else [text]))
    if args.publish:
        if found:
            print("failover: refusing to publish; docs/benchmarks.md left as it was", file=sys.stderr)
            return NOT_QUIET
        write_section(DOC, text, BEGIN, END)
        print("failover: wrote docs/benchmarks.md", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
