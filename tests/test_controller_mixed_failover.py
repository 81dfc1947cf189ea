"""Mixed broker-sets under Apache RocketMQ 5.5.0's controller (in its name server) survive three kill -9 of
their master with no acknowledged message lost: the reference broker as first master and an Apache 5.5.0
broker as its slave, and the reverse. Both run with ``allAckInSyncStateSet=true``, so a send is answered
SUCCESS only once every SyncStateSet member holds it (RMQ-HA2-ALL-ACK), and whichever member the
controller elects next holds every acknowledged message.

Each cycle: wait until both are in the SyncStateSet, send with WAIT=true to the master, kill -9 it, wait
for the controller to elect the other and for it to acknowledge a send, send more, start the killed one
again (it rejoins as slave and truncates the tail its new master never had). At the end the two
CommitLogs are byte-identical, the epoch files equal, and every acknowledged body is in them. Skipped
where Java or Maven is missing; slow (JVMs started and killed).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from rocketmq_spec.apache import ApacheRocketMQ
from rocketmq_spec.apache.maven import NotServed, ToolMissing
from rocketmq_spec.apache.servers import LoopbackServers
from rocketmq_spec.codec.store.commitlog import CommitLog
from rocketmq_spec.codec.store.epoch_file import read_epochs
from rocketmq_spec.spec.store_layout import COMMITLOG_DIR
from rocketmq_spec.targets.broker_set import BrokerSet, in_controller_mode
from rocketmq_spec.targets.reference import ReferenceServers
from tests.test_controller_mode_interop import _same_commitlog
from tests.test_ha_java_interop import _replica_agrees

pytestmark = pytest.mark.slow

RELEASE = "5.5.0"
KILLS = 3
MESSAGES = 50
HEAP_MB = 384
BROKER_SET, CLUSTER = "mixed", "MixedCluster"
FORM_S = 180.0
"""A restarted JVM, its truncation and catch-up, and the master's SyncStateSet check every 5 s; room for a
loaded machine."""
ELECT_S = 90.0
SETTINGS = {"allAckInSyncStateSet": "true"}
MIXES = {"reference-master": ("reference", "apache"), "apache-master": ("apache", "reference")}


def _member(kind: str, home: Path, namesrv: str, settings: dict[str, str]) -> LoopbackServers:
    if kind == "reference":
        return ReferenceServers(home=home, namesrv=namesrv, broker_config=settings)
    return ApacheRocketMQ(RELEASE, home=home, namesrv=namesrv, heap_mb=HEAP_MB, broker_config=settings)


def _bodies(store: Path) -> set[bytes]:
    with CommitLog(store / COMMITLOG_DIR) as log:
        return {record.body for record in log.records()}


@pytest.mark.parametrize("mix", list(MIXES))
def test_three_kills_of_the_master_lose_no_acknowledged_message(tmp_path: Path, mix: str) -> None:
    topic = f"Mixed{mix.split('-')[0].title()}"
    with contextlib.ExitStack() as stack:
        try:
            names = ApacheRocketMQ(RELEASE, home=tmp_path / "controller", controller=True)
            stack.callback(names.stop)
            names.start_namesrv()
        except (ToolMissing, NotServed) as exc:
            pytest.skip(str(exc))
        brokers = BrokerSet(names.controller_addr, BROKER_SET, {})
        for broker_id, kind in enumerate(MIXES[mix], 1):
            settings = in_controller_mode(names.controller_addr, BROKER_SET, CLUSTER, **SETTINGS)
            if broker_id > 1:
                settings["brokerId"] = str(broker_id)
            member = _member(kind, tmp_path / f"{broker_id}-{kind}", names.namesrv_addr, settings)
            brokers.members[broker_id] = stack.enter_context(member)
            if broker_id == 1:
                brokers.wait_master(1, ELECT_S)
        everyone = frozenset(brokers.members)
        masters = []
        for cycle in range(KILLS):
            formed = brokers.wait_formed(everyone, FORM_S)
            assert formed.master_id is not None
            masters.append(formed.master_id)
            assert brokers.send(formed.master_id, topic, MESSAGES, f"c{cycle}-before") == MESSAGES
            brokers.kill(formed.master_id)
            elected = brokers.wait_elected(formed.master_id, formed.master_epoch, ELECT_S)
            assert elected.master_id is not None
            brokers.first_acknowledged(elected.master_id, topic, f"c{cycle}-probe", ELECT_S)
            assert brokers.send(elected.master_id, topic, MESSAGES, f"c{cycle}-after") == MESSAGES
            brokers.restart(formed.master_id)
        final = brokers.wait_formed(everyone, FORM_S)
        assert final.master_id is not None
        assert brokers.send(final.master_id, topic, 1, "last") == 1  # acknowledged by the slave too
        (slave_id,) = everyone - {final.master_id}
        master, slave = brokers.members[final.master_id], brokers.members[slave_id]
        slave.stop_broker()
        master.stop_broker()
    assert masters == [1, 2, 1]
    _replica_agrees(master.store_path, slave.store_path)
    assert _same_commitlog(master.store_path, slave.store_path) > 0
    master_epochs, slave_epochs = read_epochs(master.store_path), read_epochs(slave.store_path)
    assert master_epochs is not None and slave_epochs is not None
    assert len(master_epochs.entries) >= KILLS + 1  # one epoch per master: the first and one per kill
    assert slave_epochs.entries == master_epochs.entries
    acknowledged = set(brokers.sent.acknowledged)
    assert len(acknowledged) == len(brokers.sent.acknowledged) >= (2 * KILLS) * MESSAGES
    assert acknowledged <= _bodies(master.store_path)
