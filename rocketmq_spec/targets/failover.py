"""Automatic failover of Apache RocketMQ 5.x brokers, with the reference controller or Apache's own.

Two brokers of one broker-set start in controller mode (``enableControllerMode``) against a controller
inside a name server: the reference controller (``rmq-namesrv`` with ``enableControllerInNamesrv``,
:class:`rocketmq_spec.targets.reference.ReferenceServers`) or the release's own
(:class:`rocketmq_spec.apache.ApacheRocketMQ` with ``controller=True``). The first becomes master (broker id
1), the second its slave (id 2); once the master has taken the slave into its SyncStateSet and a message
sent to the master is on the slave too, the master is killed (SIGKILL: no shutdown hook, its connections
reset) and two times are taken from the kill: until the controller names the slave master, and until the
slave serves as master (registered with the name server as broker id 0).

``python -m rocketmq_spec.targets.failover [--freeze] [reference|apache ...]`` prints both figures for each
controller (``--freeze``: the master stopped with SIGSTOP, so only its heartbeat running out tells),
one after the other in the same run. Apache's controller runs with ``notifyBrokerRoleChanged=false`` there
(``rocketmq_spec.apache.cluster.CONTROLLER_SETTINGS``), so its slave learns of its new role from its own
poll of the controller (``syncBrokerMetadataPeriod``, 5 s); the reference controller tells it at once.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from rocketmq_spec.admin.operations import Admin
from rocketmq_spec.admin.wire import AdminConnection, AdminError
from rocketmq_spec.apache.cluster import MQADMIN_MAIN, ApacheRocketMQ
from rocketmq_spec.spec.codes import RequestCode
from rocketmq_spec.targets.broker_set import in_controller_mode, replica_info, until
from rocketmq_spec.targets.reference import ReferenceServers

CONTROLLERS = ("reference", "apache")
RELEASE = "5.5.0"
BROKER_SET = "failover"
CLUSTER = "FailoverCluster"
MASTER_ID, SLAVE_ID = 1, 2
"""The ids the controller hands the two brokers, started one after the other."""
HEAP_MB = 384
FORM_WAIT_S = 90.0
"""How long the master has to take the slave into its SyncStateSet: the slave connects and catches up, and
the master checks every checkSyncStateSetPeriod (5 s); room for a loaded machine."""
FAILOVER_WAIT_S = 60.0
"""A bound on the wait for the new master: the controller's heartbeat timeout (10 s) and scan (5 s), the
slave's poll (5 s), with room for a loaded machine. The figures are measured, not judged against it."""
MQADMIN_TIMEOUT_S = 120.0
SEND_ATTEMPTS = 3



@dataclass(frozen=True)
class Failover:
    controller: str
    formed: tuple[int, ...]
    """The SyncStateSet before the kill."""
    master_id: int | None
    """Who the controller names master after the kill."""
    master_epoch: int | None
    sync_state_set: tuple[int, ...]
    elected_s: float
    """From the kill until the controller names the slave master."""
    serving_s: float
    """From the kill until the slave is registered with the name server as master (broker id 0)."""
    kept: int
    """Messages the new master holds of the topic written before the kill (its max offset)."""


def _registered_master(namesrv: str) -> str | None:
    try:
        info = Admin(namesrv, 2.0).cluster_info()
    except AdminError:
        return None
    addrs = ((info.get("brokerAddrTable") or {}).get(BROKER_SET) or {}).get("brokerAddrs") or {}
    return {str(key): value for key, value in addrs.items()}.get("0")


def _max_offset(broker: str, topic: str) -> int | None:
    try:
        with AdminConnection(broker, 2.0) as connection:
            return int(connection.call(RequestCode.GET_MAX_OFFSET, {"topic": topic, "queueId": 0}).header
                       ["offset"])
    except AdminError:
        return None


@contextlib.contextmanager
def broker_set(controller: str, workdir: Path) -> Iterator[tuple[str, str, ApacheRocketMQ, ApacheRocketMQ]]:
    """The name server and controller, the master and the slave: (namesrv, controller, master, slave)."""
    with contextlib.ExitStack() as stack:
        master: ApacheRocketMQ
        if controller == "reference":
            ctl = stack.enter_context(ReferenceServers(home=workdir / "controller",
                                                                        controller=True))
            namesrv, controller_addr = ctl.namesrv_addr, ctl.controller_addr
            master = stack.enter_context(ApacheRocketMQ(RELEASE, home=workdir / "master", namesrv=namesrv,
                                                        heap_mb=HEAP_MB,
                                                        broker_config=in_controller_mode(
                                                            controller_addr, BROKER_SET, CLUSTER)))
        else:
            master = stack.enter_context(ApacheRocketMQ(RELEASE, home=workdir / "master", controller=True,
                                                        heap_mb=HEAP_MB,
                                                        broker_config={"brokerName": BROKER_SET,
                                                                       "brokerClusterName": CLUSTER}))
            namesrv, controller_addr = master.namesrv_addr, master.controller_addr
        # registered with the name server under its controller id once it is a slave
        slave = stack.enter_context(ApacheRocketMQ(RELEASE, home=workdir / "slave", namesrv=namesrv,
                                                   heap_mb=HEAP_MB, broker_config=in_controller_mode(
                                                       controller_addr, BROKER_SET, CLUSTER,
                                                       brokerId=str(SLAVE_ID))))
        yield namesrv, controller_addr, master, slave


def _routed(namesrv: str, topic: str) -> bool | None:
    try:
        Admin(namesrv, 2.0).route(topic)
    except AdminError:
        return None
    return True


def _send(master: ApacheRocketMQ, namesrv: str, topic: str) -> None:
    """One message through the release's own client (mqadmin sendMessage), once the name server routes the
    topic; tried again when the client gives up (a JVM client on a loaded machine times out at 3 s)."""
    Admin(namesrv, 5.0).update_topic(topic, broker=master.broker_addr, cluster=None, read_queues=1,
                                     write_queues=1)
    until(f"a route of {topic}", lambda: _routed(namesrv, topic), FORM_WAIT_S)
    output = b""
    for _ in range(SEND_ATTEMPTS):
        done = subprocess.run(master.java_command(MQADMIN_MAIN, "sendMessage", "-n", namesrv, "-t", topic,
                                                  "-p", "before the failover"),
                              env=master.environment(), capture_output=True, timeout=MQADMIN_TIMEOUT_S,
                              check=False)
        if b"SEND_OK" in done.stdout:
            return
        output = done.stdout + done.stderr
    raise RuntimeError(f"mqadmin sendMessage did not send: {output[:600]!r} ... {output[-600:]!r}")


def _formed(controller: str) -> tuple[int, ...] | None:
    info = replica_info(controller, BROKER_SET)
    members = tuple(sorted(info.sync_state_set)) if info else ()
    return members if members == (MASTER_ID, SLAVE_ID) else None


def _named(controller: str, broker_id: int) -> bool | None:
    info = replica_info(controller, BROKER_SET)
    return True if info and info.master_id == broker_id else None


def measure(controller: str, workdir: Path, *, freeze: bool = False) -> Failover:
    """Start the set against ``controller`` (one of :data:`CONTROLLERS`), fail its master over, measure.

    ``freeze``: stop the master with SIGSTOP rather than kill it: its connections stay open, so only its
    heartbeat running out (``controllerHeartBeatTimeoutMills``, 10 s) tells the controller; it is killed
    once the slave serves."""
    topic = f"failover-{controller}"
    with broker_set(controller, workdir) as (namesrv, controller_addr, master, slave):
        formed = until("the SyncStateSet {1, 2}", lambda: _formed(controller_addr), FORM_WAIT_S)
        _send(master, namesrv, topic)
        until("the message on the slave", lambda: (_max_offset(slave.broker_addr, topic) or 0) > 0 or None,
               FORM_WAIT_S)
        killed = time.monotonic()
        if freeze:
            os.kill(master.broker_pid, signal.SIGSTOP)
        else:
            master.kill_broker()
        until("the slave named master", lambda: _named(controller_addr, SLAVE_ID), FAILOVER_WAIT_S)
        elected = time.monotonic() - killed
        until("the slave serving as master",
               lambda: _registered_master(namesrv) == slave.broker_addr or None, FAILOVER_WAIT_S)
        serving = time.monotonic() - killed
        if freeze:
            master.kill_broker()
        info = replica_info(controller_addr, BROKER_SET)
        return Failover(controller, formed, info.master_id if info else None,
                        info.master_epoch if info else None,
                        tuple(sorted(info.sync_state_set)) if info else (), elected, serving,
                        _max_offset(slave.broker_addr, topic) or 0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m rocketmq_spec.targets.failover",
                                     description="kill -9 the master of two Apache RocketMQ "
                                     f"{RELEASE} brokers in controller mode and time the failover")
    parser.add_argument("controllers", nargs="*", choices=CONTROLLERS, default=list(CONTROLLERS))
    parser.add_argument("--freeze", action="store_true", help="SIGSTOP the master instead: the controller "
                        "learns of it only when its heartbeat runs out")
    args = parser.parse_args(argv)
    print("| controller | SyncStateSet before | new master (epoch) | SyncStateSet after | elected | "
          "serving as master | messages kept |\n|---|---|---|---|---:|---:|---:|", flush=True)
    for controller in args.controllers:
        with tempfile.TemporaryDirectory(prefix=f"rmq-failover-{controller}-") as work:
            f = measure(controller, Path(work), freeze=args.freeze)
        print(f"| {f.controller} | {list(f.formed)} | {f.master_id} ({f.master_epoch}) | "
              f"{list(f.sync_state_set)} | {f.elected_s:.2f} s | {f.serving_s:.2f} s | {f.kept} |",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
