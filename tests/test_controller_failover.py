"""Apache RocketMQ 5.5.0 brokers in controller mode fail over under the reference controller.

Two brokers of one set register with the reference controller (inside ``rmq-namesrv``), are given ids 1
and 2, elect the first, which takes the second into its SyncStateSet and replicates a message to it;
after kill -9 of the master the controller elects the slave, which serves as master holding the message.
The time it took is printed (``python -m rocketmq_spec.targets.failover`` prints it beside Apache's own
controller's), not judged: the wait for it is only bounded.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rocketmq_spec.apache.maven import NotServed, ToolMissing
from rocketmq_spec.targets.failover import MASTER_ID, SLAVE_ID, measure

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
