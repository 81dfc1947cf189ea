"""Apache RocketMQ 5.5.0 brokers in controller mode fail over under the reference controller.

Two brokers of one set register with the reference controller (inside ``rmq-namesrv``), are given ids 1
and 2, elect the first, which takes the second into its SyncStateSet and replicates a message to it;
after kill -9 of the master the controller elects the slave, which serves as master holding the message.
The time it took is printed (``python -m rocketmq_spec.targets.failover`` prints it beside Apache's own
controller's), not judged: the wait for it is only bounded. Then three brokers of one set are failed over
twice, the killed master restarted each time, and must come back into the SyncStateSet.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from rocketmq_spec.apache.maven import NotServed, ToolMissing
from rocketmq_spec.codec.store.commitlog import CommitLog
from rocketmq_spec.spec.store_layout import COMMITLOG_DIR
from rocketmq_spec.targets.broker_set import BrokerSet
from rocketmq_spec.targets.failover import MASTER_ID, SLAVE_ID, measure
from rocketmq_spec.targets.reference import ReferenceServers
from tests.test_controller_mode_interop import _same_commitlog

pytestmark = pytest.mark.slow


def test_the_reference_controller_fails_apache_brokers_over(tmp_path: Path) -> None:
    try:
        failover = measure("reference", tmp_path)
    except (ToolMissing, NotServed) as exc:
        pytest.skip(str(exc))
    print(f"reference controller: elected after {failover.elected_s:.2f} s, serving after "
          f"{failover.serving_s:.2f} s")
    assert failover.formed == (MASTER_ID, SLAVE_ID)
    assert (failover.master_id, failover.master_epoch, failover.sync_state_set) == (SLAVE_ID, 2, (SLAVE_ID,))
    assert failover.kept >= 1


RELEASE = "5.5.0"
BROKER_SET, CLUSTER, TOPIC = "rejoin", "RejoinCluster", "Rejoin"
KILLS = 2
HEAP_MB = 384
ELECT_S = 90.0
FORM_S = 180.0
"""A restarted JVM, its truncation and catch-up, and the master's SyncStateSet check every 5 s."""
ALL_ACK = {"allAckInSyncStateSet": "true"}
"""The send acknowledged before a kill is on every member, so the killed master holds no tail of its own
(without it, whether it can rejoin depends on that tail: ``benchmarks.failover``'s doc says why)."""


def test_the_killed_master_rejoins_the_sync_state_set_after_each_kill(tmp_path: Path) -> None:
    """Three Apache 5.5.0 brokers under the reference controller: after each kill -9 of the master and its
    restart, the SyncStateSet is all three again, and at the end every member holds the same CommitLog."""
    with contextlib.ExitStack() as stack:
        names = ReferenceServers(home=tmp_path / "names", controller=True)
        stack.callback(names.stop)
        names.start_namesrv()
        brokers = BrokerSet(names.controller_addr, BROKER_SET, {})
        try:
            brokers.start_apache(stack, RELEASE, tmp_path, names.namesrv_addr, 3, CLUSTER, HEAP_MB, ELECT_S,
                                 **ALL_ACK)
        except (ToolMissing, NotServed) as exc:
            pytest.skip(str(exc))
        everyone = frozenset(brokers.members)
        for cycle in range(KILLS):
            formed = brokers.wait_formed(everyone, FORM_S)
            assert formed.master_id is not None
            brokers.first_acknowledged(formed.master_id, TOPIC, f"c{cycle}-before", ELECT_S)
            brokers.kill(formed.master_id)
            elected = brokers.wait_elected(formed.master_id, formed.master_epoch, ELECT_S)
            assert elected.master_id is not None
            brokers.first_acknowledged(elected.master_id, TOPIC, f"c{cycle}-after", ELECT_S)
            brokers.restart(formed.master_id)
        final = brokers.wait_formed(everyone, FORM_S)
        assert final.master_id is not None
        assert brokers.send(final.master_id, TOPIC, 1, "last") == 1  # acknowledged by every member
        master = brokers.members[final.master_id]
        slaves = [brokers.members[b] for b in sorted(everyone - {final.master_id})]
        for stopping in (*slaves, master):
            stopping.stop_broker()
    for slave in slaves:
        assert _same_commitlog(master.store_path, slave.store_path) > 0
    with CommitLog(master.store_path / COMMITLOG_DIR) as log:
        assert set(brokers.sent.acknowledged) <= {record.body for record in log.records()}
