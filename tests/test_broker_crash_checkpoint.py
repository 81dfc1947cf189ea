"""The checkpoint after a crash: recovery must leave it covering what it recovered.

A SYNC_FLUSH broker killed shortly after its first sends has made its commitlog and consume queues
durable, but its checkpoint may never have been flushed (the logics flush runs once a second). The
restarted broker finds every entry already in the consume queues and dispatches nothing again; it used
to keep the stamps it read (0), so after a clean stop ``rmq-conformance store`` failed RMQ-BRK-CHECKPOINT.
"""

from __future__ import annotations

import sys
from pathlib import Path

from rocketmq_spec.codec.store import StoreDirectory
from rocketmq_spec.reference_broker.client import RemotingClient
from rocketmq_spec.spec.codes import ResponseCode
from rocketmq_spec.spec.store_layout import ABORT_FILE
from tests import process_tree
from tests.broker_process import BrokerProcess, write_broker_conf
from tests.broker_support import run
from tests.golden import PROJECT_ROOT
from tests.messaging_support import send

SENDS = 50
TOPIC = "CheckpointTopic"
CONFORMANCE_TIMEOUT_S = 300.0


async def _send_all(addr: str) -> None:
    client = await RemotingClient.connect(addr)
    try:
        for seq in range(SENDS):
            answer = await send(client, TOPIC, f"body {seq}".encode(), {"WAIT": "true"}, queue_id=seq % 4)
            assert answer.code == ResponseCode.SUCCESS, answer.remark
    finally:
        await client.close()


def test_recovery_leaves_the_checkpoint_covering_the_recovered_store(tmp_path: Path) -> None:
    store = tmp_path / "store"
    conf = write_broker_conf(tmp_path / "broker.conf", {
        "flushDiskType": "SYNC_FLUSH", "mappedFileSizeCommitLog": str(1024 * 1024),
        "storePathRootDir": str(store)})
    with BrokerProcess(conf, tmp_path / "crashed.log") as crashed:
        run(_send_all(crashed.broker_addr))
        crashed.kill()
    assert (store / ABORT_FILE).exists()
    with BrokerProcess(conf, tmp_path / "restarted.log") as restarted:
        assert restarted.stop() == 0, restarted.log_tail()
    with StoreDirectory(store) as directory:
        newest = max(r.store_timestamp for r in directory.messages() if r.topic == TOPIC)
        point = directory.checkpoint()
    assert point.physic_msg_timestamp >= newest and point.logics_msg_timestamp >= newest, point
    done = process_tree.run([sys.executable, "-m", "rocketmq_spec.conformance.cli",
                             "store", "-v", "-k", "checkpoint",
                             str(store)], cwd=PROJECT_ROOT, capture_output=True, text=True,
                            timeout=CONFORMANCE_TIMEOUT_S)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert "test_checkpoint_not_ahead PASSED" in done.stdout, done.stdout[-4000:]
